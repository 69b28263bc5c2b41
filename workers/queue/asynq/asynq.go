// Package asynqq is the Redis backend of the queue port: a thin adapter over
// github.com/hibiken/asynq (Client to enqueue, Server to consume, Inspector for Inspect). It is
// named asynqq rather than asynq so that it never shadows the library it wraps.
//
// Crash recovery is asynq's: a worker holds a 30 s lease on each running task and extends it
// every 5 s; when a worker dies, the recoverer of any live server moves the task back to retry
// once the lease has been expired for another 30 s. asynq hard-codes both numbers (rdb
// LeaseDuration and the recoverer's clock-skew cutoff, polled once a minute), so redelivery
// after kill -9 takes between one and two minutes and cannot be shortened by configuration.
// The retry itself is scheduled without backoff (retryDelayFunc), so that is all it takes.
package asynqq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/workers/queue"
)

// Config configures the Redis backend. Zero values take the defaults named per field, which
// are asynq's own unless said otherwise.
type Config struct {
	// RedisURL locates Redis: redis://[:password@]host:port/db, rediss:// for TLS, or
	// redis-sentinel:// (see asynq.ParseRedisURI). Required.
	RedisURL string
	// Queue is the asynq queue this Queue value enqueues to and consumes. Default "default".
	Queue string
	// Concurrency is the number of handlers run at once. Default: the number of CPUs.
	Concurrency int
	// BaseRetryDelay is the first retry's backoff, doubled per retry (queue.RetryDelay).
	// Default 0: asynq's own backoff, which starts at 15-45 s. asynq schedules in whole
	// seconds, so retries (and ProcessIn) become due at the next second boundary after the
	// delay, never before it.
	BaseRetryDelay time.Duration
	// Retention keeps a completed task (and so its id) for this long, which is what makes
	// queue.TaskID deduplicate against work that already finished. Default 24 h; a negative
	// value keeps nothing.
	Retention time.Duration
	// TaskTimeout bounds one handler run; its context is cancelled after it. Default 30 min.
	TaskTimeout time.Duration
	// TaskCheckInterval is how long an idle worker waits before polling for new tasks again.
	// Default 1 s; tests use a few milliseconds.
	TaskCheckInterval time.Duration
	// DelayedTaskCheckInterval is how often scheduled and retry tasks that became due are
	// moved to pending. Default 5 s; tests use a few milliseconds.
	DelayedTaskCheckInterval time.Duration
	// ShutdownTimeout is how long the server itself lets handlers finish after Shutdown
	// before it gives up and requeues their tasks. Default 8 s. Shutdown(ctx) also returns
	// early when ctx ends, but asynq keeps draining in the background until this timeout.
	ShutdownTimeout time.Duration
	// Logger receives asynq's log lines. Default slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Queue == "" {
		c.Queue = "default"
	}
	if c.Concurrency <= 0 {
		c.Concurrency = runtime.NumCPU()
	}
	if c.Retention == 0 {
		c.Retention = 24 * time.Hour
	}
	if c.Retention < 0 {
		c.Retention = 0
	}
	if c.TaskTimeout <= 0 {
		c.TaskTimeout = 30 * time.Minute
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 8 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Queue is the Redis implementation of queue.Queue.
type Queue struct {
	cfg       Config
	rdb       redis.UniversalClient
	client    *asynq.Client
	inspector *asynq.Inspector

	mu       sync.Mutex
	handlers map[string]queue.Handler
	srv      *asynq.Server
	// stopped is closed when srv.Shutdown has returned; nil before Shutdown begins.
	stopped chan struct{}
	closed  bool
}

var _ queue.Queue = (*Queue)(nil)

// New connects to Redis and returns a queue that can enqueue at once; consuming begins with
// Start. The connection is checked here, so a wrong URL fails at start-up, not on first use.
func New(ctx context.Context, cfg Config) (*Queue, error) {
	cfg = cfg.withDefaults()
	if cfg.RedisURL == "" {
		return nil, errors.New("asynq queue: RedisURL is required")
	}
	opt, err := asynq.ParseRedisURI(cfg.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("asynq queue: %w", err)
	}
	rdb, ok := opt.MakeRedisClient().(redis.UniversalClient)
	if !ok {
		return nil, fmt.Errorf("asynq queue: unsupported Redis connection %T", opt)
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("asynq queue: ping Redis: %w", err)
	}
	// One connection pool serves the client, the inspector and the server; the asynq
	// constructors that take a client never close it, so Close does.
	return &Queue{
		cfg:       cfg,
		rdb:       rdb,
		client:    asynq.NewClientFromRedisClient(rdb),
		inspector: asynq.NewInspectorFromRedisClient(rdb),
		handlers:  map[string]queue.Handler{},
	}, nil
}

// Enqueue implements queue.Queue.
func (q *Queue) Enqueue(ctx context.Context, t *queue.Task, opts ...queue.Option) (*queue.TaskInfo, error) {
	if q.isClosed() {
		return nil, queue.ErrClosed
	}
	o := queue.Apply(opts...)
	aopts := []asynq.Option{
		asynq.Queue(q.cfg.Queue),
		asynq.MaxRetry(o.MaxRetry),
		asynq.Timeout(q.cfg.TaskTimeout),
		asynq.Retention(q.cfg.Retention),
	}
	if o.TaskID != "" {
		aopts = append(aopts, asynq.TaskID(o.TaskID))
	}
	if o.ProcessIn > 0 {
		aopts = append(aopts, asynq.ProcessAt(ceilSecond(time.Now().Add(o.ProcessIn))))
	}
	info, err := q.client.EnqueueContext(ctx, asynq.NewTask(t.Type, t.Payload), aopts...)
	if errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, asynq.ErrDuplicateTask) {
		return nil, fmt.Errorf("enqueue %s %q: %w", t.Type, o.TaskID, queue.ErrDuplicateTask)
	}
	if err != nil {
		return nil, fmt.Errorf("enqueue %s: %w", t.Type, q.outage(ctx, err))
	}
	return fromInfo(info), nil
}

// Handle implements queue.Queue. Types match exactly: asynq's ServeMux matches by prefix,
// which the port does not promise and the embedded backend does not do, so the adapter
// dispatches itself.
func (q *Queue) Handle(taskType string, h queue.Handler) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.handlers[taskType] = h
}

// Start implements queue.Queue. An asynq server cannot be restarted once shut down, so a
// Queue consumes at most once in its life.
func (q *Queue) Start(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return queue.ErrClosed
	}
	if q.srv != nil {
		return errors.New("asynq queue: already started")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	base := q.cfg.BaseRetryDelay
	srv := asynq.NewServerFromRedisClient(q.rdb, asynq.Config{
		Concurrency:    q.cfg.Concurrency,
		Queues:         map[string]int{q.cfg.Queue: 1},
		RetryDelayFunc: retryDelayFunc(base),
		// A backend outage is nobody's failure: the task is retried without using up its
		// budget, so work accepted before or during an outage completes once it is over.
		IsFailure:                func(err error) bool { return !errors.Is(err, storage.ErrUnavailable) },
		TaskCheckInterval:        q.cfg.TaskCheckInterval,
		DelayedTaskCheckInterval: q.cfg.DelayedTaskCheckInterval,
		ShutdownTimeout:          q.cfg.ShutdownTimeout,
		Logger:                   slogLogger{q.cfg.Logger},
		// slog does the level filtering; asynq's own filter would hide Debug from it.
		LogLevel: asynq.DebugLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(q.process)); err != nil {
		return fmt.Errorf("asynq queue: start: %w", err)
	}
	q.srv = srv
	return nil
}

// retryDelayFunc is the backoff of failed tasks (queue.RetryDelay from base), rounded up to
// asynq's one-second schedule. A task whose worker died (asynq.ErrLeaseExpired: kill -9, a
// lost host) is retried at once instead: it already waited 60-120 s for the recoverer, the
// failure was the process's and not the task's, and the production backoff (15-45 s on the
// first retry) would only add to what a crash costs every job it held.
func retryDelayFunc(base time.Duration) asynq.RetryDelayFunc {
	return func(n int, err error, _ *asynq.Task) time.Duration {
		now := time.Now()
		if errors.Is(err, asynq.ErrLeaseExpired) {
			return ceilSecond(now).Sub(now)
		}
		return ceilSecond(now.Add(queue.RetryDelay(base, n))).Sub(now)
	}
}

// process routes an asynq task to the registered handler and translates SkipRetry.
func (q *Queue) process(ctx context.Context, at *asynq.Task) error {
	q.mu.Lock()
	h := q.handlers[at.Type()]
	q.mu.Unlock()
	if h == nil {
		return fmt.Errorf("no handler for task type %q", at.Type())
	}
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	err := h.ProcessTask(queue.WithAttempt(ctx, retried, maxRetry), &queue.Task{Type: at.Type(), Payload: at.Payload()})
	if errors.Is(err, queue.SkipRetry) {
		return fmt.Errorf("%w (%w)", err, asynq.SkipRetry)
	}
	return err
}

// Shutdown implements queue.Queue. Stop is synchronous (the processor has quit polling when
// it returns), so no task starts after Shutdown has begun; asynq's Shutdown then waits for
// the running handlers.
func (q *Queue) Shutdown(ctx context.Context) error {
	stopped := q.beginShutdown()
	if stopped == nil {
		return nil
	}
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("asynq queue: shutdown: handlers still running: %w", ctx.Err())
	}
}

// beginShutdown stops the server once and returns a channel closed when it has drained, or
// nil when the queue never started.
func (q *Queue) beginShutdown() chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.srv == nil {
		return nil
	}
	if q.stopped == nil {
		q.stopped = make(chan struct{})
		srv, stopped := q.srv, q.stopped
		srv.Stop()
		go func() {
			srv.Shutdown()
			close(stopped)
		}()
	}
	return q.stopped
}

// Pending counts the tasks waiting for a worker in this queue (asynq's pending state).
func (q *Queue) Pending(ctx context.Context) (int, error) {
	if q.isClosed() {
		return 0, queue.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// A queue exists once something was enqueued; asked about before, asynq answers an
	// error of an internal type, so look it up first.
	names, err := q.inspector.Queues()
	if err != nil {
		return 0, q.outage(ctx, err)
	}
	if !slices.Contains(names, q.cfg.Queue) {
		return 0, nil
	}
	info, err := q.inspector.GetQueueInfo(q.cfg.Queue)
	if err != nil {
		return 0, q.outage(ctx, err)
	}
	return info.Pending, nil
}

// Inspect implements queue.Queue.
func (q *Queue) Inspect(ctx context.Context, id string) (*queue.TaskInfo, error) {
	if q.isClosed() {
		return nil, queue.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	info, err := q.inspector.GetTaskInfo(q.cfg.Queue, id)
	if errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
		return nil, fmt.Errorf("inspect %q: %w", id, queue.ErrTaskNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("inspect %q: %w", id, q.outage(ctx, err))
	}
	return fromInfo(info), nil
}

// Close implements queue.Queue. asynq cannot abandon running handlers faster than its
// ShutdownTimeout, so Close waits at most that long before closing the connection.
func (q *Queue) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	q.mu.Unlock()
	if stopped := q.beginShutdown(); stopped != nil {
		<-stopped
	}
	return q.rdb.Close()
}

func (q *Queue) isClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// outage translates Redis connection failures (and a server that is loading its data or
// lost its master) into a *storage.UnavailableError, at this edge, so the HTTP layer answers
// 503 instead of 500. asynq flattens many Redis errors into text ("redis eval error: dial
// tcp ...: connection refused"), so when the chain says nothing a ping decides.
func (q *Queue) outage(ctx context.Context, err error) error {
	down := func(err error) bool {
		return storage.IsConnectionError(err) || errors.Is(err, redis.ErrPoolTimeout) ||
			redis.HasErrorPrefix(err, "LOADING") || redis.HasErrorPrefix(err, "MASTERDOWN") || redis.HasErrorPrefix(err, "TRYAGAIN")
	}
	if down(err) || flattenedOutage(err) {
		return storage.Unavailable("redis", err)
	}
	if ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if perr := q.rdb.Ping(pctx).Err(); perr != nil && (down(perr) || errors.Is(perr, context.DeadlineExceeded)) {
			return storage.Unavailable("redis", err)
		}
	}
	return err
}

// flattenedOutage reads the text of an error asynq flattened ("redis eval error: LOADING
// ..."): a Redis that is loading its data after a restart, lost its master, or a connection that
// broke. The ping alone cannot tell, since Redis may be back by the time it runs (the soak saw a
// 500 for an enqueue during a Redis restart).
func flattenedOutage(err error) bool {
	msg := err.Error()
	for _, s := range []string{"LOADING ", "MASTERDOWN ", "TRYAGAIN ", "connection refused", "connection reset",
		"broken pipe", "i/o timeout", "use of closed network connection", "pool timeout", ": EOF"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// ceilSecond rounds t up to a whole second. asynq keeps due times as Unix seconds and
// truncates, so a task due at 12:00:00.7 would run at 12:00:00, before its delay was over;
// rounding up keeps ProcessIn and the backoff lower bounds that the port promises.
func ceilSecond(t time.Time) time.Time {
	if s := t.Truncate(time.Second); !s.Equal(t) {
		return s.Add(time.Second)
	}
	return t
}

func fromInfo(i *asynq.TaskInfo) *queue.TaskInfo {
	state := queue.State(i.State.String())
	if i.State == asynq.TaskStateAggregating {
		// Lectern does not use groups; an aggregating task is waiting, like a pending one.
		state = queue.StatePending
	}
	return &queue.TaskInfo{
		ID:            i.ID,
		Type:          i.Type,
		Payload:       i.Payload,
		State:         state,
		MaxRetry:      i.MaxRetry,
		Retried:       i.Retried,
		LastErr:       i.LastErr,
		NextProcessAt: i.NextProcessAt,
	}
}

// slogLogger feeds asynq's log lines into slog.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Debug(args ...any) { s.l.Debug(fmt.Sprint(args...), "component", "asynq") }
func (s slogLogger) Info(args ...any)  { s.l.Info(fmt.Sprint(args...), "component", "asynq") }
func (s slogLogger) Warn(args ...any)  { s.l.Warn(fmt.Sprint(args...), "component", "asynq") }
func (s slogLogger) Error(args ...any) { s.l.Error(fmt.Sprint(args...), "component", "asynq") }

// Fatal keeps asynq's contract for the level: log, then exit.
func (s slogLogger) Fatal(args ...any) {
	s.l.Error(fmt.Sprint(args...), "component", "asynq", "fatal", true)
	os.Exit(1)
}
