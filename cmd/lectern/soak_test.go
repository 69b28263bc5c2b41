package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// soakConfig is one soak's length and scale. The short soak (no LECTERN_SOAK) is the one
// `make test` runs; `make soak` sets LECTERN_SOAK to the length of each mode's run.
type soakConfig struct {
	length   time.Duration // of the load in each mode; the drain and the checks come after
	learners int           // simulated SCORM learners at once
	xapi     int           // xAPI clients at once
	pace     time.Duration // a learner's time between two commits (±50%)
	modes    []string
	seed     uint64
	report   string // file the latency and resource tables are appended to ("" = none)
}

// soakConfigFromEnv reads LECTERN_SOAK (length per mode, e.g. 30m), LECTERN_SOAK_LEARNERS,
// LECTERN_SOAK_XAPI, LECTERN_SOAK_MODES (distributed,embedded), LECTERN_SOAK_SEED and
// LECTERN_SOAK_REPORT.
func soakConfigFromEnv(t *testing.T) soakConfig {
	t.Helper()
	c := soakConfig{length: 90 * time.Second, learners: 12, xapi: 4, pace: time.Second,
		modes: []string{"distributed", "embedded"}, seed: mrand.Uint64(), report: os.Getenv("LECTERN_SOAK_REPORT")}
	if v := os.Getenv("LECTERN_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 30*time.Second {
			t.Fatalf("LECTERN_SOAK=%q: want a duration of 30s or more (e.g. 30m)", v)
		}
		c.length, c.learners, c.xapi, c.pace = d, 100, 20, 3*time.Second
	}
	num := func(k string, p *int) {
		if v := os.Getenv(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a positive number", k, v)
			}
			*p = n
		}
	}
	num("LECTERN_SOAK_LEARNERS", &c.learners)
	num("LECTERN_SOAK_XAPI", &c.xapi)
	if v := os.Getenv("LECTERN_SOAK_MODES"); v != "" {
		c.modes = strings.Split(v, ",")
	}
	if v := os.Getenv("LECTERN_SOAK_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("LECTERN_SOAK_SEED=%q", v)
		}
		c.seed = n
	}
	return c
}

// TestSoak runs the product as operators run it, under mixed load, while parts of it die on
// a schedule, then checks what must hold afterwards (docs/operations.md, "Soak"). Each mode in
// turn: distributed (one serve, two workers and three indexers as separate processes on
// PostgreSQL, a Redis of the test's own, MinIO and Elasticsearch) and embedded (`lectern all`).
//
// Load: a readiness probe (/readyz every second), learners (register, launch the SCORM 1.2 course, commit at a pace, terminate; every
// second one with a post-back to a receiver on loopback), xAPI clients (PUT with their own
// statement ids, GET some back), content imports and lexical searches, course imports.
// Faults: kill -9 of a random role (restarted two seconds later); in the distributed mode
// Redis and MinIO (the test's own) killed and restarted five seconds later, PostgreSQL and
// Elasticsearch cut for five seconds at a proxy in front of them; the post-back receiver
// hanging for a while.
// Invariants: every acknowledged commit, statement, content and course import present exactly
// once; every job ended; no 5xx but 503 with Retry-After; each role's goroutines, RSS and open
// files flat over the last two thirds (soakFlat); p50/p99 per operation and phase logged.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs whole deployments for minutes")
	}
	testenv.External(t, "LECTERN_TEST_POSTGRES_URL")
	cfg := soakConfigFromEnv(t)
	t.Logf("soak: %v per mode, %d learners, %d xAPI clients, modes %v, LECTERN_SOAK_SEED=%d", cfg.length, cfg.learners, cfg.xapi, cfg.modes, cfg.seed)
	bin := buildBinary(t)
	for _, mode := range cfg.modes {
		t.Run(mode, func(t *testing.T) { runSoak(t, bin, mode, cfg) })
	}
}

// soakOp is one request of the load: which operation, when, how long, the answer.
type soakOp struct {
	name   string
	at     time.Time
	took   time.Duration
	status int    // 0: no answer (connection refused, reset, timeout)
	body   string // the start of an answer other than 2xx and 3xx, or the error
}

// soakRecorder collects every request and every answer the invariants forbid.
type soakRecorder struct {
	mu  sync.Mutex
	ops []soakOp
	bad []string // 5xx other than 503 with Retry-After
	// answers counts the answers other than 2xx and 3xx by operation and status, with the
	// first body of each, for the log: what the clients saw during the faults.
	answers map[string]int
	first   map[string]string
}

func (r *soakRecorder) add(op soakOp, bad string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
	if op.status == 0 || op.status >= 400 {
		k := fmt.Sprintf("%s → %d", op.name, op.status)
		if r.answers == nil {
			r.answers, r.first = map[string]int{}, map[string]string{}
		}
		if r.answers[k]++; r.answers[k] == 1 {
			r.first[k] = op.body
		}
	}
	if bad != "" && len(r.bad) < 50 {
		r.bad = append(r.bad, bad)
	}
}

// soakClient sends the load's requests as root of tenant soak and records them.
type soakClient struct {
	base string
	rec  *soakRecorder
	hc   *http.Client
}

type soakResp struct {
	status int
	body   []byte
	header http.Header
}

func (c *soakClient) do(op, method, u, ct string, body []byte, auth bool, headers ...string) (soakResp, error) {
	if !strings.Contains(u, "://") {
		u = c.base + u
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return soakResp{}, err
	}
	if auth {
		req.SetBasicAuth("root", "soak-password")
		req.Header.Set("tenant_id", "soak")
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	start := time.Now()
	res, err := c.hc.Do(req)
	if err != nil {
		c.rec.add(soakOp{name: op, at: start, took: time.Since(start), body: err.Error()}, "")
		return soakResp{}, err
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	bad := ""
	if res.StatusCode >= 500 && (res.StatusCode != 503 || res.Header.Get("Retry-After") == "") {
		bad = fmt.Sprintf("%s %s %s → %d %s", start.Format("15:04:05.000"), method, u, res.StatusCode, tail(string(raw), 300))
	}
	o := soakOp{name: op, at: start, took: took, status: res.StatusCode}
	if res.StatusCode >= 400 {
		o.body = tail(string(raw), 200)
	}
	c.rec.add(o, bad)
	if err != nil {
		return soakResp{}, err
	}
	return soakResp{res.StatusCode, raw, res.Header}, nil
}

// retry sends one request until it gets an answer other than 503 (or a dropped
// connection, when idempotent), for up to two minutes: a client riding out a fault.
func (c *soakClient) retry(idempotent bool, op, method, u, ct string, body []byte, auth bool, headers ...string) (soakResp, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r, err := c.do(op, method, u, ct, body, auth, headers...)
		transient := err != nil && idempotent || err == nil && r.status == 503
		if !transient || time.Now().After(deadline) {
			return r, err
		}
		wait := 500 * time.Millisecond
		if s, e := strconv.Atoi(r.header.Get("Retry-After")); e == nil && s > 0 && s < 5 {
			wait = time.Duration(s) * time.Second
		}
		time.Sleep(wait)
	}
}

// soakRole is one role of the deployment; kill replaces its process by a new one.
type soakRole struct {
	name, role string
	env        []string
	metrics    string // LECTERN_METRICS_ADDR
	mu         sync.Mutex
	proc       *roleProc
	started    time.Time
}

func (r *soakRole) current() (*roleProc, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.proc, r.started
}

// soakDeployment is one mode's set of processes, with the Redis of its own (distributed).
type soakDeployment struct {
	t     *testing.T
	bin   string
	base  string
	roles []*soakRole
	// backends stopped as faults (distributed): Redis and MinIO of the soak's own, PostgreSQL
	// and Elasticsearch behind proxies
	backends []*soakBackend
}

func (d *soakDeployment) start(r *soakRole) {
	d.t.Helper()
	p := startRole(d.t, d.bin, r.role, r.env)
	waitRoles(d.t, 2*time.Minute, p)
	r.mu.Lock()
	r.proc, r.started = p, time.Now()
	r.mu.Unlock()
}

// kill sends SIGKILL to the role's process and starts a new one two seconds later, as an
// orchestrator restarts a dead container.
func (d *soakDeployment) kill(r *soakRole) {
	d.t.Helper()
	p, _ := r.current()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	time.Sleep(2 * time.Second)
	d.start(r)
}

func (d *soakDeployment) logs() string {
	var sb strings.Builder
	for _, r := range d.roles {
		p, _ := r.current()
		var errs []string
		for _, line := range strings.Split(p.output(), "\n") {
			if strings.Contains(line, `"level":"ERROR"`) {
				errs = append(errs, tail(line, 1000))
			}
		}
		errs = errs[max(0, len(errs)-20):]
		fmt.Fprintf(&sb, "--- %s (pid %d): its last errors\n%s\n--- %s: its log's end\n%s", r.name, p.cmd.Process.Pid,
			strings.Join(errs, "\n"), r.name, tail(p.output(), 3000))
	}
	return sb.String()
}

// soakBackend is a backend server of the soak's own (redis-server, MinIO), so that killing
// and restarting it is a fault only this test sees: the suite's shared backends serve other
// tests at the same time.
//
// A shared backend the soak cannot restart (PostgreSQL, Elasticsearch) is reached through a
// proxy of its own instead (testenv.Proxy, as TestBackendOutage does): proxy set, "down" cuts it
// (open connections reset, new ones refused) and "up" restores it.
type soakBackend struct {
	name  string
	dir   string // its data, kept across restarts
	args  []string
	env   []string
	ready func() bool
	cmd   *exec.Cmd
	proxy *testenv.Proxy
}

// soakProxied puts a proxy in front of the shared backend at hostport; the deployment uses
// the returned address instead.
func soakProxied(t *testing.T, name, hostport string) (*soakBackend, string) {
	t.Helper()
	p := testenv.NewProxy(t, hostport)
	return &soakBackend{name: name, proxy: p}, p.Addr()
}

// what says how the fault is made, for the log.
func (b *soakBackend) what() string {
	if b.proxy != nil {
		return b.name + " cut at a proxy in front of it (connections reset, new ones refused), restored after 5 s"
	}
	return b.name + " killed (SIGKILL), restarted after 5 s"
}

// up starts the backend and waits until it answers.
func (b *soakBackend) up() error {
	if b.proxy != nil {
		b.proxy.Restore()
		return nil
	}
	b.cmd = exec.Command(b.args[0], b.args[1:]...)
	b.cmd.Env = append(os.Environ(), b.env...)
	logf, err := os.OpenFile(b.dir+".log", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	b.cmd.Stdout, b.cmd.Stderr = logf, logf
	if err := b.cmd.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for !b.ready() {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(b.dir + ".log")
			return fmt.Errorf("%s did not answer within a minute:\n%s", b.name, tail(string(log), 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// down kills the backend (SIGKILL: nothing flushed that was not already).
func (b *soakBackend) down() {
	if b.proxy != nil {
		b.proxy.Cut()
		return
	}
	if b.cmd != nil && b.cmd.Process != nil {
		_ = b.cmd.Process.Signal(syscall.SIGKILL)
		_ = b.cmd.Wait()
	}
}

func startSoakBackend(t *testing.T, b *soakBackend) *soakBackend {
	t.Helper()
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := b.up(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.down)
	return b
}

// startSoakRedis runs redis-server with an append-only file synced at every write (as
// scripts/services.sh runs the suite's), so a restart keeps every queued task.
func startSoakRedis(t *testing.T) (*soakBackend, string) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("the soak runs a Redis of its own: %v (scripts/services.sh installs redis-server)", err)
	}
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir() + "/redis"
	return startSoakBackend(t, &soakBackend{name: "Redis", dir: dir, ready: func() bool { return redisPing(addr) },
		args: []string{"redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
			"--appendfsync", "always", "--dir", dir, "--daemonize", "no"}}), "redis://" + addr + "/0"
}

func redisPing(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// startSoakMinIO runs the MinIO binary scripts/services.sh built (in $LECTERN_CACHE/bin); it
// returns nil when there is none, and the soak then uses the suite's MinIO without its fault.
func startSoakMinIO(t *testing.T) (*soakBackend, string) {
	t.Helper()
	cache := os.Getenv("LECTERN_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = home + "/.cache/lectern"
	}
	bins, _ := filepath.Glob(cache + "/bin/minio-*")
	if len(bins) == 0 {
		t.Logf("no MinIO binary in %s/bin: the soak uses the suite's MinIO and does not restart it", cache)
		return nil, ""
	}
	addr := freeAddr(t)
	dir := t.TempDir() + "/minio"
	return startSoakBackend(t, &soakBackend{name: "MinIO", dir: dir,
		ready: func() bool {
			res, err := http.Get("http://" + addr + "/minio/health/ready")
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == 200
		},
		env:  []string{"MINIO_ROOT_USER=soak", "MINIO_ROOT_PASSWORD=soak-secret", "MINIO_BROWSER=off", "MINIO_UPDATE=off"},
		args: []string{bins[len(bins)-1], "server", dir, "--quiet", "--address", addr, "--console-address", freeAddr(t)}}), addr
}

// startSoakDeployment starts mode's processes and waits until the API answers.
func startSoakDeployment(t *testing.T, bin, mode string) *soakDeployment {
	t.Helper()
	d := &soakDeployment{t: t, bin: bin}
	addr := freeAddr(t)
	d.base = "http://" + addr
	// A content origin on a port of its own that a restarted serve binds again: the launched
	// sessions' commits go there (TestMain's ephemeral default would move it at each restart).
	common := []string{"LECTERN_ADDR=" + addr, "LECTERN_CONTENT_ADDR=" + freeAddr(t), "LECTERN_LOG_LEVEL=info", "LECTERN_OUTBOUND_ALLOW=127.0.0.1/32",
		"LECTERN_MODEL_DIR=" + t.TempDir(), "LECTERN_EMBEDDINGS_URL="}
	creds := []string{"LECTERN_ROOT_USER=root", "LECTERN_ROOT_PASSWORD=soak-password", "LECTERN_SECRET_KEY=soak-secret"}
	role := func(name, role string, env []string) {
		m := freeAddr(t)
		env = append(append(append(slices.Clone(env), common...), creds...), "LECTERN_METRICS_ADDR="+m)
		d.roles = append(d.roles, &soakRole{name: name, role: role, env: env, metrics: m})
	}
	if mode == "embedded" {
		env := []string{"LECTERN_DATA_DIR=" + t.TempDir()}
		for _, k := range []string{"LECTERN_POSTGRES_URL", "LECTERN_REDIS_URL", "LECTERN_S3_ENDPOINT", "LECTERN_ELASTICSEARCH_URL"} {
			env = append(env, k+"=")
		}
		role("all", "all", env)
	} else {
		redis, redisURL := startSoakRedis(t)
		env := append(distributedEnv(t), "LECTERN_REDIS_URL="+redisURL)
		d.backends = append(d.backends, redis)
		if minio, addr := startSoakMinIO(t); minio != nil {
			d.backends = append(d.backends, minio)
			env = append(env, "LECTERN_S3_ENDPOINT="+addr, "LECTERN_S3_ACCESS_KEY=soak", "LECTERN_S3_SECRET_KEY=soak-secret")
		}
		pg, err := url.Parse(envValue(env, "LECTERN_POSTGRES_URL"))
		if err != nil {
			t.Fatal(err)
		}
		pgProxy, addr := soakProxied(t, "PostgreSQL", pg.Host)
		pg.Host = addr
		es, err := url.Parse(envValue(env, "LECTERN_ELASTICSEARCH_URL"))
		if err != nil {
			t.Fatal(err)
		}
		esProxy, addr := soakProxied(t, "Elasticsearch", es.Host)
		es.Host = addr
		d.backends = append(d.backends, pgProxy, esProxy)
		env = append(env, "LECTERN_POSTGRES_URL="+pg.String(), "LECTERN_ELASTICSEARCH_URL="+es.String())
		role("serve", "serve", env)
		role("worker-1", "worker", env)
		role("worker-2", "worker", env)
		role("indexer-1", "indexer", env)
		role("indexer-2", "indexer", env)
		role("indexer-3", "indexer", env)
	}
	var wg sync.WaitGroup
	for _, r := range d.roles {
		p := startRole(t, bin, r.role, r.env)
		r.proc, r.started = p, time.Now()
		wg.Add(1)
		go func() { defer wg.Done(); <-p.ready }()
	}
	for _, r := range d.roles {
		waitRoles(t, 2*time.Minute, r.proc)
	}
	wg.Wait()
	waitHealthy(t, addr)
	return d
}

// soakReceiver takes post-backs on loopback; while hanging it holds every request until
// the hang ends (or the sender gives up).
type soakReceiver struct {
	mu      sync.Mutex
	got     map[string]int // registration → post-backs received
	hanging chan struct{}  // non-nil while hanging; closed when the hang ends
	held    int
	srv     *http.Server
	url     string
}

func newSoakReceiver(t *testing.T) *soakReceiver {
	t.Helper()
	rc := &soakReceiver{got: map[string]int{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc.url = "http://" + l.Addr().String()
	rc.srv = &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = rc.srv.Serve(l) }()
	t.Cleanup(func() { rc.endHang(); _ = rc.srv.Close() })
	return rc
}

func (rc *soakReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	rc.mu.Lock()
	h := rc.hanging
	if h != nil {
		rc.held++
	}
	rc.mu.Unlock()
	if h != nil {
		select {
		case <-h:
		case <-r.Context().Done():
			return
		}
	}
	rc.mu.Lock()
	rc.got[strings.TrimPrefix(r.URL.Path, "/pb/")]++
	rc.mu.Unlock()
}

func (rc *soakReceiver) startHang() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.hanging == nil {
		rc.hanging = make(chan struct{})
	}
}

func (rc *soakReceiver) endHang() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.hanging != nil {
		close(rc.hanging)
		rc.hanging = nil
	}
}

func (rc *soakReceiver) count(reg string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[reg]
}

// soakFault is one fault's window: from its start until the deployment is whole again.
type soakFault struct {
	kind       string // "kill", "hang" or the backend restarted ("Redis", "MinIO")
	what       string
	start, end time.Time
}

// soakLearner is what the server acknowledged to one learner's registration.
type soakLearner struct {
	reg        string
	postBack   bool
	lastCommit int  // commitSequence of the last commit of SCO i1 that answered true
	lastTried  int  // of the last one sent: unanswered, it may or may not have been stored
	passed     bool // the terminating commit of SCO i2 answered true
}

// soakAcks is every acknowledgement the load got, for the checks at the end.
type soakAcks struct {
	mu         sync.Mutex
	learners   []soakLearner
	statements map[int][]string // xAPI client → statement ids acknowledged
	tried      map[string]bool  // every statement id sent
	content    []soakContent
	courses    map[string]string // course id → import job id
	ready      []string          // courses whose import completed (learners pick from these)
}

// soakContent is one content import answered 202: its job and the word only it holds.
type soakContent struct{ job, word string }

func (a *soakAcks) course(r *mrand.Rand) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ready[r.IntN(len(a.ready))]
}

func runSoak(t *testing.T, bin, mode string, cfg soakConfig) {
	rec := &soakRecorder{}
	rc := newSoakReceiver(t)
	d := startSoakDeployment(t, bin, mode)
	c := &soakClient{base: d.base, rec: rec, hc: &http.Client{Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	acks := &soakAcks{statements: map[int][]string{}, tried: map[string]bool{}, courses: map[string]string{}}
	if r, err := c.retry(false, "setup", "POST", "/api/v1/app_management/tenants", "application/json", []byte(`{"tenant_id":"soak","enabled":true}`), true); err != nil || r.status != 201 {
		t.Fatalf("create tenant: %v %d %s", err, r.status, r.body)
	}
	pkg := servertest.Scorm12Package(t)
	if job := soakImportCourse(c, pkg, "soak-c0"); job == "" || soakCourseStatus(c, job, 3*time.Minute) != "COMPLETE" {
		t.Fatalf("the first course import did not complete\n%s", d.logs())
	}
	acks.ready = []string{"soak-c0"}

	ctx, cancel := context.WithTimeout(t.Context(), cfg.length)
	defer cancel()
	start := time.Now()
	samples := newSoakSampler(d, 2*time.Second+cfg.length/200)
	samplerDone := make(chan struct{})
	sampleCtx, stopSampling := context.WithCancel(t.Context())
	go func() { defer close(samplerDone); samples.run(sampleCtx) }()

	var wg sync.WaitGroup
	spawn := func(f func(r *mrand.Rand)) {
		seed := cfg.seed + uint64(mrand.Uint32())
		wg.Add(1)
		go func() { defer wg.Done(); f(mrand.New(mrand.NewPCG(seed, 1))) }()
	}
	for i := range cfg.learners {
		spawn(func(r *mrand.Rand) { soakLearnerLoop(ctx, c, rc, acks, r, cfg.pace, i) })
	}
	for k := range cfg.xapi {
		spawn(func(r *mrand.Rand) { soakXAPILoop(ctx, c, acks, r, k) })
	}
	spawn(func(r *mrand.Rand) { soakContentLoop(ctx, c, acks, r, cfg.pace*3) })
	spawn(func(r *mrand.Rand) { soakSearchLoop(ctx, c, acks, r, cfg.pace) })
	spawn(func(r *mrand.Rand) { soakCourseLoop(ctx, c, acks, r, pkg, cfg.pace*10) })
	spawn(func(*mrand.Rand) { soakProbeLoop(ctx, c) })
	var faults []soakFault
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		faults = soakFaults(ctx, d, rc, mrand.New(mrand.NewPCG(cfg.seed, 2)), cfg.length)
	}()
	wg.Wait()
	<-faultsDone
	loadEnd := time.Now()
	stopSampling()
	<-samplerDone
	t.Logf("%s: load ran %v; %d requests; faults: %d", mode, loadEnd.Sub(start).Round(time.Second), len(rec.ops), len(faults))
	for _, f := range faults {
		t.Logf("  %s at +%v for %v: %s", f.kind, f.start.Sub(start).Round(time.Second), f.end.Sub(f.start).Round(100*time.Millisecond), f.what)
	}

	// The checks, each polling with a deadline: a task a killed process held comes back when
	// its lease expires (60-120 s with asynq), so the drain allows for that.
	soakCheckJobs(t, c, acks, d)
	soakCheckStatements(t, c, acks)
	soakCheckLearners(t, c, rc, acks)
	for _, r := range d.roles {
		if p, _ := r.current(); p != nil {
			select {
			case <-p.exited:
				t.Errorf("the %s process exited on its own (%v):\n%s", r.name, p.err, tail(p.output(), 3000))
			default:
			}
		}
	}
	rec.mu.Lock()
	bad := slices.Clone(rec.bad)
	ops := slices.Clone(rec.ops)
	var answers []string
	for k, n := range rec.answers {
		answers = append(answers, fmt.Sprintf("  %s: %d (first: %s)", k, n, rec.first[k]))
	}
	rec.mu.Unlock()
	slices.Sort(answers)
	t.Logf("%s: answers other than 2xx/3xx:\n%s", mode, strings.Join(answers, "\n"))
	for _, b := range bad {
		t.Errorf("5xx without Retry-After: %s", b)
	}
	table := soakLatencyTable(ops, faults, loadEnd)
	resources, flatErrs := samples.check(start.Add(cfg.length/3), loadEnd)
	for _, e := range flatErrs {
		t.Error(e)
	}
	t.Logf("%s: latencies (ms)\n%s\nresources over the last two thirds\n%s", mode, table, resources)
	if cfg.report != "" {
		f, err := os.OpenFile(cfg.report, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "### %s, %v, %d learners, %d xAPI clients, %s\n\n%d requests; faults:\n", mode, cfg.length, cfg.learners, cfg.xapi,
				time.Now().UTC().Format("2006-01-02 15:04 UTC"), len(ops))
			for _, fl := range faults {
				fmt.Fprintf(f, "- %s at +%v, %v: %s\n", fl.kind, fl.start.Sub(start).Round(time.Second), fl.end.Sub(fl.start).Round(100*time.Millisecond), fl.what)
			}
			fmt.Fprintf(f, "\n%s\n%s\n", table, resources)
			f.Close()
		}
	}
	if t.Failed() {
		t.Logf("logs:\n%s", d.logs())
	}
}

// soakSleep waits d or until ctx ends; false when it ended.
func soakSleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// jitter is d ±50%.
func jitter(r *mrand.Rand, d time.Duration) time.Duration {
	return d/2 + time.Duration(r.Int64N(int64(d)+1))
}

func soakUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// soakLearnerLoop is learner i: one registration after another until ctx ends.
func soakLearnerLoop(ctx context.Context, c *soakClient, rc *soakReceiver, acks *soakAcks, r *mrand.Rand, pace time.Duration, i int) {
	if !soakSleep(ctx, jitter(r, pace)) {
		return
	}
	for n := 0; ctx.Err() == nil; n++ {
		l := soakLearner{reg: fmt.Sprintf("l%03d-%04d", i, n), postBack: i%2 == 0}
		body := map[string]any{"courseId": acks.course(r), "registrationId": l.reg,
			"learner": map[string]any{"id": fmt.Sprintf("learner-%d", i), "firstName": "Soak", "lastName": fmt.Sprint(i)}}
		if l.postBack {
			body["postBack"] = map[string]any{"url": rc.url + "/pb/" + l.reg, "resultsFormat": "COURSE"}
		}
		raw, _ := json.Marshal(body)
		api := "/engine/api/v1/soak/registrations"
		if res, err := c.retry(false, "register", "POST", api, "application/json", raw, true); err != nil || res.status != 204 {
			continue
		}
		res, err := c.retry(true, "launch link", "GET", api+"/"+l.reg+"/launchLink", "", nil, true)
		var link struct{ LaunchLink string }
		if err != nil || res.status != 200 || json.Unmarshal(res.body, &link) != nil {
			continue
		}
		at := strings.Index(link.LaunchLink, "/player/launch/")
		if at < 0 {
			continue
		}
		origin := link.LaunchLink[:at]
		if !strings.Contains(origin, "://") {
			origin = c.base
		}
		res, err = c.retry(true, "launch", "GET", origin+link.LaunchLink[at:], "", nil, false)
		session := strings.TrimPrefix(res.header.Get("Location"), "/player/session/")
		if err != nil || res.status != 303 || session == "" {
			continue
		}
		rt := origin + "/player/runtime/" + session
		attempt := func(sco string) int64 {
			res, err := c.retry(true, "activity", "GET", rt+"/activity?activity="+sco, "", nil, false)
			var st struct{ Attempt int64 }
			if err != nil || res.status != 200 || json.Unmarshal(res.body, &st) != nil {
				return 0
			}
			return st.Attempt
		}
		commit := func(sco string, a int64, terminate bool, body string) bool {
			u := fmt.Sprintf("%s/commit?activity=%s&attempt=%d", rt, sco, a)
			if terminate {
				u += "&terminate=true"
			}
			res, err := c.retry(true, "commit", "POST", u, "text/plain;charset=UTF-8", []byte(body), false)
			return err == nil && res.status == 200 && bytes.Contains(res.body, []byte(`"result":"true"`))
		}
		a := attempt("i1")
		if a == 0 {
			continue
		}
		commits := 3 + r.IntN(4)
		for seq := 1; seq <= commits && soakSleep(ctx, jitter(r, pace)); seq++ {
			l.lastTried = seq
			if !commit("i1", a, false, fmt.Sprintf(`{"commitSequence":%d,"cmi.core.lesson_status":"incomplete","cmi.core.lesson_location":"page-%d","cmi.suspend_data":"n=%d","cmi.core.score.raw":"85"}`, seq, seq, seq)) {
				break
			}
			l.lastCommit = seq
		}
		if l.lastCommit == commits {
			if a2 := attempt("i2"); a2 != 0 {
				l.passed = commit("i2", a2, true, `{"commitSequence":1,"cmi.core.lesson_status":"passed","cmi.core.score.raw":"90"}`)
			}
		}
		acks.mu.Lock()
		acks.learners = append(acks.learners, l)
		acks.mu.Unlock()
	}
}

func soakStatement(k, n int, id string) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"actor":{"mbox":"mailto:soak-%d@example.com"},"verb":{"id":"http://adlnet.gov/expapi/verbs/experienced","display":{"en-US":"experienced"}},"object":{"id":"http://example.com/soak/%d/%d"}}`, id, k, k, n))
}

// soakXAPILoop is xAPI client k: PUT statements with ids of its own (retried with the same
// id until answered), GET every fifth back.
func soakXAPILoop(ctx context.Context, c *soakClient, acks *soakAcks, r *mrand.Rand, k int) {
	v := []string{"X-Experience-API-Version", "1.0.3"}
	for n := 0; soakSleep(ctx, jitter(r, 400*time.Millisecond)); n++ {
		id := soakUUID()
		acks.mu.Lock()
		acks.tried[id] = true
		acks.mu.Unlock()
		res, err := c.retry(true, "xapi put", "PUT", "/lrs/TCAPI/soak/statements?statementId="+id, "application/json", soakStatement(k, n, id), true, v...)
		if err != nil || res.status != 204 {
			continue
		}
		acks.mu.Lock()
		acks.statements[k] = append(acks.statements[k], id)
		acks.mu.Unlock()
		if n%5 == 0 {
			_, _ = c.retry(true, "xapi get", "GET", "/lrs/TCAPI/soak/statements?statementId="+id, "", nil, true, v...)
		}
	}
}

// soakContentLoop imports a small document at a time, each with a word of its own. Not
// retried on a dropped connection: whether the server took it is unknown, so it is not
// counted as acknowledged.
func soakContentLoop(ctx context.Context, c *soakClient, acks *soakAcks, r *mrand.Rand, every time.Duration) {
	for n := 0; soakSleep(ctx, jitter(r, every)); n++ {
		word := "soakword" + letters(n) + letters(r.IntN(1<<20))
		doc := fmt.Sprintf("Soak document %d\n\nThe learner reads about %s and rivers, mountains and weather.\n", n, word)
		body, ct := multipartBody(fmt.Sprintf("soak-%d.txt", n), []byte(doc))
		res, err := c.retry(false, "content import", "POST", "/api/v1/content", ct, body, true)
		var j struct{ ID string }
		if err != nil || res.status != 202 || json.Unmarshal(res.body, &j) != nil || j.ID == "" {
			continue
		}
		acks.mu.Lock()
		acks.content = append(acks.content, soakContent{j.ID, word})
		acks.mu.Unlock()
	}
}

// soakSearchLoop runs lexical searches for the words of imported documents.
func soakSearchLoop(ctx context.Context, c *soakClient, acks *soakAcks, r *mrand.Rand, every time.Duration) {
	for soakSleep(ctx, jitter(r, every)) {
		acks.mu.Lock()
		word := "rivers"
		if n := len(acks.content); n > 0 && r.IntN(2) == 0 {
			word = acks.content[r.IntN(n)].word
		}
		acks.mu.Unlock()
		_, _ = c.retry(true, "search", "GET", "/api/v1/content/search?search_type=LEXICAL&term="+word, "", nil, true)
	}
}

// soakProbeLoop asks /readyz every second, as an orchestrator's readiness probe does: what it
// answers during each fault is in the answers the soak logs.
func soakProbeLoop(ctx context.Context, c *soakClient) {
	for soakSleep(ctx, time.Second) {
		_, _ = c.do("readyz", "GET", "/readyz", "", nil, false)
	}
}

func soakImportCourse(c *soakClient, pkg []byte, course string) string {
	body, ct := multipartBody("course.zip", pkg)
	res, err := c.retry(false, "course import", "POST", "/engine/api/v1/soak/courses/importJobs?course="+course, ct, body, true)
	var j struct{ Result string }
	if err != nil || res.status != 200 || json.Unmarshal(res.body, &j) != nil {
		return ""
	}
	return j.Result
}

// soakCourseStatus polls a course import job until it leaves RUNNING, for d at most.
func soakCourseStatus(c *soakClient, job string, d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		res, err := c.retry(true, "course job", "GET", "/engine/api/v1/soak/courses/importJobs/"+job, "", nil, true)
		var j struct{ Status string }
		if err == nil && res.status == 200 && json.Unmarshal(res.body, &j) == nil && j.Status != "RUNNING" && j.Status != "" {
			return j.Status
		}
		if time.Now().After(deadline) {
			return j.Status
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// soakCourseLoop imports a new course at a time; learners take it once its import completed.
func soakCourseLoop(ctx context.Context, c *soakClient, acks *soakAcks, r *mrand.Rand, pkg []byte, every time.Duration) {
	for n := 1; soakSleep(ctx, jitter(r, every)); n++ {
		course := fmt.Sprintf("soak-c%d", n)
		job := soakImportCourse(c, pkg, course)
		if job == "" {
			continue
		}
		acks.mu.Lock()
		acks.courses[course] = job
		acks.mu.Unlock()
		go func() {
			if soakCourseStatus(c, job, 5*time.Minute) == "COMPLETE" {
				acks.mu.Lock()
				acks.ready = append(acks.ready, course)
				acks.mu.Unlock()
			}
		}()
	}
}

// soakFaults injects faults on a schedule, evenly between a sixth and five sixths of the
// run, one at a time, each kind in turn: kill -9 of a random role, Redis killed and
// restarted (distributed), MinIO likewise, PostgreSQL and Elasticsearch cut at their proxies,
// the post-back receiver hanging. A deployment of one role (embedded) is killed only in the
// first third: a kill later would leave no process alive through the last two thirds, whose
// resources the soak judges flat, so the receiver hangs in its place.
func soakFaults(ctx context.Context, d *soakDeployment, rc *soakReceiver, r *mrand.Rand, length time.Duration) []soakFault {
	kinds := []string{"kill"}
	for _, b := range d.backends {
		kinds = append(kinds, b.name)
	}
	kinds = append(kinds, "hang")
	n := max(len(kinds), int(length/(2*time.Minute)))
	gap := length * 2 / 3 / time.Duration(n)
	hang := min(max(length/10, 10*time.Second), time.Minute)
	var out []soakFault
	begin := time.Now()
	for i := range n {
		at := length/6 + time.Duration(i)*gap
		if !soakSleep(ctx, time.Until(begin.Add(at))) {
			break
		}
		f := soakFault{kind: kinds[i%len(kinds)], start: time.Now()}
		if f.kind == "kill" && len(d.roles) == 1 && at >= length/3 {
			f.kind = "hang"
		}
		switch f.kind {
		case "kill":
			role := d.roles[r.IntN(len(d.roles))]
			p, _ := role.current()
			f.what = fmt.Sprintf("kill -9 %s (pid %d), restarted after 2 s", role.name, p.cmd.Process.Pid)
			d.kill(role)
			if role.role == "serve" || role.role == "all" {
				waitHealthy(d.t, strings.TrimPrefix(d.base, "http://"))
			}
		default:
			for _, b := range d.backends {
				if b.name == f.kind {
					f.what = b.what()
					b.down()
					time.Sleep(5 * time.Second)
					if err := b.up(); err != nil {
						d.t.Errorf("restart %s: %v", b.name, err)
					}
				}
			}
		case "hang":
			rc.startHang()
			soakSleep(ctx, hang)
			rc.endHang()
			rc.mu.Lock()
			f.what = fmt.Sprintf("post-back receiver hung %v (%d requests held)", hang, rc.held)
			rc.mu.Unlock()
		}
		f.end = time.Now()
		out = append(out, f)
	}
	return out
}

// soakDrain is how long the checks wait for the deployment to finish the acknowledged work:
// asynq hands a killed process's task to another after its lease expired (60-120 s), and a
// busy two-core machine is slow.
const soakDrain = 5 * time.Minute

// soakCheckJobs: every content import and course import acknowledged ended COMPLETED, each
// document is found exactly once by its own word, each course listed exactly once.
func soakCheckJobs(t *testing.T, c *soakClient, acks *soakAcks, d *soakDeployment) {
	t.Helper()
	acks.mu.Lock()
	content := slices.Clone(acks.content)
	courses := map[string]string{}
	for k, v := range acks.courses {
		courses[k] = v
	}
	acks.mu.Unlock()
	deadline := time.Now().Add(soakDrain)
	failed := 0
	for _, ct := range content {
		var j struct {
			Status  string
			Results struct {
				ContentID string `json:"content_id"`
				Version   int    `json:"version"`
			}
		}
		for {
			res, err := c.retry(true, "job", "GET", "/api/v1/jobs/"+ct.job, "", nil, true)
			if err == nil && res.status == 200 && json.Unmarshal(res.body, &j) == nil && (j.Status == "COMPLETED" || j.Status == "FAILED") {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("content job %s has not ended %v after the load: %s", ct.job, soakDrain, res.body)
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if j.Status != "COMPLETED" {
			if failed++; failed <= 5 {
				t.Errorf("content job %s ended %q", ct.job, j.Status)
			}
			continue
		}
		// Indexed exactly once: the document's own word finds one hit, itself.
		var hits []struct {
			ContentID string `json:"content_id"`
			Version   int    `json:"version"`
		}
		for {
			res, err := c.retry(true, "check search", "GET", "/api/v1/content/search?search_type=LEXICAL&term="+ct.word, "", nil, true)
			hits = nil
			if err == nil && res.status == 200 && json.Unmarshal(res.body, &hits) == nil && len(hits) >= 1 {
				break
			}
			if time.Now().After(deadline) {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if len(hits) != 1 || hits[0].ContentID != j.Results.ContentID || hits[0].Version != j.Results.Version {
			t.Errorf("content %s v%d (word %s): search finds %+v, want it once", j.Results.ContentID, j.Results.Version, ct.word, hits)
		}
	}
	for course, job := range courses {
		if s := soakCourseStatus(c, job, time.Until(deadline)); s != "COMPLETE" {
			t.Errorf("course import %s (job %s) ended %q", course, job, s)
		}
	}
	seen := map[string]int{}
	for page := "/engine/api/v1/soak/courses"; page != ""; {
		res, err := c.retry(true, "check courses", "GET", page, "", nil, true)
		var list struct {
			Courses []struct{ ID string }
			More    string
		}
		if err != nil || res.status != 200 || json.Unmarshal(res.body, &list) != nil {
			t.Errorf("list courses: %v %d %s", err, res.status, res.body)
			return
		}
		for _, c := range list.Courses {
			seen[c.ID]++
		}
		page = ""
		if list.More != "" {
			page = "/engine/api/v1/soak/courses?more=" + url.QueryEscape(list.More)
		}
	}
	for course := range courses {
		if seen[course] != 1 {
			t.Errorf("course %s listed %d times, want once", course, seen[course])
		}
	}
	t.Logf("jobs: %d content imports (%d failed), %d course imports checked", len(content), failed, len(courses)+1)
}

// soakCheckStatements: each client's statements, queried by its actor, hold every
// acknowledged id exactly once, and no id that was never sent.
func soakCheckStatements(t *testing.T, c *soakClient, acks *soakAcks) {
	t.Helper()
	acks.mu.Lock()
	defer acks.mu.Unlock()
	total := 0
	for k, ids := range acks.statements {
		got := map[string]int{}
		u := "/lrs/TCAPI/soak/statements?limit=500&agent=" + url.QueryEscape(fmt.Sprintf(`{"mbox":"mailto:soak-%d@example.com"}`, k))
		for u != "" {
			res, err := c.retry(true, "check statements", "GET", u, "", nil, true, "X-Experience-API-Version", "1.0.3")
			var page struct {
				Statements []struct{ ID string }
				More       string
			}
			if err != nil || res.status != 200 || json.Unmarshal(res.body, &page) != nil {
				t.Errorf("query statements of client %d: %v %d %s", k, err, res.status, tail(string(res.body), 300))
				break
			}
			for _, s := range page.Statements {
				got[s.ID]++
			}
			u = page.More
			if u != "" && !strings.Contains(u, "/lrs/") {
				u = "/lrs/TCAPI/soak/" + strings.TrimPrefix(u, "/")
			}
		}
		missing, dup := 0, 0
		for _, id := range ids {
			switch got[id] {
			case 0:
				missing++
			case 1:
			default:
				dup++
			}
		}
		for id := range got {
			if !acks.tried[id] {
				t.Errorf("client %d: statement %s was never sent", k, id)
			}
		}
		if missing > 0 || dup > 0 {
			t.Errorf("xAPI client %d: %d acknowledged statements, %d missing, %d more than once", k, len(ids), missing, dup)
		}
		total += len(ids)
	}
	t.Logf("statements: %d acknowledged, all present once", total)
}

// soakCheckLearners: each registration's detail holds its last acknowledged commit, SCO 2
// passed when its terminating commit was acknowledged, and a post-back reached the receiver
// for every passed registration that has one.
func soakCheckLearners(t *testing.T, c *soakClient, rc *soakReceiver, acks *soakAcks) {
	t.Helper()
	acks.mu.Lock()
	learners := slices.Clone(acks.learners)
	acks.mu.Unlock()
	bad, commits, postBacks := 0, 0, 0
	deadline := time.Now().Add(soakDrain)
	for _, l := range learners {
		commits += l.lastCommit
		if l.passed {
			commits++
		}
		if l.lastCommit == 0 {
			continue
		}
		res, err := c.retry(true, "check progress", "GET", "/engine/api/v1/soak/registrations/"+l.reg+"/progress/detail", "", nil, true)
		var detail struct {
			ActivityDetails struct {
				Children []struct {
					Runtime struct{ CompletionStatus, SuccessStatus, Location, SuspendData string }
				}
			}
		}
		if err != nil || res.status != 200 || json.Unmarshal(res.body, &detail) != nil || len(detail.ActivityDetails.Children) != 2 {
			t.Errorf("registration %s: %v %d %s", l.reg, err, res.status, tail(string(res.body), 300))
			continue
		}
		ch := detail.ActivityDetails.Children
		// The last acknowledged commit, or a later one whose answer never came.
		at := -1
		for _, n := range []int{l.lastCommit, l.lastTried} {
			if ch[0].Runtime.Location == fmt.Sprintf("page-%d", n) && ch[0].Runtime.SuspendData == fmt.Sprintf("n=%d", n) {
				at = n
			}
		}
		if at < 0 || l.passed && ch[1].Runtime.SuccessStatus != "passed" {
			if bad++; bad <= 10 {
				t.Errorf("registration %s: SCO 1 at %q %q, SCO 2 %q; acknowledged: commit %d, passed %v", l.reg,
					ch[0].Runtime.Location, ch[0].Runtime.SuspendData, ch[1].Runtime.SuccessStatus, l.lastCommit, l.passed)
			}
		}
		if l.postBack && l.passed {
			postBacks++
			for rc.count(l.reg) == 0 && time.Now().Before(deadline) {
				time.Sleep(250 * time.Millisecond)
			}
			if rc.count(l.reg) == 0 {
				t.Errorf("registration %s passed, but no post-back reached the receiver within %v", l.reg, soakDrain)
			}
		}
	}
	t.Logf("learners: %d registrations, %d acknowledged commits, %d post-backs awaited; %d registrations disagree", len(learners), commits, postBacks, bad)
}

// soakSample is one reading of one process.
type soakSample struct {
	at                    time.Time
	goroutines, fds, rssK int
}

// soakSampler reads each role's goroutines (its LECTERN_METRICS_ADDR), RSS and open files
// (/proc) at an interval, per process: a restarted role starts a new series.
type soakSampler struct {
	d     *soakDeployment
	every time.Duration
	mu    sync.Mutex
	by    map[int][]soakSample // pid → samples
	role  map[int]string
	since map[int]time.Time
}

func newSoakSampler(d *soakDeployment, every time.Duration) *soakSampler {
	return &soakSampler{d: d, every: every, by: map[int][]soakSample{}, role: map[int]string{}, since: map[int]time.Time{}}
}

func (s *soakSampler) run(ctx context.Context) {
	hc := &http.Client{Timeout: 5 * time.Second}
	for soakSleep(ctx, s.every) {
		for _, r := range s.d.roles {
			p, started := r.current()
			pid := p.cmd.Process.Pid
			smp := soakSample{at: time.Now(), goroutines: -1, fds: -1, rssK: -1}
			if res, err := hc.Get("http://" + r.metrics + "/metrics"); err == nil {
				sc := bufio.NewScanner(res.Body)
				sc.Buffer(make([]byte, 64<<10), 1<<20)
				for sc.Scan() {
					if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
						f, _ := strconv.ParseFloat(v, 64)
						smp.goroutines = int(f)
					}
				}
				res.Body.Close()
			}
			if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
				smp.fds = len(ents)
			}
			if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
				for _, line := range strings.Split(string(st), "\n") {
					if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
						smp.rssK, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
					}
				}
			}
			if smp.goroutines < 0 || smp.fds < 0 || smp.rssK < 0 {
				continue // the process is dying or restarting
			}
			s.mu.Lock()
			s.by[pid] = append(s.by[pid], smp)
			s.role[pid], s.since[pid] = r.name, started
			s.mu.Unlock()
		}
	}
}

// soakFlat is the tolerance of "flat": over the window (the last two thirds of the load),
// the median of its last third may exceed the median of its first third by at most a
// quarter plus a constant: 25 goroutines, 16 open files, 64 MiB of RSS. A leak that grows
// with the load crosses it in a long soak; the garbage collector's and connection pools'
// breathing does not.
func soakFlat(first, last, slack int) bool { return last <= first+first/4+slack }

func median(v []int) int {
	v = slices.Clone(v)
	sort.Ints(v)
	return v[len(v)/2]
}

// check compares, for every process alive at the window's end, the first and last thirds of
// its samples in it; it returns a table and the processes that were not flat.
func (s *soakSampler) check(from, to time.Time) (string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	var errs []string
	b.WriteString("| process | samples | goroutines | open files | RSS MiB |\n|---|---|---|---|---|\n")
	pids := make([]int, 0, len(s.by))
	for pid := range s.by {
		pids = append(pids, pid)
	}
	sort.Slice(pids, func(i, j int) bool {
		return s.role[pids[i]] < s.role[pids[j]] || s.role[pids[i]] == s.role[pids[j]] && pids[i] < pids[j]
	})
	for _, pid := range pids {
		// A process restarted inside the window (the embedded mode's only one, after a kill) is
		// judged from 30 s after its start, if that leaves at least half the window.
		lo := from
		if s.since[pid].After(from) {
			lo = s.since[pid].Add(30 * time.Second)
			if to.Sub(lo) < to.Sub(from)/2 {
				fmt.Fprintf(&b, "| %s (pid %d, started late in the window) | | | | |\n", s.role[pid], pid)
				continue
			}
		}
		var in []soakSample
		for _, x := range s.by[pid] {
			if !x.at.Before(lo) && !x.at.After(to) {
				in = append(in, x)
			}
		}
		if len(in) < 6 || in[len(in)-1].at.Before(to.Add(-3*s.every)) {
			fmt.Fprintf(&b, "| %s (pid %d, died in the window) | %d | | | |\n", s.role[pid], pid, len(in))
			continue
		}
		third := len(in) / 3
		col := func(f func(soakSample) int) (int, int) {
			var a, z []int
			for _, x := range in[:third] {
				a = append(a, f(x))
			}
			for _, x := range in[len(in)-third:] {
				z = append(z, f(x))
			}
			return median(a), median(z)
		}
		g0, g1 := col(func(x soakSample) int { return x.goroutines })
		f0, f1 := col(func(x soakSample) int { return x.fds })
		r0, r1 := col(func(x soakSample) int { return x.rssK })
		fmt.Fprintf(&b, "| %s (pid %d) | %d | %d → %d | %d → %d | %d → %d |\n", s.role[pid], pid, len(in), g0, g1, f0, f1, r0>>10, r1>>10)
		if !soakFlat(g0, g1, 25) {
			errs = append(errs, fmt.Sprintf("%s (pid %d): goroutines grew from %d to %d over the last two thirds", s.role[pid], pid, g0, g1))
		}
		if !soakFlat(f0, f1, 16) {
			errs = append(errs, fmt.Sprintf("%s (pid %d): open files grew from %d to %d over the last two thirds", s.role[pid], pid, f0, f1))
		}
		if !soakFlat(r0, r1, 64<<10) {
			errs = append(errs, fmt.Sprintf("%s (pid %d): RSS grew from %d to %d MiB over the last two thirds", s.role[pid], pid, r0>>10, r1>>10))
		}
	}
	return b.String(), errs
}

// soakAfter is how long after a fault's end its requests count as "after" the fault.
const soakAfter = 30 * time.Second

// soakLatencyTable is p50 and p99 per operation and phase (steady; during each fault kind;
// after it, until soakAfter or the next fault; the checks after the load), with the count of
// requests that got no answer or a 5xx.
func soakLatencyTable(ops []soakOp, faults []soakFault, loadEnd time.Time) string {
	phase := func(at time.Time) string {
		if at.After(loadEnd) {
			return "checks"
		}
		for i, f := range faults {
			if at.Before(f.start) {
				continue
			}
			if !at.After(f.end) {
				return "during " + f.kind
			}
			until := f.end.Add(soakAfter)
			if i+1 < len(faults) && faults[i+1].start.Before(until) {
				until = faults[i+1].start
			}
			if at.Before(until) {
				return "after " + f.kind
			}
		}
		return "steady"
	}
	type key struct{ op, phase string }
	took := map[key][]time.Duration{}
	failed := map[key]int{}
	for _, o := range ops {
		k := key{o.name, phase(o.at)}
		took[k] = append(took[k], o.took)
		if o.status == 0 || o.status >= 500 {
			failed[k]++
		}
	}
	keys := make([]key, 0, len(took))
	for k := range took {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].op < keys[j].op || keys[i].op == keys[j].op && keys[i].phase < keys[j].phase
	})
	var b strings.Builder
	b.WriteString("| operation | phase | requests | p50 ms | p99 ms | no answer or 503 |\n|---|---|---|---|---|---|\n")
	for _, k := range keys {
		v := took[k]
		slices.Sort(v)
		ms := func(q float64) string {
			return fmt.Sprintf("%.0f", float64(v[min(len(v)-1, int(q*float64(len(v))))].Microseconds())/1000)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %d |\n", k.op, k.phase, len(v), ms(0.5), ms(0.99), failed[k])
	}
	return b.String()
}
