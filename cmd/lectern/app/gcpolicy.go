package app

import (
	"context"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The server roles' collector policy. DefaultGCPercent (400) keeps collections rare while the
// live heap is small, which is most of the time (a few MB to a few dozen): the query latency
// tail it bought is in docs/benchmarks.md. But the same target lets a burst of large requests
// (eight 50 MB statement batches) grow the heap to five times what is live, 6.9× the bytes
// sent where the goal is 3× (issue 22). So once the live heap is large, a soft memory limit
// holds the heap near Go's default target instead: at most twice what is live, never below
// gcHeapFloor, never above the process's configured limit.

// gcHeapFloor is the memory limit the policy never sets lower: below it GOGC 400 decides
// alone (a live heap of up to about 50 MiB collects at its own pace).
const gcHeapFloor = 256 << 20

// gcPolicyInterval is how often the policy reads the live heap (which changes once per
// collection) and moves the limit.
const gcPolicyInterval = 100 * time.Millisecond

// GCLimit is the soft memory limit for a live heap of live bytes: twice the live heap, at
// least gcHeapFloor, and at most configured when that is set (> 0).
func GCLimit(live, configured int64) int64 {
	limit := int64(gcHeapFloor)
	switch {
	case live > math.MaxInt64/2:
		limit = math.MaxInt64
	case 2*live > limit:
		limit = 2 * live
	}
	if configured > 0 && configured < limit {
		limit = configured
	}
	return limit
}

// RunGCPolicy applies the server roles' collector policy until ctx ends: the collector target
// DefaultGCPercent, and the soft memory limit GCLimit of the live heap, read every
// gcPolicyInterval. configured is the process's own limit (LECTERN_MEMORY_LIMIT or the
// container's; 0: none). When it returns the limit is configured again (none: unlimited).
// cmd/lectern runs it unless GOGC or GOMEMLIMIT is set, which then decide.
func RunGCPolicy(ctx context.Context, configured int64) {
	debug.SetGCPercent(DefaultGCPercent)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	set := int64(-1)
	apply := func() {
		metrics.Read(sample)
		var live int64
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = int64(min(sample[0].Value.Uint64(), math.MaxInt64))
		}
		if l := GCLimit(live, configured); l != set {
			debug.SetMemoryLimit(l)
			set = l
		}
	}
	apply()
	t := time.NewTicker(gcPolicyInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if configured > 0 {
				debug.SetMemoryLimit(configured)
			} else {
				debug.SetMemoryLimit(math.MaxInt64)
			}
			return
		case <-t.C:
			apply()
		}
	}
}
