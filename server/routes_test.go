package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/throttle"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/server"
	"github.com/lectern-lms/lectern/server/httpx"
)

// TestEveryRoute walks the route table: every route is in /openapi.json, refuses requests
// without credentials (401) and with another tenant's credential (403), refuses writes to a
// disabled tenant (409), and never answers 5xx to a malformed body.
func TestEveryRoute(t *testing.T) {
	for name, cfg := range servertest.Modes(t) {
		t.Run(name, func(t *testing.T) {
			// Every route is tried with wrong credentials from one address, far more often than
			// the throttle allows (TestFailedSecretsThrottled tests that): a budget of a thousand.
			c := cfg(t)
			c.AuthThrottle = &throttle.Guard{Account: throttle.New(1000, time.Second, 100), Source: throttle.New(1000, time.Second, 100)}
			everyRoute(t, servertest.Start(t, c))
		})
	}
}

func everyRoute(t *testing.T, e *servertest.Env) {
	{
		e.CreateTenant("alpha", true)
		e.CreateTenant("beta", true)
		e.CreateTenant("gamma", true)
		betaKey, betaSecret := e.Credential("beta")
		gammaKey, _ := e.Credential("gamma")
		e.Expect(e.Do("PUT", "/api/v1/app_management/tenants/gamma", servertest.Root, map[string]any{"enabled": false}), 200, "disable gamma")

		var doc struct {
			Paths map[string]map[string]any `json:"paths"`
		}
		r := e.Do("GET", "/openapi.json", servertest.NoAuth, nil)
		e.Expect(r, 200, "openapi")
		r.JSON(t, &doc)

		// Fiber's own table must hold nothing that the documented table lacks.
		documented := map[string]bool{}
		for _, rt := range e.App.Server.Routes() {
			documented[rt.Method+" "+rt.Path] = true
		}
		for _, fr := range e.App.Server.App().GetRoutes(true) {
			// The player's browser routes (pages, course files, the content's runtime calls) are
			// not API operations (server/player.go, Server.browser); nor are the web console's
			// pages and the queue console under it.
			if fr.Method == "HEAD" || fr.Method == "USE" || fr.Path == "/" || strings.HasPrefix(fr.Path, "/player/") ||
				strings.HasPrefix(fr.Path, server.QueueConsolePath) || strings.HasPrefix(fr.Path, server.ConsolePath+"/") {
				continue
			}
			if !documented[fr.Method+" "+fr.Path] {
				t.Errorf("route %s %s is registered but not in the route table", fr.Method, fr.Path)
			}
		}

		routes := e.App.Server.Routes()
		if len(routes) < 10 {
			t.Fatalf("only %d routes registered", len(routes))
		}
		for _, rt := range routes {
			name := rt.Method + " " + rt.Path
			if _, ok := doc.Paths[server.OpenAPIPath(rt.Path)][strings.ToLower(rt.Method)]; !ok {
				t.Errorf("%s missing from /openapi.json", name)
			}
			if rt.Scope == httpx.ScopePublic {
				continue
			}
			other := map[string]string{"tenant": "alpha", "tenant_id": "alpha", "settingId": "ApiResultLimit", "key": betaKey, "job_id": "nope"}
			path := servertest.Fill(rt.Path, other)
			var body any
			if rt.Body != "" {
				body = "{}"
			}
			if r := e.Do(rt.Method, path, servertest.NoAuth, body, "tenant_id", "alpha"); r.Status != 401 || r.Message() == "" {
				t.Errorf("%s without credentials: %d %s, want 401", name, r.Status, r.Body)
			}
			if r := e.Do(rt.Method, path, servertest.Basic("nobody", "wrong"), body, "tenant_id", "alpha"); r.Status != 401 {
				t.Errorf("%s with wrong credentials: %d, want 401", name, r.Status)
			}
			// The LRS resources without a tenant segment take the tenant from the credential
			// (xAPI clients only know one base IRI), so no credential addresses another tenant there.
			credentialTenant := rt.Scope == httpx.ScopeLRS && !strings.Contains(rt.Path, ":tenant")
			if r := e.Do(rt.Method, path, servertest.Bearer(betaKey, betaSecret), body, "tenant_id", "alpha"); !credentialTenant && (r.Status != 403 || r.Message() == "") {
				t.Errorf("%s with tenant beta's credential on alpha: %d %s, want 403", name, r.Status, r.Body)
			}
			isWrite := rt.Method == "POST" || rt.Method == "PUT" || rt.Method == "DELETE" || rt.Method == "PATCH"
			if isWrite && !rt.AllowDisabled && rt.Scope != httpx.ScopeRoot && !credentialTenant {
				g := servertest.Fill(rt.Path, map[string]string{"tenant": "gamma", "tenant_id": "gamma", "settingId": "ApiResultLimit", "key": gammaKey, "job_id": "nope"})
				var gb any
				if rt.Body == "SettingBody" {
					gb = map[string]any{"value": "5"}
				}
				if r := e.Do(rt.Method, g, servertest.Root, gb, "tenant_id", "gamma"); r.Status != 409 || r.Message() == "" {
					t.Errorf("%s on disabled tenant: %d %s, want 409", name, r.Status, r.Body)
				}
			}
			if rt.Method == "POST" || rt.Method == "PUT" || rt.Method == "PATCH" {
				own := servertest.Fill(rt.Path, map[string]string{"tenant": "alpha", "tenant_id": "alpha", "settingId": "ApiResultLimit", "key": "nope", "job_id": "nope"})
				for _, bad := range malformedBodies() {
					r := e.Do(rt.Method, own, servertest.Root, bad, "tenant_id", "alpha")
					if r.Status >= 500 || (r.Status >= 400 && r.Message() == "") {
						t.Errorf("%s with body %.40q: %d %s", name, bad, r.Status, r.Body)
					}
				}
			}
		}
	}
}

func malformedBodies() []any {
	return []any{
		"", "{", "[]", `"x"`, "null", "123", `{"tenant_id": 5}`, `{"enabled": "yes"}`, `{"value": 5}`,
		`{"value": null}`, `{"unknown": 1}`, `{"tenant_id":"a","tenant_id":"b"}`, "{}{}", "\xff\xfe{}",
		`{"tenant_id":"` + strings.Repeat("a", 5000) + `"}`, `{"tenant_id":"../../etc"}`, `{"tenant_id":"a\u0000b"}`,
		strings.Repeat("[", 100000), []byte(strings.Repeat("x", 2<<20)),
	}
}
