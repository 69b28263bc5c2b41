// Package servertest is the HTTP test harness of server/ and its product packages: it starts a
// whole Lectern (app.Open, the API and content listeners, the queues and the forwarder, as
// `lectern all` runs them) on loopback ports, in the embedded mode or the distributed one
// (ForEachMode), and talks to it as a client does (Env.Do), checking every response against
// the served OpenAPI document. Beside the harness (servertest.go, logcapture.go, openapi.go)
// are the helpers the tests of more than one product use: importing courses (courses.go),
// the player (player.go) and Chromium (browser.go), the record store and forwarding (lrs.go),
// the content service, subscriptions and skills (content.go), post-backs and settings
// (engine.go), the console (console.go), golden files (golden.go) and benchmarks (bench.go).
//
// It sits on the commands floor beside the app it starts; only tests import it.
package servertest

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

// RootUser and RootPass are the root credentials every test server starts with.
const RootUser, RootPass = "root", "root-password-for-tests"

// RandomName is prefix plus 10 random hex digits.
func RandomName(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Modes builds Lectern once per mode: embedded (SQLite, local disk, in-process queue) and
// distributed (PostgreSQL, MinIO, Asynq on Redis, Elasticsearch).
func Modes(t *testing.T) map[string]func(t *testing.T) app.Config {
	base := func(t *testing.T) app.Config {
		return app.Config{DataDir: t.TempDir(), Root: server.RootCredentials{User: RootUser, Password: RootPass},
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
				Bucket: RandomName("apitest-")}
			c.Elastic = app.ElasticConfig{URL: testenv.External(t, "LECTERN_TEST_ELASTICSEARCH_URL"), IndexPrefix: RandomName("apitest_") + "_"}
			return c
		},
	}
}

// Env is a running Lectern plus an HTTP client for it.
type Env struct {
	T   *testing.T
	App *app.App
	URL string
	// Content is the content origin (the player and course files), a listener of its own as
	// the binary's second port.
	Content string
	// ServerFault marks a test that breaks a backend on purpose: its 5xx answers are the
	// expected outcome, not responses the API document must describe.
	ServerFault bool
	// Logs holds what the app logged (it is also written to the default logger).
	Logs *LogCapture
	// Clock is the registration store's clock: the system clock plus an offset a test moves.
	Clock *TestClock
}

// TestClock is the system clock moved forward by a test (advance), so player sessions can be
// measured over minutes or hours without waiting; spans between calls stay real.
type TestClock struct {
	offset atomic.Int64
	// frozen, when not 0, is the Unix nanosecond the clock stopped at (freeze): only advance
	// moves it, so measured spans are exactly what the test advanced.
	frozen atomic.Int64
}

func (c *TestClock) now() time.Time {
	if f := c.frozen.Load(); f != 0 {
		return time.Unix(0, f+c.offset.Load())
	}
	return time.Now().Add(time.Duration(c.offset.Load()))
}

// Freeze stops the clock where it is; advance still moves it.
func (c *TestClock) Freeze() { c.frozen.Store(time.Now().UnixNano()) }

// Advance moves the clock forward by d.
func (c *TestClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// Start starts Lectern with the player on its own content origin (StartServer, isolated).
func Start(t *testing.T, cfg app.Config) *Env {
	t.Helper()
	return StartServer(t, cfg, true)
}

// StartServer starts Lectern; isolated gives the player its content origin (a listener of its
// own, as the binary's second port), otherwise the player shares the API's origin (only the
// control case of TestHostilePackageInBrowser runs so).
func StartServer(t *testing.T, cfg app.Config, isolated bool) *Env {
	t.Helper()
	ctx := context.Background()
	logs := &LogCapture{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(logs.tee(slog.Default().Handler()))
	}
	clock := &TestClock{}
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
	t.Cleanup(func() { Served.Delete(u) }) // a later server may get the same port
	return &Env{T: t, App: a, URL: u, Content: cu, Logs: logs, Clock: clock}
}

// Resp is an HTTP response, read to the end.
type Resp struct {
	Status int
	Body   []byte
	Header http.Header
}

// JSON decodes the body into v and fails the test if it is not JSON.
func (r Resp) JSON(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("response is not JSON (%d): %s", r.Status, r.Body)
	}
}

// Message is the message of an error body.
func (r Resp) Message() string {
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(r.Body, &m)
	return m.Message
}

// Auth is the Authorization header a request sends (none when empty).
type Auth struct{ Header string }

// NoAuth sends no credentials.
var NoAuth = Auth{}

// Basic is HTTP Basic authentication.
func Basic(user, pass string) Auth {
	return Auth{"Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
}

// Bearer is a tenant credential as a bearer token.
func Bearer(key, secret string) Auth { return Auth{"Bearer " + key + "." + secret} }

// Root is the root user's Basic authentication.
var Root = Basic(RootUser, RootPass)

// Origin is where a path is served: the player's paths on the content origin, the rest on the
// API's.
func (e *Env) Origin(path string) string {
	if strings.HasPrefix(path, "/player/") {
		return e.Content
	}
	return e.URL
}

// Do sends a request to the origin that serves path: a string or []byte body is sent as is,
// anything else as JSON; headers are name, value pairs. The response is checked against the
// OpenAPI document (checkResponse).
func (e *Env) Do(method, path string, a Auth, body any, headers ...string) Resp {
	e.T.Helper()
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
	req, err := http.NewRequest(method, e.Origin(path)+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.Header != "" {
		req.Header.Set("Authorization", a.Header)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	CheckResponse(e, req, res.StatusCode, res.Header, out)
	return Resp{Status: res.StatusCode, Body: out, Header: res.Header}
}

// Expect fails the test unless r has status; an error response must carry a message.
func (e *Env) Expect(r Resp, status int, what string) {
	e.T.Helper()
	if r.Status != status {
		e.T.Fatalf("%s: status %d, want %d; body %s", what, r.Status, status, r.Body)
	}
	if status >= 400 && r.Message() == "" {
		e.T.Fatalf("%s: error response without a message: %s", what, r.Body)
	}
}

// CreateTenant creates tenant id.
func (e *Env) CreateTenant(id string, enabled bool) {
	e.T.Helper()
	e.Expect(e.Do("POST", "/api/v1/app_management/tenants", Root, map[string]any{"tenant_id": id, "enabled": enabled}), 201, "create tenant "+id)
}

// Credential creates a credential of tenantID.
func (e *Env) Credential(tenantID string) (key, secret string) {
	e.T.Helper()
	r := e.Do("POST", "/api/v1/app_management/tenants/"+tenantID+"/credentials", Root, nil)
	e.Expect(r, 201, "create credential")
	var c struct{ Key, Secret string }
	r.JSON(e.T, &c)
	if c.Key == "" || c.Secret == "" {
		e.T.Fatalf("credential without key or secret: %s", r.Body)
	}
	return c.Key, c.Secret
}

// Eventually polls cond until it holds or the deadline passes.
func Eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ParamRE matches a route's path parameter.
var ParamRE = regexp.MustCompile(`:([A-Za-z_]+)`)

// Fill substitutes a route's path parameters.
func Fill(path string, values map[string]string) string {
	return ParamRE.ReplaceAllStringFunc(path, func(m string) string {
		if v, ok := values[m[1:]]; ok {
			return v
		}
		return "x"
	})
}

// ForEachMode runs f as a subtest per mode (Modes), each with a server of its own.
func ForEachMode(t *testing.T, f func(t *testing.T, e *Env)) {
	for name, cfg := range Modes(t) {
		t.Run(name, func(t *testing.T) { f(t, Start(t, cfg(t))) })
	}
}
