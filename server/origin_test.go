package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestOriginsKeepApart (issue 22, item 2): the player and course files answer only on the
// content origin, and the content origin answers nothing else, whether a request reaches it
// by its own listener or by naming its host in front of the API's listener.
func TestOriginsKeepApart(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		send := func(method, url, host, body string) (*http.Response, string) {
			t.Helper()
			req, err := http.NewRequest(method, url, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if host != "" {
				req.Host = host
			}
			res, err := noRedirect.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, url, err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res, string(b)
		}
		// On the API's origin, the player's paths send the browser to the content origin,
		// query and all, without reading a body.
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/player/launch/some-token?x=1", ""},
			{"GET", "/player/content/s/index.html", ""},
			{"POST", "/player/runtime/s/commit?activity=a", strings.Repeat("x", 1<<20)},
		} {
			res, body := send(c.method, e.URL+c.path, "", c.body)
			if res.StatusCode != 307 || res.Header.Get("Location") != e.Content+c.path || !res.Close {
				t.Errorf("%s %s on the API's origin: %d %q close=%v %s, want 307 to %s and the connection closed",
					c.method, c.path, res.StatusCode, res.Header.Get("Location"), res.Close, body, e.Content+c.path)
			}
		}
		// The content origin serves the player (here: a launch link it did not sign) and its
		// health, and refuses everything else with a message naming the API's origin.
		if res, body := send("GET", e.Content+"/player/launch/forged", "", ""); res.StatusCode != 403 || !strings.Contains(body, "not valid") {
			t.Errorf("forged launch on the content origin: %d %s", res.StatusCode, body)
		}
		if res, _ := send("GET", e.Content+"/healthz", "", ""); res.StatusCode != 200 {
			t.Errorf("health on the content origin: %d", res.StatusCode)
		}
		want := `{"message":"this is Lectern's content origin: it serves course players and their files only; the APIs and the console are at ` + e.URL + `"}`
		for _, p := range []string{"/console/", "/console/signin", "/api/v1/app_management/tenants", "/engine/api/v1/acme/courses",
			"/lrs/TCAPI/about", "/openapi.json", "/metrics"} {
			res, body := send("GET", e.Content+p, "", "")
			if res.StatusCode != 404 || body != want {
				t.Errorf("GET %s on the content origin: %d %s, want 404 %s", p, res.StatusCode, body, want)
			}
			// The same, through the API's listener with the content origin's host name (a
			// proxy in front of one listener).
			res, body = send("GET", e.URL+p, strings.TrimPrefix(e.Content, "http://"), "")
			if res.StatusCode != 404 || body != want {
				t.Errorf("GET %s naming the content origin's host: %d %s, want 404 %s", p, res.StatusCode, body, want)
			}
		}
		res, body := send("POST", e.Content+"/console/signin", "", "key=root&secret=x")
		if res.StatusCode != 404 || strings.Contains(res.Header.Get("Set-Cookie"), "lectern") {
			t.Errorf("sign-in on the content origin: %d %s %q", res.StatusCode, body, res.Header.Get("Set-Cookie"))
		}
	})
}

// TestConsoleRefusesTossedCookie: a script on the content origin's port shares the host's
// cookie jar and may add a console cookie of its own (a session its author sealed) with a
// longer path; with two cookies of the console's name the console trusts neither.
func TestConsoleRefusesTossedCookie(t *testing.T) {
	e := servertest.Start(t, servertest.Modes(t)["embedded"](t))
	e.CreateTenant("acme", true)
	key, secret := e.Credential("acme")
	tenant := &servertest.ConsoleClient{T: t, E: e}
	tenant.SignIn(key, secret)
	admin := &servertest.ConsoleClient{T: t, E: e}
	admin.SignIn(servertest.RootUser, servertest.RootPass)
	servertest.WantPage(t, admin.Send("GET", "/console/tenants", nil), 200, "Tenants")
	// The tossed cookie comes first (its path is longer), the real one after it.
	real := admin.Cookie
	admin.Cookie = tenant.Cookie + "; " + real
	if p := admin.Send("GET", "/console/tenants", nil); p.Status != 303 || !strings.HasPrefix(p.Header.Get("Location"), "/console/signin") {
		t.Errorf("two console cookies: %d %q, want the sign-in page", p.Status, p.Header.Get("Location"))
	}
	admin.Cookie = real
	servertest.WantPage(t, admin.Send("GET", "/console/tenants", nil), 200, "Tenants")
}
