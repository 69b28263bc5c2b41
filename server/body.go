package server

import (
	"bytes"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/httpx"
)

// Request bodies are streamed by fasthttp (Config.StreamRequestBody): nothing is read
// before a handler asks for it, so each route has its own limit, set here. Uploads stream
// their multipart file part to the blob store; every other body is read into memory
// (httpx.ApplyLimit), up to its route's limit, before authentication or the handler sees it.

// Default body limits; Deps.BodyLimit and Deps.RecordBodyLimit override the first two.
const (
	defaultUploadLimit = 512 << 20
	defaultRecordLimit = 64 << 20
)

// routeLimit is the body limit of a route: uploads (multipart bodies only) get the upload
// limit, the record store its own, everything else the JSON limit.
func (s *Server) routeLimit(r httpx.Route, c *fiber.Ctx) (limit int64, stream bool) {
	switch {
	case r.Upload && strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderContentType)), fiber.MIMEMultipartForm):
		return int64(s.deps.BodyLimit), true
	case r.Scope == httpx.ScopeLRS:
		return int64(s.deps.RecordBodyLimit), false
	}
	return httpx.MaxJSONBody, false
}

// limitBody is the first handler of every route: it refuses a body whose declared length is
// over the route's limit before reading any of it, then either reads the body into memory
// (so c.Body() works as usual) or, on upload routes, leaves it to the handler behind a
// streamed body (httpx.OpenUpload).
func (s *Server) limitBody(r httpx.Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		limit, stream := s.routeLimit(r, c)
		return httpx.ApplyLimit(c, limit, stream)
	}
}

// limitPrefix reads the body of everything under a path prefix up to limit (the record
// store, whose prelude reads form bodies before any route handler runs).
func (s *Server) limitPrefix(limit int64) fiber.Handler {
	return func(c *fiber.Ctx) error { return httpx.ApplyLimit(c, limit, false) }
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
	if !httpx.BodyRead(c) {
		c.Context().SetConnectionClose()
	}
	return err
}

func framingError(raw []byte, http11 bool) *httpx.Error {
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
			return httpx.BadRequest("header field line folding (obs-fold) is not accepted")
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
		return httpx.BadRequest("the request has %d Content-Length header fields; exactly one is allowed", lengths)
	case lengths > 0 && hasTE:
		return httpx.BadRequest("the request has both Content-Length and Transfer-Encoding; send one of them")
	case !hasTE:
		return nil
	case !http11:
		return httpx.BadRequest("Transfer-Encoding is not allowed in an HTTP/1.0 request")
	case len(codings) == 0 || codings[len(codings)-1] != "chunked":
		return httpx.BadRequest("Transfer-Encoding must end with chunked, the only transfer coding accepted")
	}
	for _, t := range codings[:len(codings)-1] {
		if t == "chunked" {
			return httpx.BadRequest("Transfer-Encoding applies chunked more than once")
		}
		return httpx.BadRequest("transfer coding %q is not supported; send the body chunked only", t)
	}
	return nil
}
