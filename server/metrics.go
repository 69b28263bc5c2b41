package server

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"github.com/lectern-lms/lectern/server/console"
	"github.com/lectern-lms/lectern/server/httpx"
)

// ConsolePath is where the web console is served (console.Path).
const ConsolePath = console.Path

// QueueConsolePath is where Deps.QueueConsole is served (root only). The console is a web
// application of its own, not an API operation, so /openapi.json does not describe it.
const QueueConsolePath = "/console/queues"

// registerQueueConsole mounts the queue console, when there is one, behind the root
// credentials: an API client's Basic credentials, or root's console sign-in (session turns
// a console session into them; a browser without one is sent to sign in).
func (s *Server) registerQueueConsole(session fiber.Handler) {
	if s.deps.QueueConsole == nil {
		return
	}
	h := adaptor.HTTPHandler(s.deps.QueueConsole)
	rootOnly := func(c *fiber.Ctx) error {
		if !httpx.PrincipalOf(c).Root {
			return httpx.Errorf(fiber.StatusForbidden, "the queue console needs the root credentials")
		}
		return c.Next()
	}
	for _, p := range []string{QueueConsolePath, QueueConsolePath + "/*"} {
		s.app.All(p, session, s.authenticate, rootOnly, afterRoot(httpx.MaxJSONBody), h)
	}
}

// statementsStored counts the statements a write stored (the ingest OnStored hook).
func (s *Server) statementsStored(n int) {
	if s.deps.Metrics != nil {
		s.deps.Metrics.StatementsStored(n)
	}
}
