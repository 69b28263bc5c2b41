package queue_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/workers/queue"
)

// TestObserve pins the outcome of each kind of run, as both backends treat it.
func TestObserve(t *testing.T) {
	outage := storage.Unavailable("postgresql", errors.New("connection refused"))
	for _, tc := range []struct {
		name string
		last bool
		err  error
		want string
	}{
		{"success", false, nil, queue.OutcomeCompleted},
		{"success on the last attempt", true, nil, queue.OutcomeCompleted},
		{"error with retries left", false, errors.New("boom"), queue.OutcomeRetried},
		{"error on the last attempt", true, errors.New("boom"), queue.OutcomeFailed},
		{"SkipRetry with retries left", false, fmt.Errorf("bad payload: %w", queue.SkipRetry), queue.OutcomeFailed},
		{"outage with retries left", false, outage, queue.OutcomeRetried},
		{"outage on the last attempt", true, outage, queue.OutcomeRetried},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := queue.WithAttempt(context.Background(), 0, 3)
			if tc.last {
				ctx = queue.WithAttempt(context.Background(), 3, 3)
			}
			var got []string
			h := queue.Observe(queue.HandlerFunc(func(context.Context, *queue.Task) error {
				time.Sleep(time.Millisecond)
				return tc.err
			}), func(outcome string, d time.Duration) {
				if d < time.Millisecond {
					t.Errorf("run time %v, want at least 1ms", d)
				}
				got = append(got, outcome)
			})
			if err := h.ProcessTask(ctx, queue.NewTask("t", nil)); err != tc.err {
				t.Fatalf("the wrapped handler returned %v, want %v", err, tc.err)
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Fatalf("observed %v, want [%s]", got, tc.want)
			}
		})
	}
}

// TestObserveNil: without a hook the handler is not wrapped.
func TestObserveNil(t *testing.T) {
	var h queue.Handler = queue.HandlerFunc(func(context.Context, *queue.Task) error { return nil })
	if got := queue.Observe(h, nil); reflect.ValueOf(got).Pointer() != reflect.ValueOf(h).Pointer() {
		t.Fatal("Observe(h, nil) wrapped h")
	}
}
