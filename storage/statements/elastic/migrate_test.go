package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/statements"
)

// An alias on a version 1 statements index (without the report fields) is moved by New to
// the current version, with every statement copied and its report fields derived; without
// WithReportFields New refuses.
func TestMigrateV1(t *testing.T) {
	prefix := newPrefix(t)
	c, err := elastic.New(elastic.Config{URLs: []string{testURL(t)}, IndexPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Version 1's definition: today's without the report fields.
	body, err := mappings.Render(mappings.Statements, mappings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var def map[string]map[string]any
	if err := json.Unmarshal(body, &def); err != nil {
		t.Fatal(err)
	}
	props := def["mappings"]["properties"].(map[string]any)
	for _, f := range []string{"result", "report_actor_ifis", "report_actors"} {
		delete(props, f)
	}
	def["mappings"]["_meta"] = map[string]any{"lectern_mapping": "statements", "lectern_version": 1}
	body, _ = json.Marshal(def)
	old := prefix + "statements_v1"
	if err := c.Do(ctx, "create v1", esapi.IndicesCreateRequest{Index: old, Body: bytes.NewReader(body)}, nil); err != nil {
		t.Fatal(err)
	}
	actions, _ := json.Marshal(map[string]any{"actions": []any{map[string]any{"add": map[string]any{"index": old, "alias": c.Alias(mappings.Statements)}}}})
	if err := c.Do(ctx, "alias v1", esapi.IndicesUpdateAliasesRequest{Body: bytes.NewReader(actions)}, nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for i := range 3 {
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
		f.Tenant, f.Stored, f.Result, f.ReportActors = "t", time.Now().Add(time.Duration(i)*time.Millisecond), false, nil
		fmt.Fprintf(&buf, `{"create":{"_index":%q,"_id":%q}}`+"\n", old, docID("t", f.ID))
		d, _ := json.Marshal(toDoc(&f, false))
		buf.Write(append(d, '\n'))
	}
	if err := c.Do(ctx, "seed v1", esapi.BulkRequest{Body: &buf, Refresh: "true"}, nil); err != nil {
		t.Fatal(err)
	}

	if _, err := New(ctx, c); err == nil {
		t.Fatal("New migrated a version 1 index without WithReportFields")
	}
	s, err := New(ctx, c, WithReportFields(xapi.ReportFields))
	if err != nil {
		t.Fatal(err)
	}
	var aliases map[string]json.RawMessage
	if err := c.Do(ctx, "get alias", esapi.IndicesGetAliasRequest{Name: []string{c.Alias(mappings.Statements)}}, &aliases); err != nil {
		t.Fatal(err)
	}
	if _, ok := aliases[c.Index(mappings.Statements)]; !ok || len(aliases) != 1 {
		t.Fatalf("alias after migration: %v", aliases)
	}
	actors, err := s.ReportActors(ctx, statements.ReportQuery{Tenant: "t", Activity: "http://example.com/a"})
	if err != nil || len(actors.Items) != 3 || actors.Items[2].IFI != "mbox:mailto:l2@example.com" {
		t.Fatalf("actors after migration: %v %+v", err, actors)
	}
	results, err := s.ReportResults(ctx, statements.ReportQuery{Tenant: "t", Agent: "mbox:mailto:l1@example.com"})
	if err != nil || len(results.Items) != 1 {
		t.Fatalf("results after migration: %v %+v", err, results)
	}
	// New statements go to the new index, and a second New has nothing to migrate.
	if _, err := New(ctx, c); err != nil {
		t.Fatalf("New after the migration: %v", err)
	}
}
