package indexer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestCommitterGroupsAndSeparatesErrors: concurrent callers share flushes, every item is
// flushed, and a bad item fails only its own caller.
func TestCommitterGroupsAndSeparatesErrors(t *testing.T) {
	var lock sync.Mutex
	var flushes, largest int
	flushed := map[int]bool{}
	bad := errors.New("bad item")
	c := &Committer[int]{Window: 20 * time.Millisecond, Lock: &lock, Flush: func(_ context.Context, items []int) error {
		flushes++ // under Lock
		largest = max(largest, len(items))
		for _, it := range items {
			if it%10 == 7 {
				return fmt.Errorf("item %d: %w", it, bad)
			}
		}
		for _, it := range items {
			flushed[it] = true
		}
		return nil
	}}
	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = c.Commit(context.Background(), i) })
	}
	wg.Wait()
	for i, err := range errs {
		if wantBad := i%10 == 7; wantBad != errors.Is(err, bad) {
			t.Errorf("item %d: error %v, want bad %v", i, err, wantBad)
		}
		if !flushed[i] && i%10 != 7 {
			t.Errorf("item %d: not flushed", i)
		}
	}
	if largest < 2 || flushes >= 2*n {
		t.Errorf("%d flushes, the largest of %d items: no group commit", flushes, largest)
	}
}

// TestCommitterLeaderCancelled: a leader whose context ends during the window still flushes
// its group, and the others' items succeed.
func TestCommitterLeaderCancelled(t *testing.T) {
	var lock sync.Mutex
	var got []int
	c := &Committer[int]{Window: time.Hour, Lock: &lock, Flush: func(ctx context.Context, items []int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		got = append(got, items...)
		return nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	leader := make(chan error, 1)
	go func() { leader <- c.Commit(ctx, 1) }()
	waitPending(t, c, 1)
	other := make(chan error, 1)
	go func() { other <- c.Commit(context.Background(), 2) }()
	waitPending(t, c, 2)
	cancel()
	if err := <-other; err != nil {
		t.Errorf("other item: %v", err)
	}
	if err := <-leader; err != nil {
		t.Errorf("leader: %v", err)
	}
	if len(got) != 2 {
		t.Errorf("flushed %v, want both items", got)
	}
}

// waitPending polls until n items wait in c.
func waitPending(t *testing.T, c *Committer[int], n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		waiting := len(c.pending)
		c.mu.Unlock()
		if waiting == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d items wait, want %d", waiting, n)
		}
		time.Sleep(time.Millisecond)
	}
}
