package bleve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/indexertest"
	"github.com/lectern-lms/lectern/mappings/analysis"
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

// TestGroupCommit: concurrent writes committed in groups (GroupWindow) each land whole.
func TestGroupCommit(t *testing.T) {
	ix, err := Open(t.TempDir(), Options{Model: indexertest.Model, GroupWindow: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	indexertest.ConcurrentWrites(t, ix)
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

// TestPhraseCounts checks that phrase search, which counts occurrences from the positions in
// Bleve's postings, scores every chunk with indexer.PhraseOccurrences of its text (what
// indexer/elastic computes from the text) and finds exactly the chunks where it is not zero,
// across many versions (several Bleve segments), with repeated and overlapping terms.
func TestPhraseCounts(t *testing.T) {
	ix, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	vocab := strings.Fields("fire fires exit drill the a of in don't carrot's cake cakes")
	texts := map[string]string{} // "content/location" -> text
	for c := range 12 {
		var chunks []indexer.Chunk
		for i := range 8 {
			words := make([]string, 5+rng.IntN(30))
			for j := range words {
				words[j] = vocab[rng.IntN(len(vocab))]
			}
			text := strings.Join(words, " ")
			if c == 0 && i == 0 {
				text = "fire fire fire, the fire! Fire-fire"
			}
			id, loc := fmt.Sprintf("c%02d", c), fmt.Sprintf("p%d", i)
			texts[id+"/"+loc] = text
			chunks = append(chunks, indexer.Chunk{Active: true, Location: loc, Text: text})
		}
		if err := ix.IndexContent(ctx, "t", fmt.Sprintf("c%02d", c), 1, chunks, nil); err != nil {
			t.Fatal(err)
		}
	}
	phrases := []string{"fire fire", "fire", "the fire", "fire the fire", "of a", "carrot cake", "don't", "exit drill fire",
		"cake the", "fire a fire", "drill"}
	for range 30 {
		words := make([]string, 1+rng.IntN(4))
		for j := range words {
			words[j] = vocab[rng.IntN(len(vocab))]
		}
		phrases = append(phrases, strings.Join(words, " "))
	}
	for _, p := range phrases {
		terms := analysis.PhraseTerms(p)
		if !slices.ContainsFunc(terms, func(s string) bool { return s != analysis.StopPlaceholder }) {
			continue
		}
		best := map[string]int{}
		for c := range 12 {
			id := fmt.Sprintf("c%02d", c)
			hits, err := ix.Search(ctx, indexer.Query{Tenant: "t", Type: indexer.Lexical, Term: `"` + p + `"`, ContentID: id, Limit: indexer.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, h := range hits {
				got[h.Location] = h.Score
			}
			for i := range 8 {
				loc := fmt.Sprintf("p%d", i)
				want := indexer.PhraseOccurrences(texts[id+"/"+loc], terms)
				if s, ok := got[loc]; ok != (want > 0) || s != float64(want) {
					t.Errorf("%q in %s/%s (%q): score %v (found %v), want %d", p, id, loc, texts[id+"/"+loc], s, ok, want)
				}
				best[id] = max(best[id], want)
			}
		}
		hits, err := ix.Search(ctx, indexer.Query{Tenant: "t", Type: indexer.Lexical, Term: `"` + p + `"`})
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, h := range hits {
			if h.Score != float64(best[h.ContentID]) {
				t.Errorf("%q tenant-wide: %s scores %v, want %d", p, h.ContentID, h.Score, best[h.ContentID])
			}
		}
		for _, n := range best {
			if n > 0 {
				found++
			}
		}
		if len(hits) != found {
			t.Errorf("%q tenant-wide: %d hits, want %d", p, len(hits), found)
		}
	}
}

// TestSemanticAfterRewrites checks semantic search against exact cosines after many
// re-indexes, status changes and deletions (which leave dead rows in the vector matrix and
// compact it): every live, active version is found once, scored by its best chunk, in
// order, and pages are slices of the full ranking.
func TestSemanticAfterRewrites(t *testing.T) {
	const dims = 8
	ix, err := Open(t.TempDir(), Options{Model: indexer.Model{Name: "m", Dims: dims}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	randVec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	type state struct {
		vecs   [][]float32
		active bool
	}
	live := map[string]*state{}
	put := func(id string) {
		st := &state{active: true}
		var chunks []indexer.Chunk
		for i := range 1 + rng.IntN(16) {
			vec := randVec()
			if i == 2 {
				vec = nil // a chunk without a vector
			}
			st.vecs = append(st.vecs, vec)
			chunks = append(chunks, indexer.Chunk{Active: true, Location: fmt.Sprint(i), Text: "x", Vector: vec})
		}
		if err := ix.IndexContent(ctx, "t", id, 1, chunks, nil); err != nil {
			t.Fatal(err)
		}
		live[id] = st
	}
	const items = 60
	for i := range items {
		put(fmt.Sprintf("c%03d", i))
	}
	for round := range 5 {
		for i := range items {
			id := fmt.Sprintf("c%03d", i)
			switch {
			case live[id] == nil:
				put(id)
			case rng.IntN(10) == 0:
				if err := ix.DeleteContent(ctx, "t", id, nil); err != nil {
					t.Fatal(err)
				}
				delete(live, id)
			case rng.IntN(3) == 0:
				put(id)
			default:
				active := rng.IntN(4) > 0
				if err := ix.SetStatus(ctx, "t", id, 1, nil, active); err != nil {
					t.Fatal(err)
				}
				live[id].active = active
			}
		}
		qv := randVec()
		type scoredID struct {
			id    string
			score float64
		}
		var want []scoredID
		scoreOf := map[string]float64{}
		for id, st := range live {
			if !st.active {
				continue
			}
			best, ok := math.Inf(-1), false
			for _, v := range st.vecs {
				if v != nil {
					best, ok = max(best, embed.Cosine(v, qv)), true
				}
			}
			if ok {
				want = append(want, scoredID{id, best})
				scoreOf[id] = best
			}
		}
		slices.SortFunc(want, func(a, b scoredID) int { return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.id, b.id)) })
		all, err := ix.Search(ctx, indexer.Query{Tenant: "t", Type: indexer.Semantic, Vector: qv, Limit: indexer.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != len(want) {
			t.Fatalf("round %d: %d hits, want %d", round, len(all), len(want))
		}
		for i, h := range all {
			if math.Abs(h.Score-want[i].score) > 1e-5 || h.MatchStrength == nil || h.Location != "" {
				t.Fatalf("round %d, hit %d: %+v, want %s at %v", round, i, h, want[i].id, want[i].score)
			}
			// Cosines within rounding of each other may come in either order.
			if s, ok := scoreOf[h.ContentID]; !ok || h.ContentID != want[i].id && math.Abs(want[i].score-s) > 1e-5 {
				t.Fatalf("round %d, hit %d: %s, want %s", round, i, h.ContentID, want[i].id)
			}
		}
		page, err := ix.Search(ctx, indexer.Query{Tenant: "t", Type: indexer.Semantic, Vector: qv, Skip: 17, Limit: 25})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 25 || !slices.EqualFunc(page, all[17:42], func(a, b indexer.Hit) bool { return a.ContentID == b.ContentID && a.Score == b.Score }) {
			t.Errorf("round %d: page 17+25 is not a slice of the full ranking", round)
		}
	}
	// Memory stays bounded by the live vectors: dead rows never outnumber live ones by more
	// than the compaction threshold (without compaction they would, several times over).
	if s := ix.vectors["t"]; len(s.chunk)-s.live > max(s.live, 1023) {
		t.Errorf("%d rows for %d live ones: dead rows are not compacted", len(s.chunk), s.live)
	}
}

// TestConcurrentSearch runs searches of every type while other goroutines re-index, change
// the status of, delete and purge other content (moving and compacting the vector matrix):
// the untouched version is found by every search, every time (run with -race to check the
// locking too).
func TestConcurrentSearch(t *testing.T) {
	const dims = 4
	ix, err := Open(t.TempDir(), Options{Model: indexer.Model{Name: "m", Dims: dims}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	anchor := []indexer.Chunk{{Active: true, Location: "p", Text: "the stable anchor stays", Vector: []float32{1, 0, 0, 0}}}
	if err := ix.IndexContent(ctx, "t", "anchor", 1, anchor, []indexer.Field{{FieldType: indexer.FieldTitle, Value: "Anchor"}}); err != nil {
		t.Fatal(err)
	}
	queries := []indexer.Query{
		{Tenant: "t", Type: indexer.Lexical, Term: "anchor"},
		{Tenant: "t", Type: indexer.Lexical, Term: `"stable anchor"`},
		{Tenant: "t", Type: indexer.FieldSearch, Term: "anchor"},
		{Tenant: "t", Type: indexer.Semantic, Vector: []float32{1, 0, 0, 0}},
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				q := queries[n%len(queries)]
				hits, err := ix.Search(ctx, q)
				if err != nil || len(hits) == 0 || hits[0].ContentID != "anchor" {
					t.Errorf("%v %q during writes: %+v, %v; want anchor first", q.Type, q.Term, hits, err)
					return
				}
			}
		})
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 40 {
		id := fmt.Sprintf("churn%d", i%7)
		var chunks []indexer.Chunk
		for j := range 1 + rng.IntN(4) {
			chunks = append(chunks, indexer.Chunk{Active: true, Location: fmt.Sprint(j), Text: "stable anchor? no: churn",
				Vector: []float32{0.5, float32(rng.NormFloat64()) + 1, float32(rng.NormFloat64()), 1}})
		}
		var err error
		switch i % 4 {
		case 0, 1:
			err = ix.IndexContent(ctx, "t", id, 1, chunks, nil)
			if err == nil {
				err = ix.IndexContent(ctx, "other", id, 1, chunks, nil)
			}
		case 2:
			err = ix.SetStatus(ctx, "t", id, 1, []string{"x"}, rng.IntN(2) == 0)
		case 3:
			err = ix.DeleteContent(ctx, "t", id, nil)
			if err == nil {
				err = ix.PurgeTenant(ctx, "other")
			}
		}
		if err != nil && !errors.Is(err, indexer.ErrNotFound) {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
}
