package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/storage/statements"
	"github.com/lectern-lms/lectern/storage/statements/sqlite"
)

// xapiStatements are n statements as the LRS stores them (fields from lrs/xapi).
func xapiStatements(t *testing.T, n int) []*statements.Statement {
	t.Helper()
	var out []*statements.Statement
	for i := range n {
		raw, _ := json.Marshal(map[string]any{
			"id":     fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			"actor":  map[string]any{"mbox": fmt.Sprintf("mailto:l%d@example.com", i), "name": fmt.Sprintf("L%d", i)},
			"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/completed"},
			"object": map[string]any{"id": "http://example.com/a"},
			"result": map[string]any{"success": true},
		})
		ss, _, err := xapi.ParseStatements(raw, xapi.V103)
		if err != nil {
			t.Fatal(err)
		}
		f := ss[0].Fields()
		f.Stored = time.Now()
		out = append(out, &f)
	}
	return out
}

// A database from before the report fields (no result column, no report actors or their
// terms) is migrated by Open with WithReportFields, and refused without it.
func TestMigrateReports(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lrs.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// More than one batch of the migration's keyset walk.
	if err := s.Put(ctx, "t", xapiStatements(t, 1203), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`ALTER TABLE statements DROP COLUMN result`,
		`DELETE FROM terms WHERE substr(term, 1, 2) IN ('p:', 'P:')`,
		`UPDATE statements SET lists = CAST(json_remove(CAST(lists AS TEXT), '$.p') AS BLOB)`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	db.Close()

	if s, err := sqlite.Open(path); err == nil {
		s.Close()
		t.Fatal("an old database opened without WithReportFields")
	}
	s, err = sqlite.Open(path, sqlite.WithReportFields(xapi.ReportFields))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	actors, err := s.ReportActors(ctx, statements.ReportQuery{Tenant: "t", Activity: "http://example.com/a", Limit: 3})
	if err != nil || len(actors.Items) != 3 || actors.Items[2].IFI != "mbox:mailto:l1001@example.com" || actors.Next == "" {
		t.Fatalf("actors after migration: %v %+v", err, actors)
	}
	results, err := s.ReportResults(ctx, statements.ReportQuery{Tenant: "t", Agent: "mbox:mailto:l1202@example.com"})
	if err != nil || len(results.Items) != 1 || !results.Items[0].Result {
		t.Fatalf("results after migration: %v %+v", err, results)
	}
}
