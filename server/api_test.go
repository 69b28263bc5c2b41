package server_test

import (
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// The HTTP test harness lives in cmd/lectern/app/servertest, shared by the test packages of
// server and of its products (console, contentapi, engineapi, lrsapi, player). The names
// below keep test files written against the harness's earlier, package-local names (env,
// forEachMode, e.do, e.origin, the browser helpers, …) compiling in this package; new tests
// use servertest directly.

// env is a servertest.Env under its earlier name, with its earlier method and field names.
type env struct {
	*servertest.Env
	t       *testing.T
	app     *app.App
	url     string
	content string
}

func wrap(e *servertest.Env) *env {
	return &env{Env: e, t: e.T, app: e.App, url: e.URL, content: e.Content}
}

// resp is a servertest.Resp with its earlier method names.
type resp struct{ servertest.Resp }

func (r resp) json(t *testing.T, v any) { t.Helper(); r.JSON(t, v) }
func (r resp) message() string          { return r.Message() }

type auth = servertest.Auth

const (
	rootUser, rootPass = servertest.RootUser, servertest.RootPass
	lrs                = servertest.LRS
	manifest12         = servertest.Manifest12
	sco12              = servertest.Sco12
	manifest2004       = servertest.Manifest2004
	sco2004            = servertest.Sco2004
)

var (
	root              = servertest.Root
	noAuth            = servertest.NoAuth
	basic             = servertest.Basic
	bearer            = servertest.Bearer
	v103              = servertest.V103
	v200              = servertest.V200
	eventually        = servertest.Eventually
	randomName        = servertest.RandomName
	modes             = servertest.Modes
	fill              = servertest.Fill
	zipOf             = servertest.ZipOf
	fixtureFiles      = servertest.FixtureFiles
	browser           = servertest.Browser
	click             = servertest.Click
	waitJS            = servertest.WaitJS
	inFramePage       = servertest.InFramePage
	commitBenchServer = servertest.CommitBenchServer
	commitBenchCall   = servertest.CommitBenchCall
)

func forEachMode(t *testing.T, f func(t *testing.T, e *env)) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) { f(t, wrap(e)) })
}

func start(t *testing.T, cfg app.Config) *env { t.Helper(); return wrap(servertest.Start(t, cfg)) }

func startServer(t *testing.T, cfg app.Config, isolated bool) *env {
	t.Helper()
	return wrap(servertest.StartServer(t, cfg, isolated))
}

func (e *env) origin(path string) string { return e.Origin(path) }

func (e *env) do(method, path string, a auth, body any, headers ...string) resp {
	e.t.Helper()
	return resp{e.Do(method, path, a, body, headers...)}
}

func (e *env) expect(r resp, status int, what string) { e.t.Helper(); e.Expect(r.Resp, status, what) }

func (e *env) get(path string, headers ...string) resp {
	e.t.Helper()
	return resp{e.Get(path, headers...)}
}

func (e *env) createTenant(id string, enabled bool) { e.t.Helper(); e.CreateTenant(id, enabled) }
func (e *env) credential(tenantID string) (key, secret string) {
	e.t.Helper()
	return e.Credential(tenantID)
}
func (e *env) launchPath(endpoint string) string { e.t.Helper(); return e.LaunchPath(endpoint) }
func (e *env) launch(path string) string         { e.t.Helper(); return e.Launch(path) }
func (e *env) importOK(tenantID, courseID string, pkg []byte, query string) servertest.ImportResult {
	e.t.Helper()
	return e.ImportOK(tenantID, courseID, pkg, query)
}
