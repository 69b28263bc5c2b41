package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/server"
)

const rootUser, rootPass = "root", "root-password-for-tests"

func randomName(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// modes builds Lectern once per mode: embedded (SQLite, local disk, in-process queue) and
// distributed (PostgreSQL, MinIO, Asynq on Redis, Elasticsearch).
func modes(t *testing.T) map[string]func(t *testing.T) app.Config {
	base := func(t *testing.T) app.Config {
		return app.Config{DataDir: t.TempDir(), Root: server.RootCredentials{User: rootUser, Password: rootPass},
			SecretKey: "test-secret", Version: "test", OutboundAllow: []string{"127.0.0.1/32"}, RetryBaseDelay: 10 * time.Millisecond, BodyLimit: 8 << 20}
	}
	return map[string]func(t *testing.T) app.Config{
		"embedded": base,
		"distributed": func(t *testing.T) app.Config {
			c := base(t)
			c.PostgresURL = testenv.FreshPostgres(t, testenv.External(t, "LECTERN_TEST_POSTGRES_URL"))
			c.RedisURL = testenv.FreshRedis(t, testenv.External(t, "LECTERN_TEST_REDIS_URL"))
			c.S3 = app.S3Config{Endpoint: testenv.External(t, "LECTERN_TEST_S3_ENDPOINT"),
				AccessKey: testenv.External(t, "LECTERN_TEST_S3_ACCESS_KEY"), SecretKey: testenv.External(t, "LECTERN_TEST_S3_SECRET_KEY"),
				Bucket: randomName("apitest-")}
			c.Elastic = app.ElasticConfig{URL: testenv.External(t, "LECTERN_TEST_ELASTICSEARCH_URL"), IndexPrefix: randomName("apitest_") + "_"}
			return c
		},
	}
}

// env is a running Lectern plus an HTTP client for it.
type env struct {
	t   *testing.T
	app *app.App
	url string
	// content is the content origin (the player and course files), a listener of its own as
	// the binary's second port.
	content string
	// serverFault marks a test that breaks a backend on purpose: its 5xx answers are the
	// expected outcome, not responses the API document must describe.
	serverFault bool
	// logs holds what the app logged (it is also written to the default logger).
	logs *logCapture
	// clock is the registration store's clock: the system clock plus an offset a test moves.
	clock *testClock
}

// testClock is the system clock moved forward by a test (advance), so player sessions can be
// measured over minutes or hours without waiting; spans between calls stay real.
type testClock struct {
	offset atomic.Int64
	// frozen, when not 0, is the Unix nanosecond the clock stopped at (freeze): only advance
	// moves it, so measured spans are exactly what the test advanced.
	frozen atomic.Int64
}

func (c *testClock) now() time.Time {
	if f := c.frozen.Load(); f != 0 {
		return time.Unix(0, f+c.offset.Load())
	}
	return time.Now().Add(time.Duration(c.offset.Load()))
}

// freeze stops the clock where it is; advance still moves it.
func (c *testClock) freeze() { c.frozen.Store(time.Now().UnixNano()) }

// advance moves the clock forward by d.
func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

func start(t *testing.T, cfg app.Config) *env {
	t.Helper()
	return startServer(t, cfg, true)
}

// startServer starts Lectern; isolated gives the player its content origin (a listener of its
// own, as the binary's second port), otherwise the player shares the API's origin (only the
// control case of TestHostilePackageInBrowser runs so).
func startServer(t *testing.T, cfg app.Config, isolated bool) *env {
	t.Helper()
	ctx := context.Background()
	logs := &logCapture{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(logs.tee(slog.Default().Handler()))
	}
	clock := &testClock{}
	if cfg.Clock == nil {
		cfg.Clock = clock.now
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u, cu := "http://"+ln.Addr().String(), "http://"+cln.Addr().String()
	if cfg.PublicURL == "" {
		cfg.PublicURL = u
	}
	if !isolated {
		cu = u
	} else if cfg.ContentURL == "" {
		cfg.ContentURL = cu
	}
	a, err := app.Open(ctx, cfg)
	if err != nil {
		ln.Close()
		cln.Close()
		t.Fatalf("open: %v", err)
	}
	if err := a.Queue.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.IndexQueue.Start(ctx); err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.Server.Serve(ln) }()
	go func() { _ = a.Server.ServeContent(cln) }()
	// The forwarding role, as `lectern worker` runs it.
	fctx, stopForwarder := context.WithCancel(ctx)
	forwarderDone := make(chan struct{})
	go func() { defer close(forwarderDone); a.Forwarder.Run(fctx) }()
	t.Cleanup(func() {
		stopForwarder()
		<-forwarderDone
		_ = a.Server.App().Shutdown()
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = a.Queue.Shutdown(sctx)
		_ = a.IndexQueue.Shutdown(sctx)
		if a.Elastic != nil {
			_ = a.Elastic.DeleteIndices(ctx, cfg.Elastic.IndexPrefix)
		}
		if cfg.S3.Bucket != "" {
			_, _ = a.Blobs.DeletePrefix(ctx, "")
		}
		a.Close()
	})
	t.Cleanup(func() { served.Delete(u) }) // a later server may get the same port
	return &env{t: t, app: a, url: u, content: cu, logs: logs, clock: clock}
}

type resp struct {
	Status int
	Body   []byte
	Header http.Header
}

func (r resp) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("response is not JSON (%d): %s", r.Status, r.Body)
	}
}

func (r resp) message() string {
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(r.Body, &m)
	return m.Message
}

type auth struct{ header string }

var noAuth = auth{}

func basic(user, pass string) auth {
	return auth{"Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
}

func bearer(key, secret string) auth { return auth{"Bearer " + key + "." + secret} }

var root = basic(rootUser, rootPass)

// origin is where a path is served: the player's paths on the content origin, the rest on the
// API's.
func (e *env) origin(path string) string {
	if strings.HasPrefix(path, "/player/") {
		return e.content
	}
	return e.url
}

func (e *env) do(method, path string, a auth, body any, headers ...string) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.origin(path)+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.header != "" {
		req.Header.Set("Authorization", a.header)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	e.checkResponse(req, res.StatusCode, res.Header, out)
	return resp{Status: res.StatusCode, Body: out, Header: res.Header}
}

func (e *env) expect(r resp, status int, what string) {
	e.t.Helper()
	if r.Status != status {
		e.t.Fatalf("%s: status %d, want %d; body %s", what, r.Status, status, r.Body)
	}
	if status >= 400 && r.message() == "" {
		e.t.Fatalf("%s: error response without a message: %s", what, r.Body)
	}
}

func (e *env) createTenant(id string, enabled bool) {
	e.t.Helper()
	e.expect(e.do("POST", "/api/v1/app_management/tenants", root, map[string]any{"tenant_id": id, "enabled": enabled}), 201, "create tenant "+id)
}

func (e *env) credential(tenantID string) (key, secret string) {
	e.t.Helper()
	r := e.do("POST", "/api/v1/app_management/tenants/"+tenantID+"/credentials", root, nil)
	e.expect(r, 201, "create credential")
	var c struct{ Key, Secret string }
	r.json(e.t, &c)
	if c.Key == "" || c.Secret == "" {
		e.t.Fatalf("credential without key or secret: %s", r.Body)
	}
	return c.Key, c.Secret
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var paramRE = regexp.MustCompile(`:([A-Za-z_]+)`)

// fill substitutes a route's path parameters.
func fill(path string, values map[string]string) string {
	return paramRE.ReplaceAllStringFunc(path, func(m string) string {
		if v, ok := values[m[1:]]; ok {
			return v
		}
		return "x"
	})
}

func forEachMode(t *testing.T, f func(t *testing.T, e *env)) {
	for name, cfg := range modes(t) {
		t.Run(name, func(t *testing.T) { f(t, start(t, cfg(t))) })
	}
}
