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
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/storage/blob"
)

// Request bodies are never read before their route asks: fasthttp hands the connection's
// bytes to the root's first middleware unread (server/body.go), which puts a Body in front of
// them with the smallest limit (MaxNoBody). A route raises the limit to its own once it knows
// who is asking (Limit, ReadBody, ApplyLimit), so a request without credentials costs a
// header's worth of memory however large a body it declares. Uploads stream their multipart
// file part to the blob store; every other body is read into memory, up to its limit.

// Limits of the kinds of body that are not configured (uploads and the record store's are:
// LECTERN_MAX_BODY_BYTES, LECTERN_MAX_XAPI_BODY_BYTES). MaxJSONBody is the JSON, form,
// player and console limit.
const (
	// MaxNoBody bounds the body of a route that takes none.
	MaxNoBody = 16 << 10
	// MaxCredentialsBody bounds a body read before its sender is known because it carries
	// the credentials: the console's sign-in and the OAuth token endpoint.
	MaxCredentialsBody = 16 << 10
	// MaxAlternateBody bounds the form of the record store's alternate request syntax
	// (POST ?method=X), read before authentication because its fields carry the credentials.
	MaxAlternateBody = 64 << 10
)

const (
	// maxChunkLine bounds a chunk-size line with its extensions; maxTrailer the trailer section.
	maxChunkLine = 4 << 10
	maxTrailer   = 16 << 10
)

// localsBody holds the request's *Body.
const localsBody = "requestBody"

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

// Body is a request body as every reader sees it: the connection's bytes up to the declared
// Content-Length, or a chunked body decoded here (fasthttp's decoder would wait for the data
// of a chunk however far over the limit its size is). It fails at once past the limit (413:
// a declared length or a chunk size over it is refused before any of its data is read) and
// on a body that cannot be read (400: a malformed chunk, a connection that ends early). It
// remembers the first such error, so a caller that sees a wrapped error from a reader stacked
// on top (multipart, the blob store) can tell the client's fault from a backend's.
type Body struct {
	src   io.Reader
	limit int64
	n     int64
	// declared is the Content-Length, -1 when unknown (chunked).
	declared int64
	// chunked marks a body src yields chunk-encoded, as it came on the wire.
	chunked bool
	// left is what remains of the current chunk's data.
	left     int64
	err      *Error
	eof      bool
	streamed bool
	one      [1]byte
}

// Begin puts a Body in front of the request's unread body stream src, with the limit of a
// route that takes no body (MaxNoBody) until the route sets its own. The root calls it for
// every request that has a body; declared is its Content-Length, -1 when unknown. With
// chunked, src yields the raw chunk-encoded bytes (sizes and all), which Body decodes;
// without it, the body itself (to its end when no length is declared).
func Begin(c *fiber.Ctx, src io.Reader, declared int64, chunked bool) {
	if chunked {
		declared = -1
	}
	c.Locals(localsBody, &Body{src: src, limit: MaxNoBody, declared: declared, chunked: chunked})
}

func bodyOf(c *fiber.Ctx) (*Body, bool) {
	b, ok := c.Locals(localsBody).(*Body)
	return b, ok && c.Request().IsBodyStream()
}

func (b *Body) fail(e *Error) error {
	if b.err == nil {
		b.err = e
	}
	return b.err
}

func (b *Body) malformed(err error) error {
	if b.chunked {
		return b.fail(BadRequest("the chunked request body is malformed or ends early: %v", err))
	}
	return b.fail(BadRequest("the request body could not be read (it ends before its Content-Length?): %v", err))
}

// Read reads the body, failing once it has passed the limit or could not be read.
func (b *Body) Read(p []byte) (int, error) {
	switch {
	case b.err != nil:
		return 0, b.err
	case b.eof:
		return 0, io.EOF
	case len(p) == 0:
		return 0, nil
	case b.chunked:
		return b.readChunked(p)
	case b.declared < 0:
		return b.readToEnd(p)
	case b.declared > b.limit:
		return 0, b.fail(tooLarge(b.limit))
	case b.n >= b.declared:
		b.eof = true
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), b.declared-b.n)]
	n, err := b.src.Read(p)
	b.n += int64(n)
	if b.n >= b.declared {
		b.eof = true
		return n, nil
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return n, b.malformed(err)
	}
	return n, nil
}

// readToEnd reads a body of unknown length that is not chunk-encoded (a request made in
// process) to its end, up to the limit.
func (b *Body) readToEnd(p []byte) (int, error) {
	if room := b.limit - b.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.src.Read(p)
	b.n += int64(n)
	switch {
	case b.n > b.limit:
		return 0, b.fail(tooLarge(b.limit))
	case err == io.EOF:
		b.eof = true
	case err != nil:
		return n, b.malformed(err)
	}
	return n, err
}

func (b *Body) readChunked(p []byte) (int, error) {
	if b.left == 0 {
		size, err := b.chunkSize()
		if err != nil {
			return 0, err
		}
		if size == 0 {
			if err := b.trailer(); err != nil {
				return 0, err
			}
			b.eof = true
			return 0, io.EOF
		}
		b.left = size
	}
	p = p[:min(int64(len(p)), b.left)]
	n, err := b.src.Read(p)
	b.n += int64(n)
	b.left -= int64(n)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return n, b.malformed(err)
	}
	if b.left == 0 {
		if err := b.crlf(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// byte reads one byte of the raw body; reading no further than needed leaves the next
// request on the connection where fasthttp will look for it.
func (b *Body) byte() (byte, error) {
	for {
		n, err := b.src.Read(b.one[:])
		if n == 1 {
			return b.one[0], nil
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return 0, b.malformed(err)
		}
	}
}

func (b *Body) crlf() error {
	for _, want := range []byte("\r\n") {
		c, err := b.byte()
		if err != nil {
			return err
		}
		if c != want {
			return b.malformed(fmt.Errorf("a chunk's data is not followed by CRLF"))
		}
	}
	return nil
}

// chunkSize reads a chunk-size line. A size over what is left of the limit is refused as
// soon as its digits show it, without waiting for the rest of the line or any data.
func (b *Body) chunkSize() (int64, error) {
	var size int64
	digits := 0
	for {
		c, err := b.byte()
		if err != nil {
			return 0, err
		}
		v := hexDigit(c)
		if v < 0 {
			if digits == 0 {
				return 0, b.malformed(fmt.Errorf("the chunk size %q is not hexadecimal", c))
			}
			if err := b.chunkLineEnd(c); err != nil {
				return 0, err
			}
			return size, nil
		}
		digits++
		size = size<<4 | int64(v)
		if digits > 15 || size > b.limit-b.n {
			return 0, b.fail(tooLarge(b.limit))
		}
	}
}

// chunkLineEnd skips a chunk extension (c is the first byte after the size) up to CRLF.
func (b *Body) chunkLineEnd(c byte) error {
	for n := 0; c != '\r'; n++ {
		if c == '\n' || n > maxChunkLine {
			return b.malformed(fmt.Errorf("a chunk-size line ends without CRLF or is too long"))
		}
		var err error
		if c, err = b.byte(); err != nil {
			return err
		}
	}
	c, err := b.byte()
	if err != nil {
		return err
	}
	if c != '\n' {
		return b.malformed(fmt.Errorf("a chunk-size line ends without CRLF"))
	}
	return nil
}

// trailer reads (and drops) the trailer section after the last chunk.
func (b *Body) trailer() error {
	line := 0
	for total := 0; ; total++ {
		c, err := b.byte()
		if err != nil {
			return err
		}
		if total > maxTrailer {
			return b.malformed(fmt.Errorf("the trailer section is longer than %d bytes", maxTrailer))
		}
		switch c {
		case '\r':
			continue
		case '\n':
			if line == 0 {
				return nil
			}
			line = 0
		default:
			line++
		}
	}
}

func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
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
func StreamedBody(c *fiber.Ctx) (*Body, bool) {
	b, ok := bodyOf(c)
	return b, ok && b.streamed
}

// DeclaredLength is the request body's Content-Length: 0 for no body, -1 when it has none
// (chunked).
func DeclaredLength(c *fiber.Ctx) int64 {
	if b, ok := bodyOf(c); ok {
		return b.declared
	}
	return 0
}

// Limit sets the request body's limit without reading any of it, and refuses a declared
// length over it (413). It is the first check of every route: a request whose credentials
// are not checked yet gets no more than the answer.
func Limit(c *fiber.Ctx, limit int64) error {
	b, ok := bodyOf(c)
	if !ok {
		return nil
	}
	b.limit = limit
	if b.declared > limit {
		return b.fail(tooLarge(limit))
	}
	return nil
}

// LimitHandler is Limit as the first handler of a route.
func LimitHandler(limit int64) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := Limit(c, limit); err != nil {
			return err
		}
		return c.Next()
	}
}

// ReadBody reads the request body into memory up to limit (so c.Body() works as usual),
// decoding a gzip or deflate Content-Encoding with the same limit on the decoded size. A
// body read already (or none) is left as it is.
func ReadBody(c *fiber.Ctx, limit int64) error {
	b, ok := bodyOf(c)
	if !ok {
		return nil
	}
	if err := Limit(c, limit); err != nil {
		return err
	}
	req := c.Request()
	buf, err := readBody(b, contentCoding(c), limit)
	if err != nil {
		if ce := b.ClientError(); ce != nil {
			return ce
		}
		return err
	}
	// SetBodyRaw also closes the stream: from here on the body is an ordinary one, already
	// decoded (Fiber would otherwise decompress it again, without a limit).
	req.SetBodyRaw(buf)
	req.Header.SetContentLength(len(buf))
	req.Header.Del(fiber.HeaderContentEncoding)
	return nil
}

func contentCoding(c *fiber.Ctx) string {
	coding := strings.ToLower(strings.TrimSpace(string(c.Request().Header.Peek(fiber.HeaderContentEncoding))))
	if coding == "identity" {
		return ""
	}
	return coding
}

// ApplyLimit sets the route's limit (refusing a declared length over it before reading any
// of the body), then either reads the body into memory (ReadBody) or, when stream is set,
// leaves it to the handler behind the Body (see OpenUpload and StreamedBody); then it runs
// the next handler. Routes put it after authentication.
func ApplyLimit(c *fiber.Ctx, limit int64, stream bool) error {
	b, ok := bodyOf(c)
	if !ok {
		return c.Next() // no body, or read already
	}
	if !stream {
		if err := ReadBody(c, limit); err != nil {
			return err
		}
		return c.Next()
	}
	if err := Limit(c, limit); err != nil {
		return err
	}
	if coding := contentCoding(c); coding != "" {
		return Errorf(fiber.StatusUnsupportedMediaType, "Content-Encoding %q is not supported on uploads; send the file uncompressed", coding)
	}
	b.streamed = true
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
	declared := int64(-1)
	if coding == "" {
		declared = body.declared
	}
	buf, err := readAll(io.LimitReader(r, limit+1), declared, limit)
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

// firstRead is the buffer a body is read into first; readAll doubles it as bytes arrive.
const firstRead = 32 << 10

// readAll reads r to its end. The buffer grows with what arrives, not with what was
// declared: a client that declares 64 MiB and trickles holds about what it sent. Once a
// quarter of a declared length has arrived, the buffer takes the whole of it at once (one
// more allocation rather than doublings up to it: at most 1.25 times the body at the peak).
func readAll(r io.Reader, declared, limit int64) ([]byte, error) {
	size := int64(firstRead)
	if declared >= 0 {
		size = min(size, declared+1)
	}
	buf := make([]byte, 0, min(size, limit+1))
	for {
		if len(buf) == cap(buf) {
			next := int64(cap(buf)) * 2
			if declared >= 0 && next >= declared/4 {
				next = declared + 1
			}
			buf = slices.Grow(buf, int(min(next, limit+1))-len(buf))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// BodyRead reports whether the request body was read to its end, so that the connection
// can carry another request. A body nobody read, or read only in part (a refusal), is not
// read now: waiting for it would let a client hold the answer (and the connection) as long
// as it trickles bytes. The root closes such a connection after the answer.
func BodyRead(c *fiber.Ctx) bool {
	b, ok := bodyOf(c)
	if !ok {
		return true
	}
	return b.eof || b.declared == 0
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
