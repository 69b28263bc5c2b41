package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
)

// Sentinel errors. Errors returned by this package wrap one of them (check with
// errors.Is) together with the underlying cause.
var (
	// ErrBlocked means the private-address policy refused the destination;
	// the concrete error is a *BlockedError naming the host and IP.
	ErrBlocked = errors.New("outbound: destination blocked by the private-address policy")
	// ErrTooLarge means the response body exceeds Config.MaxResponseBytes,
	// either announced by Content-Length or found while reading.
	ErrTooLarge = errors.New("outbound: response body too large")
	// ErrBadURL means the URL is malformed, not http/https, or names a host
	// in a form that cannot be judged safely (such as "2130706433").
	ErrBadURL = errors.New("outbound: bad URL")
	// ErrTimeout means the request, the connect or reading the body took too long.
	ErrTimeout = errors.New("outbound: timed out")
)

// BlockedError is the concrete error for ErrBlocked. Its message names the
// host and the address it resolved to, so an operator can tell which entry
// LECTERN_OUTBOUND_ALLOW needs; it never contains the URL, which may hold
// credentials.
type BlockedError struct {
	Host   string     // host as written in the URL (no port, no userinfo)
	IP     netip.Addr // address the host resolved to
	Reason string     // e.g. "loopback address"
}

func (e *BlockedError) Error() string {
	target := strconv.Quote(e.Host)
	if e.IP.IsValid() && e.IP.String() != e.Host {
		target += " (resolved to " + e.IP.String() + ")"
	}
	return fmt.Sprintf("outbound request to %s is blocked: %s (set LECTERN_OUTBOUND_ALLOW to allow it)", target, e.Reason)
}

// Unwrap makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// StatusError is returned by Download for a non-2xx response, so that an
// error page is never stored as if it were the requested file.
type StatusError struct {
	StatusCode int
	Status     string
}

func (e *StatusError) Error() string {
	return "outbound: unexpected response status " + e.Status
}

func badURL(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadURL}, args...)...)
}

// isTimeout reports whether err is some form of deadline expiry: the client's
// Timeout, a context deadline, the connect timeout or a socket deadline.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// classifyErr wraps err with ErrTimeout when it is a timeout and not already
// one of ours; policy and size errors keep their own sentinel.
func classifyErr(err error) error {
	if err == nil || errors.Is(err, ErrTimeout) || errors.Is(err, ErrBlocked) ||
		errors.Is(err, ErrTooLarge) || errors.Is(err, ErrBadURL) {
		return err
	}
	if isTimeout(err) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}
