package queue

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/lectern-lms/lectern/storage"
)

// The outcomes Observe reports: how the queue treats a task after one handler run. They are
// plain strings so that a hook taking a string (a metric's label) can be passed as it is.
const (
	// OutcomeCompleted: the handler returned nil.
	OutcomeCompleted = "completed"
	// OutcomeRetried: the handler failed and the task will run again, also when an outage
	// (storage.ErrUnavailable) failed its last attempt, since an outage uses up no retries.
	OutcomeRetried = "retried"
	// OutcomeFailed: the handler failed for good (SkipRetry, or its last attempt).
	OutcomeFailed = "failed"
)

// Observe wraps h so that observe hears how long each run took and its outcome
// (OutcomeCompleted, OutcomeRetried, OutcomeFailed). The outcome is classified here, beside
// the Handler contract that defines it, so that instrumentation above the queue (the metrics
// in cmd/lectern) never has to know the retry rules. A nil observe returns h unchanged.
func Observe(h Handler, observe func(outcome string, d time.Duration)) Handler {
	if observe == nil {
		return h
	}
	return HandlerFunc(func(ctx context.Context, t *Task) error {
		start := time.Now()
		err := h.ProcessTask(ctx, t)
		observe(outcomeOf(ctx, err), time.Since(start))
		return err
	})
}

// outcomeOf applies the Handler contract to err, returned by a run with ctx.
func outcomeOf(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return OutcomeCompleted
	case errors.Is(err, SkipRetry), LastAttempt(ctx) && !errors.Is(err, storage.ErrUnavailable):
		return OutcomeFailed
	default:
		return OutcomeRetried
	}
}

// Logged wraps h so that every failed run is logged with its cause: the task type, the
// outcome (OutcomeRetried at warning level, OutcomeFailed at error level), which attempt it
// was and the error. Without it a job failing on an outage (an indexer whose Elasticsearch
// is down) shows only in the metrics. Payloads are not logged: they may carry learners' data.
func Logged(h Handler, log *slog.Logger) Handler {
	if log == nil {
		return h
	}
	return HandlerFunc(func(ctx context.Context, t *Task) error {
		start := time.Now()
		err := h.ProcessTask(ctx, t)
		if err == nil {
			return nil
		}
		outcome := outcomeOf(ctx, err)
		level := slog.LevelWarn
		if outcome == OutcomeFailed {
			level = slog.LevelError
		}
		attrs := []any{"task_type", t.Type, "outcome", outcome, "duration_ms", time.Since(start).Milliseconds(), "err", err.Error()}
		if a, ok := ctx.Value(attemptKey{}).(attempt); ok {
			attrs = append(attrs, "attempt", a.retried+1, "max_attempts", a.max+1)
		}
		log.Log(ctx, level, "job attempt failed", attrs...)
		return err
	})
}
