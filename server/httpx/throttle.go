package httpx

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/internal/throttle"
)

// Throttle refuses an attempt to prove the secret of account from this client while the
// guard is slowing down its failures: 429 with Retry-After (whole seconds, at least 1) and a
// message that says why and when. A nil guard throttles nothing.
func Throttle(c *fiber.Ctx, g *throttle.Guard, account string) *Error {
	if g == nil {
		return nil
	}
	wait := g.Wait(account, c.IP())
	if wait <= 0 {
		return nil
	}
	secs := int((wait + time.Second - 1) / time.Second)
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
	return Errorf(fiber.StatusTooManyRequests,
		"too many failed attempts to authenticate as %q or from this address; try again in %d s", account, secs)
}

// Attempted records the outcome of an attempt Throttle let through.
func Attempted(c *fiber.Ctx, g *throttle.Guard, account string, ok bool) {
	switch {
	case g == nil:
	case ok:
		g.Succeeded(account)
	default:
		g.Failed(account, c.IP())
	}
}
