// Package statementstest is the contract suite every statements.Backend passes. A backend's
// test is a few lines: say how to open a fresh, empty backend and call Run.
//
// The suite fabricates statements.Statement values (Raw is arbitrary JSON, Hash an arbitrary
// string) so it depends on the port only, never on lrs/xapi.
package statementstest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/testenv"

	"github.com/lectern-lms/lectern/storage/statements"
)

// Option adds optional capabilities to Run.
type Option func(*config)

type config struct {
	newDSN  func(t testing.TB) string
	openDSN func(dsn string) (statements.Backend, error)
}

// WithCrashTest enables SurvivesKill9: newDSN returns the address of a fresh, empty backend (a
// file path, an index prefix), openDSN opens one. Both also run in a child process that is
// killed with SIGKILL, so openDSN must depend on the address only. Without this option the
// subtest is skipped, with a message saying so.
func WithCrashTest(newDSN func(t testing.TB) string, openDSN func(dsn string) (statements.Backend, error)) Option {
	return func(c *config) { c.newDSN, c.openDSN = newDSN, openDSN }
}

const childEnv = "LECTERN_STATEMENTSTEST_CHILD_DSN"

// Run runs the whole contract suite. open returns a fresh, empty backend and registers its
// Close with t.Cleanup. Run must be called from a top-level test function: the crash test
// re-runs that function in a child process.
func Run(t *testing.T, open func(t *testing.T) statements.Backend, opts ...Option) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if dsn := os.Getenv(childEnv); dsn != "" {
		if c.openDSN == nil {
			t.Fatalf("%s set but no WithCrashTest option", childEnv)
		}
		crashChild(c, dsn)
		return
	}
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, b statements.Backend)
	}{
		{"PutGetRoundTrip", testRoundTrip},
		{"BatchAtomic", testBatchAtomic},
		{"PutChunks", testPutChunks},
		{"IdempotentRePut", testIdempotent},
		{"ConflictSameIDOtherHash", testConflict},
		{"StoredOrderAndCursors", testOrder},
		{"CursorStableUnderInserts", testCursorStable},
		{"Filters", testFilters},
		{"Voiding", testVoiding},
		{"StatementRefTargets", testStatementRefs},
		{"TenantIsolation", testTenants},
		{"DocumentPreconditions", testDocPreconditions},
		{"DocumentConcurrentIfMatch", testDocConcurrent},
		{"DocumentMerge", testDocMerge},
		{"ListDocsSince", testListDocs},
		{"DeleteDocsScoping", testDeleteDocs},
		{"Activities", testActivities},
		{"Attachments", testAttachments},
		{"PurgeTenant", testPurge},
		{"ReportResults", testReportResults},
		{"ReportActivities", testReportActivities},
		{"ReportActors", testReportActors},
		{"ConsistentThroughBurst", testConsistentThroughBurst},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
	t.Run("SurvivesKill9", func(t *testing.T) {
		if c.openDSN == nil {
			t.Skip("backend passed no WithCrashTest option: durability after kill -9 not checked")
		}
		testCrash(t, c)
	})
}

var ctx = context.Background()

// st fabricates a statement. Its Raw carries a "stored" property so backends that rewrite it
// can be checked for agreement with Stored.
func st(id, hash string) *statements.Statement {
	return &statements.Statement{
		ID:   id,
		Hash: hash,
		Raw:  json.RawMessage(fmt.Sprintf(`{"id":%q,"content":%q,"stored":"2020-01-01T00:00:00.000Z"}`, id, hash)),
	}
}

func put(t *testing.T, b statements.Backend, tenant string, batch ...*statements.Statement) {
	t.Helper()
	if err := b.Put(ctx, tenant, batch, nil); err != nil {
		t.Fatalf("put %s: %v", ids(batch), err)
	}
}

func get(t *testing.T, b statements.Backend, tenant, id string) *statements.Statement {
	t.Helper()
	s, err := b.Get(ctx, tenant, id)
	if err != nil {
		t.Fatalf("get %s/%s: %v", tenant, id, err)
	}
	return s
}

func mustMissing(t *testing.T, b statements.Backend, tenant, id string) {
	t.Helper()
	if _, err := b.Get(ctx, tenant, id); !errors.Is(err, statements.ErrNotFound) {
		t.Fatalf("get %s/%s: want ErrNotFound, got %v", tenant, id, err)
	}
}

func ids(ss []*statements.Statement) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return strings.Join(out, ",")
}

// queryAll pages through q to the end, checking page sizes and the absence of repeats.
func queryAll(t *testing.T, b statements.Backend, q statements.Query) []*statements.Statement {
	t.Helper()
	var out []*statements.Statement
	seen := map[string]bool{}
	for pages := 0; ; pages++ {
		p, err := b.Query(ctx, q)
		if err != nil {
			t.Fatalf("query %+v: %v", q, err)
		}
		for _, s := range p.Statements {
			if seen[s.ID] {
				t.Fatalf("statement %s returned twice", s.ID)
			}
			seen[s.ID] = true
		}
		out = append(out, p.Statements...)
		if p.Next == "" {
			return out
		}
		if q.Limit > 0 && len(p.Statements) != q.Limit {
			t.Fatalf("non-final page has %d statements, limit %d", len(p.Statements), q.Limit)
		}
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		q.Cursor = p.Next
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

// withoutStored drops Raw's "stored", which the backend may rewrite.
func withoutStored(raw []byte) []byte {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	delete(m, "stored")
	out, _ := json.Marshal(m)
	return out
}

func rawStored(t *testing.T, raw []byte) time.Time {
	t.Helper()
	var m struct{ Stored string }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("raw %s: %v", raw, err)
	}
	ts, err := time.Parse(time.RFC3339Nano, m.Stored)
	if err != nil {
		t.Fatalf("raw stored %q: %v", m.Stored, err)
	}
	return ts
}

func sortedEq(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func testRoundTrip(t *testing.T, b statements.Backend) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123000000, time.UTC)
	s := st("11111111-0000-4000-8000-000000000001", "h1")
	s.Timestamp = ts
	s.VerbID = "http://adlnet.gov/expapi/verbs/completed"
	s.Agents = []string{"mbox:mailto:ann@example.com"}
	s.RelatedAgents = []string{"mbox:mailto:ann@example.com", "account:https://idp|bob"}
	s.Activity = "http://example.com/act/1"
	s.RelatedActivities = []string{"http://example.com/act/1", "http://example.com/course"}
	s.Registration = "22222222-0000-4000-8000-000000000001"
	s.AttachmentHashes = []string{"abc"}
	orig := slices.Clone(s.Raw)
	put(t, b, "t1", s)
	if s.Stored.IsZero() {
		t.Fatal("Put did not write Stored back")
	}
	if !rawStored(t, s.Raw).Equal(s.Stored) {
		t.Fatalf("Raw stored %s disagrees with Stored %s", rawStored(t, s.Raw), s.Stored)
	}
	g := get(t, b, "t1", s.ID)
	switch {
	case g.ID != s.ID || g.Tenant != "t1" || g.Hash != "h1" || g.Voided || g.Voids != "":
		t.Fatalf("identity fields: %+v", g)
	case !jsonEqual(withoutStored(g.Raw), withoutStored(orig)):
		t.Fatalf("raw: got %s want %s", g.Raw, orig)
	case !g.Stored.Equal(s.Stored) || !rawStored(t, g.Raw).Equal(g.Stored):
		t.Fatalf("stored: got %s (raw %s), Put said %s", g.Stored, rawStored(t, g.Raw), s.Stored)
	case !g.Timestamp.Equal(ts):
		t.Fatalf("timestamp: got %s want %s", g.Timestamp, ts)
	case g.VerbID != s.VerbID || g.Activity != s.Activity || g.Registration != s.Registration:
		t.Fatalf("scalar index fields: %+v", g)
	case !sortedEq(g.Agents, s.Agents) || !sortedEq(g.RelatedAgents, s.RelatedAgents) ||
		!sortedEq(g.RelatedActivities, s.RelatedActivities) || !sortedEq(g.AttachmentHashes, s.AttachmentHashes):
		t.Fatalf("list index fields: %+v", g)
	}
	mustMissing(t, b, "t1", "11111111-0000-4000-8000-00000000ffff")
}

func testBatchAtomic(t *testing.T, b statements.Backend) {
	put(t, b, "t1", st("a", "ha"))
	target := st("tgt", "ht")
	put(t, b, "t1", target)
	voider := st("v", "hv")
	voider.Voids = "tgt"
	// The conflicting id is last, so a backend writing as it goes would have written the rest.
	err := b.Put(ctx, "t1", []*statements.Statement{st("b", "hb"), voider, st("c", "hc"), st("a", "OTHER")},
		[]*statements.Attachment{{SHA2: "att1", ContentType: "text/plain", Data: []byte("x")}})
	if !errors.Is(err, statements.ErrConflict) {
		t.Fatalf("batch with a conflicting id: want ErrConflict, got %v", err)
	}
	for _, id := range []string{"b", "v", "c"} {
		mustMissing(t, b, "t1", id)
	}
	if get(t, b, "t1", "tgt").Voided {
		t.Fatal("failed batch voided its target")
	}
	if got, _ := b.Attachments(ctx, "t1", []string{"att1"}); len(got) != 0 {
		t.Fatal("failed batch stored its attachment")
	}
	if get(t, b, "t1", "a").Hash != "ha" {
		t.Fatal("conflicting batch overwrote the stored statement")
	}
	// The same id twice in one batch with different content is a conflict too.
	if err := b.Put(ctx, "t1", []*statements.Statement{st("d", "hd"), st("d", "hd2")}, nil); !errors.Is(err, statements.ErrConflict) {
		t.Fatalf("same id twice in a batch: want ErrConflict, got %v", err)
	}
	mustMissing(t, b, "t1", "d")
	if n := len(queryAll(t, b, statements.Query{Tenant: "t1"})); n != 2 {
		t.Fatalf("query after failed batches: %d statements, want 2", n)
	}
}

// chunked hands the chunks to put in order, keeping no chunk after put returns (a fresh
// slice each, so a store holding one would see it change).
func chunked(chunks ...[]*statements.Statement) statements.Chunks {
	return func(put func([]*statements.Statement) error) error {
		for _, c := range chunks {
			if err := put(slices.Clone(c)); err != nil {
				return err
			}
		}
		return nil
	}
}

// testPutChunks: a batch handed over in chunks is one batch (Put's rules across chunks), and
// all or nothing: a conflict in the last chunk, or an error of the caller's, stores no chunk.
func testPutChunks(t *testing.T, b statements.Backend) {
	put(t, b, "t1", st("a", "ha"), st("tgt", "ht"))
	voider := st("v", "hv")
	voider.Voids = "tgt"
	err := b.PutChunks(ctx, "t1", chunked(
		[]*statements.Statement{st("b", "hb"), voider},
		[]*statements.Statement{st("c", "hc"), st("a", "OTHER")}),
		[]*statements.Attachment{{SHA2: "att1", ContentType: "text/plain", Data: []byte("x")}})
	if !errors.Is(err, statements.ErrConflict) {
		t.Fatalf("conflict in the last chunk: want ErrConflict, got %v", err)
	}
	mine := errors.New("the caller's chunk failed")
	failing := func(put func([]*statements.Statement) error) error {
		if err := put([]*statements.Statement{st("b", "hb"), voider}); err != nil {
			return err
		}
		return mine
	}
	if err := b.PutChunks(ctx, "t1", failing, nil); !errors.Is(err, mine) {
		t.Fatalf("chunks failing after a chunk: want its error as it is, got %v", err)
	}
	// An id repeated in a later chunk with another hash conflicts, as within one batch.
	if err := b.PutChunks(ctx, "t1", chunked([]*statements.Statement{st("d", "hd")}, []*statements.Statement{st("d", "hd2")}), nil); !errors.Is(err, statements.ErrConflict) {
		t.Fatalf("same id in two chunks: want ErrConflict, got %v", err)
	}
	for _, id := range []string{"b", "v", "c", "d"} {
		mustMissing(t, b, "t1", id)
	}
	if get(t, b, "t1", "tgt").Voided {
		t.Fatal("failed chunked batch voided its target")
	}
	if got, _ := b.Attachments(ctx, "t1", []string{"att1"}); len(got) != 0 {
		t.Fatal("failed chunked batch stored its attachment")
	}

	// A stored batch: the voider in the first chunk voids a target in the second, a repeat
	// with the same hash is one statement, stored order follows the chunks, and the stored
	// values are written back into the chunks' statements.
	v2 := st("v2", "hv2")
	v2.Voids = "late"
	first := []*statements.Statement{st("e", "he"), v2}
	second := []*statements.Statement{st("late", "hl"), st("e", "he"), st("f", "hf")}
	if err := b.PutChunks(ctx, "t1", chunked(first, second), []*statements.Attachment{{SHA2: "att2", ContentType: "text/plain", Data: []byte("y")}}); err != nil {
		t.Fatalf("chunked batch: %v", err)
	}
	if !get(t, b, "t1", "late").Voided {
		t.Fatal("a voider in an earlier chunk did not void its target in a later one")
	}
	if got := ids(queryAll(t, b, statements.Query{Tenant: "t1", Ascending: true, IncludeVoided: true})); got != "a,tgt,e,v2,late,f" {
		t.Fatalf("stored order after a chunked batch: %s", got)
	}
	for _, s := range []*statements.Statement{first[0], v2, second[0], second[2]} {
		g := get(t, b, "t1", s.ID)
		if s.Stored.IsZero() || !s.Stored.Equal(g.Stored) || !bytes.Equal(s.Raw, g.Raw) {
			t.Fatalf("%s: written back stored %s, raw %s; stored %s, raw %s", s.ID, s.Stored, s.Raw, g.Stored, g.Raw)
		}
	}
	if got, _ := b.Attachments(ctx, "t1", []string{"att2"}); len(got) != 1 {
		t.Fatal("chunked batch did not store its attachment")
	}
}

func testIdempotent(t *testing.T, b statements.Backend) {
	put(t, b, "t1", st("a", "ha"), st("b", "hb"))
	first := get(t, b, "t1", "a")
	put(t, b, "t1", st("a", "ha"), st("b", "hb"))
	put(t, b, "t1", st("a", "ha"), st("c", "hc"), st("c", "hc")) // old, new, and a repeat within the batch
	got := queryAll(t, b, statements.Query{Tenant: "t1"})
	if ids(got) != "c,b,a" {
		t.Fatalf("after re-puts: %s, want c,b,a", ids(got))
	}
	if again := get(t, b, "t1", "a"); !again.Stored.Equal(first.Stored) {
		t.Fatalf("identical re-put moved stored from %s to %s", first.Stored, again.Stored)
	}
}

func testConflict(t *testing.T, b statements.Backend) {
	put(t, b, "t1", st("a", "ha"))
	if err := b.Put(ctx, "t1", []*statements.Statement{st("a", "hb")}, nil); !errors.Is(err, statements.ErrConflict) {
		t.Fatalf("same id, other hash: want ErrConflict, got %v", err)
	}
	if g := get(t, b, "t1", "a"); g.Hash != "ha" || !jsonEqual(withoutStored(g.Raw), withoutStored(st("a", "ha").Raw)) {
		t.Fatalf("conflict overwrote: %+v %s", g, g.Raw)
	}
}

func testOrder(t *testing.T, b statements.Backend) {
	// Sequential Puts of different sizes, some statements carrying the same caller Stored:
	// the store still gives them a strict order that follows the acknowledged Puts.
	var want []string
	same := time.Now().UTC()
	n := 0
	for _, size := range []int{1, 3, 1, 7, 2, 5, 1, 5} {
		var batch []*statements.Statement
		for range size {
			s := st(fmt.Sprintf("s%02d", n), "h")
			s.Stored = same
			batch = append(batch, s)
			n++
		}
		put(t, b, "t1", batch...)
		want = append(want, ids(batch))
	}
	asc := strings.Join(want, ",")
	desc := slices.Clone(strings.Split(asc, ","))
	slices.Reverse(desc)
	for _, limit := range []int{0, 1, 7, 25, 1000} {
		got := queryAll(t, b, statements.Query{Tenant: "t1", Limit: limit})
		if ids(got) != strings.Join(desc, ",") {
			t.Fatalf("limit %d, descending: %s\nwant %s", limit, ids(got), strings.Join(desc, ","))
		}
		for i := 1; i < len(got); i++ {
			if !got[i].Stored.Before(got[i-1].Stored) {
				t.Fatalf("descending page not strictly ordered by stored at %d: %s then %s", i, got[i-1].Stored, got[i].Stored)
			}
		}
		got = queryAll(t, b, statements.Query{Tenant: "t1", Limit: limit, Ascending: true})
		if ids(got) != asc {
			t.Fatalf("limit %d, ascending: %s\nwant %s", limit, ids(got), asc)
		}
	}
	p, err := b.Query(ctx, statements.Query{Tenant: "t1", Limit: 25})
	if err != nil || len(p.Statements) != 25 || p.Next != "" {
		t.Fatalf("exactly one full page must not offer a next page: %d statements, next %q, %v", len(p.Statements), p.Next, err)
	}
	p, err = b.Query(ctx, statements.Query{Tenant: "t1", Limit: statements.MaxLimit + 5})
	if err != nil || len(p.Statements) != 25 {
		t.Fatalf("limit above MaxLimit: %d statements, %v", len(p.Statements), err)
	}
	if _, err := b.Query(ctx, statements.Query{Tenant: "t1", Cursor: "!!not a cursor"}); !errors.Is(err, statements.ErrInvalid) {
		t.Fatalf("malformed cursor: want ErrInvalid, got %v", err)
	}
}

func testCursorStable(t *testing.T, b statements.Backend) {
	for i := range 10 {
		put(t, b, "t1", st(fmt.Sprintf("old%d", i), "h"))
	}
	for _, asc := range []bool{false, true} {
		q := statements.Query{Tenant: "t1", Limit: 3, Ascending: asc}
		p, err := b.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Statements
		// Statements stored mid-walk must not shift the remaining pages.
		tag := fmt.Sprintf("new%v", asc)
		put(t, b, "t1", st(tag+"1", "h"), st(tag+"2", "h"))
		q.Cursor = p.Next
		got = append(got, queryAll(t, b, q)...)
		seen := map[string]int{}
		for _, s := range got {
			seen[s.ID]++
		}
		for i := range 10 {
			if id := fmt.Sprintf("old%d", i); seen[id] != 1 {
				t.Fatalf("ascending=%v: %s returned %d times across pages: %s", asc, id, seen[id], ids(got))
			}
		}
		if !asc && (seen[tag+"1"] != 0 || seen[tag+"2"] != 0) {
			t.Fatalf("descending walk returned statements stored after it began: %s", ids(got))
		}
		if asc && !strings.HasSuffix(ids(got), tag+"1,"+tag+"2") {
			t.Fatalf("ascending walk must end with the statements stored meanwhile: %s", ids(got))
		}
	}
}

const (
	ann   = "mbox:mailto:ann@example.com"
	bob   = "mbox:mailto:bob@example.com"
	carol = "account:https://idp.example.com|carol"
	vDone = "http://adlnet.gov/expapi/verbs/completed"
	vTry  = "http://adlnet.gov/expapi/verbs/attempted"
	act1  = "http://example.com/act/1"
	act2  = "http://example.com/act/2"
	crs   = "http://example.com/course"
	reg1  = "aaaaaaaa-0000-4000-8000-000000000001"
	reg2  = "aaaaaaaa-0000-4000-8000-000000000002"
)

func testFilters(t *testing.T, b statements.Backend) {
	mk := func(id string, agents, related []string, verb, activity string, relActs []string, reg string) *statements.Statement {
		s := st(id, "h-"+id)
		s.Agents, s.RelatedAgents, s.VerbID, s.Activity, s.RelatedActivities, s.Registration = agents, related, verb, activity, relActs, reg
		return s
	}
	all := []*statements.Statement{
		// ann did act1 in course crs; bob was the instructor.
		mk("f1", []string{ann}, []string{ann, bob}, vDone, act1, []string{act1, crs}, reg1),
		// bob attempted act2; ann is only the authority.
		mk("f2", []string{bob}, []string{bob, ann}, vTry, act2, []string{act2}, reg2),
		// carol attempted act1, no registration, no context.
		mk("f3", []string{carol}, []string{carol}, vTry, act1, []string{act1}, ""),
		// ann attempted the course itself, in registration reg1.
		mk("f4", []string{ann}, []string{ann}, vTry, crs, []string{crs}, reg1),
		// A group statement: ann and bob both match the narrow agent filter.
		mk("f5", []string{ann, bob}, []string{ann, bob, carol}, vDone, act2, []string{act2, crs}, ""),
	}
	for _, s := range all {
		put(t, b, "t1", s)
	}
	put(t, b, "t2", mk("other", []string{ann}, []string{ann}, vDone, act1, []string{act1}, reg1))
	stored := map[string]time.Time{}
	for _, s := range all {
		stored[s.ID] = s.Stored
	}
	for _, tc := range []struct {
		name string
		q    statements.Query
		want string // descending stored order
	}{
		{"none", statements.Query{}, "f5,f4,f3,f2,f1"},
		{"agent narrow", statements.Query{Agent: ann}, "f5,f4,f1"},
		{"agent broad", statements.Query{Agent: ann, RelatedAgents: true}, "f5,f4,f2,f1"},
		{"agent narrow carol", statements.Query{Agent: carol}, "f3"},
		{"agent broad carol", statements.Query{Agent: carol, RelatedAgents: true}, "f5,f3"},
		{"unknown agent", statements.Query{Agent: "mbox:mailto:nobody@example.com", RelatedAgents: true}, ""},
		{"verb", statements.Query{Verb: vTry}, "f4,f3,f2"},
		{"activity narrow", statements.Query{Activity: act1}, "f3,f1"},
		{"activity broad", statements.Query{Activity: crs, RelatedActivities: true}, "f5,f4,f1"},
		{"activity narrow course", statements.Query{Activity: crs}, "f4"},
		{"registration", statements.Query{Registration: reg1}, "f4,f1"},
		{"agent and verb", statements.Query{Agent: ann, Verb: vTry}, "f4"},
		{"agent broad, verb, activity broad", statements.Query{Agent: bob, RelatedAgents: true, Verb: vDone, Activity: crs, RelatedActivities: true}, "f5,f1"},
		{"everything", statements.Query{Agent: ann, Verb: vDone, Activity: act1, Registration: reg1}, "f1"},
		{"since exclusive", statements.Query{Since: stored["f2"]}, "f5,f4,f3"},
		{"until inclusive", statements.Query{Until: stored["f2"]}, "f2,f1"},
		{"since and until", statements.Query{Since: stored["f1"], Until: stored["f4"]}, "f4,f3,f2"},
		{"since with filter", statements.Query{Since: stored["f1"], Agent: ann}, "f5,f4"},
		{"until with filter, ascending", statements.Query{Until: stored["f4"], Verb: vTry, Ascending: true}, "f2,f3,f4"},
	} {
		for _, limit := range []int{0, 1, 2} {
			q := tc.q
			q.Tenant, q.Limit = "t1", limit
			if got := ids(queryAll(t, b, q)); got != tc.want {
				t.Errorf("%s (limit %d): got %q want %q", tc.name, limit, got, tc.want)
			}
		}
	}
	p, err := b.Query(ctx, statements.Query{Tenant: "t1", Agent: ann, Limit: 1})
	if err != nil || len(p.Statements) != 1 || p.Next == "" {
		t.Fatalf("limit 1 of 3: %d statements, next %q, %v", len(p.Statements), p.Next, err)
	}
}

func testVoiding(t *testing.T, b statements.Backend) {
	target := st("target", "ht")
	target.Agents = []string{ann}
	put(t, b, "t1", target, st("keep", "hk"))
	voider := st("voider", "hv")
	voider.Voids = "target"
	voider.Agents = []string{ann}
	put(t, b, "t1", voider)
	if g := get(t, b, "t1", "target"); !g.Voided {
		t.Fatal("target not voided")
	}
	if g := get(t, b, "t1", "voider"); g.Voided || g.Voids != "target" {
		t.Fatalf("voiding statement: %+v", g)
	}
	if got := ids(queryAll(t, b, statements.Query{Tenant: "t1"})); got != "voider,keep" {
		t.Fatalf("query with a voided statement: %s", got)
	}
	if got := ids(queryAll(t, b, statements.Query{Tenant: "t1", Agent: ann})); got != "voider" {
		t.Fatalf("filtered query with a voided statement: %s", got)
	}
	// IncludeVoided (statement forwarding) returns the voided statement in its stored place.
	if got := ids(queryAll(t, b, statements.Query{Tenant: "t1", IncludeVoided: true, Ascending: true})); got != "target,keep,voider" {
		t.Fatalf("query including voided statements: %s", got)
	}
	if got := ids(queryAll(t, b, statements.Query{Tenant: "t1", Agent: ann, IncludeVoided: true})); got != "voider,target" {
		t.Fatalf("filtered query including voided statements: %s", got)
	}
	// Re-putting the voided statement is an idempotent no-op and keeps it voided.
	put(t, b, "t1", st("target", "ht"))
	if !get(t, b, "t1", "target").Voided {
		t.Fatal("identical re-put un-voided the target")
	}

	// The voiding statement arrives first: the target is stored voided whenever it comes.
	early := st("early-voider", "he")
	early.Voids = "late"
	put(t, b, "t1", early)
	put(t, b, "t1", st("late", "hl"))
	if !get(t, b, "t1", "late").Voided {
		t.Fatal("target arriving after its voiding statement is not voided")
	}

	// Target and voiding statement in one batch, in either order.
	v1, v2 := st("bv1", "h"), st("bv2", "h")
	v1.Voids, v2.Voids = "bt1", "bt2"
	put(t, b, "t1", st("bt1", "h"), v1, v2, st("bt2", "h"))
	if !get(t, b, "t1", "bt1").Voided || !get(t, b, "t1", "bt2").Voided {
		t.Fatal("targets voided within their own batch not marked voided")
	}

	// A voiding statement is never voided (the HTTP layer rejects such a request anyway).
	vv := st("void-the-voider", "h")
	vv.Voids = "voider"
	put(t, b, "t1", vv)
	if get(t, b, "t1", "voider").Voided {
		t.Fatal("a voiding statement was voided")
	}

	// Voiding does not cross tenants.
	put(t, b, "t2", st("target", "ht"))
	if get(t, b, "t2", "target").Voided {
		t.Fatal("voiding in t1 voided t2's statement")
	}
	for _, s := range queryAll(t, b, statements.Query{Tenant: "t1", Limit: 2}) {
		if s.Voided {
			t.Fatalf("query returned voided statement %s", s.ID)
		}
	}
}

// testStatementRefs checks the StatementRef rule of statements.Query (xAPI 1.0.3 Part Three
// §2.1.3): a statement targeting (StatementRef object) a statement that meets the non-time
// filters meets them too, recursively, whether the targeted statement is voided or not; time
// bounds, paging and the voided exclusion apply to the returned statements only.
func testStatementRefs(t *testing.T, b statements.Backend) {
	const vVoided = "http://adlnet.gov/expapi/verbs/voided"
	mk := func(id, verb, target string, agents ...string) *statements.Statement {
		s := st(id, "h-"+id)
		s.VerbID, s.Target, s.Agents, s.RelatedAgents = verb, target, agents, agents
		return s
	}
	voider := func(id, target string) *statements.Statement {
		s := mk(id, vVoided, target)
		s.Voids = target
		return s
	}
	v4 := voider("v4", "ref4")
	v4.Target = "" // Voids alone makes a target
	seq := []*statements.Statement{
		mk("m1", vDone, "", ann),         // matches verb done / agent ann; voided below
		mk("other", vTry, ""),            //
		mk("mixA", vTry, "", ann),        //
		voider("vvoid", "m1"),            // voids m1: returned for m1's filters
		mk("ref1", vTry, "m1"),           // targets (voided) m1
		mk("ref2", vTry, "ref1"),         // targets ref1, which targets m1
		mk("ref3", vTry, "other"),        // targets a statement that does not match done
		mk("refmiss", vTry, "nope"),      // targets a statement never stored
		mk("refV", vDone, "other"),       // matches done itself
		mk("c1", vTry, "c2"),             // a cycle: c1 → c2 → c1
		mk("c2", vTry, "c1"),             //
		mk("ref4", vTry, "m1"),           // voided by v4: never returned
		v4,                               // targets voided ref4, which targets m1
		mk("mixRef", vDone, "mixA", bob), // done by bob, targets ann's attempt: no done-by-ann
		mk("late", vTry, "future"),       // targets a statement stored after it
		mk("future", vDone, ""),          //
	}
	for _, s := range seq {
		put(t, b, "t1", s)
	}
	put(t, b, "t2", mk("t2ref", vTry, "m1"))
	stored := map[string]time.Time{}
	for _, s := range seq {
		stored[s.ID] = s.Stored
	}
	if g := get(t, b, "t1", "ref1"); g.Target != "m1" {
		t.Fatalf("Target not kept: %+v", g)
	}
	if g := get(t, b, "t1", "v4"); g.TargetID() != "ref4" || !get(t, b, "t1", "ref4").Voided {
		t.Fatalf("voiding statement v4: %+v", g)
	}
	for _, tc := range []struct {
		name string
		q    statements.Query
		want string // descending stored order
	}{
		{"verb", statements.Query{Verb: vDone}, "future,late,mixRef,v4,refV,ref2,ref1,vvoid"},
		{"verb and agent: one statement meets both", statements.Query{Verb: vDone, Agent: ann}, "v4,ref2,ref1,vvoid"},
		{"agent", statements.Query{Agent: ann}, "mixRef,v4,ref2,ref1,vvoid,mixA"},
		{"agent broad", statements.Query{Agent: ann, RelatedAgents: true}, "mixRef,v4,ref2,ref1,vvoid,mixA"},
		{"other verb", statements.Query{Verb: vTry}, "late,mixRef,v4,c2,c1,refV,refmiss,ref3,ref2,ref1,mixA,other"},
		{"since applies to the returned statements", statements.Query{Verb: vDone, Since: stored["ref2"]}, "future,late,mixRef,v4,refV"},
		{"until, ascending", statements.Query{Verb: vDone, Until: stored["refV"], Ascending: true}, "vvoid,ref1,ref2,refV"},
		{"no match", statements.Query{Agent: carol}, ""},
	} {
		for _, limit := range []int{0, 1, 2, 3} {
			q := tc.q
			q.Tenant, q.Limit = "t1", limit
			if got := ids(queryAll(t, b, q)); got != tc.want {
				t.Errorf("%s (limit %d): got %q want %q", tc.name, limit, got, tc.want)
			}
		}
	}
	if got := ids(queryAll(t, b, statements.Query{Tenant: "t2", Verb: vDone})); got != "" {
		t.Errorf("t2 statement targeting an id of t1 matched t1's statement: %q", got)
	}
}

func testTenants(t *testing.T, b statements.Backend) {
	// Same ids with different content in two tenants: no conflict, no leak.
	put(t, b, "a", st("x", "ha"))
	put(t, b, "A", st("x", "hA"))
	if get(t, b, "a", "x").Hash != "ha" || get(t, b, "A", "x").Hash != "hA" {
		t.Fatal("tenants share a statement")
	}
	for _, tn := range []string{"a", "A"} {
		if got := queryAll(t, b, statements.Query{Tenant: tn}); len(got) != 1 || got[0].Tenant != tn {
			t.Fatalf("tenant %s sees %s", tn, ids(got))
		}
	}
	mustMissing(t, b, "b", "x")
	key := statements.DocKey{Tenant: "a", Kind: statements.AgentProfile, Agent: ann, ID: "p"}
	if _, err := b.PutDoc(ctx, &statements.Document{Key: key, ContentType: "text/plain", Body: []byte("a's")}, statements.Precondition{}, false); err != nil {
		t.Fatal(err)
	}
	key.Tenant = "A"
	if _, err := b.GetDoc(ctx, key); !errors.Is(err, statements.ErrNotFound) {
		t.Fatalf("tenant A reads a's document: %v", err)
	}
	if ids, err := b.ListDocs(ctx, key, time.Time{}); err != nil || len(ids) != 0 {
		t.Fatalf("tenant A lists a's documents: %v %v", ids, err)
	}
	if err := b.PutActivity(ctx, "a", act1, json.RawMessage(`{"id":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetActivity(ctx, "A", act1); !errors.Is(err, statements.ErrNotFound) {
		t.Fatalf("tenant A reads a's activity: %v", err)
	}
}

func doc(key statements.DocKey, body string) *statements.Document {
	return &statements.Document{Key: key, ContentType: "application/json", Body: []byte(body)}
}

func sha1ETag(body []byte) string {
	s := sha1.Sum(body)
	return `"` + hex.EncodeToString(s[:]) + `"`
}

func testDocPreconditions(t *testing.T, b statements.Backend) {
	key := statements.DocKey{Tenant: "t1", Kind: statements.ActivityProfile, ActivityID: act1, ID: "profile"}
	if _, err := b.GetDoc(ctx, key); !errors.Is(err, statements.ErrNotFound) {
		t.Fatalf("get missing document: %v", err)
	}
	if _, err := b.PutDoc(ctx, doc(key, `{"v":0}`), statements.Precondition{IfMatch: "*"}, false); !errors.Is(err, statements.ErrPrecondition) {
		t.Fatalf("If-Match * on a missing document: want ErrPrecondition, got %v", err)
	}
	d1, err := b.PutDoc(ctx, doc(key, `{"v":1}`), statements.Precondition{IfNoneMatch: "*"}, false)
	if err != nil {
		t.Fatalf("If-None-Match * on a missing document: %v", err)
	}
	if d1.ETag != sha1ETag([]byte(`{"v":1}`)) {
		t.Fatalf("ETag %s, want the quoted SHA-1 of the body %s", d1.ETag, sha1ETag([]byte(`{"v":1}`)))
	}
	if g, err := b.GetDoc(ctx, key); err != nil || string(g.Body) != `{"v":1}` || g.ETag != d1.ETag || g.ContentType != "application/json" || g.Updated.IsZero() {
		t.Fatalf("get after put: %+v %v", g, err)
	}
	if _, err := b.PutDoc(ctx, doc(key, `{"v":2}`), statements.Precondition{IfNoneMatch: "*"}, false); !errors.Is(err, statements.ErrPrecondition) {
		t.Fatalf("If-None-Match * on an existing document: want ErrPrecondition, got %v", err)
	}
	if _, err := b.PutDoc(ctx, doc(key, `{"v":2}`), statements.Precondition{IfMatch: sha1ETag([]byte("stale"))}, false); !errors.Is(err, statements.ErrPrecondition) {
		t.Fatalf("If-Match with a wrong ETag: want ErrPrecondition, got %v", err)
	}
	d2, err := b.PutDoc(ctx, doc(key, `{"v":2}`), statements.Precondition{IfMatch: d1.ETag}, false)
	if err != nil {
		t.Fatalf("If-Match with the current ETag: %v", err)
	}
	if d2.ETag == d1.ETag {
		t.Fatal("ETag did not change with the body")
	}
	if _, err := b.PutDoc(ctx, doc(key, `{"v":3}`), statements.Precondition{IfMatch: d1.ETag}, false); !errors.Is(err, statements.ErrPrecondition) {
		t.Fatalf("If-Match with the previous ETag: want ErrPrecondition, got %v", err)
	}
	d3, err := b.PutDoc(ctx, doc(key, `{"v":3}`), statements.Precondition{IfMatch: "*"}, false)
	if err != nil {
		t.Fatalf("If-Match * on an existing document: %v", err)
	}
	if same, err := b.PutDoc(ctx, doc(key, `{"v":3}`), statements.Precondition{}, false); err != nil || same.ETag != d3.ETag {
		t.Fatalf("unconditional put of the same body: %v, ETag %s want %s", err, same.ETag, d3.ETag)
	}
	if _, err := b.PutDoc(ctx, doc(key, `{"v":4}`), statements.Precondition{IfNoneMatch: d3.ETag}, false); !errors.Is(err, statements.ErrPrecondition) {
		t.Fatalf("If-None-Match with the current ETag: want ErrPrecondition, got %v", err)
	}
	// Deletion honours the same preconditions.
	if err := b.DeleteDoc(ctx, key, statements.Precondition{IfMatch: d1.ETag}); !errors.Is(err, statements.ErrPrecondition) {
		t.Fatalf("delete with a stale If-Match: want ErrPrecondition, got %v", err)
	}
	if err := b.DeleteDoc(ctx, key, statements.Precondition{IfMatch: d3.ETag}); err != nil {
		t.Fatalf("delete with the current If-Match: %v", err)
	}
	if err := b.DeleteDoc(ctx, key, statements.Precondition{}); !errors.Is(err, statements.ErrNotFound) {
		t.Fatalf("delete a missing document: want ErrNotFound, got %v", err)
	}
	if _, err := b.GetDoc(ctx, key); !errors.Is(err, statements.ErrNotFound) {
		t.Fatalf("get a deleted document: %v", err)
	}
	// Binary documents are kept byte for byte.
	bin := statements.DocKey{Tenant: "t1", Kind: statements.AgentProfile, Agent: ann, ID: "avatar"}
	data := []byte{0, 1, 2, 255, 254}
	if _, err := b.PutDoc(ctx, &statements.Document{Key: bin, ContentType: "image/png", Body: data}, statements.Precondition{}, false); err != nil {
		t.Fatal(err)
	}
	if g, err := b.GetDoc(ctx, bin); err != nil || string(g.Body) != string(data) || g.ContentType != "image/png" {
		t.Fatalf("binary document: %+v %v", g, err)
	}
}

func testDocConcurrent(t *testing.T, b statements.Backend) {
	key := statements.DocKey{Tenant: "t1", Kind: statements.State, ActivityID: act1, Agent: ann, ID: "bookmark"}
	d0, err := b.PutDoc(ctx, doc(key, `{"n":0}`), statements.Precondition{}, false)
	if err != nil {
		t.Fatal(err)
	}
	const writers = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var winners []string
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"n":%d}`, i+1)
			_, err := b.PutDoc(ctx, doc(key, body), statements.Precondition{IfMatch: d0.ETag}, i%2 == 0)
			switch {
			case err == nil:
				mu.Lock()
				winners = append(winners, body)
				mu.Unlock()
			case !errors.Is(err, statements.ErrPrecondition):
				t.Errorf("writer %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d writers won with the same If-Match, want exactly 1: %v", len(winners), winners)
	}
	if g, err := b.GetDoc(ctx, key); err != nil || !jsonEqual(g.Body, []byte(winners[0])) {
		t.Fatalf("stored document is not the winner's: %s vs %s (%v)", g.Body, winners[0], err)
	}
}

func testDocMerge(t *testing.T, b statements.Backend) {
	key := statements.DocKey{Tenant: "t1", Kind: statements.State, ActivityID: act1, Agent: ann, Registration: reg1, ID: "suspend"}
	// Merging into nothing stores the body.
	d1, err := b.PutDoc(ctx, doc(key, `{"a":1,"b":{"x":1}}`), statements.Precondition{}, true)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := b.PutDoc(ctx, doc(key, `{"b":{"y":2},"c":3}`), statements.Precondition{IfMatch: d1.ETag}, true)
	if err != nil {
		t.Fatal(err)
	}
	// Top-level merge: "b" is replaced, not merged recursively.
	want := `{"a":1,"b":{"y":2},"c":3}`
	if !jsonEqual(d2.Body, []byte(want)) {
		t.Fatalf("merge returned %s, want %s", d2.Body, want)
	}
	g, err := b.GetDoc(ctx, key)
	if err != nil || !jsonEqual(g.Body, []byte(want)) {
		t.Fatalf("merged document %s, want %s (%v)", g.Body, want, err)
	}
	if g.ETag != sha1ETag(g.Body) || g.ETag != d2.ETag || d2.ETag == d1.ETag {
		t.Fatalf("merge ETag %s / returned %s / previous %s; want the SHA-1 of the stored body", g.ETag, d2.ETag, d1.ETag)
	}
	if _, err := b.PutDoc(ctx, doc(key, `{"d":4}`), statements.Precondition{IfMatch: d1.ETag}, true); !errors.Is(err, statements.ErrPrecondition) {
		t.Fatalf("merge with a stale If-Match: want ErrPrecondition, got %v", err)
	}
	if g, _ := b.GetDoc(ctx, key); !jsonEqual(g.Body, []byte(want)) {
		t.Fatalf("failed merge changed the document: %s", g.Body)
	}
}

// pause lets the clock move on, so documents written before and after get different Updated
// even on backends storing milliseconds.
func pause() { time.Sleep(3 * time.Millisecond) }

func testListDocs(t *testing.T, b statements.Backend) {
	base := statements.DocKey{Tenant: "t1", Kind: statements.State, ActivityID: act1, Agent: ann}
	putKey := func(k statements.DocKey, id string) *statements.Document {
		t.Helper()
		k.ID = id
		d, err := b.PutDoc(ctx, doc(k, `{}`), statements.Precondition{}, false)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := putKey(base, "s1")
	pause()
	putKey(base, "s2")
	withReg := base
	withReg.Registration = reg1
	putKey(withReg, "s3")
	otherAgent := base
	otherAgent.Agent = bob
	putKey(otherAgent, "s4")
	putKey(statements.DocKey{Tenant: "t1", Kind: statements.AgentProfile, Agent: ann}, "s5")
	putKey(statements.DocKey{Tenant: "t1", Kind: statements.ActivityProfile, ActivityID: act1}, "s6")

	list := func(k statements.DocKey, since time.Time) string {
		t.Helper()
		ids, err := b.ListDocs(ctx, k, since)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ids)
		return strings.Join(ids, ",")
	}
	if got := list(base, time.Time{}); got != "s1,s2" {
		t.Fatalf("states without registration: %s", got)
	}
	if got := list(withReg, time.Time{}); got != "s3" {
		t.Fatalf("states of registration: %s", got)
	}
	if got := list(base, first.Updated); got != "s2" {
		t.Fatalf("since the first document's update (exclusive): %s", got)
	}
	if got := list(statements.DocKey{Tenant: "t1", Kind: statements.AgentProfile, Agent: ann}, time.Time{}); got != "s5" {
		t.Fatalf("agent profiles: %s", got)
	}
	if got := list(statements.DocKey{Tenant: "t1", Kind: statements.ActivityProfile, ActivityID: act1}, time.Time{}); got != "s6" {
		t.Fatalf("activity profiles: %s", got)
	}
	// An ID in the key is ignored: the list is of everything sharing the rest of it.
	k := base
	k.ID = "s1"
	if got := list(k, time.Time{}); got != "s1,s2" {
		t.Fatalf("list with an id in the key: %s", got)
	}
	// Re-writing a document moves it past since.
	pause()
	mid := time.Now()
	pause()
	putKey(base, "s1")
	if got := list(base, mid); got != "s1" {
		t.Fatalf("since after a rewrite: %s", got)
	}
}

func testDeleteDocs(t *testing.T, b statements.Backend) {
	base := statements.DocKey{Tenant: "t1", Kind: statements.State, ActivityID: act1, Agent: ann}
	withReg, otherReg, otherAgent := base, base, base
	withReg.Registration, otherReg.Registration, otherAgent.Agent = reg1, reg2, bob
	for _, k := range []statements.DocKey{base, withReg, otherReg, otherAgent} {
		for _, id := range []string{"x", "y"} {
			k.ID = id
			if _, err := b.PutDoc(ctx, doc(k, `{}`), statements.Precondition{}, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	profile := statements.DocKey{Tenant: "t1", Kind: statements.AgentProfile, Agent: ann, ID: "x"}
	if _, err := b.PutDoc(ctx, doc(profile, `{}`), statements.Precondition{}, false); err != nil {
		t.Fatal(err)
	}
	count := func(k statements.DocKey) int {
		t.Helper()
		ids, err := b.ListDocs(ctx, k, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return len(ids)
	}
	// With a registration: only that registration's states go.
	if err := b.DeleteDocs(ctx, withReg); err != nil {
		t.Fatal(err)
	}
	if count(withReg) != 0 || count(base) != 2 || count(otherReg) != 2 || count(otherAgent) != 2 {
		t.Fatalf("delete with registration: reg1 %d, none %d, reg2 %d, bob %d", count(withReg), count(base), count(otherReg), count(otherAgent))
	}
	// Without a registration: only the states stored without one go, not every registration's.
	if err := b.DeleteDocs(ctx, base); err != nil {
		t.Fatal(err)
	}
	if count(base) != 0 || count(otherReg) != 2 || count(otherAgent) != 2 {
		t.Fatalf("delete without registration: none %d, reg2 %d, bob %d", count(base), count(otherReg), count(otherAgent))
	}
	if _, err := b.GetDoc(ctx, profile); err != nil {
		t.Fatalf("deleting states removed an agent profile: %v", err)
	}
}

func testActivities(t *testing.T, b statements.Backend) {
	if _, err := b.GetActivity(ctx, "t1", act1); !errors.Is(err, statements.ErrNotFound) {
		t.Fatalf("missing activity: want ErrNotFound, got %v", err)
	}
	v1 := json.RawMessage(`{"id":"` + act1 + `","definition":{"name":{"en":"One"}}}`)
	if err := b.PutActivity(ctx, "t1", act1, v1); err != nil {
		t.Fatal(err)
	}
	if got, err := b.GetActivity(ctx, "t1", act1); err != nil || !jsonEqual(got, v1) {
		t.Fatalf("get activity: %s %v", got, err)
	}
	v2 := json.RawMessage(`{"id":"` + act1 + `","definition":{"name":{"en":"One","de":"Eins"}}}`)
	if err := b.PutActivity(ctx, "t1", act1, v2); err != nil {
		t.Fatal(err)
	}
	if got, err := b.GetActivity(ctx, "t1", act1); err != nil || !jsonEqual(got, v2) {
		t.Fatalf("activity after replace: %s %v", got, err)
	}

	// Many at once: a statement batch's activities are read and written in one call each,
	// beyond one request's or statement's bound, and per tenant.
	many := map[string]json.RawMessage{}
	var ids []string
	for i := range 1203 {
		id := fmt.Sprintf("http://example.com/batch/%d", i)
		many[id] = json.RawMessage(`{"id":"` + id + `","definition":{"name":{"en":"A ` + strconv.Itoa(i) + `"}}}`)
		ids = append(ids, id)
	}
	many[act1] = v1 // replaces v2
	if err := b.PutActivities(ctx, "t1", many); err != nil {
		t.Fatal(err)
	}
	got, err := b.GetActivities(ctx, "t1", append(ids, act1, "http://example.com/none", ids[0]))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(many) {
		t.Fatalf("GetActivities found %d, want %d (an absent id left out, a repeated one once)", len(got), len(many))
	}
	for id, want := range many {
		if !jsonEqual(got[id], want) {
			t.Fatalf("GetActivities %s: %s, want %s", id, got[id], want)
		}
	}
	if one, err := b.GetActivity(ctx, "t1", ids[1202]); err != nil || !jsonEqual(one, many[ids[1202]]) {
		t.Fatalf("an activity PutActivities stored, read alone: %s %v", one, err)
	}
	if other, err := b.GetActivities(ctx, "t2", ids[:10]); err != nil || len(other) != 0 {
		t.Fatalf("another tenant reads %d of t1's activities (%v)", len(other), err)
	}
	if err := b.PutActivities(ctx, "t1", map[string]json.RawMessage{"": json.RawMessage(`{}`)}); !errors.Is(err, statements.ErrInvalid) {
		t.Fatalf("an activity without id: want ErrInvalid, got %v", err)
	}
	if err := b.PutActivities(ctx, "t1", nil); err != nil {
		t.Fatalf("no activities: %v", err)
	}
}

func testAttachments(t *testing.T, b statements.Backend) {
	s := st("with-att", "h")
	s.AttachmentHashes = []string{"sha-a", "sha-b"}
	atts := []*statements.Attachment{
		{SHA2: "sha-a", ContentType: "text/plain", Data: []byte("hello")},
		{SHA2: "sha-b", ContentType: "application/octet-stream", Data: []byte{0, 1, 2, 255}},
	}
	if err := b.Put(ctx, "t1", []*statements.Statement{s}, atts); err != nil {
		t.Fatal(err)
	}
	// A second statement sharing an attachment stores it once; that is no conflict.
	s2 := st("with-att-2", "h2")
	s2.AttachmentHashes = []string{"sha-a"}
	if err := b.Put(ctx, "t1", []*statements.Statement{s2}, atts[:1]); err != nil {
		t.Fatal(err)
	}
	got, err := b.Attachments(ctx, "t1", []string{"sha-b", "missing", "sha-a"})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]*statements.Attachment{}
	for _, a := range got {
		found[a.SHA2] = a
	}
	if len(got) != 2 {
		t.Fatalf("got %d attachments, want 2", len(got))
	}
	for _, a := range atts {
		g := found[a.SHA2]
		if g == nil || string(g.Data) != string(a.Data) || g.ContentType != a.ContentType {
			t.Fatalf("attachment %s: got %+v", a.SHA2, g)
		}
	}
	if got, err := b.Attachments(ctx, "t2", []string{"sha-a"}); err != nil || len(got) != 0 {
		t.Fatalf("another tenant reads the attachment: %d %v", len(got), err)
	}
	if g := get(t, b, "t1", "with-att"); !sortedEq(g.AttachmentHashes, s.AttachmentHashes) {
		t.Fatalf("attachment hashes of the statement: %v", g.AttachmentHashes)
	}
}

func testPurge(t *testing.T, b statements.Backend) {
	for _, tn := range []string{"gone", "kept"} {
		s := st("s", "h")
		s.Agents = []string{ann}
		if err := b.Put(ctx, tn, []*statements.Statement{s}, []*statements.Attachment{{SHA2: "att", ContentType: "text/plain", Data: []byte(tn)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.PutDoc(ctx, doc(statements.DocKey{Tenant: tn, Kind: statements.AgentProfile, Agent: ann, ID: "p"}, `{}`), statements.Precondition{}, false); err != nil {
			t.Fatal(err)
		}
		if err := b.PutActivity(ctx, tn, act1, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PurgeTenant(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	check := func(tn string, present bool) {
		t.Helper()
		_, errS := b.Get(ctx, tn, "s")
		q := queryAll(t, b, statements.Query{Tenant: tn, Agent: ann})
		atts, errA := b.Attachments(ctx, tn, []string{"att"})
		_, errD := b.GetDoc(ctx, statements.DocKey{Tenant: tn, Kind: statements.AgentProfile, Agent: ann, ID: "p"})
		_, errX := b.GetActivity(ctx, tn, act1)
		if errA != nil {
			t.Fatal(errA)
		}
		got := [5]bool{errS == nil, len(q) == 1, len(atts) == 1, errD == nil, errX == nil}
		if got != [5]bool{present, present, present, present, present} {
			t.Fatalf("tenant %s after purge (statement, query, attachment, document, activity present): %v, want all %v", tn, got, present)
		}
	}
	check("gone", false)
	check("kept", true)
	// A purged tenant can start again, with the same ids.
	put(t, b, "gone", st("s", "other"))
}

// testCrash starts a child process that Puts statements and reports each acknowledged one,
// kills it with SIGKILL mid-stream, and checks every acknowledged statement is there.
func testCrash(t *testing.T, c config) {
	dsn := c.newDSN(t)
	// 50 acknowledged batches are plenty, and keep the test short on a backend that waits
	// for an index refresh per write.
	acked := testenv.KillAfterAcks(t, childEnv, dsn, 50, 60*time.Second)
	if len(acked) < 20 {
		t.Fatalf("child acknowledged only %d batches before the deadline", len(acked))
	}
	b, err := c.openDSN(dsn)
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer b.Close()
	for _, id := range acked {
		for _, sid := range []string{id + "-a", id + "-b"} {
			s, err := b.Get(ctx, "crash", sid)
			if err != nil {
				t.Fatalf("acknowledged statement %s lost after kill -9: %v", sid, err)
			}
			if !jsonEqual(withoutStored(s.Raw), withoutStored(crashStatement(sid).Raw)) {
				t.Fatalf("statement %s corrupted: %s", sid, s.Raw)
			}
		}
	}
	if got := queryAll(t, b, statements.Query{Tenant: "crash", Agent: ann, Limit: statements.MaxLimit}); len(got) < 2*len(acked) {
		t.Fatalf("index lost entries after kill -9: %d statements found by agent, %d acknowledged", len(got), 2*len(acked))
	}
	t.Logf("%d acknowledged batches all present after kill -9", len(acked))
}

func crashStatement(id string) *statements.Statement {
	s := st(id, "h-"+id)
	s.Agents = []string{ann}
	return s
}

func crashChild(c config, dsn string) {
	b, err := c.openDSN(dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(3)
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		id := fmt.Sprintf("c%06d", i)
		if err := b.Put(ctx, "crash", []*statements.Statement{crashStatement(id + "-a"), crashStatement(id + "-b")}, nil); err != nil {
			fmt.Fprintln(os.Stderr, "child put:", err)
			os.Exit(4)
		}
		fmt.Fprintf(w, "ACK %s\n", id)
		w.Flush()
	}
}
