package bleve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/lectern-lms/lectern/content/analysis"
	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/indexertest"
)

func TestContract(t *testing.T) {
	indexertest.Run(t, func(t *testing.T) indexer.Index {
		ix, err := Open(t.TempDir(), Options{Model: indexertest.Model})
		if err != nil {
			t.Fatal(err)
		}
		return ix
	})
}

// TestReopen checks that the index survives a restart and that it refuses another model.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	model := indexer.Model{Name: "m", Dims: 2}
	ix, err := Open(dir, Options{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	err = ix.IndexContent(ctx, "t", "c", 1, []indexer.Chunk{{Active: true, Location: "p1", Text: "persistent carrots", Vector: []float32{1, 0}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{Model: indexer.Model{Name: "other", Dims: 2}}); !errors.Is(err, indexer.ErrModelMismatch) {
		t.Fatalf("reopen with another model: %v, want ErrModelMismatch", err)
	}
	ix, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Model() != model {
		t.Errorf("model after reopen = %+v", ix.Model())
	}
	for _, q := range []indexer.Query{
		{Tenant: "t", Type: indexer.Lexical, Term: "carrot"},
		{Tenant: "t", Type: indexer.Semantic, Vector: []float32{1, 1}},
	} {
		hits, err := ix.Search(ctx, q)
		if err != nil || len(hits) != 1 || hits[0].ContentID != "c" {
			t.Errorf("after reopen %v: %+v, %v", q.Type, hits, err)
		}
	}
}

// TestRecoverDirty simulates a crash after store.db took a new record but before Bleve did:
// the next Open replays the version.
func TestRecoverDirty(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexContent(ctx, "t", "c", 1, []indexer.Chunk{{Active: true, Location: "p", Text: "old words"}}, nil); err != nil {
		t.Fatal(err)
	}
	key := recordKey("t", "c", 1)
	r := &record{Tenant: "t", ContentID: "c", Version: 1, Status: indexer.Status{Active: true},
		Chunks: []indexer.Chunk{{Tenant: "t", ContentID: "c", Version: 1, Active: true, Location: "p", Text: "new words"}}}
	if err := ix.store(map[string]*record{key: r, recordKey("t", "gone", 1): nil}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for term, want := range map[string]int{"old": 0, "new": 1} {
		hits, err := ix.Search(ctx, indexer.Query{Tenant: "t", Type: indexer.Lexical, Term: term})
		if err != nil || len(hits) != want {
			t.Errorf("%q after recovery: %+v, %v; want %d hits", term, hits, err, want)
		}
	}
}

// TestTermVectorCounts checks that the term frequencies keyword scoring reads off Bleve's
// term vectors are indexer.TermCounts' (which indexer/elastic computes from the text).
func TestTermVectorCounts(t *testing.T) {
	ix, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	texts := []string{
		"Carrot’s CARROTS—carrot-cake; the carrots' cake, and cakes.",
		"Don't jump: she jumped, JUMPING jumps over jumpers",
		"fire fire fire " + strings.Repeat("x", 300) + " fire",
		"the of and a",
	}
	var chunks []indexer.Chunk
	for i, s := range texts {
		chunks = append(chunks, indexer.Chunk{Active: true, Location: fmt.Sprint(i), Text: s})
	}
	if err := ix.IndexContent(context.Background(), "t", "c", 1, chunks, nil); err != nil {
		t.Fatal(err)
	}
	lexemes := analysis.Lexemes("carrot cake jump fire don x")
	var disj []query.Query
	for _, l := range lexemes {
		tq := query.NewTermQuery(l)
		tq.SetField("text")
		disj = append(disj, tq)
	}
	raw, err := ix.all(context.Background(), query.NewDisjunctionQuery(disj), true)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, h := range raw {
		_, i, ok := ix.chunkOf(h.id)
		if !ok {
			t.Fatalf("unknown document %q", h.id)
		}
		seen++
		want := indexer.TermCounts(texts[i], lexemes)
		for j, l := range lexemes {
			if h.terms[l] != want[j] {
				t.Errorf("chunk %d, %q: %d term vector locations, TermCounts %d", i, l, h.terms[l], want[j])
			}
		}
	}
	if seen != 3 {
		t.Errorf("%d chunks hold a lexeme, want 3", seen)
	}
}
