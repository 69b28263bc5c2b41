package server_test

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// wantThrottled checks a 429 with a positive Retry-After.
func wantThrottled(t *testing.T, status int, retryAfter, body, what string) {
	t.Helper()
	if status != 429 {
		t.Fatalf("%s: status %d, want 429: %s", what, status, body)
	}
	if n, err := strconv.Atoi(retryAfter); err != nil || n < 1 {
		t.Fatalf("%s: Retry-After %q, want whole seconds ≥ 1", what, retryAfter)
	}
	if !strings.Contains(body, "too many failed attempts") {
		t.Fatalf("%s: the answer does not say why: %s", what, body)
	}
}

// TestFailedSecretsThrottled: guessing a secret is slowed down per account and per source.
// After 10 failures for one account, every way of proving that account's secret (API
// credentials, the record store, console sign-in) answers 429 with Retry-After, even with
// the right secret, while other accounts are untouched; 30 failures from one address over
// many accounts stop that address; OAuth client secrets are throttled the same way. Success
// within the budget costs nothing and clears the account's count.
func TestFailedSecretsThrottled(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		key, secret := e.credential("acme")

		// A few mistakes, then the right secret: no throttling, and the count starts again.
		for i := 0; i < 9; i++ {
			e.expect(e.do("GET", "/api/v1/app_management/tenants", basic(rootUser, "wrong"), nil), 401, "wrong root password")
		}
		e.expect(e.do("GET", "/api/v1/app_management/tenants", root, nil), 200, "right root password after 9 mistakes")
		for i := 0; i < 10; i++ {
			e.expect(e.do("GET", "/api/v1/app_management/tenants", basic(rootUser, fmt.Sprint("guess", i)), nil), 401, "guess")
		}
		r := e.do("GET", "/api/v1/app_management/tenants", root, nil)
		wantThrottled(t, r.Status, r.Header.Get("Retry-After"), string(r.Body), "right root password after 10 guesses")
		r = e.do("GET", "/lrs/TCAPI/acme/statements", root, nil, "X-Experience-API-Version", "1.0.3")
		wantThrottled(t, r.Status, r.Header.Get("Retry-After"), string(r.Body), "record store with the throttled root account")
		cc := &consoleClient{t: t, e: e}
		p := cc.signIn(rootUser, rootPass)
		wantThrottled(t, p.Status, p.Header.Get("Retry-After"), p.Body, "console sign-in as the throttled root account")
		if cc.cookie != "" {
			t.Fatal("a throttled sign-in set a session cookie")
		}
		// Another account from the same address is not affected.
		e.expect(e.do("GET", "/engine/api/v1/acme/courses", basic(key, secret), nil), 200, "another account")

		// One address guessing at many accounts: 30 failures in all (19 so far), then 429.
		for i := 0; i < 11; i++ {
			e.expect(e.do("GET", "/engine/api/v1/acme/courses", basic(fmt.Sprint("nobody", i), "x"), nil), 401, "unknown account")
		}
		r = e.do("GET", "/engine/api/v1/acme/courses", basic(key, secret), nil)
		wantThrottled(t, r.Status, r.Header.Get("Retry-After"), string(r.Body), "a known account from an address that failed 30 times")
	})
}

// TestOAuthClientSecretsThrottled: the token endpoint counts wrong client secrets like any
// other; the 429 is an RFC 6749 error body with Retry-After.
func TestOAuthClientSecretsThrottled(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		c := e.oauthClient("acme", map[string]any{"name": "reports"})
		form := url.Values{"grant_type": {"client_credentials"}}
		for i := 0; i < 10; i++ {
			expectOAuthError(t, e.tokenRequest(basic(c.ID, fmt.Sprint("guess", i)), form), 401, "invalid_client", "wrong client secret")
		}
		r := e.tokenRequest(basic(c.ID, c.Secret), form)
		wantThrottled(t, r.Status, r.Header.Get("Retry-After"), string(r.Body), "right client secret after 10 guesses")
		var oe oauthErr
		r.json(t, &oe)
		if oe.Error != "slow_down" || oe.Description == "" {
			t.Fatalf("429 is not an OAuth error body: %s", r.Body)
		}
	})
}

// TestSignInRefusesCrossSitePosts: another site cannot sign a visitor in to an account of its
// choosing (login CSRF): a post that the browser marks cross-site, or whose Origin is another
// host (or "null", a sandboxed frame), is refused with 403 and sets no cookie; the console's
// own form (same-origin) signs in.
func TestSignInRefusesCrossSitePosts(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		form := url.Values{"key": {rootUser}, "secret": {rootPass}}
		host := strings.TrimPrefix(strings.TrimPrefix(e.url, "http://"), "https://")
		for _, h := range [][]string{
			{"Sec-Fetch-Site", "cross-site"},
			{"Sec-Fetch-Site", "same-site"},
			{"Origin", "http://evil.example"},
			{"Origin", "null"},
			{"Origin", "http://" + host + ".evil.example"},
		} {
			cc := &consoleClient{t: t, e: e}
			p := cc.send("POST", "/console/signin", form, h...)
			wantPage(t, p, 403, "from another site")
			if cc.cookie != "" {
				t.Fatalf("%s: %s: a cross-site sign-in set a session cookie", h[0], h[1])
			}
		}
		for _, h := range [][]string{{"Sec-Fetch-Site", "same-origin"}, {"Origin", "http://" + host}, {}} {
			cc := &consoleClient{t: t, e: e}
			if p := cc.send("POST", "/console/signin", form, h...); p.Status != 303 || cc.cookie == "" {
				t.Fatalf("%v: same-origin sign-in: status %d, cookie %q", h, p.Status, cc.cookie)
			}
		}
	})
}
