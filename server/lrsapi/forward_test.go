package lrsapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

func TestStatementForwarding(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("fwd", true)
		e.CreateTenant("fwdother", true)
		e.SetTenant("fwd", "TinCanStatementForwardSleepTime", "50")
		e.SetTenant("fwd", "TinCanStatementForwardStmtBatchSize", "3")
		rc := servertest.NewXAPIReceiver(t, "dest-user", "dest-pass")

		// Statements before the pair exists are forwarded too; the filter keeps the "completed" ones.
		want := e.PostVerbStatements("fwd", "completed", 4)
		// A voided statement is forwarded in its place, and its voiding statement after it (a
		// voider matches the filter its target meets: the StatementRef rule).
		voider := map[string]any{"actor": map[string]any{"mbox": "mailto:admin@example.com"},
			"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/voided"},
			"object": map[string]any{"objectType": "StatementRef", "id": want[1]}}
		r := e.Do("POST", servertest.LRS+"/fwd/statements", servertest.Root, voider, servertest.V103...)
		e.Expect(r, 200, "void a statement")
		var vids []string
		r.JSON(t, &vids)
		want = append(want, vids...)
		e.PostVerbStatements("fwd", "attempted", 3)
		e.PostVerbStatements("fwdother", "completed", 2) // another tenant's store is not the source
		p := e.CreatePair("fwd", map[string]any{"source_query": "verb=http://adlnet.gov/expapi/verbs/completed",
			"destination_url": rc.Endpoint(), "destination_credentials": map[string]any{"username": "dest-user", "password": "dest-pass"}})
		if p.ID == "" || !p.Enabled || p.TenantID != "fwd" || p.DestinationCredentials["password"] != nil {
			t.Fatalf("created pair: %+v", p)
		}
		want = append(want, e.PostVerbStatements("fwd", "completed", 3)...)
		e.PostVerbStatements("fwd", "attempted", 2)
		got := rc.WaitFor(len(want))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("receiver got\n%v\nwant (stored order)\n%v", got, want)
		}
		_, dups, batches := rc.Got()
		for _, n := range batches {
			if n > 3 {
				t.Errorf("a batch of %d statements; TinCanStatementForwardStmtBatchSize is 3 (batches %v)", n, batches)
			}
		}
		if dups != 0 {
			t.Errorf("%d duplicates on the wire without any failure", dups)
		}
		servertest.Eventually(t, 10*time.Second, "the status to count the forwarded statements", func() bool {
			return e.Pair("fwd", p.ID).Status.Forwarded == int64(len(want))
		})
		if st := e.Pair("fwd", p.ID).Status; st.Position == nil || st.Failures != 0 || st.LastError != "" {
			t.Fatalf("status after success: %+v", st)
		}

		// The destination fails: the pair backs off, keeps its position, then catches up.
		rc.Set(http.StatusServiceUnavailable, 0)
		more := e.PostVerbStatements("fwd", "completed", 2)
		var failed servertest.PairView
		servertest.Eventually(t, 10*time.Second, "the failure to be recorded", func() bool {
			failed = e.Pair("fwd", p.ID)
			return failed.Status.Failures >= 1
		})
		if failed.Status.NextAttempt == nil || failed.Status.LastAttempt == nil || !strings.Contains(failed.Status.LastError, "503") ||
			failed.Status.Forwarded != int64(len(want)) {
			t.Fatalf("status after a failure: %+v", failed.Status)
		}
		rc.Set(0, 0)
		want = append(want, more...)
		got = rc.WaitFor(len(want))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("after recovery the receiver got\n%v\nwant\n%v", got, want)
		}
		servertest.Eventually(t, 10*time.Second, "the failures to be cleared", func() bool {
			st := e.Pair("fwd", p.ID).Status
			return st.Failures == 0 && st.LastError == "" && st.NextAttempt == nil
		})

		// Update: a new destination (the password is kept when omitted) continues after the
		// position; the first destination gets nothing more.
		rc2 := servertest.NewXAPIReceiver(t, "dest-user", "dest-pass")
		r = e.Do("PUT", servertest.PairsPath("fwd")+"/"+p.ID, servertest.Root, map[string]any{"source_query": "verb=http://adlnet.gov/expapi/verbs/completed",
			"destination_url": rc2.Endpoint(), "destination_credentials": map[string]any{"username": "dest-user"}})
		e.Expect(r, 200, "update pair")
		later := e.PostVerbStatements("fwd", "completed", 2)
		if got := rc2.WaitFor(2); strings.Join(got, ",") != strings.Join(later, ",") {
			t.Fatalf("new destination got %v, want %v", got, later)
		}
		if got, _, _ := rc.Got(); len(got) != len(want) {
			t.Fatalf("old destination got %d statements after the update, want %d", len(got), len(want))
		}

		// Wrong credentials: the destination refuses (401) and the pair backs off.
		e.Expect(e.Do("PUT", servertest.PairsPath("fwd")+"/"+p.ID, servertest.Root, map[string]any{"destination_url": rc2.Endpoint(),
			"destination_credentials": map[string]any{"username": "dest-user", "password": "wrong"}}), 200, "update credentials")
		e.PostVerbStatements("fwd", "completed", 1)
		servertest.Eventually(t, 10*time.Second, "the 401 to be recorded", func() bool {
			return strings.Contains(e.Pair("fwd", p.ID).Status.LastError, "401")
		})

		// List, isolation and delete.
		r = e.Do("GET", servertest.PairsPath("fwd"), servertest.Root, nil)
		e.Expect(r, 200, "list pairs")
		var list struct {
			Pairs []servertest.PairView `json:"forwarding_pairs"`
		}
		r.JSON(t, &list)
		if len(list.Pairs) != 1 || list.Pairs[0].ID != p.ID {
			t.Fatalf("list: %s", r.Body)
		}
		e.Expect(e.Do("GET", servertest.PairsPath("fwdother")+"/"+p.ID, servertest.Root, nil), 404, "another tenant's pair")
		r = e.Do("GET", servertest.PairsPath("fwdother"), servertest.Root, nil)
		e.Expect(r, 200, "list other")
		if !strings.Contains(string(r.Body), `"forwarding_pairs":[]`) {
			t.Fatalf("other tenant lists %s", r.Body)
		}
		key, secret := e.Credential("fwd")
		e.Expect(e.Do("GET", servertest.PairsPath("fwd"), servertest.Basic(key, secret), nil), 403, "a tenant credential manages no pairs")
		e.Expect(e.Do("DELETE", servertest.PairsPath("fwd")+"/"+p.ID, servertest.Root, nil), 204, "delete pair")
		e.Expect(e.Do("DELETE", servertest.PairsPath("fwd")+"/"+p.ID, servertest.Root, nil), 404, "delete again")
		e.Expect(e.Do("GET", servertest.PairsPath("fwd")+"/"+p.ID, servertest.Root, nil), 404, "deleted pair")
		e.Expect(e.Do("PUT", servertest.PairsPath("fwd")+"/"+p.ID, servertest.Root, map[string]any{"destination_url": rc.Endpoint()}), 404, "update deleted pair")
	})
}

func TestStatementForwardingValidation(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("fwdv", true)
		e.SetTenant("fwdv", "TinCanStatementForwardSleepTime", "50")
		ok := map[string]any{"id": "p1", "destination_url": "http://127.0.0.1:9/xapi"}
		e.CreatePair("fwdv", ok)
		e.Expect(e.Do("POST", servertest.PairsPath("fwdv"), servertest.Root, ok), 409, "duplicate id")
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
			r := e.Do("POST", servertest.PairsPath("fwdv"), servertest.Root, body)
			e.Expect(r, 400, name)
		}
		e.Expect(e.Do("PUT", servertest.PairsPath("fwdv")+"/p1", servertest.Root, map[string]any{"id": "p2", "destination_url": "http://example.com/xapi"}), 400, "id differs")
		e.Expect(e.Do("GET", servertest.PairsPath("fwdv")+"/nope", servertest.Root, nil), 404, "unknown pair")
		e.Expect(e.Do("GET", servertest.PairsPath("nosuchtenant"), servertest.Root, nil), 404, "unknown tenant")

		// The SSRF guard: a link-local destination (the cloud metadata address) is refused
		// when the pair is saved (the dialer refuses it again at send time: workers/outbound).
		r := e.Do("POST", servertest.PairsPath("fwdv"), servertest.Root, map[string]any{"id": "meta", "destination_url": "http://169.254.169.254/xapi"})
		e.Expect(r, 400, "cloud metadata destination")
		if !strings.Contains(r.Message(), "cloud metadata address") {
			t.Fatalf("the refusal does not name the rule: %s", r.Body)
		}
		e.Expect(e.Do("GET", servertest.PairsPath("fwdv")+"/meta", servertest.Root, nil), 404, "the refused pair was not saved")
	})
}

// TestStatementForwardingToLectern forwards to a real record store: another tenant of this
// Lectern, over loopback. Statements written as 1.0.3 and 2.0.0, a voided one and its voider
// all arrive once, under their ids; the destination's GET shows what the source's does.
func TestStatementForwardingToLectern(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("fwdsrc", true)
		e.CreateTenant("fwdsink", true)
		e.SetTenant("fwdsrc", "TinCanStatementForwardSleepTime", "50")
		ids := e.PostVerbStatements("fwdsrc", "completed", 3)
		r := e.Do("POST", servertest.LRS+"/fwdsrc/statements", servertest.Root, servertest.Statement("bob@example.com", "attempted", "http://example.com/fwd/v2"), servertest.V200...)
		e.Expect(r, 200, "post a 2.0.0 statement")
		var more []string
		r.JSON(t, &more)
		ids = append(ids, more...)
		r = e.Do("POST", servertest.LRS+"/fwdsrc/statements", servertest.Root, map[string]any{"actor": map[string]any{"mbox": "mailto:admin@example.com"},
			"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/voided"},
			"object": map[string]any{"objectType": "StatementRef", "id": ids[0]}}, servertest.V103...)
		e.Expect(r, 200, "void")
		r.JSON(t, &more)
		ids = append(ids, more...)

		p := e.CreatePair("fwdsrc", map[string]any{"destination_url": e.URL + servertest.LRS + "/fwdsink",
			"destination_credentials": map[string]any{"username": servertest.RootUser, "password": servertest.RootPass}})
		var last servertest.PairView
		servertest.Eventually(t, 20*time.Second, "every statement at the destination", func() bool {
			last = e.Pair("fwdsrc", p.ID)
			if last.Status.LastError != "" {
				t.Logf("status: %+v", last.Status)
			}
			return last.Status.Forwarded == int64(len(ids))
		})
		if st := e.Pair("fwdsrc", p.ID).Status; st.Failures != 0 {
			t.Fatalf("status: %+v", st)
		}
		src := e.Query(servertest.LRS+"/fwdsrc/statements?ascending=true", servertest.Root, servertest.V103)
		sink := e.Query(servertest.LRS+"/fwdsink/statements?ascending=true", servertest.Root, servertest.V103)
		idsOf := func(res servertest.StatementResult) string {
			var out []string
			for _, st := range res.Statements {
				out = append(out, st["id"].(string))
			}
			return strings.Join(out, ",")
		}
		if idsOf(sink) != idsOf(src) || len(sink.Statements) != len(ids)-1 {
			t.Fatalf("destination shows %s, source %s", idsOf(sink), idsOf(src))
		}
		e.Expect(e.Do("GET", servertest.LRS+"/fwdsink/statements?voidedStatementId="+ids[0], servertest.Root, nil, servertest.V103...), 200, "voided statement at the destination")
	})
}
