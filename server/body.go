package server

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Request bodies are streamed by fasthttp (Config.StreamRequestBody): nothing is read
// before a handler asks for it, so each route sets its own limit. Uploads stream their
// multipart file part to the blob store; every other body is read into memory here, up to
// its route's limit, before authentication or the handler sees it.

// Default body limits; Deps.BodyLimit and Deps.RecordBodyLimit override the first two.
const (
	defaultUploadLimit = 512 << 20
	defaultRecordLimit = 64 << 20
	// drainLimit is how much of a body nobody read the server still reads (and drops) to
	// keep the connection; beyond it, or when the body is malformed, the connection is closed.
	drainLimit = 16 << 20
)

// localsBody holds the *streamBody of an upload route.
const localsBody = "uploadBody"

func tooLarge(limit int64) *Error {
	return errorf(fiber.StatusRequestEntityTooLarge, "request body is larger than this route's limit of %d bytes (%s)", limit, sizeText(limit))
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

// streamBody reads a request body up to a limit, turning what goes wrong into the client's
// error: 413 past the limit, 400 for a body that cannot be read (a malformed chunk, a
// connection that ends early). It remembers the first such error, so a caller that sees a
// wrapped error from a reader stacked on top (multipart, the blob store) can tell the
// client's fault from a backend's.
type streamBody struct {
	r       io.Reader
	limit   int64
	n       int64
	chunked bool
	// declared is the Content-Length, -1 when chunked.
	declared int64
	err      *Error
	eof      bool
}

func (b *streamBody) Read(p []byte) (int, error) {
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
			b.err = badRequest("the chunked request body is malformed or ends early: %v", err)
		} else {
			b.err = badRequest("the request body could not be read (it ends before its Content-Length?): %v", err)
		}
		return n, b.err
	}
	return n, err
}

// clientError returns the client's error behind err, if the body caused it.
func (b *streamBody) clientError() error {
	if b.err != nil {
		return b.err
	}
	return nil
}

// routeLimit is the body limit of a route: uploads (multipart bodies only) get the upload
// limit, the record store its own, everything else the JSON limit.
func (s *Server) routeLimit(r Route, c *fiber.Ctx) (limit int64, stream bool) {
	switch {
	case r.Upload && strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderContentType)), fiber.MIMEMultipartForm):
		return int64(s.deps.BodyLimit), true
	case r.Scope == ScopeLRS:
		return int64(s.deps.RecordBodyLimit), false
	}
	return maxJSONBody, false
}

// limitBody is the first handler of every route: it refuses a body whose declared length is
// over the route's limit before reading any of it, then either reads the body into memory
// (so c.Body() works as usual) or, on upload routes, leaves it to the handler behind a
// streamBody (see uploadPart).
func (s *Server) limitBody(r Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		limit, stream := s.routeLimit(r, c)
		return s.applyLimit(c, limit, stream)
	}
}

// limitPrefix reads the body of everything under a path prefix up to limit (the record
// store, whose prelude reads form bodies before any route handler runs).
func (s *Server) limitPrefix(limit int64) fiber.Handler {
	return func(c *fiber.Ctx) error { return s.applyLimit(c, limit, false) }
}

func (s *Server) applyLimit(c *fiber.Ctx, limit int64, stream bool) error {
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
	body := &streamBody{r: c.Context().RequestBodyStream(), limit: limit, chunked: cl == -1, declared: int64(cl)}
	if stream {
		if coding != "" {
			return errorf(fiber.StatusUnsupportedMediaType, "Content-Encoding %q is not supported on uploads; send the file uncompressed", coding)
		}
		c.Locals(localsBody, body)
		return c.Next()
	}
	buf, err := readBody(body, coding, limit)
	if err != nil {
		if ce := body.clientError(); ce != nil {
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
func readBody(body *streamBody, coding string, limit int64) ([]byte, error) {
	var r io.Reader = body
	switch coding {
	case "":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			if ce := body.clientError(); ce != nil {
				return nil, ce
			}
			return nil, badRequest("the gzip request body is malformed: %v", err)
		}
		defer zr.Close()
		r = zr
	case "deflate":
		zr, err := zlib.NewReader(body)
		if err != nil {
			if ce := body.clientError(); ce != nil {
				return nil, ce
			}
			return nil, badRequest("the deflate request body is malformed: %v", err)
		}
		defer zr.Close()
		r = zr
	default:
		return nil, errorf(fiber.StatusUnsupportedMediaType, "Content-Encoding %q is not supported; send the body uncompressed, gzip or deflate", coding)
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
		if ce := body.clientError(); ce != nil {
			return nil, ce
		}
		return nil, badRequest("the %s request body is malformed: %v", coding, err)
	}
	if int64(len(buf)) > limit {
		return nil, errorf(fiber.StatusRequestEntityTooLarge, "the decoded request body is larger than this route's limit of %d bytes (%s)", limit, sizeText(limit))
	}
	return buf, nil
}

// bodyRead reports whether the request body was read to its end, so that the connection
// can carry another request. A body nobody read, or read only in part (a 413 answer), is
// read and dropped up to drainLimit: a client still sending it then gets its answer instead
// of a reset connection. Beyond that, or when the body is malformed, it is not.
func bodyRead(c *fiber.Ctx) bool {
	req := c.Request()
	if !req.IsBodyStream() {
		return true
	}
	if b, ok := c.Locals(localsBody).(*streamBody); ok {
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

// framing is the first middleware of every request. It refuses what RFC 9112 calls a
// message whose framing cannot be trusted, because a proxy in front may frame it otherwise
// and pass a second, smuggled request: several Content-Length fields, Content-Length with
// Transfer-Encoding, a Transfer-Encoding other than chunked, header folding. fasthttp
// accepts all of these (it keeps the last Content-Length and lets Transfer-Encoding win), so
// the raw header lines are checked. After the handler, a body left unread closes the
// connection, so its bytes are never taken for the next request.
func (s *Server) framing(c *fiber.Ctx) error {
	if err := framingError(c.Request().Header.RawHeaders(), c.Request().Header.IsHTTP11()); err != nil {
		c.Context().SetConnectionClose()
		return err
	}
	err := c.Next()
	if !bodyRead(c) {
		c.Context().SetConnectionClose()
	}
	return err
}

func framingError(raw []byte, http11 bool) *Error {
	var lengths int
	var codings []string
	hasTE := false
	for len(raw) > 0 {
		var line []byte
		line, raw, _ = bytes.Cut(raw, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			return badRequest("header field line folding (obs-fold) is not accepted")
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		switch strings.ToLower(string(k)) {
		case "content-length":
			lengths++
		case "transfer-encoding":
			hasTE = true
			for _, t := range strings.Split(string(v), ",") {
				if t = strings.ToLower(strings.TrimSpace(t)); t != "" {
					codings = append(codings, t)
				}
			}
		}
	}
	switch {
	case lengths > 1:
		return badRequest("the request has %d Content-Length header fields; exactly one is allowed", lengths)
	case lengths > 0 && hasTE:
		return badRequest("the request has both Content-Length and Transfer-Encoding; send one of them")
	case !hasTE:
		return nil
	case !http11:
		return badRequest("Transfer-Encoding is not allowed in an HTTP/1.0 request")
	case len(codings) == 0 || codings[len(codings)-1] != "chunked":
		return badRequest("Transfer-Encoding must end with chunked, the only transfer coding accepted")
	}
	for _, t := range codings[:len(codings)-1] {
		if t == "chunked" {
			return badRequest("Transfer-Encoding applies chunked more than once")
		}
		return badRequest("transfer coding %q is not supported; send the body chunked only", t)
	}
	return nil
}

// uploadPart is the file part of a streamed multipart upload.
type uploadPart struct {
	body *streamBody
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

// openUpload finds the part named field of the multipart body, reading (and discarding)
// the parts before it, and reads the first head bytes of the file.
func openUpload(c *fiber.Ctx, field string, head int) (*uploadPart, error) {
	body, ok := c.Locals(localsBody).(*streamBody)
	if !ok {
		// limitBody streams every multipart body of an upload route: none was sent.
		return nil, badRequest("the multipart body is empty; it needs a file part named '%s'", field)
	}
	_, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || params["boundary"] == "" {
		return nil, badRequest("the multipart Content-Type has no boundary parameter")
	}
	up := &uploadPart{body: body, mr: multipart.NewReader(body, params["boundary"])}
	for {
		p, err := up.mr.NextPart()
		if err == io.EOF {
			return nil, badRequest("the multipart body has no file part named '%s'", field)
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

func (up *uploadPart) malformed(err error) error {
	if ce := up.body.clientError(); ce != nil {
		return ce
	}
	return badRequest("the multipart body is malformed: %v", err)
}

// store streams the file to the blob store under key and reads the rest of the body. An
// error the body caused is the client's (400 or 413); the blob store's is returned as is.
// Nothing is left under key when it fails.
func (up *uploadPart) store(c *fiber.Ctx, s *Server, key string) error {
	ctx := c.UserContext()
	r := io.MultiReader(bytes.NewReader(up.Head), up.src)
	if _, err := s.deps.Blobs.Put(ctx, key, r, -1); err != nil {
		if up.src.err != nil {
			return up.malformed(up.src.err)
		}
		return err
	}
	// The closing boundary and any epilogue; a body that is cut short after the file part
	// is still the client's fault.
	if _, err := io.Copy(io.Discard, up.body); err != nil {
		_ = s.deps.Blobs.Delete(ctx, key)
		return up.malformed(err)
	}
	return nil
}

// dropUpload removes an upload whose job could not be created or queued, so that nothing
// is left in the blob store that no job will ever use or delete.
func (s *Server) dropUpload(ctx context.Context, key string) {
	if key == "" {
		return
	}
	// The request's context may be what failed; the cleanup must run anyway.
	if err := s.deps.Blobs.Delete(context.WithoutCancel(ctx), key); err != nil {
		s.log.Warn("upload of a failed request not deleted", "key", key, "error", err)
	}
}
