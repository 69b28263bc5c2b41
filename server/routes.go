package server

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"github.com/lectern-lms/lectern/server/console"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/server/lrsapi"
)

func (s *Server) registerRoutes() {
	s.handle(httpx.Route{Method: fiber.MethodGet, Path: "/healthz", Summary: "Process health", Tag: "operations",
		Scope: httpx.ScopePublic, Success: 200, Response: "Health"}, s.healthz)
	s.handle(httpx.Route{Method: fiber.MethodGet, Path: "/readyz", Summary: "Readiness of every backend", Tag: "operations",
		Scope: httpx.ScopePublic, Success: 200, Response: "Readiness", Answers: []httpx.Answer{{Status: 503, Schema: "Readiness"}}}, s.readyz)
	if s.deps.Metrics != nil {
		s.handle(httpx.Route{Method: fiber.MethodGet, Path: "/metrics", Summary: "Prometheus metrics (text exposition format); root credentials", Tag: "operations",
			Scope: httpx.ScopeRoot, Success: 200, Media: []string{"text/plain"}}, adaptor.HTTPHandler(s.deps.Metrics.Handler()))
	}
	co := console.New(s.consoleDeps())
	s.registerQueueConsole(co.RootTool)
	co.Register(s.app)
	s.handle(httpx.Route{Method: fiber.MethodGet, Path: "/openapi.json", Summary: "This API description", Tag: "operations",
		Scope: httpx.ScopePublic, Success: 200, Response: "OpenAPI"}, s.openapi)

	s.content.Register(registrar{s})

	s.engine.Register(registrar{s})
	s.player.Register(registrar{s})
	// The record store's prelude reads the form of the alternate request syntax, which
	// carries the credentials: its own small limit under the base comes first.
	s.app.Use(lrsapi.Base, s.alternateBody)
	s.lrs.Register(registrar{s})
}
