package elastic

import (
	"testing"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/mappings"
)

// TestLostIndexIsRecreated deletes the content index under an open Index: a search answers
// empty (not an error) and a write succeeds, both recreating the index and its alias with the
// recorded model, and no concrete index named like the alias is auto-created.
func TestLostIndexIsRecreated(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t)
	model := indexer.Model{Name: "m", Dims: 3}
	ix := open(t, c, model)
	chunk := []indexer.Chunk{{Active: true, Location: "p", Text: "persistent carrots", Vector: []float32{1, 0, 0}}}
	if err := ix.IndexContent(ctx, "t", "c", 1, chunk, nil); err != nil {
		t.Fatal(err)
	}
	lose := func() {
		t.Helper()
		err := c.Do(ctx, "delete index", esapi.IndicesDeleteRequest{Index: []string{c.Index(mappings.Content)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		missing, err := c.MissingAliases(ctx, mappings.Content)
		if err != nil || len(missing) != 1 || missing[0] != c.Alias(mappings.Content) {
			t.Fatalf("MissingAliases after delete = %v, %v", missing, err)
		}
	}
	lexical := indexer.Query{Tenant: "t", Type: indexer.Lexical, Term: "carrots"}

	lose()
	hits, err := ix.Search(ctx, lexical)
	if err != nil || len(hits) != 0 {
		t.Fatalf("search of a lost index = %+v, %v; want no hits, no error", hits, err)
	}
	if missing, err := c.MissingAliases(ctx, mappings.Content); err != nil || missing != nil {
		t.Fatalf("MissingAliases after the search = %v, %v", missing, err)
	}

	lose()
	if err := ix.IndexContent(ctx, "t", "c", 1, chunk, nil); err != nil {
		t.Fatalf("IndexContent into a lost index: %v", err)
	}
	if hits, err = ix.Search(ctx, lexical); err != nil || len(hits) != 1 || hits[0].ContentID != "c" {
		t.Fatalf("search after the write = %+v, %v", hits, err)
	}
	var rows []struct {
		Index string `json:"index"`
	}
	err = c.Do(ctx, "list indices", esapi.CatIndicesRequest{Index: []string{c.Prefix() + "*"}, Format: "json", H: []string{"index"}}, &rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Index != c.Index(mappings.Content) {
		t.Errorf("indices = %+v, want only %s (no auto-created index named like the alias)", rows, c.Index(mappings.Content))
	}
	again, err := New(ctx, c, Options{})
	if err != nil || again.Model() != model {
		t.Errorf("model recorded in the recreated index = %+v, %v; want %+v", again.Model(), err, model)
	}
}
