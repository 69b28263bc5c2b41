// Package queue is Lectern's job-queue port. It copies asynq's shape (a Task is a type string
// plus an opaque payload, a Handler has one method, options are functional) so that the Redis
// backend is a thin adapter and the embedded backend can be held to the same contract.
//
// Delivery is at-least-once: a task whose worker dies mid-handler is delivered again once the
// worker's lease has expired, so every Handler must be idempotent. Backends live in
// subpackages (asynq for Redis, inproc for the record store); queuetest holds the contract
// suite both must pass.
package queue

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"time"
)

// Sentinel errors shared by every backend; callers test them with errors.Is.
var (
	// ErrDuplicateTask means Enqueue was given a TaskID that names a task which is still
	// pending, scheduled, running, waiting for a retry, or retained after it finished.
	// Callers use task ids for idempotent enqueueing, so this is usually not a failure.
	ErrDuplicateTask = errors.New("queue: task id already exists")
	// ErrTaskNotFound means Inspect found no task with that id (never enqueued, or its
	// retention has run out).
	ErrTaskNotFound = errors.New("queue: task not found")
	// ErrClosed means the queue was closed; it accepts no more calls.
	ErrClosed = errors.New("queue: closed")
	// SkipRetry, returned by a handler (possibly wrapped with %w), marks the task as failed
	// for good: it is archived at once instead of being retried. Use it for poison tasks
	// such as a payload that does not decode, which no retry can ever fix.
	// It is named like asynq.SkipRetry rather than ErrSkipRetry so handlers read the same
	// on both backends.
	SkipRetry = errors.New("queue: skip retry")
)

// DefaultMaxRetry is the retry budget of a task enqueued without MaxRetry; it is asynq's.
const DefaultMaxRetry = 25

// Task is a unit of work: a type that selects the handler and an opaque payload, usually
// JSON. Backends always serialise the payload, so a handler never shares memory with the
// code that enqueued it, even in the embedded backend.
type Task struct {
	// Type routes the task to the Handler registered for it, e.g. "course:import".
	Type string
	// Payload is the task's input; the queue stores it byte for byte.
	Payload []byte
}

// NewTask returns a task of the given type carrying payload.
func NewTask(typ string, payload []byte) *Task {
	return &Task{Type: typ, Payload: payload}
}

// Handler processes tasks of one type. A nil error completes the task; an error wrapping
// SkipRetry archives it; any other error schedules a retry with exponential backoff until
// the task's MaxRetry is used up, after which it is archived. An error matching
// storage.ErrUnavailable (a backend outage) is retried without using up MaxRetry, so a task
// outlives an outage of any length. The context is cancelled when
// the queue gives up waiting for the handler during Shutdown or Close.
type Handler interface {
	ProcessTask(ctx context.Context, t *Task) error
}

// HandlerFunc lets an ordinary function serve as a Handler.
type HandlerFunc func(ctx context.Context, t *Task) error

// ProcessTask calls f(ctx, t).
func (f HandlerFunc) ProcessTask(ctx context.Context, t *Task) error { return f(ctx, t) }

// State is where a task is in its life cycle. The values are asynq's, so the two backends
// report the same words.
type State string

// The states a task can be in.
const (
	// StatePending tasks are ready and wait for a free worker.
	StatePending State = "pending"
	// StateScheduled tasks were enqueued with ProcessIn and are not due yet.
	StateScheduled State = "scheduled"
	// StateActive tasks are held by a worker right now (its lease may have expired if the
	// worker died; the backend then moves the task to retry).
	StateActive State = "active"
	// StateRetry tasks failed and wait for their backoff to pass.
	StateRetry State = "retry"
	// StateCompleted tasks succeeded and are kept for the retention period so that their
	// id stays unique.
	StateCompleted State = "completed"
	// StateArchived tasks failed for good (SkipRetry or retries exhausted).
	StateArchived State = "archived"
)

// TaskInfo describes a stored task, as returned by Enqueue and Inspect.
type TaskInfo struct {
	// ID is the caller's TaskID or the id the backend generated.
	ID string
	// Type and Payload are the task as stored, i.e. as the handler will see them.
	Type    string
	Payload []byte
	// State is where the task is in its life cycle.
	State State
	// MaxRetry is the task's retry budget (queue.MaxRetry or DefaultMaxRetry).
	MaxRetry int
	// Retried counts the failed attempts so far (handler errors and expired leases).
	Retried int
	// LastErr is the message of the most recent failure, empty if none.
	LastErr string
	// NextProcessAt is when a pending, scheduled or retry task becomes due; zero otherwise.
	NextProcessAt time.Time
}

// Options are the per-task settings an Enqueue call resolved from its Option list. Backends
// read them through Apply; callers use the Option constructors.
type Options struct {
	// TaskID is the caller-chosen id; empty means the backend generates a random one.
	TaskID string
	// MaxRetry is how many times a failed task is retried before it is archived.
	MaxRetry int
	// ProcessIn delays the first attempt.
	ProcessIn time.Duration
}

// Option sets one per-task setting on Enqueue.
type Option func(*Options)

// TaskID gives the task a caller-chosen id, which makes enqueueing idempotent: while a task
// with that id is pending, running, waiting for a retry or retained after finishing, another
// Enqueue with the same id fails with ErrDuplicateTask.
func TaskID(id string) Option { return func(o *Options) { o.TaskID = id } }

// MaxRetry sets how many times a failed task is retried; zero means it runs once. Negative
// values count as zero.
func MaxRetry(n int) Option {
	return func(o *Options) { o.MaxRetry = max(n, 0) }
}

// ProcessIn delays the first attempt by d, e.g. to debounce repeated requests.
func ProcessIn(d time.Duration) Option { return func(o *Options) { o.ProcessIn = max(d, 0) } }

// Apply resolves opts over the defaults (a generated id is left to the backend, MaxRetry is
// DefaultMaxRetry).
func Apply(opts ...Option) Options {
	o := Options{MaxRetry: DefaultMaxRetry}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// Queue is the port both backends implement. One Queue value is one named queue: the API
// ("serve" role) only calls Enqueue; the worker role registers handlers, calls Start, and
// Shutdown when it is asked to stop.
type Queue interface {
	// Enqueue stores t for asynchronous processing and returns its description. The task is
	// durable when Enqueue returns nil. ErrDuplicateTask if TaskID names an existing task.
	Enqueue(ctx context.Context, t *Task, opts ...Option) (*TaskInfo, error)
	// Handle registers h for tasks of exactly taskType; register before Start. A task whose
	// type has no handler fails and is retried, so a worker that runs an older build does
	// not silently drop it.
	Handle(taskType string, h Handler)
	// Start begins consuming in the background and returns; ctx bounds only the start-up
	// work (connecting, recovering expired leases), not the life of the workers.
	Start(ctx context.Context) error
	// Shutdown stops taking new tasks and waits for running handlers to finish (draining),
	// up to ctx's deadline; it returns ctx.Err() if handlers were still running then, and
	// those tasks are delivered again later.
	Shutdown(ctx context.Context) error
	// Inspect reports the current state of the task with the given id, or ErrTaskNotFound.
	Inspect(ctx context.Context, id string) (*TaskInfo, error)
	// Close releases connections and stops anything still running without waiting; call
	// Shutdown first for a graceful stop. Calls after Close fail with ErrClosed.
	Close() error
}

// RetryDelay is the backoff before retry number retried+1 (retried counts failures so far,
// starting at 0). With base > 0 it is base·2^retried plus up to 25% jitter, so tests can use
// milliseconds; with base == 0 it is asynq's default, (retried⁴ + 15 + rand(30)·(retried+1))
// seconds, which spreads a burst of failures over minutes. The jitter only ever lengthens
// the delay: the exponential term is a lower bound callers may rely on.
func RetryDelay(base time.Duration, retried int) time.Duration {
	retried = max(retried, 0)
	if base <= 0 {
		s := math.Pow(float64(retried), 4) + 15 + float64(rand.IntN(30)*(retried+1))
		return time.Duration(s) * time.Second
	}
	const maxDelay = 24 * time.Hour
	d := float64(base) * math.Pow(2, float64(retried))
	if d >= float64(maxDelay) {
		return maxDelay
	}
	return time.Duration(d) + time.Duration(rand.Int64N(int64(d)/4+1))
}

type attemptKey struct{}

type attempt struct{ retried, max int }

// WithAttempt is called by backends before a handler runs, so the handler can tell its last
// attempt (and, say, record a final failure instead of leaving a job "running" forever).
func WithAttempt(ctx context.Context, retried, maxRetry int) context.Context {
	return context.WithValue(ctx, attemptKey{}, attempt{retried, maxRetry})
}

// LastAttempt reports whether the running handler's attempt is its task's last: a failure
// now will not be retried.
func LastAttempt(ctx context.Context) bool {
	a, ok := ctx.Value(attemptKey{}).(attempt)
	return ok && a.retried >= a.max
}
