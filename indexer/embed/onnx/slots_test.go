//go:build cgo

package onnx

import (
	"context"
	"testing"
	"time"
)

// TestRunSlotsUrgentFirst: a freed slot goes to a waiting urgent call (a search query) before
// calls that were waiting longer; a waiter whose context ends leaves the line without taking
// a slot.
func TestRunSlotsUrgentFirst(t *testing.T) {
	r := newRunSlots(1)
	ctx := context.Background()
	if !r.acquire(ctx, false) {
		t.Fatal("acquire of a free slot failed")
	}
	got := make(chan string, 3)
	waitQueued := func(normal, urgent int) {
		deadline := time.Now().Add(5 * time.Second)
		for {
			r.mu.Lock()
			n, u := len(r.normal), len(r.urgent)
			r.mu.Unlock()
			if n == normal && u == urgent {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiters: %d normal, %d urgent; want %d, %d", n, u, normal, urgent)
			}
			time.Sleep(time.Millisecond)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	gone := make(chan bool)
	go func() { gone <- r.acquire(cctx, false) }()
	waitQueued(1, 0)
	go func() { r.acquire(ctx, false); got <- "normal"; r.release() }()
	waitQueued(2, 0)
	go func() { r.acquire(ctx, true); got <- "urgent"; r.release() }()
	waitQueued(2, 1)
	cancel()
	if <-gone {
		t.Fatal("a cancelled waiter got a slot")
	}
	waitQueued(1, 1)
	r.release()
	if first, second := <-got, <-got; first != "urgent" || second != "normal" {
		t.Fatalf("order %s, %s; want urgent, normal", first, second)
	}
	waitQueued(0, 0)
	if !r.acquire(ctx, false) {
		t.Fatal("the slot was not returned")
	}
}
