package server_test

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/server"
)

type oauthClient struct {
	ID       string   `json:"client_id"`
	Secret   string   `json:"client_secret"`
	Name     string   `json:"name"`
	Tenant   string   `json:"tenant_id"`
	Scopes   []string `json:"scopes"`
	Lifetime int      `json:"token_lifetime"`
}

type oauthToken struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope"`
}

type oauthErr struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
	Message     string `json:"message"`
}

func oauthClients(tenantID string) string {
	return "/api/v1/app_management/tenants/" + tenantID + "/lrs_oauth_clients"
}

// oauthClient registers a client of tenantID through the admin API.
func (e *env) oauthClient(tenantID string, body map[string]any) oauthClient {
	e.t.Helper()
	r := e.do("POST", oauthClients(tenantID), root, body)
	e.expect(r, 201, "register OAuth client")
	var c oauthClient
	r.json(e.t, &c)
	if c.ID == "" || c.Secret == "" || c.Tenant != tenantID {
		e.t.Fatalf("OAuth client without id, secret or tenant: %s", r.Body)
	}
	return c
}

// tokenRequest posts a form to the token endpoint.
func (e *env) tokenRequest(a auth, form url.Values) resp {
	e.t.Helper()
	return e.do("POST", server.OAuthTokenPath, a, form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
}

// bearerToken issues a token for c (Basic client authentication) with the given scope
// parameter ("" leaves it out) and returns its Authorization.
func (e *env) bearerToken(c oauthClient, scope string) auth {
	e.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	r := e.tokenRequest(basic(c.ID, c.Secret), form)
	e.expect(r, 200, "token for "+c.ID)
	var tok oauthToken
	r.json(e.t, &tok)
	return auth{"Bearer " + tok.AccessToken}
}

func expectOAuthError(t *testing.T, r resp, status int, code, what string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
	}
	var oe oauthErr
	if err := json.Unmarshal(r.Body, &oe); err != nil || oe.Error != code || oe.Description == "" || oe.Message == "" {
		t.Fatalf("%s: want error %s with a description: %s", what, code, r.Body)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: Cache-Control %q, want no-store", what, r.Header.Get("Cache-Control"))
	}
}

// TestLRSOAuthTokens: clients are managed by root per tenant; the token endpoint issues
// client-credentials tokens (Basic or form client authentication, a scope subset) and answers
// the RFC 6749 errors; deleted clients and expired tokens get 401.
func TestLRSOAuthTokens(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		e.createTenant("other", true)
		key, secret := e.credential("acme")

		// Management: root only, validated, secrets shown once.
		e.expect(e.do("POST", oauthClients("acme"), basic(key, secret), map[string]any{}), 403, "tenant credential registers a client")
		e.expect(e.do("POST", oauthClients("acme"), root, map[string]any{"scopes": []string{"statements/write", "everything"}}), 400, "unknown scope")
		e.expect(e.do("POST", oauthClients("acme"), root, map[string]any{"scopes": []string{}}), 400, "no scopes")
		e.expect(e.do("POST", oauthClients("acme"), root, map[string]any{"token_lifetime": 0}), 400, "zero lifetime")
		e.expect(e.do("POST", oauthClients("acme"), root, map[string]any{"token_lifetime": 86401}), 400, "lifetime over a day")
		e.expect(e.do("POST", oauthClients("acme"), root, map[string]any{"secret": "mine"}), 400, "unknown property")
		e.expect(e.do("POST", oauthClients("nosuch"), root, map[string]any{}), 404, "unknown tenant")
		def := e.oauthClient("acme", map[string]any{})
		if !slices.Equal(def.Scopes, []string{"statements/write", "statements/read/mine"}) || def.Lifetime != 3600 {
			t.Errorf("default client: %+v", def)
		}
		c := e.oauthClient("acme", map[string]any{"name": "Reporter", "scopes": []string{"state", "statements/read/mine", "statements/write", "state"}})
		if !slices.Equal(c.Scopes, []string{"statements/write", "statements/read/mine", "state"}) {
			t.Errorf("scopes are not normalised: %v", c.Scopes)
		}
		r := e.do("GET", oauthClients("acme"), root, nil)
		e.expect(r, 200, "list clients")
		if strings.Contains(string(r.Body), c.Secret) || strings.Contains(string(r.Body), "client_secret") || !strings.Contains(string(r.Body), c.ID) {
			t.Errorf("client list: %s", r.Body)
		}
		e.expect(e.do("GET", oauthClients("acme")+"/"+c.ID, root, nil), 200, "get client")
		e.expect(e.do("GET", oauthClients("other")+"/"+c.ID, root, nil), 404, "client under another tenant")
		e.expect(e.do("DELETE", oauthClients("other")+"/"+c.ID, root, nil), 404, "delete client under another tenant")

		// Issuance: Basic client authentication, every scope of the client by default.
		grant := url.Values{"grant_type": {"client_credentials"}}
		r = e.tokenRequest(basic(c.ID, c.Secret), grant)
		e.expect(r, 200, "token with Basic client authentication")
		var tok oauthToken
		r.json(t, &tok)
		if tok.TokenType != "Bearer" || tok.ExpiresIn != 3600 || tok.Scope != "statements/write statements/read/mine state" || tok.AccessToken == "" {
			t.Errorf("token response: %s", r.Body)
		}
		if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("Pragma") != "no-cache" {
			t.Errorf("token response is cacheable: %v", r.Header)
		}
		// Client credentials in the form, a subset of the scopes.
		r = e.tokenRequest(noAuth, url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ID}, "client_secret": {c.Secret}, "scope": {"state"}})
		e.expect(r, 200, "token with form client authentication")
		var stateTok oauthToken
		r.json(t, &stateTok)
		if stateTok.Scope != "state" {
			t.Errorf("scope subset: %s", r.Body)
		}

		// Errors (RFC 6749 §5.2).
		expectOAuthError(t, e.tokenRequest(basic(c.ID, c.Secret), url.Values{"grant_type": {"password"}}), 400, "unsupported_grant_type", "password grant")
		expectOAuthError(t, e.tokenRequest(basic(c.ID, c.Secret), url.Values{}), 400, "invalid_request", "no grant_type")
		wrong := e.tokenRequest(basic(c.ID, "wrong"), grant)
		expectOAuthError(t, wrong, 401, "invalid_client", "wrong secret")
		if !strings.HasPrefix(wrong.Header.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("invalid_client without a Basic challenge: %v", wrong.Header)
		}
		expectOAuthError(t, e.tokenRequest(basic("lc_nosuch", c.Secret), grant), 401, "invalid_client", "unknown client")
		expectOAuthError(t, e.tokenRequest(noAuth, grant), 401, "invalid_client", "no client authentication")
		expectOAuthError(t, e.tokenRequest(basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ID}, "client_secret": {c.Secret}}),
			400, "invalid_request", "two client authentications")
		expectOAuthError(t, e.tokenRequest(basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials"}, "scope": {"all"}}), 400, "invalid_scope", "scope beyond the client's")
		expectOAuthError(t, e.tokenRequest(basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials"}, "scope": {"statements/write nonsense"}}), 400, "invalid_scope", "unknown scope")
		expectOAuthError(t, e.tokenRequest(basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials"}, "scope": {""}}), 400, "invalid_scope", "empty scope")
		expectOAuthError(t, e.tokenRequest(basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials", "client_credentials"}}), 400, "invalid_request", "repeated parameter")
		expectOAuthError(t, e.do("POST", server.OAuthTokenPath, basic(c.ID, c.Secret), map[string]any{"grant_type": "client_credentials"}), 400, "invalid_request", "JSON body")

		// The token reaches the record store, with and without the tenant segment.
		bearer := auth{"Bearer " + tok.AccessToken}
		e.expect(e.do("POST", lrs+"/acme/statements", bearer, statement("ann@example.com", "attempted", "http://example.com/a"), v200...), 200, "bearer writes")
		e.expect(e.do("GET", lrs+"/statements", bearer, nil, v200...), 200, "bearer without a tenant segment")
		e.expect(e.do("GET", lrs+"/acme/statements", auth{"Bearer " + tok.AccessToken[:len(tok.AccessToken)-3] + "AAA"}, nil, v200...), 401, "tampered token")
		e.expect(e.do("GET", lrs+"/acme/statements", auth{"Bearer lat_forged.token"}, nil, v200...), 401, "forged token")

		// Expiry: a one-second token stops working.
		short := e.oauthClient("acme", map[string]any{"token_lifetime": 1, "scopes": []string{"all"}})
		shortTok := e.bearerToken(short, "")
		eventually(t, 10*time.Second, "the one-second token to expire", func() bool {
			return e.do("GET", lrs+"/acme/statements", shortTok, nil, v200...).Status == 401
		})
		r = e.do("GET", lrs+"/acme/statements", shortTok, nil, v200...)
		if !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("expired token: challenge %q", r.Header.Get("WWW-Authenticate"))
		}

		// Deleting a client revokes its tokens and its credentials.
		e.expect(e.do("DELETE", oauthClients("acme")+"/"+c.ID, root, nil), 204, "delete client")
		e.expect(e.do("GET", lrs+"/acme/statements", bearer, nil, v200...), 401, "token of a deleted client")
		e.expect(e.do("GET", oauthClients("acme")+"/"+c.ID, root, nil), 404, "deleted client")
		expectOAuthError(t, e.tokenRequest(basic(c.ID, c.Secret), grant), 401, "invalid_client", "deleted client asks for a token")
		e.expect(e.do("GET", lrs+"/acme/statements", e.bearerToken(def, ""), nil, v200...), 200, "the other client still works")

		// OAuth 1.0a is not served; the 401 names what is.
		oa := e.do("GET", lrs+"/acme/statements", auth{`OAuth oauth_consumer_key="k", oauth_signature="s"`}, nil, v200...)
		e.expect(oa, 401, "OAuth 1.0a")
		if !strings.Contains(oa.message(), "OAuth 2.0 client credentials") || !strings.Contains(oa.message(), server.OAuthTokenPath) {
			t.Errorf("OAuth 1.0a 401: %s", oa.Body)
		}
	})
}

// TestLRSOAuthScopes: each xAPI scope allows its operations and forbids the others; OAuth
// clients are the authority of what they write; statements/read/mine reads only those;
// define decides whether definitions reach the canonical activity; tokens stay in their tenant.
func TestLRSOAuthScopes(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		e.createTenant("other", true)
		base := lrs + "/acme"
		agent := url.QueryEscape(`{"mbox":"mailto:bob@example.com"}`)
		act := url.QueryEscape("http://example.com/scopes/a1")
		state := base + "/activities/state?activityId=" + act + "&agent=" + agent + "&stateId=bookmark"
		profile := base + "/activities/profile?activityId=" + act + "&profileId=p1"
		agentProfile := base + "/agents/profile?agent=" + agent + "&profileId=p1"
		r := e.do("POST", base+"/statements", root, statement("bob@example.com", "attempted", "http://example.com/scopes/a1"), v200...)
		e.expect(r, 200, "root writes bob's statement")
		var bobIDs []string
		r.json(t, &bobIDs)
		e.expect(e.do("PUT", state, root, map[string]any{"page": 1}, v200...), 204, "root puts state")
		e.expect(e.do("PUT", profile, root, map[string]any{"p": 1}, v200...), 204, "root puts activity profile")
		e.expect(e.do("PUT", agentProfile, root, map[string]any{"p": 1}, v200...), 204, "root puts agent profile")

		type op struct {
			name, method, path string
			body               any
			ok                 int
		}
		ops := []op{
			{"post statement", "POST", base + "/statements", statement("cy@example.com", "attempted", "http://example.com/scopes/a2"), 200},
			{"put statement", "PUT", base + "/statements?statementId=" + newUUID(1), statement("cy@example.com", "attempted", "http://example.com/scopes/a2"), 204},
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
			c := e.oauthClient("acme", map[string]any{"scopes": []string{scope}})
			tok := e.bearerToken(c, "")
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
				h := v200
				if strings.Contains(o.path, "/Report/") {
					h = v103
				}
				r := e.do(o.method, o.path, tok, o.body, h...)
				if r.Status != want {
					t.Errorf("scope %s, %s: status %d, want %d: %s", scope, o.name, r.Status, want, r.Body)
				}
				if want == 204 && o.name == "delete agent profile" {
					// Put it back for the next client.
					e.expect(e.do("PUT", agentProfile, root, map[string]any{"p": 1}, v200...), 204, "restore agent profile")
				}
			}
		}

		// statements/read/mine: the client reads what it wrote (it is the authority), not bob's.
		mine := e.oauthClient("acme", map[string]any{"name": "Mine", "scopes": []string{"statements/write", "statements/read/mine"}})
		tok := e.bearerToken(mine, "")
		r = e.do("POST", base+"/statements", tok, statement("dee@example.com", "attempted", "http://example.com/scopes/a3"), v200...)
		e.expect(r, 200, "mine writes")
		var ids []string
		r.json(t, &ids)
		res := e.query(base+"/statements", tok, v200)
		if len(res.Statements) != 1 || res.Statements[0]["id"] != ids[0] {
			t.Fatalf("statements/read/mine reads %d statements: %v", len(res.Statements), res.Statements)
		}
		authority, _ := json.Marshal(res.Statements[0]["authority"])
		var got map[string]any
		_ = json.Unmarshal(authority, &got)
		acct, _ := got["account"].(map[string]any)
		if got["objectType"] != "Agent" || got["name"] != "Mine" || acct["name"] != mine.ID || !strings.HasSuffix(acct["homePage"].(string), lrs) {
			t.Errorf("authority of an OAuth client: %s", authority)
		}
		e.expect(e.do("GET", base+"/statements?statementId="+bobIDs[0], tok, nil, v200...), 404, "mine reads bob's statement by id")
		if res := e.query(base+"/statements?agent="+agent, tok, v200); len(res.Statements) != 0 {
			t.Errorf("statements/read/mine reads bob's statements through the agent filter")
		}
		e.expect(e.do("GET", base+"/statements?statementId="+ids[0], tok, nil, v200...), 200, "mine reads its own statement by id")

		// define: only a client with it changes the canonical definition.
		defineAct := "http://example.com/scopes/defined"
		withName := func(name string) map[string]any {
			st := statement("eve@example.com", "attempted", defineAct)
			st["object"].(map[string]any)["definition"] = map[string]any{"name": map[string]any{"en-US": name}}
			return st
		}
		writer := e.bearerToken(e.oauthClient("acme", map[string]any{"scopes": []string{"statements/write"}}), "")
		e.expect(e.do("POST", base+"/statements", writer, withName("Undefined name"), v200...), 200, "write without define")
		r = e.do("GET", base+"/activities?activityId="+url.QueryEscape(defineAct), root, nil, v200...)
		e.expect(r, 200, "activity")
		if strings.Contains(string(r.Body), "Undefined name") {
			t.Errorf("a client without define changed the definition: %s", r.Body)
		}
		definer := e.bearerToken(e.oauthClient("acme", map[string]any{"scopes": []string{"statements/write", "define"}}), "")
		e.expect(e.do("POST", base+"/statements", definer, withName("Defined name"), v200...), 200, "write with define")
		r = e.do("GET", base+"/activities?activityId="+url.QueryEscape(defineAct), root, nil, v200...)
		if !strings.Contains(string(r.Body), "Defined name") {
			t.Errorf("a client with define did not define the activity: %s", r.Body)
		}

		// Cross-tenant isolation: a token of acme cannot reach other, even with scope all.
		all := e.bearerToken(e.oauthClient("acme", map[string]any{"scopes": []string{"all"}}), "")
		e.expect(e.do("GET", lrs+"/other/statements", all, nil, v200...), 403, "acme token reads other")
		e.expect(e.do("POST", lrs+"/other/statements", all, statement("f@example.com", "attempted", "http://example.com/f"), v200...), 403, "acme token writes other")
		if res := e.query(lrs+"/statements", all, v200); len(res.Statements) == 0 {
			t.Errorf("a tenant-less path does not address the token's tenant")
		}
		otherClient := e.oauthClient("other", map[string]any{"scopes": []string{"all"}})
		e.expect(e.do("GET", oauthClients("acme")+"/"+otherClient.ID, root, nil), 404, "other's client under acme")
		if res := e.query(lrs+"/other/statements", e.bearerToken(otherClient, ""), v200); len(res.Statements) != 0 {
			t.Errorf("tenant other sees %d statements of acme", len(res.Statements))
		}
	})
}

// TestLRSOAuthTenantDeletion: deleting a tenant deletes its OAuth clients, so a tenant
// created again with the same id starts without them and old tokens stay refused.
func TestLRSOAuthTenantDeletion(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("doomed", true)
		c := e.oauthClient("doomed", map[string]any{"scopes": []string{"all"}})
		tok := e.bearerToken(c, "")
		r := e.do("DELETE", "/api/v1/app_management/tenants/doomed", root, nil)
		e.expect(r, 202, "delete tenant")
		var job struct{ ID, Status string }
		r.json(t, &job)
		eventually(t, 30*time.Second, "tenant delete job", func() bool {
			e.do("GET", "/api/v1/jobs/"+job.ID, root, nil).json(t, &job)
			return job.Status == "COMPLETED"
		})
		e.createTenant("doomed", true)
		r = e.do("GET", oauthClients("doomed"), root, nil)
		e.expect(r, 200, "list clients of the new tenant")
		if strings.Contains(string(r.Body), c.ID) {
			t.Fatalf("a client of the deleted tenant survived: %s", r.Body)
		}
		e.expect(e.do("GET", lrs+"/doomed/statements", tok, nil, v200...), 401, "token of the deleted tenant's client")
		expectOAuthError(t, e.tokenRequest(basic(c.ID, c.Secret), url.Values{"grant_type": {"client_credentials"}}), 401, "invalid_client", "client of the deleted tenant")
	})
}

// TestLRSOAuthSurvivesRestart: an issued token and its client outlive the process.
func TestLRSOAuthSurvivesRestart(t *testing.T) {
	for name, mode := range modes(t) {
		t.Run(name, func(t *testing.T) {
			cfg := mode(t)
			e := start(t, cfg)
			e.createTenant("acme", true)
			c := e.oauthClient("acme", map[string]any{"scopes": []string{"all"}})
			tok := e.bearerToken(c, "")
			e.expect(e.do("POST", lrs+"/acme/statements", tok, statement("ann@example.com", "attempted", "http://example.com/a"), v200...), 200, "write before the restart")
			stop(t, e)

			e = start(t, cfg)
			if res := e.query(lrs+"/acme/statements", tok, v200); len(res.Statements) != 1 {
				t.Fatalf("after the restart the token reads %d statements", len(res.Statements))
			}
			e.bearerToken(c, "statements/read")
		})
	}
}

// stop shuts a started env down before its test ends (its cleanup then finds it stopped).
func stop(t *testing.T, e *env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = e.app.Server.App().Shutdown()
	_ = e.app.Queue.Shutdown(ctx)
	_ = e.app.IndexQueue.Shutdown(ctx)
	if err := e.app.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}
