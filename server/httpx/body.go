package httpx

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/storage/blob"
)

// Request bodies are streamed by fasthttp (Config.StreamRequestBody): nothing is read
// before a handler asks for it, so each route has its own limit (the root decides which).
// Uploads stream their multipart file part to the blob store; every other body is read
// into memory by ApplyLimit, up to its route's limit, before authentication or the handler
// sees it.

// drainLimit is how much of a body nobody read the server still reads (and drops) to keep
// the connection; beyond it, or when the body is malformed, the connection is closed.
const drainLimit = 16 << 20

// localsBody holds the *Body of an upload route.
const localsBody = "uploadBody"

func tooLarge(limit int64) *Error {
	return Errorf(fiber.StatusRequestEntityTooLarge, "request body is larger than this route's limit of %d bytes (%s)", limit, sizeText(limit))
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Body reads a request body up to a limit, turning what goes wrong into the client's
// error: 413 past the limit, 400 for a body that cannot be read (a malformed chunk, a
// connection that ends early). It remembers the first such error, so a caller that sees a
// wrapped error from a reader stacked on top (multipart, the blob store) can tell the
// client's fault from a backend's.
type Body struct {
	r       io.Reader
	limit   int64
	n       int64
	chunked bool
	// declared is the Content-Length, -1 when chunked.
	declared int64
	err      *Error
	eof      bool
}

// Read reads the body, failing once it has passed the limit or could not be read.
func (b *Body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.eof {
		return 0, io.EOF
	}
	if room := b.limit - b.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	switch {
	case b.n > b.limit:
		b.err = tooLarge(b.limit)
		return 0, b.err
	case err == io.EOF:
		b.eof = true
	case err != nil:
		if b.chunked {
			b.err = BadRequest("the chunked request body is malformed or ends early: %v", err)
		} else {
			b.err = BadRequest("the request body could not be read (it ends before its Content-Length?): %v", err)
		}
		return n, b.err
	}
	return n, err
}

// ClientError returns the client's error behind a failed read, if the body caused it.
func (b *Body) ClientError() error {
	if b.err != nil {
		return b.err
	}
	return nil
}

// StreamedBody is the body of an upload route, left unread by ApplyLimit; ok is false when
// the request sent none (or none that streams: not multipart).
func StreamedBody(c *fiber.Ctx) (b *Body, ok bool) {
	b, ok = c.Locals(localsBody).(*Body)
	return b, ok
}

// ApplyLimit refuses a body whose declared length is over limit before reading any of it,
// then either reads the body into memory (so c.Body() works as usual) or, when stream is
// set, leaves it to the handler behind a Body (see OpenUpload and StreamedBody); then it
// runs the next handler.
func ApplyLimit(c *fiber.Ctx, limit int64, stream bool) error {
	req := c.Request()
	if !req.IsBodyStream() {
		return c.Next() // no body, or read already
	}
	cl := req.Header.ContentLength()
	if cl > 0 && int64(cl) > limit {
		return tooLarge(limit)
	}
	coding := strings.ToLower(strings.TrimSpace(string(req.Header.Peek(fiber.HeaderContentEncoding))))
	if coding == "identity" {
		coding = ""
	}
	body := &Body{r: c.Context().RequestBodyStream(), limit: limit, chunked: cl == -1, declared: int64(cl)}
	if stream {
		if coding != "" {
			return Errorf(fiber.StatusUnsupportedMediaType, "Content-Encoding %q is not supported on uploads; send the file uncompressed", coding)
		}
		c.Locals(localsBody, body)
		return c.Next()
	}
	buf, err := readBody(body, coding, limit)
	if err != nil {
		if ce := body.ClientError(); ce != nil {
			return ce
		}
		return err
	}
	// SetBodyRaw also closes the stream: from here on the body is an ordinary one, already
	// decoded (Fiber would otherwise decompress it again, without a limit).
	req.SetBodyRaw(buf)
	req.Header.Del(fiber.HeaderContentEncoding)
	return c.Next()
}

// readBody reads a whole body, decoding a gzip or deflate Content-Encoding with the same
// limit on the decoded size: a small compressed body must not become a large one in memory.
func readBody(body *Body, coding string, limit int64) ([]byte, error) {
	var r io.Reader = body
	switch coding {
	case "":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			if ce := body.ClientError(); ce != nil {
				return nil, ce
			}
			return nil, BadRequest("the gzip request body is malformed: %v", err)
		}
		defer zr.Close()
		r = zr
	case "deflate":
		zr, err := zlib.NewReader(body)
		if err != nil {
			if ce := body.ClientError(); ce != nil {
				return nil, ce
			}
			return nil, BadRequest("the deflate request body is malformed: %v", err)
		}
		defer zr.Close()
		r = zr
	default:
		return nil, Errorf(fiber.StatusUnsupportedMediaType, "Content-Encoding %q is not supported; send the body uncompressed, gzip or deflate", coding)
	}
	// One allocation of the declared size, rather than io.ReadAll's doublings (up to twice
	// the body at the peak).
	var bb bytes.Buffer
	if coding == "" && body.declared > 0 {
		bb.Grow(int(body.declared) + bytes.MinRead)
	}
	_, err := bb.ReadFrom(io.LimitReader(r, limit+1))
	buf := bb.Bytes()
	if err != nil {
		if ce := body.ClientError(); ce != nil {
			return nil, ce
		}
		return nil, BadRequest("the %s request body is malformed: %v", coding, err)
	}
	if int64(len(buf)) > limit {
		return nil, Errorf(fiber.StatusRequestEntityTooLarge, "the decoded request body is larger than this route's limit of %d bytes (%s)", limit, sizeText(limit))
	}
	return buf, nil
}

// BodyRead reports whether the request body was read to its end, so that the connection
// can carry another request. A body nobody read, or read only in part (a 413 answer), is
// read and dropped up to drainLimit: a client still sending it then gets its answer instead
// of a reset connection. Beyond that, or when the body is malformed, it is not.
func BodyRead(c *fiber.Ctx) bool {
	req := c.Request()
	if !req.IsBodyStream() {
		return true
	}
	if b, ok := StreamedBody(c); ok {
		if b.eof {
			return true
		}
		if b.err != nil && b.err.Status != fiber.StatusRequestEntityTooLarge {
			return false
		}
	}
	if req.Header.ContentLength() > drainLimit {
		return false
	}
	n, err := io.Copy(io.Discard, io.LimitReader(c.Context().RequestBodyStream(), drainLimit+1))
	return err == nil && n <= drainLimit
}

// Upload is the file part of a streamed multipart upload.
type Upload struct {
	body *Body
	mr   *multipart.Reader
	// FileName is the part's file name (without a directory).
	FileName string
	// Head holds the first bytes of the file, already read (fewer if the file is shorter).
	Head []byte
	part *multipart.Part
	src  *errReader
}

// errReader remembers the last error other than io.EOF its reader returned.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// OpenUpload finds the part named field of the multipart body, reading (and discarding)
// the parts before it, and reads the first head bytes of the file.
func OpenUpload(c *fiber.Ctx, field string, head int) (*Upload, error) {
	body, ok := StreamedBody(c)
	if !ok {
		// The root streams every multipart body of an upload route: none was sent.
		return nil, BadRequest("the multipart body is empty; it needs a file part named '%s'", field)
	}
	_, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || params["boundary"] == "" {
		return nil, BadRequest("the multipart Content-Type has no boundary parameter")
	}
	up := &Upload{body: body, mr: multipart.NewReader(body, params["boundary"])}
	for {
		p, err := up.mr.NextPart()
		if err == io.EOF {
			return nil, BadRequest("the multipart body has no file part named '%s'", field)
		}
		if err != nil {
			return nil, up.malformed(err)
		}
		if p.FormName() != field {
			if _, err := io.Copy(io.Discard, p); err != nil {
				return nil, up.malformed(err)
			}
			continue
		}
		up.part, up.FileName = p, p.FileName()
		break
	}
	up.src = &errReader{r: up.part}
	up.Head = make([]byte, head)
	n, err := io.ReadFull(up.src, up.Head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, up.malformed(err)
	}
	up.Head = up.Head[:n]
	return up, nil
}

func (up *Upload) malformed(err error) error {
	if ce := up.body.ClientError(); ce != nil {
		return ce
	}
	return BadRequest("the multipart body is malformed: %v", err)
}

// Store streams the file to blobs under key and reads the rest of the body. An error the
// body caused is the client's (400 or 413); the blob store's is returned as is. Nothing is
// left under key when it fails.
func (up *Upload) Store(c *fiber.Ctx, blobs blob.Store, key string) error {
	ctx := c.UserContext()
	r := io.MultiReader(bytes.NewReader(up.Head), up.src)
	if _, err := blobs.Put(ctx, key, r, -1); err != nil {
		if up.src.err != nil {
			return up.malformed(up.src.err)
		}
		return err
	}
	// The closing boundary and any epilogue; a body that is cut short after the file part
	// is still the client's fault.
	if _, err := io.Copy(io.Discard, up.body); err != nil {
		_ = blobs.Delete(ctx, key)
		return up.malformed(err)
	}
	return nil
}

// DropUpload removes an upload whose job could not be created or queued, so that nothing
// is left in the blob store that no job will ever use or delete; "" is no upload.
func DropUpload(ctx context.Context, blobs blob.Store, log *slog.Logger, key string) {
	if key == "" {
		return
	}
	// The request's context may be what failed; the cleanup must run anyway.
	if err := blobs.Delete(context.WithoutCancel(ctx), key); err != nil {
		log.Warn("upload of a failed request not deleted", "key", key, "error", err)
	}
}
