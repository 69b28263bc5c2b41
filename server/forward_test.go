package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// xapiReceiver is a destination xAPI endpoint on loopback (allowed by the test
// configuration's outbound policy). It keeps each statement id once, in arrival order, and
// counts the ids it received again: what a real LRS would absorb as "same id, same statement".
type xapiReceiver struct {
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

func newXAPIReceiver(t *testing.T, user, pass string) *xapiReceiver {
	rc := &xapiReceiver{t: t, user: user, pass: pass, seen: map[string]bool{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *xapiReceiver) endpoint() string { return rc.srv.URL + "/xapi/" }

func (rc *xapiReceiver) serve(w http.ResponseWriter, r *http.Request) {
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

func (rc *xapiReceiver) set(status int, delay time.Duration) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status, rc.delay = status, delay
}

func (rc *xapiReceiver) got() (ids []string, dups int, batches []int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.ids...), rc.dups, append([]int(nil), rc.batches...)
}

// waitFor polls until the receiver holds n statements and returns them.
func (rc *xapiReceiver) waitFor(n int) []string {
	rc.t.Helper()
	var ids []string
	eventually(rc.t, 20*time.Second, "the receiver to hold the forwarded statements", func() bool {
		ids, _, _ = rc.got()
		return len(ids) >= n
	})
	return ids
}

type pairView struct {
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

func pairsPath(tn string) string { return "/api/v1/app_management/tenants/" + tn + "/forwarding_pairs" }

func (e *env) pair(tn, id string) pairView {
	e.t.Helper()
	r := e.do("GET", pairsPath(tn)+"/"+id, root, nil)
	e.expect(r, 200, "get pair")
	var p pairView
	r.json(e.t, &p)
	return p
}

func (e *env) createPair(tn string, body map[string]any) pairView {
	e.t.Helper()
	r := e.do("POST", pairsPath(tn), root, body)
	e.expect(r, 201, "create pair")
	var p pairView
	r.json(e.t, &p)
	return p
}

// postVerbStatements stores statements (verb v, one object each) and returns their ids in order.
func (e *env) postVerbStatements(tn, verb string, n int) []string {
	e.t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		st := statement("ann@example.com", verb, "http://example.com/fwd/"+verb)
		r := e.do("POST", lrs+"/"+tn+"/statements", root, st, v103...)
		e.expect(r, 200, "post statement")
		var got []string
		r.json(e.t, &got)
		ids = append(ids, got...)
	}
	return ids
}

func (e *env) setTenant(tn, id, value string) {
	e.t.Helper()
	e.expect(e.do("PUT", "/engine/api/v1/"+tn+"/configuration/"+id, root, map[string]any{"value": value}), 204, "set "+id)
}

func TestStatementForwarding(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("fwd", true)
		e.createTenant("fwdother", true)
		e.setTenant("fwd", "TinCanStatementForwardSleepTime", "50")
		e.setTenant("fwd", "TinCanStatementForwardStmtBatchSize", "3")
		rc := newXAPIReceiver(t, "dest-user", "dest-pass")

		// Statements before the pair exists are forwarded too; the filter keeps the "completed" ones.
		want := e.postVerbStatements("fwd", "completed", 4)
		// A voided statement is forwarded in its place, and its voiding statement after it (a
		// voider matches the filter its target meets: the StatementRef rule).
		voider := map[string]any{"actor": map[string]any{"mbox": "mailto:admin@example.com"},
			"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/voided"},
			"object": map[string]any{"objectType": "StatementRef", "id": want[1]}}
		r := e.do("POST", lrs+"/fwd/statements", root, voider, v103...)
		e.expect(r, 200, "void a statement")
		var vids []string
		r.json(t, &vids)
		want = append(want, vids...)
		e.postVerbStatements("fwd", "attempted", 3)
		e.postVerbStatements("fwdother", "completed", 2) // another tenant's store is not the source
		p := e.createPair("fwd", map[string]any{"source_query": "verb=http://adlnet.gov/expapi/verbs/completed",
			"destination_url": rc.endpoint(), "destination_credentials": map[string]any{"username": "dest-user", "password": "dest-pass"}})
		if p.ID == "" || !p.Enabled || p.TenantID != "fwd" || p.DestinationCredentials["password"] != nil {
			t.Fatalf("created pair: %+v", p)
		}
		want = append(want, e.postVerbStatements("fwd", "completed", 3)...)
		e.postVerbStatements("fwd", "attempted", 2)
		got := rc.waitFor(len(want))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("receiver got\n%v\nwant (stored order)\n%v", got, want)
		}
		_, dups, batches := rc.got()
		for _, n := range batches {
			if n > 3 {
				t.Errorf("a batch of %d statements; TinCanStatementForwardStmtBatchSize is 3 (batches %v)", n, batches)
			}
		}
		if dups != 0 {
			t.Errorf("%d duplicates on the wire without any failure", dups)
		}
		eventually(t, 10*time.Second, "the status to count the forwarded statements", func() bool {
			return e.pair("fwd", p.ID).Status.Forwarded == int64(len(want))
		})
		if st := e.pair("fwd", p.ID).Status; st.Position == nil || st.Failures != 0 || st.LastError != "" {
			t.Fatalf("status after success: %+v", st)
		}

		// The destination fails: the pair backs off, keeps its position, then catches up.
		rc.set(http.StatusServiceUnavailable, 0)
		more := e.postVerbStatements("fwd", "completed", 2)
		var failed pairView
		eventually(t, 10*time.Second, "the failure to be recorded", func() bool {
			failed = e.pair("fwd", p.ID)
			return failed.Status.Failures >= 1
		})
		if failed.Status.NextAttempt == nil || failed.Status.LastAttempt == nil || !strings.Contains(failed.Status.LastError, "503") ||
			failed.Status.Forwarded != int64(len(want)) {
			t.Fatalf("status after a failure: %+v", failed.Status)
		}
		rc.set(0, 0)
		want = append(want, more...)
		got = rc.waitFor(len(want))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("after recovery the receiver got\n%v\nwant\n%v", got, want)
		}
		eventually(t, 10*time.Second, "the failures to be cleared", func() bool {
			st := e.pair("fwd", p.ID).Status
			return st.Failures == 0 && st.LastError == "" && st.NextAttempt == nil
		})

		// Update: a new destination (the password is kept when omitted) continues after the
		// position; the first destination gets nothing more.
		rc2 := newXAPIReceiver(t, "dest-user", "dest-pass")
		r = e.do("PUT", pairsPath("fwd")+"/"+p.ID, root, map[string]any{"source_query": "verb=http://adlnet.gov/expapi/verbs/completed",
			"destination_url": rc2.endpoint(), "destination_credentials": map[string]any{"username": "dest-user"}})
		e.expect(r, 200, "update pair")
		later := e.postVerbStatements("fwd", "completed", 2)
		if got := rc2.waitFor(2); strings.Join(got, ",") != strings.Join(later, ",") {
			t.Fatalf("new destination got %v, want %v", got, later)
		}
		if got, _, _ := rc.got(); len(got) != len(want) {
			t.Fatalf("old destination got %d statements after the update, want %d", len(got), len(want))
		}

		// Wrong credentials: the destination refuses (401) and the pair backs off.
		e.expect(e.do("PUT", pairsPath("fwd")+"/"+p.ID, root, map[string]any{"destination_url": rc2.endpoint(),
			"destination_credentials": map[string]any{"username": "dest-user", "password": "wrong"}}), 200, "update credentials")
		e.postVerbStatements("fwd", "completed", 1)
		eventually(t, 10*time.Second, "the 401 to be recorded", func() bool {
			return strings.Contains(e.pair("fwd", p.ID).Status.LastError, "401")
		})

		// List, isolation and delete.
		r = e.do("GET", pairsPath("fwd"), root, nil)
		e.expect(r, 200, "list pairs")
		var list struct {
			Pairs []pairView `json:"forwarding_pairs"`
		}
		r.json(t, &list)
		if len(list.Pairs) != 1 || list.Pairs[0].ID != p.ID {
			t.Fatalf("list: %s", r.Body)
		}
		e.expect(e.do("GET", pairsPath("fwdother")+"/"+p.ID, root, nil), 404, "another tenant's pair")
		r = e.do("GET", pairsPath("fwdother"), root, nil)
		e.expect(r, 200, "list other")
		if !strings.Contains(string(r.Body), `"forwarding_pairs":[]`) {
			t.Fatalf("other tenant lists %s", r.Body)
		}
		key, secret := e.credential("fwd")
		e.expect(e.do("GET", pairsPath("fwd"), basic(key, secret), nil), 403, "a tenant credential manages no pairs")
		e.expect(e.do("DELETE", pairsPath("fwd")+"/"+p.ID, root, nil), 204, "delete pair")
		e.expect(e.do("DELETE", pairsPath("fwd")+"/"+p.ID, root, nil), 404, "delete again")
		e.expect(e.do("GET", pairsPath("fwd")+"/"+p.ID, root, nil), 404, "deleted pair")
		e.expect(e.do("PUT", pairsPath("fwd")+"/"+p.ID, root, map[string]any{"destination_url": rc.endpoint()}), 404, "update deleted pair")
	})
}

func TestStatementForwardingValidation(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("fwdv", true)
		e.setTenant("fwdv", "TinCanStatementForwardSleepTime", "50")
		ok := map[string]any{"id": "p1", "destination_url": "http://127.0.0.1:9/xapi"}
		e.createPair("fwdv", ok)
		e.expect(e.do("POST", pairsPath("fwdv"), root, ok), 409, "duplicate id")
		for name, body := range map[string]any{
			"no url":           map[string]any{},
			"relative url":     map[string]any{"destination_url": "/xapi"},
			"ftp url":          map[string]any{"destination_url": "ftp://example.com/xapi"},
			"userinfo":         map[string]any{"destination_url": "http://u:p@example.com/xapi"},
			"query in url":     map[string]any{"destination_url": "http://example.com/xapi?x=1"},
			"bad verb":         map[string]any{"destination_url": "http://example.com/xapi", "source_query": "verb=not an iri"},
			"bad agent":        map[string]any{"destination_url": "http://example.com/xapi", "source_query": "agent=x"},
			"paging parameter": map[string]any{"destination_url": "http://example.com/xapi", "source_query": "limit=5"},
			"unknown property": map[string]any{"destination_url": "http://example.com/xapi", "source": "x"},
			"colon in user":    map[string]any{"destination_url": "http://example.com/xapi", "destination_credentials": map[string]any{"username": "a:b"}},
			"slash in id":      map[string]any{"id": "a/b", "destination_url": "http://example.com/xapi"},
		} {
			r := e.do("POST", pairsPath("fwdv"), root, body)
			e.expect(r, 400, name)
		}
		e.expect(e.do("PUT", pairsPath("fwdv")+"/p1", root, map[string]any{"id": "p2", "destination_url": "http://example.com/xapi"}), 400, "id differs")
		e.expect(e.do("GET", pairsPath("fwdv")+"/nope", root, nil), 404, "unknown pair")
		e.expect(e.do("GET", pairsPath("nosuchtenant"), root, nil), 404, "unknown tenant")

		// The SSRF guard: a link-local destination (the cloud metadata address) is refused
		// when the pair is saved (the dialer refuses it again at send time: workers/outbound).
		r := e.do("POST", pairsPath("fwdv"), root, map[string]any{"id": "meta", "destination_url": "http://169.254.169.254/xapi"})
		e.expect(r, 400, "cloud metadata destination")
		if !strings.Contains(r.message(), "cloud metadata address") {
			t.Fatalf("the refusal does not name the rule: %s", r.Body)
		}
		e.expect(e.do("GET", pairsPath("fwdv")+"/meta", root, nil), 404, "the refused pair was not saved")
	})
}

// TestStatementForwardingToLectern forwards to a real record store: another tenant of this
// Lectern, over loopback. Statements written as 1.0.3 and 2.0.0, a voided one and its voider
// all arrive once, under their ids; the destination's GET shows what the source's does.
func TestStatementForwardingToLectern(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("fwdsrc", true)
		e.createTenant("fwdsink", true)
		e.setTenant("fwdsrc", "TinCanStatementForwardSleepTime", "50")
		ids := e.postVerbStatements("fwdsrc", "completed", 3)
		r := e.do("POST", lrs+"/fwdsrc/statements", root, statement("bob@example.com", "attempted", "http://example.com/fwd/v2"), v200...)
		e.expect(r, 200, "post a 2.0.0 statement")
		var more []string
		r.json(t, &more)
		ids = append(ids, more...)
		r = e.do("POST", lrs+"/fwdsrc/statements", root, map[string]any{"actor": map[string]any{"mbox": "mailto:admin@example.com"},
			"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/voided"},
			"object": map[string]any{"objectType": "StatementRef", "id": ids[0]}}, v103...)
		e.expect(r, 200, "void")
		r.json(t, &more)
		ids = append(ids, more...)

		p := e.createPair("fwdsrc", map[string]any{"destination_url": e.url + lrs + "/fwdsink",
			"destination_credentials": map[string]any{"username": rootUser, "password": rootPass}})
		var last pairView
		eventually(t, 20*time.Second, "every statement at the destination", func() bool {
			last = e.pair("fwdsrc", p.ID)
			if last.Status.LastError != "" {
				t.Logf("status: %+v", last.Status)
			}
			return last.Status.Forwarded == int64(len(ids))
		})
		if st := e.pair("fwdsrc", p.ID).Status; st.Failures != 0 {
			t.Fatalf("status: %+v", st)
		}
		src := e.query(lrs+"/fwdsrc/statements?ascending=true", root, v103)
		sink := e.query(lrs+"/fwdsink/statements?ascending=true", root, v103)
		idsOf := func(res statementResult) string {
			var out []string
			for _, st := range res.Statements {
				out = append(out, st["id"].(string))
			}
			return strings.Join(out, ",")
		}
		if idsOf(sink) != idsOf(src) || len(sink.Statements) != len(ids)-1 {
			t.Fatalf("destination shows %s, source %s", idsOf(sink), idsOf(src))
		}
		e.expect(e.do("GET", lrs+"/fwdsink/statements?voidedStatementId="+ids[0], root, nil, v103...), 200, "voided statement at the destination")
	})
}
