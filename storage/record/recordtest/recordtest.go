// Package recordtest is the contract suite every record.Store backend passes. A backend's
// test is a few lines: describe how to make a fresh, empty store and call Run.
package recordtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/lectern-lms/lectern/internal/testenv"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/record"
)

// Backend tells the suite how to reach a backend. NewDSN returns the address of a fresh,
// empty store (a file path, a database URL); Open opens a store at such an address. Both are
// also called in a child process for the kill -9 test, so Open must depend only on the DSN.
type Backend struct {
	NewDSN func(t testing.TB) string
	Open   func(dsn string) (record.Store, error)
}

const childEnv = "LECTERN_RECORDTEST_CHILD_DSN"

// Run runs the whole contract suite against b. It must be called from a top-level test
// function (the crash test re-runs that test function in a child process).
func Run(t *testing.T, b Backend) {
	if dsn := os.Getenv(childEnv); dsn != "" {
		crashChild(t, b, dsn)
		return
	}
	open := func(t *testing.T) record.Store {
		t.Helper()
		s, err := b.Open(b.NewDSN(t))
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("CreateGetConflict", func(t *testing.T) { testCreate(t, open(t)) })
	t.Run("ConditionalUpdate", func(t *testing.T) { testUpdate(t, open(t)) })
	t.Run("ConcurrentUpdateOneWins", func(t *testing.T) { testConcurrentUpdate(t, open(t)) })
	t.Run("SincePagingInclusive", func(t *testing.T) { testSincePaging(t, open(t)) })
	t.Run("FilterByParentAndKey", func(t *testing.T) { testFilters(t, open(t)) })
	t.Run("TenantIsolation", func(t *testing.T) { testTenants(t, open(t)) })
	t.Run("CascadingDelete", func(t *testing.T) { testCascade(t, open(t)) })
	t.Run("BadInput", func(t *testing.T) { testBadInput(t, open(t)) })
	t.Run("ModifyAndCreateNext", func(t *testing.T) { testHelpers(t, open(t)) })
	t.Run("SurvivesKill9", func(t *testing.T) { testCrash(t, b) })
}

func rec(tenant, kind, id, data string) *record.Record {
	return &record.Record{Tenant: tenant, Kind: kind, ID: id, Data: json.RawMessage(data)}
}

func mustCreate(t *testing.T, s record.Store, r *record.Record) {
	t.Helper()
	if err := s.Create(context.Background(), r); err != nil {
		t.Fatalf("create %s/%s/%s: %v", r.Tenant, r.Kind, r.ID, err)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func testCreate(t *testing.T, s record.Store) {
	ctx := context.Background()
	r := rec("t1", "course", "c1", `{"title":"Intro"}`)
	r.Key = "k"
	mustCreate(t, s, r)
	if r.Rev != 1 || r.Created.IsZero() || !r.Created.Equal(r.Updated) {
		t.Fatalf("create did not fill rev/timestamps: %+v", r)
	}
	got, err := s.Get(ctx, "t1", "course", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(got.Data, r.Data) || got.Rev != 1 || got.Key != "k" || !got.Created.Equal(r.Created) {
		t.Fatalf("round trip: got %+v want %+v", got, r)
	}
	dup := rec("t1", "course", "c1", `{"title":"Other"}`)
	if err := s.Create(ctx, dup); !errors.Is(err, record.ErrConflict) {
		t.Fatalf("second create: want ErrConflict, got %v", err)
	}
	got, _ = s.Get(ctx, "t1", "course", "c1")
	if !jsonEqual(got.Data, []byte(`{"title":"Intro"}`)) {
		t.Fatalf("conflicting create overwrote data: %s", got.Data)
	}
	// Ids are case-sensitive: "C1" is another record.
	mustCreate(t, s, rec("t1", "course", "C1", `{}`))
	if _, err := s.Get(ctx, "t1", "course", "missing"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("get missing: want ErrNotFound, got %v", err)
	}
}

func testUpdate(t *testing.T, s record.Store) {
	ctx := context.Background()
	r := rec("t1", "job", "j1", `{"n":1}`)
	mustCreate(t, s, r)
	stale := *r
	r.Data = json.RawMessage(`{"n":2}`)
	r.Key = "RUNNING"
	if err := s.Update(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.Rev != 2 || r.Updated.Before(r.Created) {
		t.Fatalf("update did not bump rev: %+v", r)
	}
	stale.Data = json.RawMessage(`{"n":99}`)
	if err := s.Update(ctx, &stale); !errors.Is(err, record.ErrStale) {
		t.Fatalf("stale update: want ErrStale, got %v", err)
	}
	got, _ := s.Get(ctx, "t1", "job", "j1")
	if !jsonEqual(got.Data, []byte(`{"n":2}`)) || got.Rev != 2 || got.Key != "RUNNING" {
		t.Fatalf("after stale update: %+v %s", got, got.Data)
	}
	missing := rec("t1", "job", "nope", `{}`)
	missing.Rev = 1
	if err := s.Update(ctx, missing); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("update missing: want ErrNotFound, got %v", err)
	}
}

func testConcurrentUpdate(t *testing.T, s record.Store) {
	ctx := context.Background()
	mustCreate(t, s, rec("t1", "counter", "c", `{"n":0}`))
	// Many writers race from the same revision: exactly one may win.
	const writers = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := rec("t1", "counter", "c", fmt.Sprintf(`{"n":%d}`, i+1))
			r.Rev = 1
			err := s.Update(ctx, r)
			if err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			} else if !errors.Is(err, record.ErrStale) {
				t.Errorf("writer %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d writers won from the same revision, want exactly 1", wins)
	}
}

func listAll(t *testing.T, s record.Store, q record.Query) []*record.Record {
	t.Helper()
	var out []*record.Record
	for pages := 0; ; pages++ {
		p, err := s.List(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Records...)
		if p.Next == "" {
			return out
		}
		if len(p.Records) != q.Limit && q.Limit > 0 {
			t.Fatalf("non-final page has %d records, limit %d", len(p.Records), q.Limit)
		}
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		q.Cursor = p.Next
	}
}

func ids(rs []*record.Record) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.ID)
	}
	return strings.Join(s, ",")
}

func testSincePaging(t *testing.T, s record.Store) {
	var all []*record.Record
	for i := 0; i < 25; i++ {
		r := rec("t1", "reg", fmt.Sprintf("r%02d", i), `{}`)
		mustCreate(t, s, r)
		all = append(all, r)
	}
	mustCreate(t, s, rec("t1", "other", "x", `{}`))
	got := listAll(t, s, record.Query{Tenant: "t1", Kind: "reg", Limit: 7})
	if len(got) != 25 {
		t.Fatalf("paged list returned %d records (%s), want 25", len(got), ids(got))
	}
	seen := map[string]bool{}
	for i, r := range got {
		if seen[r.ID] {
			t.Fatalf("record %s returned twice", r.ID)
		}
		seen[r.ID] = true
		if i > 0 && r.Updated.Before(got[i-1].Updated) {
			t.Fatalf("records not ordered by update time at %d", i)
		}
	}
	// since is inclusive: the record updated exactly at since is included.
	pivot := all[10]
	got = listAll(t, s, record.Query{Tenant: "t1", Kind: "reg", Since: pivot.Updated, Limit: 4})
	want := 0
	for _, r := range all {
		if !r.Updated.Before(pivot.Updated) {
			want++
		}
	}
	if len(got) != want || !strings.Contains(","+ids(got)+",", ","+pivot.ID+",") {
		t.Fatalf("since=%v returned %d records (%s), want %d including %s", pivot.Updated, len(got), ids(got), want, pivot.ID)
	}
	// An update moves a record to the end of the since order.
	first := all[0]
	first.Data = json.RawMessage(`{"touched":true}`)
	if err := s.Update(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	got = listAll(t, s, record.Query{Tenant: "t1", Kind: "reg", Since: first.Updated})
	if len(got) == 0 || got[len(got)-1].ID != first.ID {
		t.Fatalf("updated record not last in since order: %s", ids(got))
	}
	if _, err := s.List(context.Background(), record.Query{Tenant: "t1", Kind: "reg", Cursor: "!!not-a-cursor"}); !errors.Is(err, record.ErrInvalid) {
		t.Fatalf("bad cursor: want ErrInvalid, got %v", err)
	}
}

func testFilters(t *testing.T, s record.Store) {
	parent := &record.Ref{Kind: "course", ID: "c1"}
	mustCreate(t, s, rec("t1", "course", "c1", `{}`))
	for i, learner := range []string{"ann", "bob", "ann"} {
		r := rec("t1", "reg", fmt.Sprintf("r%d", i), `{}`)
		r.Parent, r.Key = parent, learner
		mustCreate(t, s, r)
	}
	mustCreate(t, s, rec("t1", "reg", "orphan", `{}`))
	if got := listAll(t, s, record.Query{Tenant: "t1", Kind: "reg", Parent: parent}); ids(got) != "r0,r1,r2" {
		t.Fatalf("by parent: %s", ids(got))
	}
	if got := listAll(t, s, record.Query{Tenant: "t1", Kind: "reg", Key: "ann"}); ids(got) != "r0,r2" {
		t.Fatalf("by key: %s", ids(got))
	}
}

func testTenants(t *testing.T, s record.Store) {
	ctx := context.Background()
	mustCreate(t, s, rec("a", "course", "c1", `{"owner":"a"}`))
	// Same id in another tenant (tenant ids are case-sensitive) is a different record.
	mustCreate(t, s, rec("A", "course", "c1", `{"owner":"A"}`))
	got, err := s.Get(ctx, "A", "course", "c1")
	if err != nil || !jsonEqual(got.Data, []byte(`{"owner":"A"}`)) {
		t.Fatalf("tenant A sees %v %v", got, err)
	}
	if l := listAll(t, s, record.Query{Tenant: "a", Kind: "course"}); len(l) != 1 || l[0].Tenant != "a" {
		t.Fatalf("tenant a lists %d records", len(l))
	}
	if err := s.Delete(ctx, "b", "course", "c1"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("delete from another tenant: %v", err)
	}
	if err := s.Delete(ctx, "a", "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "a", "course", "c1"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("tenant delete left a record: %v", err)
	}
	if _, err := s.Get(ctx, "A", "course", "c1"); err != nil {
		t.Fatalf("tenant delete of a removed A's record: %v", err)
	}
}

func testCascade(t *testing.T, s record.Store) {
	ctx := context.Background()
	mustCreate(t, s, rec("t1", "course", "c1", `{}`))
	mustCreate(t, s, rec("t1", "course", "c2", `{}`))
	add := func(kind, id string, parent *record.Ref) {
		r := rec("t1", kind, id, `{}`)
		r.Parent = parent
		mustCreate(t, s, r)
	}
	add("version", "c1-0", &record.Ref{Kind: "course", ID: "c1"})
	add("reg", "r1", &record.Ref{Kind: "course", ID: "c1"})
	add("runtime", "r1-i0", &record.Ref{Kind: "reg", ID: "r1"})
	add("interaction", "r1-i0-q1", &record.Ref{Kind: "runtime", ID: "r1-i0"})
	add("reg", "r2", &record.Ref{Kind: "course", ID: "c2"})
	// Same ids in another tenant must survive.
	r := rec("t2", "reg", "r1", `{}`)
	r.Parent = &record.Ref{Kind: "course", ID: "c1"}
	mustCreate(t, s, r)

	if err := s.Delete(ctx, "t1", "course", "c1"); err != nil {
		t.Fatal(err)
	}
	for _, gone := range [][2]string{{"course", "c1"}, {"version", "c1-0"}, {"reg", "r1"}, {"runtime", "r1-i0"}, {"interaction", "r1-i0-q1"}} {
		if _, err := s.Get(ctx, "t1", gone[0], gone[1]); !errors.Is(err, record.ErrNotFound) {
			t.Errorf("%s %s survived the cascade: %v", gone[0], gone[1], err)
		}
	}
	for _, kept := range [][3]string{{"t1", "course", "c2"}, {"t1", "reg", "r2"}, {"t2", "reg", "r1"}} {
		if _, err := s.Get(ctx, kept[0], kept[1], kept[2]); err != nil {
			t.Errorf("%v deleted by an unrelated cascade: %v", kept, err)
		}
	}
	if err := s.Delete(ctx, "t1", "course", "c1"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("second delete: want ErrNotFound, got %v", err)
	}
}

func testBadInput(t *testing.T, s record.Store) {
	ctx := context.Background()
	if err := s.Create(ctx, rec("t1", "", "x", `{}`)); !errors.Is(err, record.ErrInvalid) {
		t.Fatalf("empty kind: %v", err)
	}
	if err := s.Create(ctx, rec("t1", "k", "", `{}`)); !errors.Is(err, record.ErrInvalid) {
		t.Fatalf("empty id: %v", err)
	}
	if _, err := s.List(ctx, record.Query{Tenant: "t1"}); !errors.Is(err, record.ErrInvalid) {
		t.Fatalf("list without kind: %v", err)
	}
	// Hostile-looking ids are just data.
	weird := `x'); DROP TABLE records; --`
	mustCreate(t, s, rec("t1", "k", weird, `{}`))
	if _, err := s.Get(ctx, "t1", "k", weird); err != nil {
		t.Fatal(err)
	}
}

// testCrash starts a child process that writes records and reports each acknowledged write,
// kills it with SIGKILL mid-stream, and checks every acknowledged write is there.
func testCrash(t *testing.T, b Backend) {
	dsn := b.NewDSN(t)
	acked := testenv.KillAfterAcks(t, childEnv, dsn, 200, 60*time.Second)
	if len(acked) < 20 {
		t.Fatalf("child acknowledged only %d writes before the deadline", len(acked))
	}
	s, err := b.Open(dsn)
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer s.Close()
	for _, id := range acked {
		r, err := s.Get(context.Background(), "crash", "item", id)
		if err != nil {
			t.Fatalf("acknowledged write %s lost after kill -9: %v", id, err)
		}
		if !jsonEqual(r.Data, []byte(fmt.Sprintf(`{"id":%q}`, id))) {
			t.Fatalf("record %s corrupted: %s", id, r.Data)
		}
	}
	t.Logf("%d acknowledged writes all present after kill -9", len(acked))
}

func crashChild(t *testing.T, b Backend, dsn string) {
	s, err := b.Open(dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(3)
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		id := fmt.Sprintf("i%06d", i)
		if err := s.Create(context.Background(), rec("crash", "item", id, fmt.Sprintf(`{"id":%q}`, id))); err != nil {
			fmt.Fprintln(os.Stderr, "child create:", err)
			os.Exit(4)
		}
		fmt.Fprintf(w, "ACK %s\n", id)
		w.Flush()
	}
}

// testHelpers: Modify never loses an increment under contention, and CreateNext hands out
// distinct numbers to concurrent creators.
func testHelpers(t *testing.T, s record.Store) {
	ctx := context.Background()
	mustCreate(t, s, rec("t1", "counter", "c", `{"n":0}`))
	const writers = 8
	var wg sync.WaitGroup
	nums := make(chan int, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := record.Modify(ctx, s, "t1", "counter", "c", func(r *record.Record) error {
				var d struct{ N int }
				if err := json.Unmarshal(r.Data, &d); err != nil {
					return err
				}
				r.Data = json.RawMessage(fmt.Sprintf(`{"n":%d}`, d.N+1))
				return nil
			})
			if err != nil {
				t.Errorf("modify: %v", err)
			}
			_, n, err := record.CreateNext(ctx, s, 0, func(n int) (*record.Record, error) {
				return rec("t1", "version", fmt.Sprintf("v%03d", n), `{}`), nil
			})
			if err != nil {
				t.Errorf("create next: %v", err)
			}
			nums <- n
		}()
	}
	wg.Wait()
	close(nums)
	got, _ := s.Get(ctx, "t1", "counter", "c")
	if !jsonEqual(got.Data, []byte(fmt.Sprintf(`{"n":%d}`, writers))) {
		t.Fatalf("after %d concurrent increments: %s", writers, got.Data)
	}
	seen := map[int]bool{}
	for n := range nums {
		if seen[n] || n < 0 || n >= writers {
			t.Fatalf("CreateNext handed out %d twice or out of range", n)
		}
		seen[n] = true
	}
	if _, err := record.Modify(ctx, s, "t1", "counter", "missing", func(*record.Record) error { return nil }); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("modify of a missing record: %v", err)
	}
}
