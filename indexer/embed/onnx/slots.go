//go:build cgo

package onnx

import (
	"context"
	"slices"
	"sync"
)

// runSlots is a counting semaphore whose urgent waiters are served before the others.
type runSlots struct {
	size   int
	mu     sync.Mutex
	free   int
	urgent []chan struct{}
	normal []chan struct{}
}

func newRunSlots(n int) *runSlots { return &runSlots{size: n, free: n} }

// acquire takes a slot, waiting in line (the urgent line when urgent); false when ctx ended
// first.
func (r *runSlots) acquire(ctx context.Context, urgent bool) bool {
	r.mu.Lock()
	if r.free > 0 {
		r.free--
		r.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	line := &r.normal
	if urgent {
		line = &r.urgent
	}
	*line = append(*line, ch)
	r.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		r.mu.Lock()
		if i := slices.Index(*line, ch); i >= 0 {
			*line = slices.Delete(*line, i, i+1)
			r.mu.Unlock()
			return false
		}
		r.mu.Unlock()
		r.release() // granted meanwhile: pass it on
		return false
	}
}

// release returns a slot, to the first urgent waiter, else the first other one.
func (r *runSlots) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, line := range []*[]chan struct{}{&r.urgent, &r.normal} {
		if len(*line) > 0 {
			ch := (*line)[0]
			*line = (*line)[1:]
			close(ch)
			return
		}
	}
	r.free++
}
