package server

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/storage"
)

// RetryAfterSeconds is the Retry-After of a 503 caused by a backend outage.
const RetryAfterSeconds = 5

// errorHandler is the one place that turns errors into responses. Handlers return port
// sentinels or *httpx.Error; anything unrecognised is a 500 whose details stay in the log.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	status, msg := fiber.StatusInternalServerError, "internal error"
	var e *httpx.Error
	var fe *fiber.Error
	var ue *storage.UnavailableError
	switch {
	case errors.As(err, &e):
		status, msg = e.Status, e.Message
	case errors.As(err, &fe):
		status, msg = fe.Code, fe.Message
		if status == fiber.StatusRequestEntityTooLarge {
			msg = fmt.Sprintf("request body is larger than the limit of %d bytes", s.deps.BodyLimit)
		}
	case errors.As(err, &ue):
		// A backend outage is not the request's fault and passes: say which backend, and when
		// to try again. Nothing was accepted, so the client may simply repeat the request.
		status, msg = fiber.StatusServiceUnavailable, fmt.Sprintf("%s is unavailable; try again later", ue.Backend)
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(RetryAfterSeconds))
	default:
		status, msg, _ = httpx.StatusOf(err)
	}
	if status >= 500 {
		s.log.Error("request failed", "request_id", httpx.RequestID(c), "method", c.Method(), "path", c.Path(), "error", err)
	} else {
		s.log.Debug("request rejected", "request_id", httpx.RequestID(c), "status", status, "message", msg)
	}
	return c.Status(status).JSON(httpx.Message{Message: msg})
}
