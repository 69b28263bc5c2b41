package servertest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/server"
)

// LRS is the record store's base path.
const LRS = "/lrs/TCAPI"

var (
	V103 = []string{"X-Experience-API-Version", "1.0.3"}
	V200 = []string{"X-Experience-API-Version", "2.0.0"}
)

// Statement is a minimal valid statement: actor's mbox, an ADL verb and an activity.
func Statement(actor, verb, object string) map[string]any {
	return map[string]any{"actor": map[string]any{"mbox": "mailto:" + actor},
		"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/" + verb, "display": map[string]any{"en-US": verb}},
		"object": map[string]any{"id": object, "definition": map[string]any{"name": map[string]any{"en-US": "Activity", "de-DE": "Aktivität"}}}}
}

// StatementResult is a page of a statement query.
type StatementResult struct {
	Statements []map[string]any `json:"statements"`
	More       string           `json:"more"`
}

// Query gets a statement query and fails the test unless it answers 200.
func (e *Env) Query(path string, a Auth, version []string) StatementResult {
	e.T.Helper()
	r := e.Do("GET", path, a, nil, version...)
	e.Expect(r, 200, "GET "+path)
	var res StatementResult
	r.JSON(e.T, &res)
	return res
}

// AuthFromHeader is an Auth that sends the Authorization header h.
func AuthFromHeader(h string) Auth { return Auth{Header: h} }

// OAuthClient is an LRS OAuth client as the admin API shows it.
type OAuthClient struct {
	ID       string   `json:"client_id"`
	Secret   string   `json:"client_secret"`
	Name     string   `json:"name"`
	Tenant   string   `json:"tenant_id"`
	Scopes   []string `json:"scopes"`
	Lifetime int      `json:"token_lifetime"`
}

// OAuthError is an OAuth error response.
type OAuthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
	Message     string `json:"message"`
}

// OAuthClients is the admin path of tenantID's LRS OAuth clients.
func OAuthClients(tenantID string) string {
	return "/api/v1/app_management/tenants/" + tenantID + "/lrs_oauth_clients"
}

// OAuthClient registers a client of tenantID through the admin API.
func (e *Env) OAuthClient(tenantID string, body map[string]any) OAuthClient {
	e.T.Helper()
	r := e.Do("POST", OAuthClients(tenantID), Root, body)
	e.Expect(r, 201, "register OAuth client")
	var c OAuthClient
	r.JSON(e.T, &c)
	if c.ID == "" || c.Secret == "" || c.Tenant != tenantID {
		e.T.Fatalf("OAuth client without id, secret or tenant: %s", r.Body)
	}
	return c
}

// TokenRequest posts a form to the token endpoint.
func (e *Env) TokenRequest(a Auth, form url.Values) Resp {
	e.T.Helper()
	return e.Do("POST", server.OAuthTokenPath, a, form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
}

// ExpectOAuthError fails the test unless r is an OAuth error with status and code.
func ExpectOAuthError(t *testing.T, r Resp, status int, code, what string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
	}
	var oe OAuthError
	if err := json.Unmarshal(r.Body, &oe); err != nil || oe.Error != code || oe.Description == "" || oe.Message == "" {
		t.Fatalf("%s: want error %s with a description: %s", what, code, r.Body)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: Cache-Control %q, want no-store", what, r.Header.Get("Cache-Control"))
	}
}

// Stop shuts a started env down before its test ends (its cleanup then finds it stopped).
func Stop(t *testing.T, e *Env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = e.App.Server.App().Shutdown()
	_ = e.App.Queue.Shutdown(ctx)
	_ = e.App.IndexQueue.Shutdown(ctx)
	if err := e.App.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// XAPIReceiver is a destination xAPI endpoint on loopback (allowed by the test
// configuration's outbound policy). It keeps each statement id once, in arrival order, and
// counts the ids it received again: what a real LRS would absorb as "same id, same statement".
type XAPIReceiver struct {
	t        *testing.T
	srv      *httptest.Server
	user     string
	pass     string
	mu       sync.Mutex
	ids      []string
	seen     map[string]bool
	dups     int
	batches  []int
	status   int           // answer instead of storing, when not 0
	delay    time.Duration // before answering
	versions []string
}

// NewXAPIReceiver starts an XAPIReceiver that takes Basic user:pass; the test's end stops it.
func NewXAPIReceiver(t *testing.T, user, pass string) *XAPIReceiver {
	rc := &XAPIReceiver{t: t, user: user, pass: pass, seen: map[string]bool{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

// Endpoint is the receiver's xAPI endpoint.
func (rc *XAPIReceiver) Endpoint() string { return rc.srv.URL + "/xapi/" }

func (rc *XAPIReceiver) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/xapi/statements" {
		http.Error(w, "not here", http.StatusNotFound)
		return
	}
	if u, p, ok := r.BasicAuth(); !ok || u != rc.user || p != rc.pass {
		http.Error(w, "bad credentials", http.StatusUnauthorized)
		return
	}
	rc.mu.Lock()
	status, delay := rc.status, rc.delay
	rc.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if status != 0 {
		http.Error(w, "unavailable", status)
		return
	}
	var batch []struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&batch); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.batches = append(rc.batches, len(batch))
	rc.versions = append(rc.versions, r.Header.Get("X-Experience-API-Version"))
	out := make([]string, 0, len(batch))
	for _, st := range batch {
		if rc.seen[st.ID] {
			rc.dups++
		} else {
			rc.seen[st.ID] = true
			rc.ids = append(rc.ids, st.ID)
		}
		out = append(out, st.ID)
	}
	_ = json.NewEncoder(w).Encode(out)
}

// Set makes the receiver answer status (0: store) after delay.
func (rc *XAPIReceiver) Set(status int, delay time.Duration) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status, rc.delay = status, delay
}

// Got returns the statement ids received, how many came again, and the batch sizes.
func (rc *XAPIReceiver) Got() (ids []string, dups int, batches []int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.ids...), rc.dups, append([]int(nil), rc.batches...)
}

// WaitFor polls until the receiver holds n statements and returns them.
func (rc *XAPIReceiver) WaitFor(n int) []string {
	rc.t.Helper()
	var ids []string
	Eventually(rc.t, 20*time.Second, "the receiver to hold the forwarded statements", func() bool {
		ids, _, _ = rc.Got()
		return len(ids) >= n
	})
	return ids
}

// PairView is a forwarding pair as the admin API shows it.
type PairView struct {
	ID                     string `json:"id"`
	TenantID               string `json:"tenant_id"`
	SourceQuery            string `json:"source_query"`
	DestinationURL         string `json:"destination_url"`
	Enabled                bool   `json:"enabled"`
	DestinationCredentials map[string]any
	Status                 struct {
		Position    *time.Time `json:"position"`
		Forwarded   int64      `json:"forwarded"`
		Failures    int        `json:"failures"`
		LastAttempt *time.Time `json:"last_attempt"`
		NextAttempt *time.Time `json:"next_attempt"`
		LastError   string     `json:"last_error"`
	} `json:"status"`
}

// PairsPath is the admin path of tenant tn's forwarding pairs.
func PairsPath(tn string) string { return "/api/v1/app_management/tenants/" + tn + "/forwarding_pairs" }

// Pair reads forwarding pair id of tenant tn.
func (e *Env) Pair(tn, id string) PairView {
	e.T.Helper()
	r := e.Do("GET", PairsPath(tn)+"/"+id, Root, nil)
	e.Expect(r, 200, "get pair")
	var p PairView
	r.JSON(e.T, &p)
	return p
}

// CreatePair creates a forwarding pair of tenant tn.
func (e *Env) CreatePair(tn string, body map[string]any) PairView {
	e.T.Helper()
	r := e.Do("POST", PairsPath(tn), Root, body)
	e.Expect(r, 201, "create pair")
	var p PairView
	r.JSON(e.T, &p)
	return p
}

// PostVerbStatements stores statements (verb v, one object each) and returns their ids in order.
func (e *Env) PostVerbStatements(tn, verb string, n int) []string {
	e.T.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		st := Statement("ann@example.com", verb, "http://example.com/fwd/"+verb)
		r := e.Do("POST", LRS+"/"+tn+"/statements", Root, st, V103...)
		e.Expect(r, 200, "post statement")
		var got []string
		r.JSON(e.T, &got)
		ids = append(ids, got...)
	}
	return ids
}

// SetTenant sets configuration setting id of tenant tn.
func (e *Env) SetTenant(tn, id, value string) {
	e.T.Helper()
	e.Expect(e.Do("PUT", "/engine/api/v1/"+tn+"/configuration/"+id, Root, map[string]any{"value": value}), 204, "set "+id)
}
