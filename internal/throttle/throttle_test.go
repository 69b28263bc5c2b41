package throttle

import (
	"fmt"
	"testing"
	"time"
)

// clock is a hand-driven time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newLimiter(c *clock, burst int) *Limiter {
	l := New(burst, 10*time.Second, 100)
	l.now = c.now
	return l
}

func TestLimiterRefusesAfterBurstAndLeaks(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	l := newLimiter(c, 3)
	for i := 0; i < 3; i++ {
		if w := l.Wait("root"); w != 0 {
			t.Fatalf("attempt %d: wait %v before the burst is spent", i+1, w)
		}
		l.Fail("root")
	}
	if w := l.Wait("root"); w != 10*time.Second {
		t.Fatalf("after 3 failures: wait %v, want 10s", w)
	}
	if w := l.Wait("other"); w != 0 {
		t.Fatalf("another key waits %v", w)
	}
	c.add(4 * time.Second)
	if w := l.Wait("root"); w != 6*time.Second {
		t.Fatalf("4s later: wait %v, want 6s", w)
	}
	c.add(6 * time.Second)
	if w := l.Wait("root"); w != 0 {
		t.Fatalf("one leak period later: wait %v, want 0", w)
	}
	// Failing while refused does not push the wait further than one leak period past the burst.
	for i := 0; i < 50; i++ {
		l.Fail("root")
	}
	if w := l.Wait("root"); w != 20*time.Second {
		t.Fatalf("after a flood of failures: wait %v, want 20s (the bucket is capped)", w)
	}
	l.Forget("root")
	if w := l.Wait("root"); w != 0 {
		t.Fatalf("after Forget: wait %v", w)
	}
}

func TestLimiterBoundsItsMemory(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	l := newLimiter(c, 2)
	l.Fail("guesser")
	l.Fail("guesser")
	l.Fail("guesser")
	for i := 0; i < 1000; i++ {
		l.Fail(fmt.Sprintf("k%d", i))
	}
	if n := len(l.buckets); n > 100 {
		t.Fatalf("%d buckets tracked, the limit is 100", n)
	}
	// The fullest bucket is the last to be forgotten.
	if w := l.Wait("guesser"); w == 0 {
		t.Fatal("a flood of one-off keys evicted the key with the most failures")
	}
}

func TestGuard(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	g := &Guard{Account: newLimiter(c, 2), Source: newLimiter(c, 3)}
	// One source trying many accounts meets the source limit.
	for i := 0; i < 3; i++ {
		g.Failed(fmt.Sprintf("user%d", i), "10.0.0.1")
	}
	if g.Wait("user9", "10.0.0.1") == 0 {
		t.Fatal("a source with 3 failures may try a fourth account")
	}
	if g.Wait("user9", "10.0.0.2") != 0 {
		t.Fatal("another source is refused")
	}
	// Many sources trying one account meet the account limit.
	g.Failed("root", "10.0.1.1")
	g.Failed("root", "10.0.1.2")
	if g.Wait("root", "10.0.1.3") == 0 {
		t.Fatal("an account with 2 failures may be tried from a third address")
	}
	g.Succeeded("root")
	if g.Wait("root", "10.0.1.3") != 0 {
		t.Fatal("a success did not clear the account's failures")
	}
}
