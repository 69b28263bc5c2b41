package httpx

import (
	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/semaphore"
)

// Budget bounds the memory held by the bodies a server reads before it knows their sender:
// sign-in forms, the OAuth token form, the record store's alternate request syntax. Each is
// small (16 or 64 KiB), but one client can hold as many as it can open connections, trickling
// their bytes: 12,000 such connections held 1.26 GB in an outside attack run (2026-12-08). A
// read that does not fit in the budget is refused at once with 503 and Retry-After, and its
// connection closed; the budget is far above what senders of legitimate forms hold at once.
type Budget struct {
	sem *semaphore.Weighted
}

// NewBudget returns a budget of size bytes.
func NewBudget(size int64) *Budget { return &Budget{sem: semaphore.NewWeighted(size)} }

// Read reads c's body, up to limit, inside the budget, then runs next; the bytes go back to
// the budget once next has returned (the request holds its body until then). A request
// without a body, or whose body is read already, runs next alone. A nil Budget reads
// without one.
func (b *Budget) Read(c *fiber.Ctx, limit int64, next func() error) error {
	body, ok := bodyOf(c)
	if !ok {
		return next()
	}
	if b == nil {
		if err := ReadBody(c, limit); err != nil {
			return err
		}
		return next()
	}
	if err := Limit(c, limit); err != nil {
		return err
	}
	// The read takes its declared length, or its limit when the length is unknown (chunked)
	// or tells nothing of the memory (a compressed body is held decoded, up to the limit).
	n := limit
	if body.declared >= 0 && body.declared < n && contentCoding(c) == "" {
		n = max(body.declared, 1)
	}
	if !b.sem.TryAcquire(n) {
		c.Set(fiber.HeaderRetryAfter, "1")
		return Errorf(fiber.StatusServiceUnavailable, "the server is reading as many request bodies from senders it does not know yet as it allows; retry in a moment")
	}
	defer b.sem.Release(n)
	if err := ReadBody(c, limit); err != nil {
		return err
	}
	return next()
}
