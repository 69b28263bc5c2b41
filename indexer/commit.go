package indexer

import (
	"context"
	"sync"
	"time"
)

// Committer commits the items of concurrent callers together (group commit): the first
// caller of a group (the leader) waits Window for others, takes Lock, and flushes every item
// pending then in one Flush; items that arrive meanwhile form the next group. Each caller
// gets its own item's error: when a group of several fails, each item is flushed alone, so
// that one bad item fails only its own call. Both backends commit IndexContent this way, so
// that concurrent index tasks share one transaction or bulk request (and one segment or
// refresh). The zero Committer (with Lock and Flush set) is ready; it is safe for concurrent
// use.
type Committer[T any] struct {
	// Window is how long a leader waits for others (zero: it flushes at once, with whatever
	// arrived while the previous flush ran). Cancelling the leader's context ends only its
	// wait: the others' items wait on its flush.
	Window time.Duration
	// Lock is held around each flush (the backend's write lock): items arriving while it is
	// held join the next group.
	Lock sync.Locker
	// Flush writes items at once. A group of one is flushed with its caller's context; a
	// larger group with the leader's context freed of its cancellation (the others' items
	// must not fail because the leader's context ends) and bounded by GroupTimeout.
	Flush func(ctx context.Context, items []T) error
	// GroupTimeout bounds the flushes of a group of several, the retries alone included
	// (zero: no bound).
	GroupTimeout time.Duration

	mu      sync.Mutex
	pending []*pendingItem[T]
}

// pendingItem is one caller's item waiting in a group.
type pendingItem[T any] struct {
	item T
	done chan error
}

// Commit adds item to the current group, flushes the group when it is the leader, and
// returns the item's error once its group is flushed.
func (c *Committer[T]) Commit(ctx context.Context, item T) error {
	w := &pendingItem[T]{item: item, done: make(chan error, 1)}
	c.mu.Lock()
	leader := len(c.pending) == 0
	c.pending = append(c.pending, w)
	c.mu.Unlock()
	if !leader {
		return <-w.done
	}
	if c.Window > 0 {
		t := time.NewTimer(c.Window)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	c.Lock.Lock()
	c.mu.Lock()
	group := c.pending
	c.pending = nil
	c.mu.Unlock()
	c.flush(ctx, group)
	c.Lock.Unlock()
	return <-w.done
}

// flush writes group and reports to each of its callers. The caller holds Lock.
func (c *Committer[T]) flush(ctx context.Context, group []*pendingItem[T]) {
	if len(group) == 1 {
		group[0].done <- c.Flush(ctx, []T{group[0].item})
		return
	}
	gctx := context.WithoutCancel(ctx)
	if c.GroupTimeout > 0 {
		var cancel context.CancelFunc
		gctx, cancel = context.WithTimeout(gctx, c.GroupTimeout)
		defer cancel()
	}
	items := make([]T, len(group))
	for i, w := range group {
		items[i] = w.item
	}
	if err := c.Flush(gctx, items); err != nil {
		for _, w := range group {
			w.done <- c.Flush(gctx, []T{w.item})
		}
		return
	}
	for _, w := range group {
		w.done <- nil
	}
}
