package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/lectern-lms/lectern/server/console"
	"github.com/lectern-lms/lectern/server/httpx"
)

// Request bodies and framing. fasthttp reads a request's header, then, left to itself, up
// to 8 KiB of the body a request declares before any handler runs (or, after a 100 Continue,
// waits for it): a client that declares a body and sends none of it holds a connection and
// a buffer until the read timeout, unauthenticated. headerReceived (fasthttp's header hook)
// hides the declared length from fasthttp so that it reads none of the body; the first
// middleware (framingCheck) checks the framing of the raw header lines, gives the body back its
// length and puts an httpx.Body with the smallest limit in front of it. Each route then sets
// its own limit, refusing a declared length over it before anything else, and reads the body
// only once it knows who is asking:
//
//   - API routes (handle): limit check, authentication and tenant scope, then ApplyLimit;
//   - the record store's alternate request syntax, whose form carries the credentials: 64 KiB
//     read before authentication (alternateBody);
//   - the console (sign-in 16 KiB, forms 1 MiB, imports the upload limit, after the session)
//     and the player (commits 4 MiB, the runtime's bound; HACP 1 MiB; after the session token):
//     their own packages;
//   - the queue console: 1 MiB after the root credentials.
//
// A body left unread when the answer is ready (a refusal) is not waited for: the connection
// is closed after the answer.

// Default body limits; Deps.BodyLimit and Deps.RecordBodyLimit override the first two.
const (
	defaultUploadLimit = 512 << 20
	defaultRecordLimit = 64 << 20
	// defaultPreAuthBudget bounds the bodies read before their sender is known, all of them
	// together (httpx.Budget): issue 22's goal for unauthenticated memory growth.
	defaultPreAuthBudget = 64 << 20
)

// routeLimit is the body limit of a route: uploads (multipart bodies only) get the upload
// limit and stream, record-store writes the record limit, other routes with a body the JSON
// limit, routes without one MaxNoBody; Route.BodyLimit overrides them all.
func (s *Server) routeLimit(r httpx.Route, contentType string) (limit int64, stream bool) {
	switch {
	case r.BodyLimit > 0:
		return r.BodyLimit, false
	case r.Upload && strings.HasPrefix(strings.ToLower(contentType), fiber.MIMEMultipartForm):
		return int64(s.deps.BodyLimit), true
	case r.Scope == httpx.ScopeLRS && r.Body != "":
		return int64(s.deps.RecordBodyLimit), false
	case r.Body != "" || r.FormBody != "" || r.Upload:
		return httpx.MaxJSONBody, false
	}
	return httpx.MaxNoBody, false
}

// limitBody is the first handler of every API route: it sets the route's limit and refuses a
// declared length over it, reading nothing.
func (s *Server) limitBody(r httpx.Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		limit, _ := s.routeLimit(r, c.Get(fiber.HeaderContentType))
		if err := httpx.Limit(c, limit); err != nil {
			return err
		}
		return c.Next()
	}
}

// readBody comes after authentication: it reads the body into memory or, on upload routes,
// leaves it to the handler behind a streamed body (httpx.OpenUpload). A public route (the
// OAuth token form) has no authentication before it, so its body is read inside the
// pre-authentication budget.
func (s *Server) readBody(r httpx.Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		limit, stream := s.routeLimit(r, c.Get(fiber.HeaderContentType))
		if r.Scope == httpx.ScopePublic && !stream {
			return s.deps.PreAuth.Read(c, limit, c.Next)
		}
		return httpx.ApplyLimit(c, limit, stream)
	}
}

// alternateBody reads the form of the record store's alternate request syntax (POST
// ?method=X) up to httpx.MaxAlternateBody before the prelude rewrites it: its fields carry
// the credentials, so it cannot wait for authentication. Other requests pass unread.
func (s *Server) alternateBody(c *fiber.Ctx) error {
	if c.Method() == fiber.MethodPost && len(c.Context().QueryArgs().Peek("method")) > 0 {
		return s.deps.PreAuth.Read(c, httpx.MaxAlternateBody, c.Next)
	}
	return c.Next()
}

// afterRoot reads the body of a route outside the API table (the queue console) once the
// handlers before it have checked the credentials.
func afterRoot(limit int64) fiber.Handler {
	return func(c *fiber.Ctx) error { return httpx.ApplyLimit(c, limit, false) }
}

// headerReceived is fasthttp's header hook, run before it reads any of the body. A declared
// Content-Length is hidden from fasthttp (it then takes the body for a chunked one, which it
// leaves unread until a handler asks), and framing gives it back. A request that will be
// refused on its header alone (bad framing, a declared length over its route's limit) loses
// its Expect: 100-continue, so the refusal comes at once instead of a 100 Continue that asks
// the client for the body.
//
// This leans on how fasthttp (v1.51) streams a body: it takes a negative length for chunked
// and reads nothing ahead of it, and its body stream reads the header's length on every
// read, so the length set back later frames the body. An upgrade that changes either shows in
// TestFramingRefusedAtOnce and TestBoundedBeforeAuthenticated (answers that wait) and in
// TestHTTPFraming (bodies framed wrongly).
func (s *Server) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if h.ContentLength() > 0 {
		h.SetContentLength(-1)
	}
	if len(h.Peek(fiber.HeaderExpect)) > 0 {
		declared, err := framing(h.RawHeaders(), h.IsHTTP11())
		authorized := len(h.Peek(fiber.HeaderAuthorization)) > 0
		if err != nil || declared > s.headerLimit(string(h.Method()), h.RequestURI(), string(h.ContentType()), authorized) {
			h.Del(fiber.HeaderExpect)
		}
	}
	return fasthttp.RequestConfig{}
}

// headerLimit is the largest body limit of the routes a request may reach, from its header
// alone (before routing): it only decides whether a 100 Continue is worth sending. An API
// operation that needs credentials reads no body of a request that brings none
// (authorized false: no Authorization header), so such a request is not asked for its body.
func (s *Server) headerLimit(method string, uri []byte, contentType string, authorized bool) int64 {
	path, query, _ := strings.Cut(string(uri), "?")
	switch {
	case method == fiber.MethodGet || method == fiber.MethodHead:
		return httpx.MaxNoBody
	case strings.HasPrefix(path, ConsolePath+"/"):
		return console.BodyLimit(method, path, int64(s.deps.BodyLimit))
	case strings.HasPrefix(path, "/player/"):
		limit := int64(httpx.MaxNoBody)
		for _, r := range s.player.Limits() {
			if r.Method == method && matchPath(r.Path, path) {
				limit = max(limit, r.Limit)
			}
		}
		return limit
	case strings.HasPrefix(path, LRSBase) && method == fiber.MethodPost && strings.Contains("&"+query, "&method="):
		return httpx.MaxAlternateBody
	}
	limit := int64(0)
	for _, r := range s.routes {
		if r.Method == method && matchPath(r.Path, path) && (authorized || r.Scope == httpx.ScopePublic) {
			l, _ := s.routeLimit(r, contentType)
			limit = max(limit, l)
		}
	}
	return max(limit, httpx.MaxNoBody)
}

// matchPath reports whether a Fiber route pattern (":param" segments) matches path.
func matchPath(pattern, path string) bool {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if strings.HasPrefix(p, ":") {
			if xs[i] == "" {
				return false
			}
			continue
		}
		if !strings.EqualFold(p, xs[i]) {
			return false
		}
	}
	return true
}

// framingCheck is the first middleware of every request. It refuses what RFC 9112 calls a
// message whose framing cannot be trusted, because a proxy in front may frame it otherwise
// and pass a second, smuggled request: several Content-Length fields, Content-Length with
// Transfer-Encoding, a Transfer-Encoding other than chunked, header folding. fasthttp
// accepts all of these (it keeps the last Content-Length and lets Transfer-Encoding win), so
// the raw header lines are checked. The body (unread: headerReceived) gets its length back
// and an httpx.Body in front of it. After the handler, a body left unread closes the
// connection, so its bytes are never taken for the next request.
func (s *Server) framingCheck(c *fiber.Ctx) error {
	req := c.Request()
	declared, ferr := framing(req.Header.RawHeaders(), req.Header.IsHTTP11())
	if ferr != nil {
		c.Context().SetConnectionClose()
		return ferr
	}
	switch {
	case !req.IsBodyStream():
	case len(req.Header.RawHeaders()) == 0:
		// Made in process (the console's calls to the API): the stream is the body itself.
		httpx.Begin(c, c.Context().RequestBodyStream(), int64(req.Header.ContentLength()), false)
	case declared >= 0:
		req.Header.SetContentLength(int(declared))
		httpx.Begin(c, c.Context().RequestBodyStream(), declared, false)
	default:
		// fasthttp's stream yields raw bytes up to the length; httpx.Body decodes the chunks.
		req.Header.SetContentLength(math.MaxInt)
		httpx.Begin(c, c.Context().RequestBodyStream(), -1, true)
	}
	err := c.Next()
	if !httpx.BodyRead(c) {
		c.Context().SetConnectionClose()
	}
	return err
}

// framing checks the raw header lines and returns the declared body length: the one
// Content-Length, -1 for a chunked body, 0 for none.
func framing(raw []byte, http11 bool) (declared int64, err *httpx.Error) {
	declared, err = 0, framingError(raw, http11)
	if err != nil {
		return 0, err
	}
	for len(raw) > 0 {
		var line []byte
		line, raw, _ = bytes.Cut(raw, []byte("\n"))
		k, v, ok := bytes.Cut(bytes.TrimSuffix(line, []byte("\r")), []byte(":"))
		switch {
		case !ok:
		case strings.EqualFold(string(k), fiber.HeaderTransferEncoding):
			return -1, nil
		case strings.EqualFold(string(k), fiber.HeaderContentLength):
			t := strings.TrimSpace(string(v))
			n, perr := strconv.ParseInt(t, 10, 64)
			if perr != nil || strings.Trim(t, "0123456789") != "" {
				return 0, httpx.BadRequest("the Content-Length %q is not a length", strings.TrimSpace(string(v)))
			}
			declared = n
		}
	}
	return declared, nil
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

// knownMethods answers a request whose method Fiber does not route (QUERY, a misspelling)
// itself, before Fiber's own "Invalid http method", which skips every middleware: the body
// such a request declares would stay unread on the connection (headerReceived hid it from
// fasthttp) and be read as the next request. The answer is the API's JSON 400, and the
// connection is closed.
func knownMethods(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Method()) {
		case fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodDelete,
			fiber.MethodConnect, fiber.MethodOptions, fiber.MethodTrace, fiber.MethodPatch:
			next(ctx)
			return
		}
		body, _ := json.Marshal(httpx.Message{Message: fmt.Sprintf("HTTP method %q is not supported", ctx.Method())})
		ctx.SetConnectionClose()
		ctx.SetStatusCode(fiber.StatusBadRequest)
		ctx.SetContentType(fiber.MIMEApplicationJSON)
		ctx.SetBody(body)
	}
}
