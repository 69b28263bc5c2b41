package server

import (
	"net"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/httpx"
)

// Two origins (docs/security.md, "Content isolation"). Course packages are hostile: their
// scripts run in front of whoever opens them, root previewing in the console included. So the
// player, its runtime endpoints and the course files (everything under /player/) are served
// from a content origin of their own, and nothing else is: a package's script runs where the
// only capability in reach is its own player session, never the console's cookie (scoped to
// /console and refused on writes that are not same-origin) or an API credential.
//
// The player page itself is on the content origin, not only the content: SCORM content finds
// its API object by walking window.parent and window.opener (many authoring tools read
// window.top.API directly) and calls it synchronously, and a proxy across origins could only
// answer GetValue from a copy, without the data model's error codes.
//
// A request is on the content origin when it came in on the content listener (the embedded
// default's second port) or names the content origin's host (a separate host name in front
// of the same listener). On the content origin only /player/ and /healthz are served; on the
// API origin /player/ answers with a redirect to the same path on the content origin, so
// launch links issued before the split (and clients that follow them) keep working.

// contentPath reports whether the content origin serves path (nothing else answers there).
func contentPath(path string) bool {
	return strings.HasPrefix(path, "/player/") || path == "/healthz"
}

// onContentOrigin reports whether the request came to the content origin.
func (s *Server) onContentOrigin(c *fiber.Ctx) bool {
	if _, ok := c.Context().Conn().(contentConn); ok {
		return true
	}
	return s.contentHost != "" && strings.EqualFold(string(c.Request().Host()), s.contentHost)
}

// originGate keeps each origin to its own routes.
func (s *Server) originGate(c *fiber.Ctx) error {
	if s.deps.ContentURL == "" {
		return c.Next()
	}
	path := c.Path()
	if s.onContentOrigin(c) {
		if contentPath(path) {
			return c.Next()
		}
		c.Context().SetConnectionClose()
		return httpx.NotFound("this is Lectern's content origin: it serves course players and their files only; the APIs and the console are at %s", s.apiOrigin(c))
	}
	if !strings.HasPrefix(path, "/player/") {
		return c.Next()
	}
	// The body (if any) is not read: the connection closes after the redirect. 307 keeps the
	// method and body for a client that sends them again.
	c.Context().SetConnectionClose()
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(s.deps.ContentURL+string(c.Request().RequestURI()), fiber.StatusTemporaryRedirect)
}

// apiOrigin is the origin of the APIs and the console, for messages.
func (s *Server) apiOrigin(c *fiber.Ctx) string {
	if s.deps.PublicURL != "" {
		return s.deps.PublicURL
	}
	return "the server's main address"
}

// hostOf is the host (and port, when it names one) of an origin URL, as a Host header
// carries it; "" when it has none.
func hostOf(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return ""
	}
	return u.Host
}

// ServeContent serves the content origin on ln (the embedded default's second port): only
// the player and its files answer there, whatever Host a request names.
func (s *Server) ServeContent(ln net.Listener) error {
	// The route tree was built in New; Serve on the fasthttp server directly, as Fiber's
	// Listener would, without a second start-up.
	return s.app.Server().Serve(contentListener{lingerListener{ln}})
}

// contentListener marks the connections it accepts as the content origin's.
type contentListener struct{ lingerListener }

func (l contentListener) Accept() (net.Conn, error) {
	c, err := l.lingerListener.Accept()
	if err != nil {
		return nil, err
	}
	return contentConn{c}, nil
}

// contentConn is a connection accepted on the content listener.
type contentConn struct{ net.Conn }
