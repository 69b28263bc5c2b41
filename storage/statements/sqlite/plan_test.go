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
			// A filtered query merges (MERGE (UNION)) the index walk of the direct matches
			// (LEFT) with the StatementRef matches (RIGHT): those scan and sort only the
			// recursive CTE h of targeting statements, found through statements_targets, and
			// the outer query sorts the page p it fetches by rowid.
			direct, refs, filtered := strings.Cut(joined, "; RIGHT; ")
			if strings.Contains(direct, "SCAN") || strings.Contains(direct, "TEMP B-TREE") {
				t.Errorf("query %+v scans or sorts: %s", q, joined)
			}
			if filtered {
				for _, d := range strings.Split(refs, "; ") {
					if strings.HasPrefix(d, "SCAN ") && d != "SCAN h" && d != "SCAN p" {
						t.Errorf("query %+v: StatementRef part scans %q: %s", q, d, joined)
					}
				}
				if !strings.Contains(refs, "USING INDEX statements_targets (tenant=? AND target=?)") {
					t.Errorf("query %+v: recursion does not use statements_targets: %s", q, joined)
				}
			}
			if filtered != (q.Agent != "" || q.Verb != "" || q.Activity != "" || q.Registration != "") {
				t.Errorf("query %+v: StatementRef part present: %v: %s", q, filtered, joined)
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

// TestMigrateTarget opens a database written before the target column existed: Open adds it,
// fills it from the stored StatementRef objects (and voids), and filtered queries use it.
func TestMigrateTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	batch := []*statements.Statement{
		{ID: "m", Hash: "h", Raw: []byte(`{"id":"m"}`), VerbID: "v"},
		{ID: "r", Hash: "h", Raw: []byte(`{"id":"r","object":{"objectType":"StatementRef","id":"M"}}`), VerbID: "w", Target: "m"},
		{ID: "x", Hash: "h", Raw: []byte(`{"id":"x","object":{"objectType":"Activity","id":"m"}}`), VerbID: "w"},
	}
	if err := s.Put(ctx, "t", batch, nil); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DROP INDEX statements_targets`, `ALTER TABLE statements DROP COLUMN target`} {
		if _, err := s.db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if g, err := s.Get(ctx, "t", "r"); err != nil || g.Target != "m" {
		t.Fatalf("migrated target of r: %+v, %v", g, err)
	}
	if g, err := s.Get(ctx, "t", "x"); err != nil || g.Target != "" {
		t.Fatalf("migrated target of x: %+v, %v", g, err)
	}
	p, err := s.Query(ctx, statements.Query{Tenant: "t", Verb: "v"})
	if err != nil || len(p.Statements) != 2 || p.Statements[0].ID != "r" || p.Statements[1].ID != "m" {
		t.Fatalf("query after migration: %+v, %v", p, err)
	}
}
