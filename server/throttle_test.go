package server_test

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
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
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		key, secret := e.Credential("acme")

		// A few mistakes, then the right secret: no throttling, and the count starts again.
		for i := 0; i < 9; i++ {
			e.Expect(e.Do("GET", "/api/v1/app_management/tenants", servertest.Basic(servertest.RootUser, "wrong"), nil), 401, "wrong root password")
		}
		e.Expect(e.Do("GET", "/api/v1/app_management/tenants", servertest.Root, nil), 200, "right root password after 9 mistakes")
		for i := 0; i < 10; i++ {
			e.Expect(e.Do("GET", "/api/v1/app_management/tenants", servertest.Basic(servertest.RootUser, fmt.Sprint("guess", i)), nil), 401, "guess")
		}
		r := e.Do("GET", "/api/v1/app_management/tenants", servertest.Root, nil)
		wantThrottled(t, r.Status, r.Header.Get("Retry-After"), string(r.Body), "right root password after 10 guesses")
		r = e.Do("GET", "/lrs/TCAPI/acme/statements", servertest.Root, nil, "X-Experience-API-Version", "1.0.3")
		wantThrottled(t, r.Status, r.Header.Get("Retry-After"), string(r.Body), "record store with the throttled root account")
		cc := &servertest.ConsoleClient{T: t, E: e}
		p := cc.SignIn(servertest.RootUser, servertest.RootPass)
		wantThrottled(t, p.Status, p.Header.Get("Retry-After"), p.Body, "console sign-in as the throttled root account")
		if cc.Cookie != "" {
			t.Fatal("a throttled sign-in set a session cookie")
		}
		// Another account from the same address is not affected.
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses", servertest.Basic(key, secret), nil), 200, "another account")

		// One address guessing at many accounts: 30 failures in all (19 so far), then 429.
		for i := 0; i < 11; i++ {
			e.Expect(e.Do("GET", "/engine/api/v1/acme/courses", servertest.Basic(fmt.Sprint("nobody", i), "x"), nil), 401, "unknown account")
		}
		r = e.Do("GET", "/engine/api/v1/acme/courses", servertest.Basic(key, secret), nil)
		wantThrottled(t, r.Status, r.Header.Get("Retry-After"), string(r.Body), "a known account from an address that failed 30 times")
	})
}

// TestOAuthClientSecretsThrottled: the token endpoint counts wrong client secrets like any
// other; the 429 is an RFC 6749 error body with Retry-After.
func TestOAuthClientSecretsThrottled(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		c := e.OAuthClient("acme", map[string]any{"name": "reports"})
		form := url.Values{"grant_type": {"client_credentials"}}
		for i := 0; i < 10; i++ {
			servertest.ExpectOAuthError(t, e.TokenRequest(servertest.Basic(c.ID, fmt.Sprint("guess", i)), form), 401, "invalid_client", "wrong client secret")
		}
		r := e.TokenRequest(servertest.Basic(c.ID, c.Secret), form)
		wantThrottled(t, r.Status, r.Header.Get("Retry-After"), string(r.Body), "right client secret after 10 guesses")
		var oe servertest.OAuthError
		r.JSON(t, &oe)
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
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		form := url.Values{"key": {servertest.RootUser}, "secret": {servertest.RootPass}}
		host := strings.TrimPrefix(strings.TrimPrefix(e.URL, "http://"), "https://")
		for _, h := range [][]string{
			{"Sec-Fetch-Site", "cross-site"},
			{"Sec-Fetch-Site", "same-site"},
			{"Origin", "http://evil.example"},
			{"Origin", "null"},
			{"Origin", "http://" + host + ".evil.example"},
		} {
			cc := &servertest.ConsoleClient{T: t, E: e}
			p := cc.Send("POST", "/console/signin", form, h...)
			servertest.WantPage(t, p, 403, "from another site")
			if cc.Cookie != "" {
				t.Fatalf("%s: %s: a cross-site sign-in set a session cookie", h[0], h[1])
			}
		}
		for _, h := range [][]string{{"Sec-Fetch-Site", "same-origin"}, {"Origin", "http://" + host}, {}} {
			cc := &servertest.ConsoleClient{T: t, E: e}
			if p := cc.Send("POST", "/console/signin", form, h...); p.Status != 303 || cc.Cookie == "" {
				t.Fatalf("%v: same-origin sign-in: status %d, cookie %q", h, p.Status, cc.Cookie)
			}
		}
	})
}
