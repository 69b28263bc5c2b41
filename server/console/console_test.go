package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestConsoleSession: signing in seals the credentials in a strict cookie; a wrong secret,
// a forged cookie, another tenant and a form posted from another site are all refused, and
// the API's own message reaches the page.
func TestConsoleSession(t *testing.T) {
	e := servertest.Start(t, servertest.Modes(t)["embedded"](t))
	e.CreateTenant("acme", true)
	e.CreateTenant("other", true)
	key, secret := e.Credential("acme")

	anon := &servertest.ConsoleClient{T: t, E: e}
	p := anon.Send("GET", "/console/tenants", nil)
	if p.Status != 303 || p.Header.Get("Location") != "/console/signin?next=%2Fconsole%2Ftenants" {
		t.Fatalf("without a session: %d %s", p.Status, p.Header.Get("Location"))
	}
	servertest.WantPage(t, anon.Send("GET", "/console/signin", nil), 200, `<label for="key">Key</label>`, `autocomplete="current-password"`)
	if csp := anon.Send("GET", "/console/signin", nil).Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("console CSP: %q", csp)
	}
	servertest.WantPage(t, anon.SignIn(key, "wrong"), 401, `<p role="alert" class="error">invalid credentials</p>`)
	if anon.Cookie != "" {
		t.Fatal("a failed sign-in set a session cookie")
	}
	// A cookie that does not decrypt is no session.
	anon.Cookie = "lectern_console=AAAA" + strings.Repeat("x", 40)
	if p := anon.Send("GET", "/console/tenants", nil); p.Status != 303 {
		t.Fatalf("forged cookie: %d", p.Status)
	}

	rootc := &servertest.ConsoleClient{T: t, E: e}
	req, _ := http.NewRequest("POST", e.URL+"/console/signin", strings.NewReader(url.Values{"key": {servertest.RootUser}, "secret": {servertest.RootPass}, "next": {"//evil.example/x"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 303 || res.Header.Get("Location") != "/console/" {
		t.Fatalf("sign-in with a foreign next: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	sc := res.Header.Get("Set-Cookie")
	for _, attr := range []string{"lectern_console=", "path=/console", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(sc, attr) {
			t.Errorf("session cookie %q lacks %s", sc, attr)
		}
	}
	if strings.Contains(sc, servertest.RootPass) {
		t.Fatal("the session cookie carries the password in clear")
	}
	rootc.SignIn(servertest.RootUser, servertest.RootPass)
	servertest.WantPage(t, rootc.Send("GET", "/console/tenants", nil), 200, `<th scope="row"><a href="/console/t/acme/">acme</a></th>`)
	// The API's message for a bad tenant id reaches the page, and nothing is created.
	servertest.WantPage(t, rootc.Send("POST", "/console/tenants", url.Values{"tenant_id": {"bad id!"}, "enabled": {"true"}}), 400, `<p role="alert" class="error">`)
	servertest.WantPage(t, rootc.Send("POST", "/console/tenants", url.Values{"tenant_id": {"acme"}, "enabled": {"true"}}), 409, "acme")
	// A form another site made the browser send is refused.
	p = rootc.Send("POST", "/console/tenants", url.Values{"tenant_id": {"csrf"}, "enabled": {"true"}}, "Sec-Fetch-Site", "cross-site")
	servertest.WantPage(t, p, 403, "another site")
	e.Expect(e.Do("GET", "/api/v1/app_management/tenants/csrf/credentials", servertest.Root, nil), 404, "tenant of a cross-site form")
	// So is one from the content origin: another port of this host is same-site, and an
	// Origin names it where a browser sends no Sec-Fetch-Site.
	for _, h := range [][]string{{"Sec-Fetch-Site", "same-site"}, {"Origin", e.Content}} {
		servertest.WantPage(t, rootc.Send("POST", "/console/tenants", url.Values{"tenant_id": {"csrf2"}, "enabled": {"true"}}, h...), 403, "another site")
	}
	e.Expect(e.Do("GET", "/api/v1/app_management/tenants/csrf2/credentials", servertest.Root, nil), 404, "tenant of a form from the content origin")
	servertest.WantPage(t, rootc.Send("POST", "/console/tenants", url.Values{"tenant_id": {"same"}, "enabled": {"true"}}, "Origin", e.URL), 303)
	// htmx gets the table alone.
	p = rootc.Send("POST", "/console/tenants/acme/enabled", url.Values{"enabled": {"false"}}, "HX-Request", "true")
	servertest.WantPage(t, p, 200, `<table id="tenant-table">`, `<tr id="tenant-acme">`)
	if strings.Contains(p.Body, "<html") {
		t.Error("an htmx swap got a whole page")
	}
	rootc.Send("POST", "/console/tenants/acme/enabled", url.Values{"enabled": {"true"}})

	tc := &servertest.ConsoleClient{T: t, E: e}
	if p := tc.SignIn(key, secret); p.Status != 303 || p.Header.Get("Location") != "/console/" {
		t.Fatalf("tenant sign-in: %d %s", p.Status, p.Header.Get("Location"))
	}
	servertest.WantPage(t, tc.Send("GET", "/console/tenants", nil), 403, "this operation needs the root credentials")
	servertest.WantPage(t, tc.Send("GET", "/console/t/other/", nil), 403, "cannot access tenant &#39;other&#39;")
	servertest.WantPage(t, tc.Send("GET", "/console/no-such-page", nil), 404, "there is no console page at /console/no-such-page")
	// Revoking the credential ends its console session at the next request.
	e.Expect(e.Do("DELETE", "/api/v1/app_management/tenants/acme/credentials/"+key, servertest.Root, nil), 204, "revoke")
	if p := tc.Send("GET", "/console/tenants", nil); p.Status != 303 || p.Header.Get("Location") != "/console/signin" {
		t.Fatalf("revoked credential: %d %s", p.Status, p.Header.Get("Location"))
	}
	if p := tc.Send("GET", "/console/assets/htmx.min.js", nil); p.Status != 200 || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("htmx asset: %d %s", p.Status, p.Header.Get("Content-Type"))
	}
	if p := tc.Send("GET", "/console/assets/..%2fconsole.go", nil); p.Status != 404 {
		t.Fatalf("asset outside assets/: %d", p.Status)
	}
}
