package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
)

// TestQueryPlans pins that every filter shape walks an index in stored order: a scan of
// statements or a temporary sort would make a query cost grow with the whole store.
func TestQueryPlans(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "plans.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	for _, q := range []statements.Query{
		{},
		{Ascending: true, Since: now, Until: now},
		{Agent: "a"},
		{Agent: "a", RelatedAgents: true},
		{Verb: "v"},
		{Activity: "x"},
		{Activity: "x", RelatedActivities: true},
		{Registration: "r"},
		{Agent: "a", Verb: "v", Activity: "x", Registration: "r", Since: now, Until: now},
	} {
		q.Tenant = "t"
		for _, after := range []int64{0, 42} {
			sql, args := buildQuery(q, after, 100)
			rows, err := s.db.Query(`EXPLAIN QUERY PLAN `+sql, args...)
			if err != nil {
				t.Fatal(err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			joined := strings.Join(plan, "; ")
			if strings.Contains(joined, "SCAN") || strings.Contains(joined, "TEMP B-TREE") {
				t.Errorf("query %+v scans or sorts: %s", q, joined)
			}
		}
	}
}

// TestPurgeLeavesNoIndexRows checks what the contract suite cannot see through the port:
// a purged tenant leaves no orphaned terms behind.
func TestPurgeLeavesNoIndexRows(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "purge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	st := &statements.Statement{ID: "x", Hash: "h", Raw: []byte(`{}`), Agents: []string{"a"}, VerbID: "v"}
	if err := s.Put(ctx, "t", []*statements.Statement{st}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PurgeTenant(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT (SELECT count(*) FROM terms) + (SELECT count(*) FROM statements)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows left after purge (%v)", n, err)
	}
}
