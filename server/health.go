package server

import (
	"context"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Readiness is the body of /readyz: each backend's state.
type Readiness struct {
	Status   string            `json:"status"`
	Backends map[string]string `json:"backends"`
}

func (s *Server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok", "version": s.deps.Version})
}

// readyz pings every backend; 503 names the ones that do not answer and, as every 503 of an
// outage, says when to ask again (Retry-After), so a client or probe that follows the API's
// one rule for 5xx need not special-case this route.
func (s *Server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 5*time.Second)
	defer cancel()
	out := Readiness{Status: "ok", Backends: map[string]string{}}
	for _, chk := range s.deps.Checks {
		if err := chk.Ping(ctx); err != nil {
			out.Status = "unavailable"
			out.Backends[chk.Name] = err.Error()
			continue
		}
		out.Backends[chk.Name] = "ok"
	}
	if out.Status != "ok" {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(RetryAfterSeconds))
		return c.Status(fiber.StatusServiceUnavailable).JSON(out)
	}
	return c.JSON(out)
}
