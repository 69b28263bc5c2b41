package elastic

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/indexer"
)

// TestLargeVocabulary indexes a version of 400 chunks with 40,000 distinct lexemes: every
// chunk carries the version's lexemes (vlex), ~150 MB of bulk JSON in all, more than
// Elasticsearch accepts in one request (http.max_content_length, 100 MB), so it passes only
// because bulk requests are cut by size; a keyword search across two chunks then finds it.
func TestLargeVocabulary(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t)
	ix := open(t, c, indexer.Model{Name: "m", Dims: 3})
	var chunks []indexer.Chunk
	for i := range 400 {
		var w []string
		for j := range 100 {
			w = append(w, fmt.Sprintf("w%dx%d", i, j))
		}
		chunks = append(chunks, indexer.Chunk{Location: fmt.Sprint(i), Text: strings.Join(w, " "), Active: true})
	}
	start := time.Now()
	if err := ix.IndexContent(ctx, "t", "big", 1, chunks, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("indexed 400 chunks with 40,000 lexemes in %v", time.Since(start))
	hits, err := ix.Search(ctx, indexer.Query{Tenant: "t", Type: indexer.Lexical, Term: "w3x4 w399x99"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].ContentID != "big" {
		t.Fatalf("hits %+v, want the one version", hits)
	}
}
