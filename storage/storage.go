// Package storage holds what every backend adapter shares: the outage error. Each adapter
// (PostgreSQL, Redis, Elasticsearch, MinIO) translates its driver's connection failures into
// an *UnavailableError naming itself at its edge, so the HTTP layer answers 503 with
// Retry-After naming the backend, and job handlers retry instead of failing the job.
package storage

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
)

// ErrUnavailable matches (errors.Is) every *UnavailableError: a backend could not be reached
// or could not serve the request now, and trying again later may succeed.
var ErrUnavailable = errors.New("backend unavailable")

// UnavailableError says which backend is out and why.
type UnavailableError struct {
	// Backend names the server for people: "postgresql", "redis", "elasticsearch", "minio".
	Backend string
	// Err is the driver's error; nil for the sentinel value of an adapter package.
	Err error
}

// Error names the backend and the cause.
func (e *UnavailableError) Error() string {
	if e.Err == nil {
		return e.Backend + " unavailable"
	}
	return e.Backend + " unavailable: " + e.Err.Error()
}

// Unwrap returns the driver's error.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Is makes every UnavailableError match ErrUnavailable, and one whose Err is nil (an
// adapter's sentinel, such as elastic.ErrUnavailable) match any error of the same backend.
func (e *UnavailableError) Is(target error) bool {
	if target == ErrUnavailable {
		return true
	}
	t, ok := target.(*UnavailableError)
	return ok && t.Err == nil && t.Backend == e.Backend
}

// Unavailable wraps err as an outage of backend.
func Unavailable(backend string, err error) error {
	return &UnavailableError{Backend: backend, Err: err}
}

// IsConnectionError reports whether err is a network failure on the way to a server (refused,
// reset, timed out, closed mid-answer, name not resolved), which is what every adapter treats
// as an outage. A cancelled or expired context of the caller is not one.
func IsConnectionError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	var oe *net.OpError
	var de *net.DNSError
	return errors.As(err, &oe) || errors.As(err, &de) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
