package app

import (
	"context"
	"math"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name             string
		live, configured int64
		want             int64
	}{
		{"a small heap collects at GOGC 400: the floor", 20 * mib, 0, 256 * mib},
		{"no reading yet", 0, 0, 256 * mib},
		{"a large heap is held within twice what is live", 600 * mib, 0, 1200 * mib},
		{"the floor up to half of it", 128 * mib, 0, 256 * mib},
		{"the process's own limit caps it", 600 * mib, 900 * mib, 900 * mib},
		{"a limit under the floor wins", 20 * mib, 128 * mib, 128 * mib},
		{"twice a huge heap does not overflow", math.MaxInt64/2 + 1, 0, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GCLimit(tc.live, tc.configured); got != tc.want {
				t.Errorf("GCLimit(%d MiB, %d MiB) = %d MiB, want %d MiB", tc.live/mib, tc.configured/mib, got/mib, tc.want/mib)
			}
		})
	}
}

// RunGCPolicy sets the limit of the live heap while it runs and gives the process back its
// own limit when it ends.
func TestRunGCPolicy(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, configured := range []int64{0, 200 << 20} {
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { RunGCPolicy(ctx, configured); close(done) }()
		deadline := time.Now().Add(10 * time.Second)
		want := GCLimit(1, configured) // this test's live heap is far below the floor
		for debug.SetMemoryLimit(-1) != want {
			if time.Now().After(deadline) {
				t.Fatalf("configured %d: limit %d, want %d", configured, debug.SetMemoryLimit(-1), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if p := debug.SetGCPercent(-1); p != DefaultGCPercent {
			t.Errorf("collector target %d, want %d", p, DefaultGCPercent)
		}
		debug.SetGCPercent(DefaultGCPercent)
		stop()
		<-done
		back := configured
		if back == 0 {
			back = math.MaxInt64
		}
		if got := debug.SetMemoryLimit(-1); got != back {
			t.Errorf("after the policy: limit %d, want %d", got, back)
		}
	}
}
