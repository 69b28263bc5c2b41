package statementstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lectern-lms/lectern/storage/statements"
)

// rep fabricates a statement about activity (none: the object is not an Activity) by the
// report actors ifis, named name.
func rep(id, activity string, result bool, name string, ifis ...string) *statements.Statement {
	s := st(id, id)
	s.Activity, s.Result = activity, result
	if activity != "" {
		s.RelatedActivities = []string{activity}
		for _, ifi := range ifis {
			agent, _ := json.Marshal(map[string]string{"objectType": "Agent", "name": name, "mbox": ifi})
			s.ReportActors = append(s.ReportActors, statements.ReportActor{IFI: ifi, Agent: agent})
		}
	}
	s.Agents = ifis
	s.RelatedAgents = ifis
	return s
}

// viewedBy adds ifi as a related agent (an instructor, say).
func viewedBy(s *statements.Statement, ifi string) *statements.Statement {
	s.RelatedAgents = append(slices.Clone(s.RelatedAgents), ifi)
	return s
}

// reportFixture stores, in tenant "t1" (and one statement in "t2"):
//
//	r1 ann  a1 result          r5 ann  a2 no result
//	r2 bob  a1 result (voided) r6 group members dan, eve, a3 result
//	r3 bob  a2 result          r7 ann  no Activity object, result
//	r4 cat  a1 result, viewed by kim
//	v1 voids r2; t2: x1 zed a1 result
func reportFixture(t *testing.T, b statements.Backend) {
	t.Helper()
	put(t, b, "t1",
		rep("r1", "a1", true, "Ann", "ann"),
		rep("r2", "a1", true, "Bob", "bob"),
		rep("r3", "a2", true, "Bob", "bob"),
		viewedBy(rep("r4", "a1", true, "Cat", "cat"), "kim"),
		rep("r5", "a2", false, "Ann B.", "ann"),
		rep("r6", "a3", true, "", "dan", "eve"),
		rep("r7", "", true, "Ann", "ann"),
	)
	v := st("v1", "v1")
	v.Voids, v.Agents, v.RelatedAgents = "r2", []string{"bob"}, []string{"bob"}
	put(t, b, "t1", v)
	put(t, b, "t2", rep("x1", "a1", true, "Zed", "zed"))
	if got := get(t, b, "t1", "r6"); !got.Result || len(got.ReportActors) != 2 || got.ReportActors[1].IFI != "eve" ||
		!jsonEqual(got.ReportActors[0].Agent, []byte(`{"objectType":"Agent","name":"","mbox":"dan"}`)) {
		t.Fatalf("report fields do not round-trip: %+v", got)
	}
}

func reportResultIDs(t *testing.T, b statements.Backend, q statements.ReportQuery) []string {
	t.Helper()
	var out []string
	for pages := 0; ; pages++ {
		p, err := b.ReportResults(ctx, q)
		if err != nil {
			t.Fatalf("report results %+v: %v", q, err)
		}
		if p.Next != "" && len(p.Items) != statements.ReportLimit(q) {
			t.Fatalf("non-final results page has %d items, limit %d", len(p.Items), statements.ReportLimit(q))
		}
		for _, s := range p.Items {
			out = append(out, s.ID)
		}
		if p.Next == "" {
			return out
		}
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		q.Cursor = p.Next
	}
}

func testReportResults(t *testing.T, b statements.Backend) {
	reportFixture(t, b)
	for _, tc := range []struct {
		q    statements.ReportQuery
		want []string
	}{
		{statements.ReportQuery{}, []string{"r6", "r4", "r3", "r1"}},
		{statements.ReportQuery{Agent: "ann"}, []string{"r1"}},
		{statements.ReportQuery{Agent: "bob"}, []string{"r3"}},
		{statements.ReportQuery{Activity: "a1"}, []string{"r4", "r1"}},
		{statements.ReportQuery{Activity: "a1", Agent: "cat"}, []string{"r4"}},
		{statements.ReportQuery{Activity: "a1", Viewer: "kim"}, []string{"r4"}},
		{statements.ReportQuery{Activity: "a1", Viewer: "nobody"}, nil},
		{statements.ReportQuery{Agent: "dan"}, []string{"r6"}},
		{statements.ReportQuery{Activity: "a2", Limit: 1}, []string{"r3"}},
		{statements.ReportQuery{Limit: 1}, []string{"r6", "r4", "r3", "r1"}},
		{statements.ReportQuery{Activity: "a1", Limit: 1}, []string{"r4", "r1"}},
	} {
		tc.q.Tenant = "t1"
		if got := reportResultIDs(t, b, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("results %+v: got %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := reportResultIDs(t, b, statements.ReportQuery{Tenant: "t2", Activity: "a1"}); !slices.Equal(got, []string{"x1"}) {
		t.Errorf("tenant t2: %v", got)
	}
	p, err := b.ReportResults(ctx, statements.ReportQuery{Tenant: "t1", Limit: 1})
	if err != nil || p.Next == "" {
		t.Fatalf("first page: %v %+v", err, p)
	}
	for _, q := range []statements.ReportQuery{
		{Tenant: "t1", Agent: "ann", Cursor: p.Next, Limit: 1},
		{Tenant: "t2", Cursor: p.Next, Limit: 1},
		{Tenant: "t1", Cursor: "garbage"},
	} {
		if _, err := b.ReportResults(ctx, q); !errors.Is(err, statements.ErrInvalid) {
			t.Errorf("cursor replayed with %+v: want ErrInvalid, got %v", q, err)
		}
	}
	if _, err := b.ReportActors(ctx, statements.ReportQuery{Tenant: "t1", Cursor: p.Next}); !errors.Is(err, statements.ErrInvalid) {
		t.Errorf("results cursor given to actors: want ErrInvalid, got %v", err)
	}
}

func reportActivityIDs(t *testing.T, b statements.Backend, q statements.ReportQuery) ([]string, []statements.ReportActivity) {
	t.Helper()
	var out []string
	var all []statements.ReportActivity
	for pages := 0; ; pages++ {
		p, err := b.ReportActivities(ctx, q)
		if err != nil {
			t.Fatalf("report activities %+v: %v", q, err)
		}
		for _, a := range p.Items {
			out = append(out, a.ID)
		}
		all = append(all, p.Items...)
		if p.Next == "" {
			return out, all
		}
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		q.Cursor = p.Next
	}
}

func testReportActivities(t *testing.T, b statements.Backend) {
	reportFixture(t, b)
	// Only a voided statement is about a9: it is no activity of the report.
	put(t, b, "t1", rep("r9", "a9", true, "Bob", "bob"))
	v := st("v9", "v9")
	v.Voids = "r9"
	put(t, b, "t1", v)
	def := json.RawMessage(`{"objectType":"Activity","id":"a2","definition":{"name":{"en-US":"Two"}}}`)
	if err := b.PutActivity(ctx, "t1", "a2", def); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    statements.ReportQuery
		want []string
	}{
		{statements.ReportQuery{}, []string{"a1", "a2", "a3"}},
		{statements.ReportQuery{Limit: 1}, []string{"a1", "a2", "a3"}},
		{statements.ReportQuery{Limit: 2}, []string{"a1", "a2", "a3"}},
		{statements.ReportQuery{Agent: "ann"}, []string{"a1", "a2"}},
		{statements.ReportQuery{Agent: "ann", Limit: 1}, []string{"a1", "a2"}},
		{statements.ReportQuery{Agent: "bob"}, []string{"a2"}},
		{statements.ReportQuery{Viewer: "kim"}, []string{"a1"}},
		{statements.ReportQuery{Agent: "ann", Viewer: "kim"}, nil},
		{statements.ReportQuery{Agent: "nobody"}, nil},
	} {
		tc.q.Tenant = "t1"
		if got, _ := reportActivityIDs(t, b, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("activities %+v: got %v, want %v", tc.q, got, tc.want)
		}
	}
	_, all := reportActivityIDs(t, b, statements.ReportQuery{Tenant: "t1"})
	if len(all) != 3 || !jsonEqual(all[1].Canonical, def) || all[0].Canonical != nil {
		t.Errorf("canonical definitions: %+v", all)
	}
	if got, _ := reportActivityIDs(t, b, statements.ReportQuery{Tenant: "t2"}); !slices.Equal(got, []string{"a1"}) {
		t.Errorf("tenant t2: %v", got)
	}
	if got, _ := reportActivityIDs(t, b, statements.ReportQuery{Tenant: "t3"}); got != nil {
		t.Errorf("empty tenant: %v", got)
	}
}

func testReportActors(t *testing.T, b statements.Backend) {
	reportFixture(t, b)
	// Ann's latest statement about an activity names her "Ann B." (r5, no result).
	list := func(q statements.ReportQuery) []string {
		t.Helper()
		var out []string
		for pages := 0; ; pages++ {
			p, err := b.ReportActors(ctx, q)
			if err != nil {
				t.Fatalf("report actors %+v: %v", q, err)
			}
			for _, a := range p.Items {
				var m struct{ Name, Mbox string }
				if err := json.Unmarshal(a.Agent, &m); err != nil || m.Mbox != a.IFI {
					t.Fatalf("actor %s: agent %s", a.IFI, a.Agent)
				}
				out = append(out, fmt.Sprintf("%s=%s", a.IFI, m.Name))
			}
			if p.Next == "" {
				return out
			}
			if pages > 100 {
				t.Fatal("paging does not end")
			}
			q.Cursor = p.Next
		}
	}
	for _, tc := range []struct {
		q    statements.ReportQuery
		want []string
	}{
		{statements.ReportQuery{}, []string{"ann=Ann B.", "bob=Bob", "cat=Cat", "dan=", "eve="}},
		{statements.ReportQuery{Limit: 2}, []string{"ann=Ann B.", "bob=Bob", "cat=Cat", "dan=", "eve="}},
		{statements.ReportQuery{Activity: "a1"}, []string{"ann=Ann", "cat=Cat"}},
		{statements.ReportQuery{Activity: "a1", Limit: 1}, []string{"ann=Ann", "cat=Cat"}},
		{statements.ReportQuery{Activity: "a2"}, []string{"ann=Ann B.", "bob=Bob"}},
		{statements.ReportQuery{Activity: "a3"}, []string{"dan=", "eve="}},
		{statements.ReportQuery{Viewer: "kim"}, []string{"cat=Cat"}},
		{statements.ReportQuery{Viewer: "ann"}, []string{"ann=Ann B."}},
		{statements.ReportQuery{Viewer: "ann", Activity: "a1"}, []string{"ann=Ann"}},
		{statements.ReportQuery{Viewer: "ann", Activity: "a3"}, nil},
		{statements.ReportQuery{Activity: "none"}, nil},
		// a prefix of another activity's id matches nothing of it
		{statements.ReportQuery{Activity: "a"}, nil},
	} {
		tc.q.Tenant = "t1"
		if got := list(tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("actors %+v: got %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := list(statements.ReportQuery{Tenant: "t2"}); !slices.Equal(got, []string{"zed=Zed"}) {
		t.Errorf("tenant t2: %v", got)
	}
}
