package server

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/tenant"
)

// Error is an error with the HTTP status and the message the client sees.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

func errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *Error {
	return errorf(fiber.StatusBadRequest, format, args...)
}

func notFound(format string, args ...any) *Error {
	return errorf(fiber.StatusNotFound, format, args...)
}

// RetryAfterSeconds is the Retry-After of a 503 caused by a backend outage.
const RetryAfterSeconds = 5

// Message is the body of every 4xx and 5xx response.
type Message struct {
	Message string `json:"message"`
}

// errorHandler is the one place that turns errors into responses. Handlers return port
// sentinels or *Error; anything unrecognised is a 500 whose details stay in the log.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	status, msg := fiber.StatusInternalServerError, "internal error"
	var e *Error
	var fe *fiber.Error
	var se *settings.Error
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
	case errors.As(err, &se):
		status, msg = fiber.StatusBadRequest, se.Error()
	case errors.Is(err, course.ErrCourseNotFound), errors.Is(err, course.ErrImportJobNotFound):
		status, msg = fiber.StatusNotFound, err.Error()
	case errors.Is(err, course.ErrInvalidCourseID):
		status, msg = fiber.StatusBadRequest, err.Error()
	case errors.Is(err, course.ErrCourseExists):
		status, msg = fiber.StatusConflict, err.Error()
	case errors.Is(err, registration.ErrNotFound):
		status, msg = fiber.StatusNotFound, err.Error()
	case errors.Is(err, registration.ErrInvalid), errors.Is(err, registration.ErrExists):
		status, msg = fiber.StatusBadRequest, err.Error()
	case errors.Is(err, content.ErrNotFound):
		status, msg = fiber.StatusNotFound, err.Error()
	case errors.Is(err, content.ErrInvalidID), errors.Is(err, content.ErrInvalidTag):
		status, msg = fiber.StatusBadRequest, err.Error()
	case errors.Is(err, tenant.ErrNotFound):
		status, msg = fiber.StatusNotFound, err.Error()
	case errors.Is(err, tenant.ErrExists):
		status, msg = fiber.StatusConflict, err.Error()
	case errors.Is(err, tenant.ErrDisabled):
		status, msg = fiber.StatusConflict, err.Error()
	case errors.Is(err, tenant.ErrInvalidID):
		status, msg = fiber.StatusBadRequest, err.Error()
	case errors.Is(err, record.ErrNotFound):
		status, msg = fiber.StatusNotFound, err.Error()
	case errors.Is(err, record.ErrConflict), errors.Is(err, record.ErrStale):
		status, msg = fiber.StatusConflict, err.Error()
	case errors.Is(err, record.ErrInvalid):
		status, msg = fiber.StatusBadRequest, err.Error()
	}
	if status >= 500 {
		s.log.Error("request failed", "request_id", requestID(c), "method", c.Method(), "path", c.Path(), "error", err)
	} else {
		s.log.Debug("request rejected", "request_id", requestID(c), "status", status, "message", msg)
	}
	return c.Status(status).JSON(Message{Message: msg})
}

func requestID(c *fiber.Ctx) string {
	if v, ok := c.Locals("requestid").(string); ok {
		return v
	}
	return ""
}
