package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestOriginsKeepApart (issue 22, item 2): the player and course files answer only on the
// content origin, and the content origin answers nothing else, whether a request reaches it
// by its own listener or by naming its host in front of the API's listener.
func TestOriginsKeepApart(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
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
			res, body := send(c.method, e.url+c.path, "", c.body)
			if res.StatusCode != 307 || res.Header.Get("Location") != e.content+c.path || !res.Close {
				t.Errorf("%s %s on the API's origin: %d %q close=%v %s, want 307 to %s and the connection closed",
					c.method, c.path, res.StatusCode, res.Header.Get("Location"), res.Close, body, e.content+c.path)
			}
		}
		// The content origin serves the player (here: a launch link it did not sign) and its
		// health, and refuses everything else with a message naming the API's origin.
		if res, body := send("GET", e.content+"/player/launch/forged", "", ""); res.StatusCode != 403 || !strings.Contains(body, "not valid") {
			t.Errorf("forged launch on the content origin: %d %s", res.StatusCode, body)
		}
		if res, _ := send("GET", e.content+"/healthz", "", ""); res.StatusCode != 200 {
			t.Errorf("health on the content origin: %d", res.StatusCode)
		}
		want := `{"message":"this is Lectern's content origin: it serves course players and their files only; the APIs and the console are at ` + e.url + `"}`
		for _, p := range []string{"/console/", "/console/signin", "/api/v1/app_management/tenants", "/engine/api/v1/acme/courses",
			"/lrs/TCAPI/about", "/openapi.json", "/metrics"} {
			res, body := send("GET", e.content+p, "", "")
			if res.StatusCode != 404 || body != want {
				t.Errorf("GET %s on the content origin: %d %s, want 404 %s", p, res.StatusCode, body, want)
			}
			// The same, through the API's listener with the content origin's host name (a
			// proxy in front of one listener).
			res, body = send("GET", e.url+p, strings.TrimPrefix(e.content, "http://"), "")
			if res.StatusCode != 404 || body != want {
				t.Errorf("GET %s naming the content origin's host: %d %s, want 404 %s", p, res.StatusCode, body, want)
			}
		}
		res, body := send("POST", e.content+"/console/signin", "", "key=root&secret=x")
		if res.StatusCode != 404 || strings.Contains(res.Header.Get("Set-Cookie"), "lectern") {
			t.Errorf("sign-in on the content origin: %d %s %q", res.StatusCode, body, res.Header.Get("Set-Cookie"))
		}
	})
}

// TestConsoleRefusesTossedCookie: a script on the content origin's port shares the host's
// cookie jar and may add a console cookie of its own (a session its author sealed) with a
// longer path; with two cookies of the console's name the console trusts neither.
func TestConsoleRefusesTossedCookie(t *testing.T) {
	e := start(t, modes(t)["embedded"](t))
	e.createTenant("acme", true)
	key, secret := e.credential("acme")
	tenant := &consoleClient{t: t, e: e}
	tenant.signIn(key, secret)
	admin := &consoleClient{t: t, e: e}
	admin.signIn(rootUser, rootPass)
	wantPage(t, admin.send("GET", "/console/tenants", nil), 200, "Tenants")
	// The tossed cookie comes first (its path is longer), the real one after it.
	real := admin.cookie
	admin.cookie = tenant.cookie + "; " + real
	if p := admin.send("GET", "/console/tenants", nil); p.Status != 303 || !strings.HasPrefix(p.Header.Get("Location"), "/console/signin") {
		t.Errorf("two console cookies: %d %q, want the sign-in page", p.Status, p.Header.Get("Location"))
	}
	admin.cookie = real
	wantPage(t, admin.send("GET", "/console/tenants", nil), 200, "Tenants")
}
