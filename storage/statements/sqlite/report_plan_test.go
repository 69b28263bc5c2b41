package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/storage/statements"
)

// TestReportPlans pins that no report reads every statement of a tenant: results walk a key
// in stored order without sorting, the loose scan seeks terms, and the agent- or
// viewer-driven groupings walk that agent's key (their GROUP BY sorts that agent's rows only).
func TestReportPlans(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "plans.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	plan := func(query string, args ...any) string {
		t.Helper()
		rows, err := s.db.Query(`EXPLAIN QUERY PLAN `+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, detail)
		}
		return strings.Join(out, "; ")
	}
	scans := func(p string, allowed ...string) bool {
		for _, d := range strings.Split(p, "; ") {
			if strings.HasPrefix(d, "SCAN ") && !strings.Contains(d, "USING") {
				ok := false
				for _, a := range allowed {
					ok = ok || d == "SCAN "+a || strings.HasPrefix(d, "SCAN "+a+" ")
				}
				if !ok {
					return true
				}
			}
		}
		return false
	}
	for _, q := range []statements.ReportQuery{
		{Agent: "a"}, {Activity: "x"}, {Agent: "a", Activity: "x", Viewer: "v"}, {Viewer: "v"}, {},
	} {
		q.Tenant = "t"
		for _, after := range []int64{0, 42} {
			query, args := resultsSQL(q, after, 100)
			p := plan(query, args...)
			if scans(p) || strings.Contains(p, "TEMP B-TREE") {
				t.Errorf("results %+v scans or sorts: %s", q, p)
			}
		}
	}
	if p := plan(looseScanSQL(scanActors), "t", "o:", "o;", 10); scans(p, "k", "CONSTANT") || strings.Contains(p, "TEMP B-TREE") {
		t.Errorf("loose scan scans or sorts: %s", p)
	}
	for _, q := range []statements.ReportQuery{{Agent: "a"}, {Viewer: "v"}, {Agent: "a", Viewer: "v"}} {
		q.Tenant = "t"
		query, args := agentActivitiesSQL(q, "", 100)
		if p := plan(query, args...); scans(p) || !strings.Contains(p, "SEARCH t USING PRIMARY KEY (tenant=? AND term=?)") {
			t.Errorf("activities %+v: %s", q, p)
		}
	}
	for _, q := range []statements.ReportQuery{{Viewer: "v"}, {Viewer: "v", Activity: "x"}} {
		q.Tenant = "t"
		query, args := viewerActorsSQL(q, "", 100)
		if p := plan(query, args...); scans(p, "j") || !strings.Contains(p, "SEARCH t USING PRIMARY KEY (tenant=? AND term=?)") {
			t.Errorf("actors %+v: %s", q, p)
		}
	}
}
