package engineapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// forwardSettingEffects show the statement forwarding settings through HTTP: a forwarding
// pair to a loopback receiver (forward_test.go), before and after the PUT. Each pair starts
// at the beginning of the tenant's store, so a second pair forwards the same statements
// under the new value.
var forwardSettingEffects = []settingEffect{
	{"TinCanStatementForwardStmtBatchSize", func(t *testing.T, e *servertest.Env, tn string) {
		ids := e.PostVerbStatements(tn, "completed", 5)
		batchesOf := func(name string) []int {
			rc := servertest.NewXAPIReceiver(t, "u", "p")
			e.CreatePair(tn, map[string]any{"id": name, "destination_url": rc.Endpoint(),
				"destination_credentials": map[string]any{"username": "u", "password": "p"}})
			rc.WaitFor(len(ids))
			_, _, batches := rc.Got()
			return batches
		}
		if got := batchesOf("default"); !slices.Equal(got, []int{5}) {
			t.Fatalf("default batches %v, want one batch of 5 (default 100)", got)
		}
		e.SetTenant(tn, "TinCanStatementForwardStmtBatchSize", "2")
		if got := batchesOf("two"); !slices.Equal(got, []int{2, 2, 1}) {
			t.Fatalf("batches %v with a batch size of 2, want [2 2 1]", got)
		}
	}},
	{"TinCanStatementForwardSleepTime", func(t *testing.T, e *servertest.Env, tn string) {
		// The first wait after a failure is the sleep time: next_attempt - last_attempt.
		e.PostVerbStatements(tn, "completed", 1)
		firstWait := func(name string) time.Duration {
			rc := servertest.NewXAPIReceiver(t, "u", "p")
			rc.Set(http.StatusServiceUnavailable, 0)
			e.CreatePair(tn, map[string]any{"id": name, "destination_url": rc.Endpoint(),
				"destination_credentials": map[string]any{"username": "u", "password": "p"}})
			var p servertest.PairView
			servertest.Eventually(t, 10*time.Second, "a failed forward", func() bool {
				p = e.Pair(tn, name)
				return p.Status.Failures >= 1
			})
			return p.Status.NextAttempt.Sub(*p.Status.LastAttempt)
		}
		if got := firstWait("default"); got != 10*time.Second {
			t.Fatalf("default first wait %v, want 10s", got)
		}
		e.SetTenant(tn, "TinCanStatementForwardSleepTime", "1500")
		if got := firstWait("short"); got != 1500*time.Millisecond {
			t.Fatalf("first wait %v with a sleep time of 1500 ms", got)
		}
	}},
	{"TinCanStatementForwardWebTimeout", func(t *testing.T, e *servertest.Env, tn string) {
		// A destination answering after 1.5 s: in time by default (30 s), late at 300 ms.
		e.PostVerbStatements(tn, "completed", 1)
		run := func(name string) servertest.PairView {
			rc := servertest.NewXAPIReceiver(t, "u", "p")
			rc.Set(0, 1500*time.Millisecond)
			e.CreatePair(tn, map[string]any{"id": name, "destination_url": rc.Endpoint(),
				"destination_credentials": map[string]any{"username": "u", "password": "p"}})
			var p servertest.PairView
			servertest.Eventually(t, 15*time.Second, "the forward to end", func() bool {
				p = e.Pair(tn, name)
				return p.Status.Forwarded > 0 || p.Status.Failures > 0
			})
			return p
		}
		if p := run("default"); p.Status.Forwarded != 1 {
			t.Fatalf("default timeout: %+v", p.Status)
		}
		e.SetTenant(tn, "TinCanStatementForwardWebTimeout", "300")
		p := run("short")
		if p.Status.Failures == 0 || !strings.Contains(strings.ToLower(p.Status.LastError), "time") {
			t.Fatalf("300 ms timeout against a 1.5 s destination: %+v", p.Status)
		}
	}},
}
