// Package inproc is the embedded backend of the queue port: tasks live in the record store
// (tenant "", kind "queue_task", Key = state), and a pool of goroutines in the worker process
// claims and runs them. Nothing needs Redis, yet the path is the same as with asynq: the
// payload is serialised on Enqueue, handlers run asynchronously, and several processes may
// share one store.
//
// Claiming is a conditional Update (record revision compare-and-set) from a waiting state to
// active, so two workers never both win a task. A claimed task carries a lease (an expiry
// timestamp in the record) that its worker extends while the handler runs. If the process
// dies, the lease runs out and any live worker moves the task to retry on its next recovery
// pass (at Start and every RecoverInterval): delivery is at-least-once, as with asynq.
package inproc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/workers/queue"
)

// Kind is the record kind of queue tasks. All tasks share the empty tenant because the
// queue belongs to the installation, not to a tenant.
const Kind = "queue_task"

// Config tunes the embedded queue. Zero values take the defaults named per field, chosen to
// match asynq's so that switching backends does not change behaviour.
type Config struct {
	// Name names the queue: tasks of a named queue are records of kind Kind+":"+Name, so
	// several Queue values over one record store (say the job queue and the index queue) never
	// see each other's tasks. Empty is the default queue (kind Kind). This mirrors asynq's
	// named queues, so roles split their work the same way on both backends.
	Name string
	// Concurrency is the number of handlers run at once. Default: the number of CPUs.
	Concurrency int
	// BaseRetryDelay is the first retry's backoff, doubled per retry (queue.RetryDelay).
	// Default 0: asynq's own backoff, which starts at 15-45 s.
	BaseRetryDelay time.Duration
	// Retention keeps a completed task (and so its id) for this long, so queue.TaskID also
	// deduplicates against finished work. Default 24 h; negative keeps nothing.
	Retention time.Duration
	// ArchiveRetention keeps failed (archived) tasks for inspection. Default 90 days, as
	// asynq.
	ArchiveRetention time.Duration
	// TaskTimeout bounds one handler run; its context is cancelled after it. Default 30 min.
	TaskTimeout time.Duration
	// PollInterval is how often an idle worker looks for due tasks. Enqueue in the same
	// process wakes it at once, so this only matters for tasks enqueued by other processes
	// and for scheduled tasks and retries. Default 1 s.
	PollInterval time.Duration
	// LeaseDuration is how long a claim survives without being extended; the worker extends
	// it every third of this. It is also how long a task of a crashed worker waits before it
	// is redelivered. Default 30 s.
	LeaseDuration time.Duration
	// RecoverInterval is how often expired leases are looked for and finished tasks past
	// their retention are deleted. Default: LeaseDuration.
	RecoverInterval time.Duration
	// ReleaseTimeout is how long Shutdown, once its ctx has ended and it has cancelled the
	// running handlers, still waits for them to return and hand their tasks back. Default 2 s.
	ReleaseTimeout time.Duration
	// Logger receives failures the queue cannot return to a caller. Default slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = runtime.NumCPU()
	}
	if c.Retention == 0 {
		c.Retention = 24 * time.Hour
	}
	if c.Retention < 0 {
		c.Retention = 0
	}
	if c.ArchiveRetention <= 0 {
		c.ArchiveRetention = 90 * 24 * time.Hour
	}
	if c.TaskTimeout <= 0 {
		c.TaskTimeout = 30 * time.Minute
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = 30 * time.Second
	}
	if c.RecoverInterval <= 0 {
		c.RecoverInterval = c.LeaseDuration
	}
	if c.ReleaseTimeout <= 0 {
		c.ReleaseTimeout = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// taskData is the JSON stored in a task record. The record's Key mirrors State so that List
// can find the tasks of one state without reading every record.
type taskData struct {
	Type     string      `json:"type"`
	Payload  []byte      `json:"payload"`
	State    queue.State `json:"state"`
	MaxRetry int         `json:"max_retry"`
	Retried  int         `json:"retried"`
	LastErr  string      `json:"last_err,omitempty"`
	// ProcessAt is when a pending, scheduled or retry task becomes due.
	ProcessAt time.Time `json:"process_at"`
	// LeaseUntil and Owner are set while the task is active.
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	Owner      string    `json:"owner,omitempty"`
	// FinishedAt starts the retention clock of completed and archived tasks.
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

func decode(r *record.Record) (*taskData, error) {
	var d taskData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, fmt.Errorf("decode queue task %q: %w", r.ID, err)
	}
	return &d, nil
}

// put stores d into r (Data and Key) for the next Create or Update.
func put(r *record.Record, d *taskData) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode queue task %q: %w", r.ID, err)
	}
	r.Data, r.Key = b, string(d.State)
	return nil
}

// Queue is the embedded implementation of queue.Queue.
type Queue struct {
	store record.Store
	cfg   Config
	// kind is the record kind of this queue's tasks (Kind, or Kind:Name).
	kind string
	// owner identifies this Queue value in the leases it takes, which helps when reading
	// the records of a crashed worker.
	owner string
	// wake nudges the dispatcher after a local Enqueue so that it need not wait a poll.
	wake chan struct{}

	mu       sync.Mutex
	handlers map[string]queue.Handler
	started  bool
	stopping bool
	// stop ends the dispatcher and the maintenance loop; closed by Shutdown or Close.
	stop chan struct{}
	// abort cancels the contexts of running handlers; closed when Shutdown's ctx ends or by
	// Close.
	abort     context.Context
	cancelRun context.CancelFunc
	// handlersWG counts running handlers, loopsWG the background loops.
	handlersWG sync.WaitGroup
	loopsWG    sync.WaitGroup

	// writeMu makes Close wait for result writes in flight and keeps later ones out, so a
	// caller may close the store as soon as Close returns.
	writeMu sync.RWMutex
	closed  bool
}

var _ queue.Queue = (*Queue)(nil)

// New returns a queue over store. The caller keeps ownership of store and closes it after
// Close.
func New(store record.Store, cfg Config) *Queue {
	abort, cancel := context.WithCancel(context.Background())
	kind := Kind
	if cfg.Name != "" {
		kind = Kind + ":" + cfg.Name
	}
	return &Queue{
		store:     store,
		kind:      kind,
		cfg:       cfg.withDefaults(),
		owner:     randomID(),
		wake:      make(chan struct{}, 1),
		handlers:  map[string]queue.Handler{},
		stop:      make(chan struct{}),
		abort:     abort,
		cancelRun: cancel,
	}
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

func (q *Queue) isClosed() bool {
	q.writeMu.RLock()
	defer q.writeMu.RUnlock()
	return q.closed
}

// Enqueue implements queue.Queue. The record is created with Create, whose conflict check is
// what makes TaskID unique.
func (q *Queue) Enqueue(ctx context.Context, t *queue.Task, opts ...queue.Option) (*queue.TaskInfo, error) {
	if q.isClosed() {
		return nil, queue.ErrClosed
	}
	o := queue.Apply(opts...)
	id := o.TaskID
	if id == "" {
		id = randomID()
	}
	now := time.Now().UTC()
	d := &taskData{
		Type:      t.Type,
		Payload:   t.Payload,
		State:     queue.StatePending,
		MaxRetry:  o.MaxRetry,
		ProcessAt: now.Add(o.ProcessIn),
	}
	if o.ProcessIn > 0 {
		d.State = queue.StateScheduled
	}
	r := &record.Record{Kind: q.kind, ID: id}
	if err := put(r, d); err != nil {
		return nil, err
	}
	if err := q.store.Create(ctx, r); err != nil {
		if errors.Is(err, record.ErrConflict) {
			return nil, fmt.Errorf("enqueue %s %q: %w", t.Type, id, queue.ErrDuplicateTask)
		}
		return nil, fmt.Errorf("enqueue %s: %w", t.Type, err)
	}
	if d.State == queue.StatePending {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return info(r.ID, d), nil
}

func info(id string, d *taskData) *queue.TaskInfo {
	ti := &queue.TaskInfo{
		ID:       id,
		Type:     d.Type,
		Payload:  d.Payload,
		State:    d.State,
		MaxRetry: d.MaxRetry,
		Retried:  d.Retried,
		LastErr:  d.LastErr,
	}
	switch d.State {
	case queue.StatePending, queue.StateScheduled, queue.StateRetry:
		ti.NextProcessAt = d.ProcessAt
	}
	return ti
}

// Handle implements queue.Queue.
func (q *Queue) Handle(taskType string, h queue.Handler) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.handlers[taskType] = h
}

// Start implements queue.Queue. It first returns the tasks of dead workers to retry, so a
// restarted worker picks up what it was doing when it crashed as soon as the lease allows.
func (q *Queue) Start(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.isClosed() {
		return queue.ErrClosed
	}
	if q.started || q.stopping {
		// Like an asynq server, a queue consumes at most once in its life.
		return errors.New("inproc queue: already started or shut down")
	}
	if err := q.recoverExpired(ctx); err != nil {
		return fmt.Errorf("inproc queue: start: %w", err)
	}
	q.started = true
	q.loopsWG.Add(2)
	go q.dispatch()
	go q.maintain()
	return nil
}

// dispatch claims due tasks while a worker slot is free and hands each to its own goroutine.
func (q *Queue) dispatch() {
	defer q.loopsWG.Done()
	sema := make(chan struct{}, q.cfg.Concurrency)
	for {
		select {
		case <-q.stop:
			return
		case sema <- struct{}{}:
		}
		r, d, err := q.claim()
		if err != nil {
			q.cfg.Logger.Error("inproc queue: claim task", "err", err)
		}
		if r == nil {
			<-sema
			select {
			case <-q.stop:
				return
			case <-q.wake:
			case <-time.After(q.cfg.PollInterval):
			}
			continue
		}
		q.handlersWG.Add(1)
		go func() {
			defer func() { <-sema }()
			defer q.handlersWG.Done()
			q.run(r, d)
		}()
	}
}

// waiting lists the states a task can be claimed from, most urgent first.
var waiting = []queue.State{queue.StatePending, queue.StateRetry, queue.StateScheduled}

// claim moves one due task to active under a fresh lease and returns it, or nil when none is
// due. A task claimed while Shutdown was beginning is put back, so no handler starts after
// Shutdown has begun.
func (q *Queue) claim() (*record.Record, *taskData, error) {
	ctx := context.Background()
	now := time.Now().UTC()
	for _, st := range waiting {
		cursor := ""
		for {
			page, err := q.store.List(ctx, record.Query{Kind: q.kind, Key: string(st), Cursor: cursor})
			if err != nil {
				return nil, nil, err
			}
			for _, r := range page.Records {
				d, err := decode(r)
				if err != nil {
					q.cfg.Logger.Error("inproc queue: skip unreadable task", "id", r.ID, "err", err)
					continue
				}
				if d.ProcessAt.After(now) {
					continue
				}
				d.State, d.LeaseUntil, d.Owner = queue.StateActive, now.Add(q.cfg.LeaseDuration), q.owner
				if err := put(r, d); err != nil {
					return nil, nil, err
				}
				err = q.store.Update(ctx, r)
				if errors.Is(err, record.ErrStale) || errors.Is(err, record.ErrNotFound) {
					continue // another worker was faster
				}
				if err != nil {
					return nil, nil, err
				}
				if q.isStopping() {
					q.release(r, d)
					return nil, nil, nil
				}
				return r, d, nil
			}
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
	}
	return nil, nil, nil
}

func (q *Queue) isStopping() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stopping
}

// release puts a claimed task back to pending without counting an attempt; used when the
// worker stops before or while running it.
func (q *Queue) release(r *record.Record, d *taskData) {
	d.State, d.LeaseUntil, d.Owner, d.ProcessAt = queue.StatePending, time.Time{}, "", time.Now().UTC()
	q.write(r, d, "release")
}

// write stores the outcome of a run unless the queue is closed (the store may be gone then;
// the lease will expire and the task be redelivered, which at-least-once allows).
func (q *Queue) write(r *record.Record, d *taskData, what string) {
	q.writeMu.RLock()
	defer q.writeMu.RUnlock()
	if q.closed {
		return
	}
	if err := put(r, d); err != nil {
		q.cfg.Logger.Error("inproc queue: "+what, "id", r.ID, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), q.cfg.LeaseDuration)
	defer cancel()
	err := q.store.Update(ctx, r)
	if errors.Is(err, record.ErrStale) || errors.Is(err, record.ErrNotFound) {
		// The lease was lost (recovered by another worker); that worker now owns the task.
		q.cfg.Logger.Warn("inproc queue: lost task before "+what, "id", r.ID)
		return
	}
	if err != nil {
		q.cfg.Logger.Error("inproc queue: "+what, "id", r.ID, "err", err)
	}
}

// lease guards the task record of a running handler: the heartbeat and the final write both
// update it and must see each other's revision.
type lease struct {
	mu   sync.Mutex
	r    *record.Record
	d    *taskData
	lost bool
}

// run executes one claimed task and records the outcome.
func (q *Queue) run(r *record.Record, d *taskData) {
	l := &lease{r: r, d: d}
	ctx, cancel := context.WithTimeout(q.abort, q.cfg.TaskTimeout)
	defer cancel()
	hbDone := make(chan struct{})
	hbStopped := make(chan struct{})
	go func() {
		defer close(hbStopped)
		q.heartbeat(l, cancel, hbDone)
	}()

	err := q.call(queue.WithAttempt(ctx, d.Retried, d.MaxRetry), &queue.Task{Type: d.Type, Payload: d.Payload})
	close(hbDone)
	<-hbStopped

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return
	}
	now := time.Now().UTC()
	d.LeaseUntil, d.Owner = time.Time{}, ""
	switch {
	case err == nil:
		if q.cfg.Retention == 0 {
			q.delete(r.ID)
			return
		}
		d.State, d.FinishedAt, d.LastErr = queue.StateCompleted, now, ""
		q.write(r, d, "complete")
	case q.abort.Err() != nil:
		// Shutdown gave up waiting or Close was called: not the task's fault, so it goes back
		// untouched, as asynq requeues on abort.
		q.release(r, d)
	case errors.Is(err, queue.SkipRetry) || d.Retried >= d.MaxRetry:
		d.State, d.FinishedAt, d.LastErr = queue.StateArchived, now, err.Error()
		q.write(r, d, "archive")
	default:
		delay := queue.RetryDelay(q.cfg.BaseRetryDelay, d.Retried)
		d.State, d.ProcessAt, d.LastErr = queue.StateRetry, now.Add(delay), err.Error()
		if !errors.Is(err, storage.ErrUnavailable) { // an outage does not use up the budget
			d.Retried++
		}
		q.write(r, d, "retry")
	}
}

// call runs the handler, turning a missing handler and a panic into ordinary failures so
// they are retried like any other error.
func (q *Queue) call(ctx context.Context, t *queue.Task) (err error) {
	q.mu.Lock()
	h := q.handlers[t.Type]
	q.mu.Unlock()
	if h == nil {
		return fmt.Errorf("no handler for task type %q", t.Type)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in handler for %s: %v", t.Type, p)
		}
	}()
	return h.ProcessTask(ctx, t)
}

// heartbeat extends the lease every third of LeaseDuration until done is closed. If the
// record changed under it, another worker has taken the task over after the lease expired;
// the handler's context is then cancelled, as asynq does.
func (q *Queue) heartbeat(l *lease, cancel context.CancelFunc, done <-chan struct{}) {
	t := time.NewTicker(q.cfg.LeaseDuration / 3)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		l.mu.Lock()
		// The read lock keeps Close from returning (and the caller from closing the store)
		// in the middle of this write.
		q.writeMu.RLock()
		if q.closed {
			// After Close nobody extends the lease, so another worker will redeliver.
			q.writeMu.RUnlock()
			l.mu.Unlock()
			return
		}
		l.d.LeaseUntil = time.Now().UTC().Add(q.cfg.LeaseDuration)
		err := put(l.r, l.d)
		if err == nil {
			ctx, cc := context.WithTimeout(context.Background(), q.cfg.LeaseDuration/3)
			err = q.store.Update(ctx, l.r)
			cc()
		}
		q.writeMu.RUnlock()
		if errors.Is(err, record.ErrStale) || errors.Is(err, record.ErrNotFound) {
			l.lost = true
			l.mu.Unlock()
			q.cfg.Logger.Warn("inproc queue: lease lost, cancelling handler", "id", l.r.ID)
			cancel()
			return
		}
		if err != nil {
			// Keep going: the lease is still valid for a while and the next beat may work.
			q.cfg.Logger.Error("inproc queue: extend lease", "id", l.r.ID, "err", err)
		}
		l.mu.Unlock()
	}
}

func (q *Queue) delete(id string) {
	q.writeMu.RLock()
	defer q.writeMu.RUnlock()
	if q.closed {
		return
	}
	err := q.store.Delete(context.Background(), "", q.kind, id)
	if err != nil && !errors.Is(err, record.ErrNotFound) {
		q.cfg.Logger.Error("inproc queue: delete task", "id", id, "err", err)
	}
}

// maintain periodically recovers expired leases and deletes finished tasks past retention.
func (q *Queue) maintain() {
	defer q.loopsWG.Done()
	t := time.NewTicker(q.cfg.RecoverInterval)
	defer t.Stop()
	for {
		select {
		case <-q.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), q.cfg.RecoverInterval)
		if err := q.recoverExpired(ctx); err != nil {
			q.cfg.Logger.Error("inproc queue: recover expired leases", "err", err)
		}
		if err := q.purge(ctx); err != nil {
			q.cfg.Logger.Error("inproc queue: delete expired tasks", "err", err)
		}
		cancel()
	}
}

// errLeaseExpired is recorded as the failure of a task whose worker stopped extending its
// lease, most likely because the process died.
var errLeaseExpired = errors.New("lease expired: the worker running the task stopped")

// recoverExpired moves active tasks whose lease has run out to retry (or to archived when
// their retries are used up). Counting the crash as a failed attempt, as asynq does, keeps a
// task that kills its worker every time from looping forever.
func (q *Queue) recoverExpired(ctx context.Context) error {
	cursor := ""
	for {
		page, err := q.store.List(ctx, record.Query{Kind: q.kind, Key: string(queue.StateActive), Cursor: cursor})
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		for _, r := range page.Records {
			d, err := decode(r)
			if err != nil || !d.LeaseUntil.Before(now) {
				continue
			}
			d.LeaseUntil, d.Owner, d.LastErr = time.Time{}, "", errLeaseExpired.Error()
			if d.Retried >= d.MaxRetry {
				d.State, d.FinishedAt = queue.StateArchived, now
			} else {
				d.State, d.ProcessAt = queue.StateRetry, now.Add(queue.RetryDelay(q.cfg.BaseRetryDelay, d.Retried))
				d.Retried++
			}
			if err := put(r, d); err != nil {
				return err
			}
			if err := q.store.Update(ctx, r); err != nil && !errors.Is(err, record.ErrStale) && !errors.Is(err, record.ErrNotFound) {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		cursor = page.Next
	}
}

// purge deletes completed and archived tasks whose retention has run out. List returns
// records oldest update first, and a finished task is no longer updated, so each scan stops
// at the first task still within retention.
func (q *Queue) purge(ctx context.Context) error {
	for st, keep := range map[queue.State]time.Duration{
		queue.StateCompleted: q.cfg.Retention,
		queue.StateArchived:  q.cfg.ArchiveRetention,
	} {
		cutoff := time.Now().UTC().Add(-keep)
		page, err := q.store.List(ctx, record.Query{Kind: q.kind, Key: string(st), Limit: 100})
		if err != nil {
			return err
		}
		for _, r := range page.Records {
			if !r.Updated.Before(cutoff) {
				break
			}
			if err := q.store.Delete(ctx, "", q.kind, r.ID); err != nil && !errors.Is(err, record.ErrNotFound) {
				return err
			}
		}
	}
	return nil
}

// Shutdown implements queue.Queue. When ctx ends first, the running handlers' contexts are
// cancelled and their tasks go back to pending as soon as the handlers return; Shutdown waits
// up to Config.ReleaseTimeout more for that.
func (q *Queue) Shutdown(ctx context.Context) error {
	q.mu.Lock()
	started := q.started
	if !q.stopping {
		q.stopping = true
		close(q.stop)
	}
	q.mu.Unlock()
	if !started {
		return nil
	}
	done := make(chan struct{})
	go func() {
		q.loopsWG.Wait()
		q.handlersWG.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		q.cancelRun()
		// The cancelled handlers hand their tasks back (release) as they return; wait a
		// little for that, so the next process finds them pending at once instead of after
		// their leases expire and a retry delay.
		select {
		case <-done:
		case <-time.After(q.cfg.ReleaseTimeout):
		}
		return fmt.Errorf("inproc queue: shutdown: handlers still running: %w", ctx.Err())
	}
}

// Pending counts the tasks waiting for a worker (state pending; scheduled and retrying
// tasks are not due). It pages through the store, so it is bounded by ctx, as a metrics
// scrape bounds it.
func (q *Queue) Pending(ctx context.Context) (int, error) {
	if q.isClosed() {
		return 0, queue.ErrClosed
	}
	n, cursor := 0, ""
	for {
		page, err := q.store.List(ctx, record.Query{Kind: q.kind, Key: string(queue.StatePending), Cursor: cursor, Limit: 1000})
		if err != nil {
			return n, err
		}
		n += len(page.Records)
		if page.Next == "" {
			return n, nil
		}
		cursor = page.Next
	}
}

// Inspect implements queue.Queue.
func (q *Queue) Inspect(ctx context.Context, id string) (*queue.TaskInfo, error) {
	if q.isClosed() {
		return nil, queue.ErrClosed
	}
	r, err := q.store.Get(ctx, "", q.kind, id)
	if errors.Is(err, record.ErrNotFound) {
		return nil, fmt.Errorf("inspect %q: %w", id, queue.ErrTaskNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("inspect %q: %w", id, err)
	}
	d, err := decode(r)
	if err != nil {
		return nil, err
	}
	return info(r.ID, d), nil
}

// Close implements queue.Queue. Running handlers are cancelled but not waited for; their
// results are not written, so their tasks are redelivered once the leases expire.
func (q *Queue) Close() error {
	q.mu.Lock()
	if !q.stopping {
		q.stopping = true
		close(q.stop)
	}
	q.mu.Unlock()
	q.cancelRun()
	q.writeMu.Lock()
	q.closed = true
	q.writeMu.Unlock()
	q.loopsWG.Wait()
	return nil
}
