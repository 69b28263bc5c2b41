package httpx

import (
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/tenant"
)

// Error is an error with the HTTP status and the message the client sees.
type Error struct {
	Status  int
	Message string
}

// Error is the message the client sees.
func (e *Error) Error() string { return e.Message }

// Errorf is an *Error with status and a formatted message.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// BadRequest is a 400 with a formatted message.
func BadRequest(format string, args ...any) *Error {
	return Errorf(fiber.StatusBadRequest, format, args...)
}

// NotFound is a 404 with a formatted message.
func NotFound(format string, args ...any) *Error {
	return Errorf(fiber.StatusNotFound, format, args...)
}

// Message is the body of every 4xx and 5xx response.
type Message struct {
	Message string `json:"message"`
}

// StatusOf is the answer to the domain packages' sentinel errors (and the settings'
// validation errors) that handlers return as they are: the status and the message. ok is
// false for an error it does not know, which the central handler answers 500.
func StatusOf(err error) (status int, msg string, ok bool) {
	var se *settings.Error
	switch {
	case errors.As(err, &se):
		return fiber.StatusBadRequest, se.Error(), true
	case errors.Is(err, course.ErrCourseNotFound), errors.Is(err, course.ErrImportJobNotFound):
		return fiber.StatusNotFound, err.Error(), true
	case errors.Is(err, course.ErrInvalidCourseID):
		return fiber.StatusBadRequest, err.Error(), true
	case errors.Is(err, course.ErrCourseExists):
		return fiber.StatusConflict, err.Error(), true
	case errors.Is(err, registration.ErrNotFound):
		return fiber.StatusNotFound, err.Error(), true
	case errors.Is(err, registration.ErrInvalid), errors.Is(err, registration.ErrExists):
		return fiber.StatusBadRequest, err.Error(), true
	case errors.Is(err, content.ErrNotFound):
		return fiber.StatusNotFound, err.Error(), true
	case errors.Is(err, content.ErrInvalidID), errors.Is(err, content.ErrInvalidTag):
		return fiber.StatusBadRequest, err.Error(), true
	case errors.Is(err, tenant.ErrNotFound):
		return fiber.StatusNotFound, err.Error(), true
	case errors.Is(err, tenant.ErrExists):
		return fiber.StatusConflict, err.Error(), true
	case errors.Is(err, tenant.ErrDisabled):
		return fiber.StatusConflict, err.Error(), true
	case errors.Is(err, tenant.ErrInvalidID):
		return fiber.StatusBadRequest, err.Error(), true
	case errors.Is(err, record.ErrNotFound):
		return fiber.StatusNotFound, err.Error(), true
	case errors.Is(err, record.ErrConflict), errors.Is(err, record.ErrStale):
		return fiber.StatusConflict, err.Error(), true
	case errors.Is(err, record.ErrInvalid):
		return fiber.StatusBadRequest, err.Error(), true
	}
	return fiber.StatusInternalServerError, "internal error", false
}

// LocalsRequestID is the Locals key the root's requestid middleware keeps the id under.
const LocalsRequestID = "requestid"

// RequestID is the request's id (the requestid middleware's), "" when it has none.
func RequestID(c *fiber.Ctx) string {
	if v, ok := c.Locals(LocalsRequestID).(string); ok {
		return v
	}
	return ""
}
