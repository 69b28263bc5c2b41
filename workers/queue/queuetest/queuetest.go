// Package queuetest is the contract suite every queue backend must pass. It is test-only:
// nothing here may be imported by production code.
//
// A backend's _test.go calls Run with a Backend that knows how to make fresh storage and open
// queues over it, and defines TestHelperProcess calling HelperProcess, because the crash test
// runs a worker in a child process (the test binary re-executed) and kills it with SIGKILL.
//
// The suite never sleeps to wait for something to happen: it polls with a deadline, since
// both backends are asynchronous. The only fixed waits are the windows of negative
// assertions ("no task starts after Shutdown"), which cannot be proven any other way.
package queuetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/workers/queue"
)

// Params are the settings the suite asks Backend.Open to apply.
type Params struct {
	// Concurrency is the number of handlers the queue may run at once.
	Concurrency int
	// BaseRetryDelay is the first retry's backoff (see queue.RetryDelay).
	BaseRetryDelay time.Duration
}

// Backend tells the suite how to build queues of one backend.
type Backend struct {
	// Fresh prepares empty storage that no other test sees and returns a locator for it (a
	// SQLite file path, a Redis URL with its own DB number). It runs in the test process only.
	Fresh func(t *testing.T) string
	// Open returns a queue over the storage at loc, configured with p and with short poll
	// intervals. It runs in the test process and in the helper child process; the suite
	// closes the queue, Open's own t.Cleanup functions run after that.
	Open func(t testing.TB, loc string, p Params) queue.Queue
	// RedeliveryTimeout bounds how long a killed worker's task may take to be delivered again:
	// a few lease durations for the embedded queue, about two minutes for asynq, whose lease
	// timings are fixed.
	RedeliveryTimeout time.Duration
}

const (
	// baseDelay is long enough that the backoff lower bounds are well above poll jitter.
	baseDelay = 200 * time.Millisecond
	// waitFor bounds every poll except redelivery.
	waitFor = 20 * time.Second
	// quietWindow is how long a negative assertion watches; it is many poll intervals long.
	quietWindow = 400 * time.Millisecond

	envHelper = "LECTERN_QUEUETEST_HELPER"
	envLoc    = "LECTERN_QUEUETEST_LOC"
	typeBlock = "queuetest:block"
	// helperStarted is printed by the child when its handler has begun.
	helperStarted = "queuetest: handler started"
)

// Run runs the contract suite against b. Subtests run in parallel, each on its own storage.
func Run(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"PayloadRoundTrip", testPayloadRoundTrip},
		{"Asynchronous", testAsynchronous},
		{"ProcessIn", testProcessIn},
		{"RetryWithBackoff", testRetryWithBackoff},
		{"SkipRetry", testSkipRetry},
		{"OutageKeepsBudget", testOutageKeepsBudget},
		{"MaxRetryExhausted", testMaxRetryExhausted},
		{"UniqueTaskID", testUniqueTaskID},
		{"DrainOnShutdown", testDrainOnShutdown},
		{"RedeliveryAfterKill", testRedeliveryAfterKill},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, b)
		})
	}
}

// open opens a queue on fresh storage (or on loc when given) and closes it at cleanup.
func open(t *testing.T, b Backend, loc string, p Params) queue.Queue {
	t.Helper()
	if loc == "" {
		loc = b.Fresh(t)
	}
	if p.Concurrency == 0 {
		p.Concurrency = 2
	}
	if p.BaseRetryDelay == 0 {
		p.BaseRetryDelay = baseDelay
	}
	q := b.Open(t, loc, p)
	t.Cleanup(func() {
		if err := q.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return q
}

func start(t *testing.T, q queue.Queue) {
	t.Helper()
	if err := q.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
}

func enqueue(t *testing.T, q queue.Queue, task *queue.Task, opts ...queue.Option) *queue.TaskInfo {
	t.Helper()
	info, err := q.Enqueue(t.Context(), task, opts...)
	if err != nil {
		t.Fatalf("Enqueue %s: %v", task.Type, err)
	}
	return info
}

// eventually polls cond until it returns true or d passes; the string explains the last
// failed check.
func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %v: %s", what, d, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitState polls Inspect until the task is in want and returns its info.
func waitState(t *testing.T, q queue.Queue, id string, want queue.State, d time.Duration) *queue.TaskInfo {
	t.Helper()
	var info *queue.TaskInfo
	eventually(t, d, fmt.Sprintf("task %s in state %s", id, want), func() (bool, string) {
		i, err := q.Inspect(context.Background(), id)
		if err != nil {
			return false, err.Error()
		}
		info = i
		return i.State == want, fmt.Sprintf("state %s, retried %d, last error %q", i.State, i.Retried, i.LastErr)
	})
	return info
}

// recorder is a handler that remembers every call.
type recorder struct {
	mu       sync.Mutex
	calls    []time.Time
	payloads [][]byte
	// result decides the outcome of call number n (0-based); nil means success.
	result func(n int) error
}

func (r *recorder) ProcessTask(_ context.Context, t *queue.Task) error {
	r.mu.Lock()
	n := len(r.calls)
	r.calls = append(r.calls, time.Now())
	r.payloads = append(r.payloads, bytes.Clone(t.Payload))
	r.mu.Unlock()
	if r.result == nil {
		return nil
	}
	return r.result(n)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

func (r *recorder) snapshot() ([]time.Time, [][]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.calls...), append([][]byte(nil), r.payloads...)
}

func testPayloadRoundTrip(t *testing.T, b Backend) {
	q := open(t, b, "", Params{})
	payloads := map[string][]byte{
		"roundtrip:json":   []byte(`{"course":"c-1","title":"Intro \u00e9"}`),
		"roundtrip:binary": {0x00, 0xff, 0xfe, 0x80, '\n', 0x00},
		"roundtrip:empty":  nil,
	}
	recs := map[string]*recorder{}
	for typ := range payloads {
		recs[typ] = &recorder{}
		q.Handle(typ, recs[typ])
	}
	start(t, q)
	ids := map[string]string{}
	for typ, p := range payloads {
		info := enqueue(t, q, queue.NewTask(typ, p))
		if info.ID == "" || info.Type != typ || !bytes.Equal(info.Payload, p) {
			t.Errorf("Enqueue(%s) info = %+v", typ, info)
		}
		if info.MaxRetry != queue.DefaultMaxRetry {
			t.Errorf("Enqueue(%s) MaxRetry = %d, want default %d", typ, info.MaxRetry, queue.DefaultMaxRetry)
		}
		ids[typ] = info.ID
	}
	for typ, p := range payloads {
		info := waitState(t, q, ids[typ], queue.StateCompleted, waitFor)
		if !bytes.Equal(info.Payload, p) {
			t.Errorf("Inspect(%s) payload = %q, want %q", typ, info.Payload, p)
		}
		_, got := recs[typ].snapshot()
		if len(got) != 1 || !bytes.Equal(got[0], p) {
			t.Errorf("handler for %s got payloads %q, want exactly [%q]", typ, got, p)
		}
	}
	if _, err := q.Inspect(t.Context(), "no-such-task"); !errors.Is(err, queue.ErrTaskNotFound) {
		t.Errorf("Inspect(unknown) error = %v, want ErrTaskNotFound", err)
	}
}

// testAsynchronous proves Enqueue does not run the handler: tasks wait while no worker is
// started, and Enqueue returns while a handler is blocked.
func testAsynchronous(t *testing.T, b Backend) {
	q := open(t, b, "", Params{})
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	q.Handle("async:block", queue.HandlerFunc(func(ctx context.Context, _ *queue.Task) error {
		started <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	info := enqueue(t, q, queue.NewTask("async:block", []byte("x")))
	if info.State != queue.StatePending {
		t.Errorf("Enqueue state = %s, want pending", info.State)
	}
	got := waitState(t, q, info.ID, queue.StatePending, waitFor)
	if got.Retried != 0 || got.LastErr != "" {
		t.Errorf("unstarted task: %+v", got)
	}
	start(t, q)
	select {
	case <-started:
	case <-time.After(waitFor):
		t.Fatal("handler did not start")
	}
	waitState(t, q, info.ID, queue.StateActive, waitFor)
	// A second Enqueue must return while the first handler is still blocked.
	done := make(chan error, 1)
	go func() {
		_, err := q.Enqueue(context.Background(), queue.NewTask("async:other", nil))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Enqueue while a handler runs: %v", err)
		}
	case <-time.After(waitFor):
		t.Fatal("Enqueue blocked while a handler was running")
	}
	close(release)
	waitState(t, q, info.ID, queue.StateCompleted, waitFor)
}

func testProcessIn(t *testing.T, b Backend) {
	q := open(t, b, "", Params{})
	rec := &recorder{}
	q.Handle("later:run", rec)
	start(t, q)
	const delay = 500 * time.Millisecond
	before := time.Now()
	info := enqueue(t, q, queue.NewTask("later:run", nil), queue.ProcessIn(delay))
	if info.State != queue.StateScheduled {
		t.Errorf("Enqueue state = %s, want scheduled", info.State)
	}
	waitState(t, q, info.ID, queue.StateCompleted, waitFor)
	calls, _ := rec.snapshot()
	if len(calls) != 1 {
		t.Fatalf("handler ran %d times, want 1", len(calls))
	}
	if got := calls[0].Sub(before); got < delay {
		t.Errorf("handler ran %v after Enqueue, want at least %v", got, delay)
	}
}

func testRetryWithBackoff(t *testing.T, b Backend) {
	// Half a second keeps the doubled bound (1 s) above asynq's one-second scheduling grain,
	// so growth shows on both backends.
	const base = 500 * time.Millisecond
	q := open(t, b, "", Params{BaseRetryDelay: base})
	rec := &recorder{result: func(n int) error {
		if n < 2 {
			return fmt.Errorf("transient failure %d", n+1)
		}
		return nil
	}}
	q.Handle("retry:flaky", rec)
	start(t, q)
	info := enqueue(t, q, queue.NewTask("retry:flaky", []byte("p")), queue.MaxRetry(5))
	done := waitState(t, q, info.ID, queue.StateCompleted, waitFor)
	calls, payloads := rec.snapshot()
	if len(calls) != 3 {
		t.Fatalf("handler ran %d times, want 3 (two failures, then success)", len(calls))
	}
	if done.Retried != 2 {
		t.Errorf("Retried = %d, want 2", done.Retried)
	}
	for i, p := range payloads {
		if string(p) != "p" {
			t.Errorf("attempt %d payload %q", i+1, p)
		}
	}
	// queue.RetryDelay only adds jitter, so base·2^n is a lower bound for gap n+1; the bounds
	// double, which is what "exponential" promises without depending on scheduler timing.
	for n := range 2 {
		gap := calls[n+1].Sub(calls[n])
		lower := base << n
		if gap < lower {
			t.Errorf("gap before retry %d = %v, want >= %v", n+1, gap, lower)
		}
		t.Logf("gap before retry %d: %v (lower bound %v)", n+1, gap, lower)
	}
}

// testOutageKeepsBudget: a task whose handler reports a backend outage more often than its
// retry budget allows still completes once the backend is back, and the outage attempts are
// not counted as failures.
func testOutageKeepsBudget(t *testing.T, b Backend) {
	q := open(t, b, "", Params{})
	rec := &recorder{result: func(n int) error {
		if n < 3 {
			return fmt.Errorf("attempt %d: %w", n+1, storage.Unavailable("testbackend", errors.New("connection refused")))
		}
		return nil
	}}
	q.Handle("retry:outage", rec)
	start(t, q)
	info := enqueue(t, q, queue.NewTask("retry:outage", []byte("p")), queue.MaxRetry(1))
	done := waitState(t, q, info.ID, queue.StateCompleted, waitFor)
	if calls, _ := rec.snapshot(); len(calls) != 4 {
		t.Fatalf("handler ran %d times, want 4 (three outages, then success)", len(calls))
	}
	if done.Retried != 0 {
		t.Errorf("Retried = %d, want 0: outages must not use up the retry budget", done.Retried)
	}
}

func testSkipRetry(t *testing.T, b Backend) {
	q := open(t, b, "", Params{})
	rec := &recorder{result: func(int) error {
		return fmt.Errorf("payload does not decode: %w", queue.SkipRetry)
	}}
	q.Handle("skip:poison", rec)
	start(t, q)
	info := enqueue(t, q, queue.NewTask("skip:poison", []byte("{")), queue.MaxRetry(5))
	// Archived is final, so counting calls once it is reached proves there was no retry.
	got := waitState(t, q, info.ID, queue.StateArchived, waitFor)
	if n := rec.count(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
	if got.Retried != 0 {
		t.Errorf("Retried = %d, want 0", got.Retried)
	}
	if !strings.Contains(got.LastErr, "payload does not decode") {
		t.Errorf("LastErr = %q, want the handler's message", got.LastErr)
	}
}

func testMaxRetryExhausted(t *testing.T, b Backend) {
	q := open(t, b, "", Params{BaseRetryDelay: 20 * time.Millisecond})
	rec := &recorder{result: func(n int) error { return fmt.Errorf("still broken (%d)", n+1) }}
	var mu sync.Mutex
	var last []bool
	q.Handle("exhaust:fail", queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
		mu.Lock()
		last = append(last, queue.LastAttempt(ctx))
		mu.Unlock()
		return rec.ProcessTask(ctx, task)
	}))
	start(t, q)
	info := enqueue(t, q, queue.NewTask("exhaust:fail", nil), queue.MaxRetry(2))
	got := waitState(t, q, info.ID, queue.StateArchived, waitFor)
	if n := rec.count(); n != 3 {
		t.Errorf("handler ran %d times, want 3 (first run + MaxRetry 2)", n)
	}
	if got.Retried != 2 || got.MaxRetry != 2 {
		t.Errorf("Retried/MaxRetry = %d/%d, want 2/2", got.Retried, got.MaxRetry)
	}
	if !strings.Contains(got.LastErr, "still broken (3)") {
		t.Errorf("LastErr = %q, want the last failure", got.LastErr)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(last) != "[false false true]" {
		t.Errorf("LastAttempt per run = %v, want only the third to be last", last)
	}
}

func testUniqueTaskID(t *testing.T, b Backend) {
	q := open(t, b, "", Params{})
	rec := &recorder{}
	q.Handle("unique:run", rec)
	task := queue.NewTask("unique:run", []byte("1"))
	info := enqueue(t, q, task, queue.TaskID("import-42"))
	if info.ID != "import-42" {
		t.Errorf("ID = %q, want import-42", info.ID)
	}
	if _, err := q.Enqueue(t.Context(), task, queue.TaskID("import-42")); !errors.Is(err, queue.ErrDuplicateTask) {
		t.Errorf("duplicate of a pending task: error = %v, want ErrDuplicateTask", err)
	}
	start(t, q)
	waitState(t, q, "import-42", queue.StateCompleted, waitFor)
	if _, err := q.Enqueue(t.Context(), task, queue.TaskID("import-42")); !errors.Is(err, queue.ErrDuplicateTask) {
		t.Errorf("duplicate of a completed (retained) task: error = %v, want ErrDuplicateTask", err)
	}
	other := enqueue(t, q, task, queue.TaskID("import-43"))
	waitState(t, q, other.ID, queue.StateCompleted, waitFor)
	if n := rec.count(); n != 2 {
		t.Errorf("handler ran %d times, want 2 (one per distinct id)", n)
	}
}

// testDrainOnShutdown checks that Shutdown waits for a running handler and that a task
// enqueued after Shutdown began is not started (it stays pending for the next worker).
func testDrainOnShutdown(t *testing.T, b Backend) {
	q := open(t, b, "", Params{Concurrency: 2})
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	var finished time.Time
	var mu sync.Mutex
	q.Handle("drain:slow", queue.HandlerFunc(func(context.Context, *queue.Task) error {
		started <- struct{}{}
		<-release // deliberately ignores ctx: draining must wait for it anyway
		mu.Lock()
		finished = time.Now()
		mu.Unlock()
		return nil
	}))
	late := &recorder{}
	q.Handle("drain:late", late)
	start(t, q)
	slow := enqueue(t, q, queue.NewTask("drain:slow", nil))
	select {
	case <-started:
	case <-time.After(waitFor):
		t.Fatal("slow handler did not start")
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	shutdown := make(chan error, 1)
	go func() { shutdown <- q.Shutdown(ctx) }()
	// Negative assertions need a window: give Shutdown time to begin, then give the queue
	// time in which it would start the late task (a worker slot is free) if it still took
	// work.
	time.Sleep(quietWindow)
	lateInfo := enqueue(t, q, queue.NewTask("drain:late", nil))
	time.Sleep(quietWindow)
	select {
	case err := <-shutdown:
		t.Fatalf("Shutdown returned (%v) while a handler was still running", err)
	default:
	}
	close(release)
	var err error
	select {
	case err = <-shutdown:
	case <-time.After(waitFor):
		t.Fatal("Shutdown did not return after the handler finished")
	}
	returned := time.Now()
	if err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	mu.Lock()
	if finished.IsZero() || finished.After(returned) {
		t.Errorf("Shutdown returned at %v before the handler finished (%v)", returned, finished)
	}
	mu.Unlock()
	if n := late.count(); n != 0 {
		t.Errorf("a task enqueued after Shutdown began ran %d times", n)
	}
	if got := waitState(t, q, slow.ID, queue.StateCompleted, waitFor); got.Retried != 0 {
		t.Errorf("drained task Retried = %d, want 0", got.Retried)
	}
	if got, err := q.Inspect(t.Context(), lateInfo.ID); err != nil || got.State != queue.StatePending {
		t.Errorf("late task after Shutdown: %+v, %v; want it kept pending", got, err)
	}
}

// testRedeliveryAfterKill runs a worker in a child process, kills it with SIGKILL while its
// handler runs, and checks that a worker in this process then processes the task.
func testRedeliveryAfterKill(t *testing.T, b Backend) {
	loc := b.Fresh(t)
	q := open(t, b, loc, Params{Concurrency: 1})
	info := enqueue(t, q, queue.NewTask(typeBlock, []byte("survive me")), queue.MaxRetry(3))

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(), envHelper+"=1", envLoc+"="+loc)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper process: %v", err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	startedCh := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := sync.Once{}
		for sc.Scan() {
			if strings.Contains(sc.Text(), helperStarted) {
				once.Do(func() { close(startedCh) })
			}
		}
	}()
	select {
	case <-startedCh:
	case <-time.After(waitFor):
		_ = cmd.Process.Kill()
		t.Fatalf("helper process did not start the handler; stderr:\n%s", stderr.String())
	}
	waitState(t, q, info.ID, queue.StateActive, waitFor)

	killedAt := time.Now()
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred code, no graceful stop
		t.Fatalf("kill helper: %v", err)
	}
	_ = cmd.Wait()
	killed = true

	rec := &recorder{}
	q.Handle(typeBlock, rec)
	start(t, q)
	got := waitState(t, q, info.ID, queue.StateCompleted, b.RedeliveryTimeout)
	t.Logf("redelivered %v after kill -9", time.Since(killedAt).Round(time.Millisecond))
	_, payloads := rec.snapshot()
	if len(payloads) != 1 || string(payloads[0]) != "survive me" {
		t.Errorf("redelivered payloads = %q, want [\"survive me\"]", payloads)
	}
	if got.Retried < 1 {
		t.Errorf("Retried = %d, want the lost attempt counted", got.Retried)
	}
}

// HelperProcess is the body of the child worker of the crash test; call it from a test named
// TestHelperProcess. Outside the child process it returns at once. In the child it starts a
// worker whose handler blocks, and waits to be killed.
func HelperProcess(t *testing.T, b Backend) {
	if os.Getenv(envHelper) != "1" {
		t.Skip("only runs as the child process of the RedeliveryAfterKill contract test")
	}
	q := b.Open(t, os.Getenv(envLoc), Params{Concurrency: 1, BaseRetryDelay: baseDelay})
	q.Handle(typeBlock, queue.HandlerFunc(func(context.Context, *queue.Task) error {
		fmt.Println(helperStarted)
		// Block until killed; the bound only keeps an orphan from living forever.
		time.Sleep(5 * time.Minute)
		return errors.New("helper was not killed")
	}))
	if err := q.Start(context.Background()); err != nil {
		t.Fatalf("helper Start: %v", err)
	}
	time.Sleep(5 * time.Minute)
	t.Fatal("helper process was not killed")
}
