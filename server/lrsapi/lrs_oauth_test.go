package lrsapi_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/server"
)

type oauthToken struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope"`
}

// bearerToken issues a token for c (Basic client authentication) with the given scope
// parameter ("" leaves it out) and returns its Authorization.
func bearerToken(e *servertest.Env, c servertest.OAuthClient, scope string) servertest.Auth {
	e.T.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	r := e.TokenRequest(servertest.Basic(c.ID, c.Secret), form)
	e.Expect(r, 200, "token for "+c.ID)
	var tok oauthToken
	r.JSON(e.T, &tok)
	return servertest.Auth{Header: "Bearer " + tok.AccessToken}
}

// TestLRSOAuthTokens: clients are managed by root per tenant; the token endpoint issues
// client-credentials tokens (Basic or form client authentication, a scope subset) and answers
// the RFC 6749 errors; deleted clients and expired tokens get 401.
func TestLRSOAuthTokens(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.CreateTenant("other", true)
		key, secret := e.Credential("acme")

		// Management: root only, validated, secrets shown once.
		e.Expect(e.Do("POST", servertest.OAuthClients("acme"), servertest.Basic(key, secret), map[string]any{}), 403, "tenant credential registers a client")
		e.Expect(e.Do("POST", servertest.OAuthClients("acme"), servertest.Root, map[string]any{"scopes": []string{"statements/write", "everything"}}), 400, "unknown scope")
		e.Expect(e.Do("POST", servertest.OAuthClients("acme"), servertest.Root, map[string]any{"scopes": []string{}}), 400, "no scopes")
		e.Expect(e.Do("POST", servertest.OAuthClients("acme"), servertest.Root, map[string]any{"token_lifetime": 0}), 400, "zero lifetime")
		e.Expect(e.Do("POST", servertest.OAuthClients("acme"), servertest.Root, map[string]any{"token_lifetime": 86401}), 400, "lifetime over a day")
		e.Expect(e.Do("POST", servertest.OAuthClients("acme"), servertest.Root, map[string]any{"secret": "mine"}), 400, "unknown property")
		e.Expect(e.Do("POST", servertest.OAuthClients("nosuch"), servertest.Root, map[string]any{}), 404, "unknown tenant")
		def := e.OAuthClient("acme", map[string]any{})
		if !slices.Equal(def.Scopes, []string{"statements/write", "statements/read/mine"}) || def.Lifetime != 3600 {
			t.Errorf("default client: %+v", def)
		}
		c := e.OAuthClient("acme", map[string]any{"name": "Reporter", "scopes": []string{"state", "statements/read/mine", "statements/write", "state"}})
		if !slices.Equal(c.Scopes, []string{"statements/write", "statements/read/mine", "state"}) {
			t.Errorf("scopes are not normalised: %v", c.Scopes)
		}
		r := e.Do("GET", servertest.OAuthClients("acme"), servertest.Root, nil)
		e.Expect(r, 200, "list clients")
		if strings.Contains(string(r.Body), c.Secret) || strings.Contains(string(r.Body), "client_secret") || !strings.Contains(string(r.Body), c.ID) {
			t.Errorf("client list: %s", r.Body)
		}
		e.Expect(e.Do("GET", servertest.OAuthClients("acme")+"/"+c.ID, servertest.Root, nil), 200, "get client")
		e.Expect(e.Do("GET", servertest.OAuthClients("other")+"/"+c.ID, servertest.Root, nil), 404, "client under another tenant")
		e.Expect(e.Do("DELETE", servertest.OAuthClients("other")+"/"+c.ID, servertest.Root, nil), 404, "delete client under another tenant")

		// Issuance: Basic client authentication, every scope of the client by default.
		grant := url.Values{"grant_type": {"client_credentials"}}
		r = e.TokenRequest(servertest.Basic(c.ID, c.Secret), grant)
		e.Expect(r, 200, "token with Basic client authentication")
		var tok oauthToken
		r.JSON(t, &tok)
		if tok.TokenType != "Bearer" || tok.ExpiresIn != 3600 || tok.Scope != "statements/write statements/read/mine state" || tok.AccessToken == "" {
			t.Errorf("token response: %s", r.Body)
		}
		if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("Pragma") != "no-cache" {
			t.Errorf("token response is cacheable: %v", r.Header)
		}
		// Client credentials in the form, a subset of the scopes.
		r = e.TokenRequest(servertest.NoAuth, url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ID}, "client_secret": {c.Secret}, "scope": {"state"}})
		e.Expect(r, 200, "token with form client authentication")
		var stateTok oauthToken
		r.JSON(t, &stateTok)
		if stateTok.Scope != "state" {
			t.Errorf("scope subset: %s", r.Body)
		}

		// Errors (RFC 6749 §5.2).
		servertest.ExpectOAuthError(t, e.TokenRequest(servertest.Basic(c.ID, c.Secret), url.Values{"grant_type": {"password"}}), 400, "unsupported_grant_type", "password grant")
		servertest.ExpectOAuthError(t, e.TokenRequest(servertest.Basic(c.ID, c.Secret), url.Values{}), 400, "invalid_request", "no grant_type")
		wrong := e.TokenRequest(servertest.Basic(c.ID, "wrong"), grant)
		servertest.ExpectOAuthError(t, wrong, 401, "invalid_client", "wrong secret")
		if !strings.HasPrefix(wrong.Header.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("invalid_client without a Basic challenge: %v", wrong.Header)
		}
		servertest.ExpectOAuthError(t, e.TokenRequest(servertest.Basic("lc_nosuch", c.Secret), grant), 401, "invalid_client", "unknown client")
		servertest.ExpectOAuthError(t, e.TokenRequest(servertest.NoAuth, grant), 401, "invalid_client", "no client authentication")
		servertest.ExpectOAuthError(t, e.TokenRequest(servertest.Basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ID}, "client_secret": {c.Secret}}),
			400, "invalid_request", "two client authentications")
		servertest.ExpectOAuthError(t, e.TokenRequest(servertest.Basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials"}, "scope": {"all"}}), 400, "invalid_scope", "scope beyond the client's")
		servertest.ExpectOAuthError(t, e.TokenRequest(servertest.Basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials"}, "scope": {"statements/write nonsense"}}), 400, "invalid_scope", "unknown scope")
		servertest.ExpectOAuthError(t, e.TokenRequest(servertest.Basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials"}, "scope": {""}}), 400, "invalid_scope", "empty scope")
		servertest.ExpectOAuthError(t, e.TokenRequest(servertest.Basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials", "client_credentials"}}), 400, "invalid_request", "repeated parameter")
		servertest.ExpectOAuthError(t, e.Do("POST", server.OAuthTokenPath, servertest.Basic(c.ID, c.Secret), map[string]any{"grant_type": "client_credentials"}), 400, "invalid_request", "JSON body")

		// The token reaches the record store, with and without the tenant segment.
		bearer := servertest.Auth{Header: "Bearer " + tok.AccessToken}
		e.Expect(e.Do("POST", servertest.LRS+"/acme/statements", bearer, servertest.Statement("ann@example.com", "attempted", "http://example.com/a"), servertest.V200...), 200, "bearer writes")
		e.Expect(e.Do("GET", servertest.LRS+"/statements", bearer, nil, servertest.V200...), 200, "bearer without a tenant segment")
		e.Expect(e.Do("GET", servertest.LRS+"/acme/statements", servertest.Auth{Header: "Bearer " + tok.AccessToken[:len(tok.AccessToken)-3] + "AAA"}, nil, servertest.V200...), 401, "tampered token")
		e.Expect(e.Do("GET", servertest.LRS+"/acme/statements", servertest.Auth{Header: "Bearer lat_forged.token"}, nil, servertest.V200...), 401, "forged token")

		// Expiry: a one-second token stops working.
		short := e.OAuthClient("acme", map[string]any{"token_lifetime": 1, "scopes": []string{"all"}})
		shortTok := bearerToken(e, short, "")
		servertest.Eventually(t, 10*time.Second, "the one-second token to expire", func() bool {
			return e.Do("GET", servertest.LRS+"/acme/statements", shortTok, nil, servertest.V200...).Status == 401
		})
		r = e.Do("GET", servertest.LRS+"/acme/statements", shortTok, nil, servertest.V200...)
		if !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("expired token: challenge %q", r.Header.Get("WWW-Authenticate"))
		}

		// Deleting a client revokes its tokens and its credentials.
		e.Expect(e.Do("DELETE", servertest.OAuthClients("acme")+"/"+c.ID, servertest.Root, nil), 204, "delete client")
		e.Expect(e.Do("GET", servertest.LRS+"/acme/statements", bearer, nil, servertest.V200...), 401, "token of a deleted client")
		e.Expect(e.Do("GET", servertest.OAuthClients("acme")+"/"+c.ID, servertest.Root, nil), 404, "deleted client")
		servertest.ExpectOAuthError(t, e.TokenRequest(servertest.Basic(c.ID, c.Secret), grant), 401, "invalid_client", "deleted client asks for a token")
		e.Expect(e.Do("GET", servertest.LRS+"/acme/statements", bearerToken(e, def, ""), nil, servertest.V200...), 200, "the other client still works")

		// OAuth 1.0a is not served; the 401 names what is.
		oa := e.Do("GET", servertest.LRS+"/acme/statements", servertest.Auth{Header: `OAuth oauth_consumer_key="k", oauth_signature="s"`}, nil, servertest.V200...)
		e.Expect(oa, 401, "OAuth 1.0a")
		if !strings.Contains(oa.Message(), "OAuth 2.0 client credentials") || !strings.Contains(oa.Message(), server.OAuthTokenPath) {
			t.Errorf("OAuth 1.0a 401: %s", oa.Body)
		}
	})
}

// TestLRSOAuthScopes: each xAPI scope allows its operations and forbids the others; OAuth
// clients are the authority of what they write; statements/read/mine reads only those;
// define decides whether definitions reach the canonical activity; tokens stay in their tenant.
func TestLRSOAuthScopes(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.CreateTenant("other", true)
		base := servertest.LRS + "/acme"
		agent := url.QueryEscape(`{"mbox":"mailto:bob@example.com"}`)
		act := url.QueryEscape("http://example.com/scopes/a1")
		state := base + "/activities/state?activityId=" + act + "&agent=" + agent + "&stateId=bookmark"
		profile := base + "/activities/profile?activityId=" + act + "&profileId=p1"
		agentProfile := base + "/agents/profile?agent=" + agent + "&profileId=p1"
		r := e.Do("POST", base+"/statements", servertest.Root, servertest.Statement("bob@example.com", "attempted", "http://example.com/scopes/a1"), servertest.V200...)
		e.Expect(r, 200, "root writes bob's statement")
		var bobIDs []string
		r.JSON(t, &bobIDs)
		e.Expect(e.Do("PUT", state, servertest.Root, map[string]any{"page": 1}, servertest.V200...), 204, "root puts state")
		e.Expect(e.Do("PUT", profile, servertest.Root, map[string]any{"p": 1}, servertest.V200...), 204, "root puts activity profile")
		e.Expect(e.Do("PUT", agentProfile, servertest.Root, map[string]any{"p": 1}, servertest.V200...), 204, "root puts agent profile")

		type op struct {
			name, method, path string
			body               any
			ok                 int
		}
		ops := []op{
			{"post statement", "POST", base + "/statements", servertest.Statement("cy@example.com", "attempted", "http://example.com/scopes/a2"), 200},
			{"put statement", "PUT", base + "/statements?statementId=" + newUUID(1), servertest.Statement("cy@example.com", "attempted", "http://example.com/scopes/a2"), 204},
			{"query statements", "GET", base + "/statements", nil, 200},
			{"get state", "GET", state, nil, 200},
			{"post state", "POST", state, map[string]any{"page": 2}, 204},
			{"get activity profile", "GET", profile, nil, 200},
			{"post activity profile", "POST", profile, map[string]any{"q": 2}, 204},
			{"get agent profile", "GET", agentProfile, nil, 200},
			{"delete agent profile", "DELETE", agentProfile, nil, 204},
			{"get activity", "GET", base + "/activities?activityId=" + act, nil, 200},
			{"get agents", "GET", base + "/agents?agent=" + agent, nil, 200},
			{"report", "GET", base + "/Report/actors", nil, 200},
		}
		allowed := map[string][]string{
			"statements/write":     {"post statement", "put statement"},
			"statements/read":      {"query statements", "get activity", "get agents", "report"},
			"statements/read/mine": {"query statements", "get activity", "get agents", "report"},
			"all/read":             {"query statements", "get state", "get activity profile", "get agent profile", "get activity", "get agents", "report"},
			"state":                {"get state", "post state"},
			"profile":              {"get activity profile", "post activity profile", "get agent profile", "delete agent profile"},
			"define":               {},
			"all":                  nil, // every operation
		}
		for scope, ok := range allowed {
			c := e.OAuthClient("acme", map[string]any{"scopes": []string{scope}})
			tok := bearerToken(e, c, "")
			for i, o := range ops {
				if o.method == "PUT" && strings.Contains(o.path, "statementId") {
					o.path = base + "/statements?statementId=" + newUUID(100+i)
				}
				want := 403
				if ok == nil || slices.Contains(ok, o.name) {
					want = o.ok
				}
				if want == 200 && o.name == "report" && scope == "statements/read/mine" {
					want = 404 // allowed, but the client appears in no statement
				}
				h := servertest.V200
				if strings.Contains(o.path, "/Report/") {
					h = servertest.V103
				}
				r := e.Do(o.method, o.path, tok, o.body, h...)
				if r.Status != want {
					t.Errorf("scope %s, %s: status %d, want %d: %s", scope, o.name, r.Status, want, r.Body)
				}
				if want == 204 && o.name == "delete agent profile" {
					// Put it back for the next client.
					e.Expect(e.Do("PUT", agentProfile, servertest.Root, map[string]any{"p": 1}, servertest.V200...), 204, "restore agent profile")
				}
			}
		}

		// statements/read/mine: the client reads what it wrote (it is the authority), not bob's.
		mine := e.OAuthClient("acme", map[string]any{"name": "Mine", "scopes": []string{"statements/write", "statements/read/mine"}})
		tok := bearerToken(e, mine, "")
		r = e.Do("POST", base+"/statements", tok, servertest.Statement("dee@example.com", "attempted", "http://example.com/scopes/a3"), servertest.V200...)
		e.Expect(r, 200, "mine writes")
		var ids []string
		r.JSON(t, &ids)
		res := e.Query(base+"/statements", tok, servertest.V200)
		if len(res.Statements) != 1 || res.Statements[0]["id"] != ids[0] {
			t.Fatalf("statements/read/mine reads %d statements: %v", len(res.Statements), res.Statements)
		}
		authority, _ := json.Marshal(res.Statements[0]["authority"])
		var got map[string]any
		_ = json.Unmarshal(authority, &got)
		acct, _ := got["account"].(map[string]any)
		if got["objectType"] != "Agent" || got["name"] != "Mine" || acct["name"] != mine.ID || !strings.HasSuffix(acct["homePage"].(string), servertest.LRS) {
			t.Errorf("authority of an OAuth client: %s", authority)
		}
		e.Expect(e.Do("GET", base+"/statements?statementId="+bobIDs[0], tok, nil, servertest.V200...), 404, "mine reads bob's statement by id")
		if res := e.Query(base+"/statements?agent="+agent, tok, servertest.V200); len(res.Statements) != 0 {
			t.Errorf("statements/read/mine reads bob's statements through the agent filter")
		}
		e.Expect(e.Do("GET", base+"/statements?statementId="+ids[0], tok, nil, servertest.V200...), 200, "mine reads its own statement by id")

		// define: only a client with it changes the canonical definition.
		defineAct := "http://example.com/scopes/defined"
		withName := func(name string) map[string]any {
			st := servertest.Statement("eve@example.com", "attempted", defineAct)
			st["object"].(map[string]any)["definition"] = map[string]any{"name": map[string]any{"en-US": name}}
			return st
		}
		writer := bearerToken(e, e.OAuthClient("acme", map[string]any{"scopes": []string{"statements/write"}}), "")
		e.Expect(e.Do("POST", base+"/statements", writer, withName("Undefined name"), servertest.V200...), 200, "write without define")
		r = e.Do("GET", base+"/activities?activityId="+url.QueryEscape(defineAct), servertest.Root, nil, servertest.V200...)
		e.Expect(r, 200, "activity")
		if strings.Contains(string(r.Body), "Undefined name") {
			t.Errorf("a client without define changed the definition: %s", r.Body)
		}
		definer := bearerToken(e, e.OAuthClient("acme", map[string]any{"scopes": []string{"statements/write", "define"}}), "")
		e.Expect(e.Do("POST", base+"/statements", definer, withName("Defined name"), servertest.V200...), 200, "write with define")
		r = e.Do("GET", base+"/activities?activityId="+url.QueryEscape(defineAct), servertest.Root, nil, servertest.V200...)
		if !strings.Contains(string(r.Body), "Defined name") {
			t.Errorf("a client with define did not define the activity: %s", r.Body)
		}

		// Cross-tenant isolation: a token of acme cannot reach other, even with scope all.
		all := bearerToken(e, e.OAuthClient("acme", map[string]any{"scopes": []string{"all"}}), "")
		e.Expect(e.Do("GET", servertest.LRS+"/other/statements", all, nil, servertest.V200...), 403, "acme token reads other")
		e.Expect(e.Do("POST", servertest.LRS+"/other/statements", all, servertest.Statement("f@example.com", "attempted", "http://example.com/f"), servertest.V200...), 403, "acme token writes other")
		if res := e.Query(servertest.LRS+"/statements", all, servertest.V200); len(res.Statements) == 0 {
			t.Errorf("a tenant-less path does not address the token's tenant")
		}
		otherClient := e.OAuthClient("other", map[string]any{"scopes": []string{"all"}})
		e.Expect(e.Do("GET", servertest.OAuthClients("acme")+"/"+otherClient.ID, servertest.Root, nil), 404, "other's client under acme")
		if res := e.Query(servertest.LRS+"/other/statements", bearerToken(e, otherClient, ""), servertest.V200); len(res.Statements) != 0 {
			t.Errorf("tenant other sees %d statements of acme", len(res.Statements))
		}
	})
}

// TestLRSOAuthTenantDeletion: deleting a tenant deletes its OAuth clients, so a tenant
// created again with the same id starts without them and old tokens stay refused.
func TestLRSOAuthTenantDeletion(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("doomed", true)
		c := e.OAuthClient("doomed", map[string]any{"scopes": []string{"all"}})
		tok := bearerToken(e, c, "")
		r := e.Do("DELETE", "/api/v1/app_management/tenants/doomed", servertest.Root, nil)
		e.Expect(r, 202, "delete tenant")
		var job struct{ ID, Status string }
		r.JSON(t, &job)
		servertest.Eventually(t, 30*time.Second, "tenant delete job", func() bool {
			e.Do("GET", "/api/v1/jobs/"+job.ID, servertest.Root, nil).JSON(t, &job)
			return job.Status == "COMPLETED"
		})
		e.CreateTenant("doomed", true)
		r = e.Do("GET", servertest.OAuthClients("doomed"), servertest.Root, nil)
		e.Expect(r, 200, "list clients of the new tenant")
		if strings.Contains(string(r.Body), c.ID) {
			t.Fatalf("a client of the deleted tenant survived: %s", r.Body)
		}
		e.Expect(e.Do("GET", servertest.LRS+"/doomed/statements", tok, nil, servertest.V200...), 401, "token of the deleted tenant's client")
		servertest.ExpectOAuthError(t, e.TokenRequest(servertest.Basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials"}}), 401, "invalid_client", "client of the deleted tenant")
	})
}

// TestLRSOAuthSurvivesRestart: an issued token and its client outlive the process.
func TestLRSOAuthSurvivesRestart(t *testing.T) {
	for name, mode := range servertest.Modes(t) {
		t.Run(name, func(t *testing.T) {
			cfg := mode(t)
			e := servertest.Start(t, cfg)
			e.CreateTenant("acme", true)
			c := e.OAuthClient("acme", map[string]any{"scopes": []string{"all"}})
			tok := bearerToken(e, c, "")
			e.Expect(e.Do("POST", servertest.LRS+"/acme/statements", tok, servertest.Statement("ann@example.com", "attempted", "http://example.com/a"), servertest.V200...), 200, "write before the restart")
			servertest.Stop(t, e)

			e = servertest.Start(t, cfg)
			if res := e.Query(servertest.LRS+"/acme/statements", tok, servertest.V200); len(res.Statements) != 1 {
				t.Fatalf("after the restart the token reads %d statements", len(res.Statements))
			}
			bearerToken(e, c, "statements/read")
		})
	}
}
