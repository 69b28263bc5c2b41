package forward_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/lrs/forward"
	recsqlite "github.com/lectern-lms/lectern/storage/record/sqlite"
	"github.com/lectern-lms/lectern/storage/statements"
	stsqlite "github.com/lectern-lms/lectern/storage/statements/sqlite"
)

// receiver is a destination that answers status (0: stores) and keeps what it got.
type receiver struct {
	mu     sync.Mutex
	status int
	posts  int
	ids    []string
	seen   map[string]int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.posts++
	if rc.status != 0 {
		w.WriteHeader(rc.status)
		return
	}
	var batch []struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&batch); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, st := range batch {
		if rc.seen[st.ID] == 0 {
			rc.ids = append(rc.ids, st.ID)
		}
		rc.seen[st.ID]++
	}
	w.WriteHeader(http.StatusOK)
}

func (rc *receiver) state() (posts int, ids []string, seen map[string]int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	seen = map[string]int{}
	for k, v := range rc.seen {
		seen[k] = v
	}
	return rc.posts, append([]string(nil), rc.ids...), seen
}

func (rc *receiver) answer(status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status = status
}

type fixture struct {
	pairs *forward.Manager
	stmts statements.Store
	rc    *receiver
	url   string
	now   time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	recs, err := recsqlite.Open(filepath.Join(dir, "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { recs.Close() })
	st, err := stsqlite.Open(filepath.Join(dir, "lrs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sealer, err := settings.NewSealer("test")
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{seen: map[string]int{}}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return &fixture{pairs: &forward.Manager{Records: recs, Sealer: sealer}, stmts: st, rc: rc, url: srv.URL, now: time.Now()}
}

func (fx *fixture) forwarder() *forward.Forwarder {
	return &forward.Forwarder{Pairs: fx.pairs, Statements: fx.stmts, Client: http.DefaultClient,
		Now: func() time.Time { return fx.now }}
}

func (fx *fixture) put(t *testing.T, n int) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", time.Now().UnixNano()&0xffffffff, i)
		raw := fmt.Sprintf(`{"id":%q,"actor":{"mbox":"mailto:a@example.com"},"verb":{"id":"http://example.com/v"},"object":{"id":"http://example.com/a"}}`, id)
		if err := fx.stmts.Put(context.Background(), "t1", []*statements.Statement{{ID: id, Raw: json.RawMessage(raw), Hash: id,
			VerbID: "http://example.com/v", Activity: "http://example.com/a"}}, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {4, 5 * time.Second}, {40, 5 * time.Second}} {
		if got := forward.Backoff(c.n, time.Second, 5*time.Second); got != c.want {
			t.Errorf("Backoff(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}

// TestBackoffIsCappedByMaxBackoff walks a failing destination's waits with a moved clock:
// the sleep time doubled per failure up to the cap (TinCanStatementForwardMaxBackoffHours),
// no attempt before the wait is over, and the position kept until the destination recovers.
func TestBackoffIsCappedByMaxBackoff(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	ids := fx.put(t, 3)
	p := &forward.Pair{Tenant: "t1", DestinationURL: fx.url, Enabled: true, Username: "u", Password: "p"}
	if err := fx.pairs.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	f := fx.forwarder()
	cfg := forward.Config{Sleep: time.Hour, MaxBackoff: 3 * time.Hour, Batch: 10, Timeout: 5 * time.Second}
	fx.rc.answer(http.StatusServiceUnavailable)
	for i, want := range []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 3 * time.Hour} {
		if _, err := f.Step(ctx, p, cfg); err != nil {
			t.Fatal(err)
		}
		got, err := fx.pairs.Get(ctx, "t1", p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Failures != i+1 || got.Status.NextAttempt.Sub(got.Status.LastAttempt) != want || !got.Status.Position.IsZero() {
			t.Fatalf("failure %d: %+v, want a wait of %v", i+1, got.Status, want)
		}
		posts, _, _ := fx.rc.state()
		fx.now = got.Status.NextAttempt.Add(-time.Second)
		if _, err := f.Step(ctx, p, cfg); err != nil {
			t.Fatal(err)
		}
		if now, _, _ := fx.rc.state(); now != posts {
			t.Fatalf("attempt before the wait was over")
		}
		fx.now = got.Status.NextAttempt
	}
	fx.rc.answer(0)
	if _, err := f.Step(ctx, p, cfg); err != nil {
		t.Fatal(err)
	}
	got, _ := fx.pairs.Get(ctx, "t1", p.ID)
	_, gotIDs, _ := fx.rc.state()
	if got.Status.Failures != 0 || got.Status.Forwarded != 3 || len(gotIDs) != 3 || gotIDs[2] != ids[2] {
		t.Fatalf("after recovery: %+v, receiver %v", got.Status, gotIDs)
	}
}

// TestPositionSurvivesRestart: a new forwarder over the same stores continues after the last
// acknowledged batch, so nothing is sent twice or skipped.
func TestPositionSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	ids := fx.put(t, 5)
	p := &forward.Pair{Tenant: "t1", DestinationURL: fx.url, Enabled: true, SourceQuery: "verb=http://example.com/v"}
	if err := fx.pairs.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	cfg := forward.Config{Sleep: time.Second, MaxBackoff: time.Hour, Batch: 2, Timeout: 5 * time.Second}
	if out, err := fx.forwarder().Step(ctx, p, cfg); err != nil || out != forward.More {
		t.Fatalf("first step: %v %v", out, err)
	}
	ids = append(ids, fx.put(t, 2)...)
	f := fx.forwarder() // a restarted process
	for {
		out, err := f.Step(ctx, p, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if out != forward.More {
			break
		}
	}
	_, gotIDs, seen := fx.rc.state()
	if fmt.Sprint(gotIDs) != fmt.Sprint(ids) {
		t.Fatalf("receiver %v, want %v", gotIDs, ids)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s sent %d times", id, n)
		}
	}
	// The password is sealed at rest and opened on read.
	p2 := &forward.Pair{Tenant: "t1", DestinationURL: fx.url, Username: "u", Password: "s3cret"}
	if err := fx.pairs.Create(ctx, p2); err != nil {
		t.Fatal(err)
	}
	r, err := fx.pairs.Records.Get(ctx, "t1", forward.KindPair, p2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if json.Valid(r.Data) && (string(r.Data) == "" || strings.Contains(string(r.Data), "s3cret")) {
		t.Fatalf("password stored in clear: %s", r.Data)
	}
	if got, err := fx.pairs.Get(ctx, "t1", p2.ID); err != nil || got.Password != "s3cret" {
		t.Fatalf("password read back: %v %v", got, err)
	}
}

// TestLeaseKeepsOneSender: a second forwarder leaves a pair alone while the first one's
// lease runs, and takes it over (from the position, without a repeat) once it has expired.
func TestLeaseKeepsOneSender(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	ids := fx.put(t, 4)
	p := &forward.Pair{Tenant: "t1", DestinationURL: fx.url, Enabled: true}
	if err := fx.pairs.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	cfg := forward.Config{Sleep: time.Second, MaxBackoff: time.Hour, Batch: 2, Timeout: 5 * time.Second}
	a, b := fx.forwarder(), fx.forwarder()
	a.ID, b.ID = "a", "b"
	if out, err := a.Step(ctx, p, cfg); err != nil || out != forward.More {
		t.Fatalf("a: %v %v", out, err)
	}
	if out, err := b.Step(ctx, p, cfg); err != nil || out != forward.Done {
		t.Fatalf("b while a holds the lease: %v %v", out, err)
	}
	if posts, _, _ := fx.rc.state(); posts != 1 {
		t.Fatalf("%d posts; b sent while a held the lease", posts)
	}
	got, _ := fx.pairs.Get(ctx, "t1", p.ID)
	fx.now = got.Status.LeaseUntil.Add(time.Millisecond)
	if _, err := b.Step(ctx, p, cfg); err != nil {
		t.Fatal(err)
	}
	_, gotIDs, seen := fx.rc.state()
	if fmt.Sprint(gotIDs) != fmt.Sprint(ids) || len(seen) != 4 {
		t.Fatalf("after the takeover the receiver holds %v, want %v", gotIDs, ids)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s sent %d times", id, n)
		}
	}
}
