package server_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// consoleClient talks to the console like a browser that does not run scripts: form posts,
// the session cookie, no redirects followed.
type consoleClient struct {
	t      *testing.T
	e      *env
	cookie string
}

type consolePage struct {
	Status int
	Header http.Header
	Body   string
}

func (cc *consoleClient) send(method, path string, form url.Values, headers ...string) consolePage {
	cc.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, cc.e.url+path, body)
	if err != nil {
		cc.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cc.cookie != "" {
		req.Header.Set("Cookie", cc.cookie)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		cc.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, c := range res.Cookies() {
		if c.Name == "lectern_console" {
			cc.cookie = c.Name + "=" + c.Value
			if c.MaxAge < 0 {
				cc.cookie = ""
			}
		}
	}
	return consolePage{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

func (cc *consoleClient) signIn(key, secret string) consolePage {
	cc.t.Helper()
	return cc.send("POST", "/console/signin", url.Values{"key": {key}, "secret": {secret}})
}

func wantPage(t *testing.T, p consolePage, status int, contains ...string) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("status %d, want %d; body %s", p.Status, status, truncate([]byte(p.Body), 800))
	}
	for _, s := range contains {
		if !strings.Contains(p.Body, s) {
			t.Fatalf("page lacks %q: %s", s, truncate([]byte(p.Body), 1500))
		}
	}
}

// TestConsoleSession: signing in seals the credentials in a strict cookie; a wrong secret,
// a forged cookie, another tenant and a form posted from another site are all refused, and
// the API's own message reaches the page.
func TestConsoleSession(t *testing.T) {
	e := start(t, modes(t)["embedded"](t))
	e.createTenant("acme", true)
	e.createTenant("other", true)
	key, secret := e.credential("acme")

	anon := &consoleClient{t: t, e: e}
	p := anon.send("GET", "/console/tenants", nil)
	if p.Status != 303 || p.Header.Get("Location") != "/console/signin?next=%2Fconsole%2Ftenants" {
		t.Fatalf("without a session: %d %s", p.Status, p.Header.Get("Location"))
	}
	wantPage(t, anon.send("GET", "/console/signin", nil), 200, `<label for="key">Key</label>`, `autocomplete="current-password"`)
	if csp := anon.send("GET", "/console/signin", nil).Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("console CSP: %q", csp)
	}
	wantPage(t, anon.signIn(key, "wrong"), 401, `<p role="alert" class="error">invalid credentials</p>`)
	if anon.cookie != "" {
		t.Fatal("a failed sign-in set a session cookie")
	}
	// A cookie that does not decrypt is no session.
	anon.cookie = "lectern_console=AAAA" + strings.Repeat("x", 40)
	if p := anon.send("GET", "/console/tenants", nil); p.Status != 303 {
		t.Fatalf("forged cookie: %d", p.Status)
	}

	rootc := &consoleClient{t: t, e: e}
	req, _ := http.NewRequest("POST", e.url+"/console/signin", strings.NewReader(url.Values{"key": {rootUser}, "secret": {rootPass}, "next": {"//evil.example/x"}}.Encode()))
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
	if strings.Contains(sc, rootPass) {
		t.Fatal("the session cookie carries the password in clear")
	}
	rootc.signIn(rootUser, rootPass)
	wantPage(t, rootc.send("GET", "/console/tenants", nil), 200, `<th scope="row"><a href="/console/t/acme/">acme</a></th>`)
	// The API's message for a bad tenant id reaches the page, and nothing is created.
	wantPage(t, rootc.send("POST", "/console/tenants", url.Values{"tenant_id": {"bad id!"}, "enabled": {"true"}}), 400, `<p role="alert" class="error">`)
	wantPage(t, rootc.send("POST", "/console/tenants", url.Values{"tenant_id": {"acme"}, "enabled": {"true"}}), 409, "acme")
	// A form another site made the browser send is refused.
	p = rootc.send("POST", "/console/tenants", url.Values{"tenant_id": {"csrf"}, "enabled": {"true"}}, "Sec-Fetch-Site", "cross-site")
	wantPage(t, p, 403, "another site")
	e.expect(e.do("GET", "/api/v1/app_management/tenants/csrf/credentials", root, nil), 404, "tenant of a cross-site form")
	// So is one from the content origin: another port of this host is same-site, and an
	// Origin names it where a browser sends no Sec-Fetch-Site.
	for _, h := range [][]string{{"Sec-Fetch-Site", "same-site"}, {"Origin", e.content}} {
		wantPage(t, rootc.send("POST", "/console/tenants", url.Values{"tenant_id": {"csrf2"}, "enabled": {"true"}}, h...), 403, "another site")
	}
	e.expect(e.do("GET", "/api/v1/app_management/tenants/csrf2/credentials", root, nil), 404, "tenant of a form from the content origin")
	wantPage(t, rootc.send("POST", "/console/tenants", url.Values{"tenant_id": {"same"}, "enabled": {"true"}}, "Origin", e.url), 303)
	// htmx gets the table alone.
	p = rootc.send("POST", "/console/tenants/acme/enabled", url.Values{"enabled": {"false"}}, "HX-Request", "true")
	wantPage(t, p, 200, `<table id="tenant-table">`, `<tr id="tenant-acme">`)
	if strings.Contains(p.Body, "<html") {
		t.Error("an htmx swap got a whole page")
	}
	rootc.send("POST", "/console/tenants/acme/enabled", url.Values{"enabled": {"true"}})

	tc := &consoleClient{t: t, e: e}
	if p := tc.signIn(key, secret); p.Status != 303 || p.Header.Get("Location") != "/console/" {
		t.Fatalf("tenant sign-in: %d %s", p.Status, p.Header.Get("Location"))
	}
	wantPage(t, tc.send("GET", "/console/tenants", nil), 403, "this operation needs the root credentials")
	wantPage(t, tc.send("GET", "/console/t/other/", nil), 403, "cannot access tenant &#39;other&#39;")
	wantPage(t, tc.send("GET", "/console/no-such-page", nil), 404, "there is no console page at /console/no-such-page")
	// Revoking the credential ends its console session at the next request.
	e.expect(e.do("DELETE", "/api/v1/app_management/tenants/acme/credentials/"+key, root, nil), 204, "revoke")
	if p := tc.send("GET", "/console/tenants", nil); p.Status != 303 || p.Header.Get("Location") != "/console/signin" {
		t.Fatalf("revoked credential: %d %s", p.Status, p.Header.Get("Location"))
	}
	if p := tc.send("GET", "/console/assets/htmx.min.js", nil); p.Status != 200 || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("htmx asset: %d %s", p.Status, p.Header.Get("Content-Type"))
	}
	if p := tc.send("GET", "/console/assets/..%2fconsole.go", nil); p.Status != 404 {
		t.Fatalf("asset outside assets/: %d", p.Status)
	}
}
