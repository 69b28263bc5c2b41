package queue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
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

// TestLogged: a failed run is logged with its type, outcome, attempt and cause (warning while
// it will be retried, error when it failed for good); a success is not logged.
func TestLogged(t *testing.T) {
	outage := storage.Unavailable("elasticsearch", errors.New("connection refused"))
	for _, tc := range []struct {
		name    string
		retried int
		err     error
		want    string
	}{
		{"success", 0, nil, ""},
		{"outage", 1, outage, `level=WARN msg="job attempt failed" task_type=content:index outcome=retried duration_ms=0 err="elasticsearch unavailable: connection refused" attempt=2 max_attempts=4`},
		{"last attempt", 3, errors.New("boom"), `level=ERROR msg="job attempt failed" task_type=content:index outcome=failed duration_ms=0 err=boom attempt=4 max_attempts=4`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				switch a.Key {
				case slog.TimeKey:
					return slog.Attr{}
				case "duration_ms":
					return slog.Int("duration_ms", 0)
				}
				return a
			}}))
			h := queue.Logged(queue.HandlerFunc(func(context.Context, *queue.Task) error { return tc.err }), log)
			if err := h.ProcessTask(queue.WithAttempt(context.Background(), tc.retried, 3), queue.NewTask("content:index", []byte(`{"secret":"learner data"}`))); err != tc.err {
				t.Fatalf("returned %v", err)
			}
			if got := strings.TrimSpace(buf.String()); got != tc.want {
				t.Errorf("log:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
