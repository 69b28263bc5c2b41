package elastic

import (
	"context"
	"errors"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/indexertest"
	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/mappings/analysis"
	"github.com/lectern-lms/lectern/mappings/analysis/analysistest"
	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/elastic/elastictest"
)

// newClient returns a client with an index prefix of its own, whose indices are deleted when
// the test ends.
func newClient(t *testing.T) *elastic.Client {
	return elastictest.NewClient(t, "lectern_test")
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// open returns a new index on an index of its own. Its refresh interval is shortened (every
// write forces a refresh anyway; that changes no result, only the time).
func open(t *testing.T, c *elastic.Client, model indexer.Model) *Index {
	t.Helper()
	ctx := testCtx(t)
	ix, err := New(ctx, c, Options{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Do(ctx, "put settings", esapi.IndicesPutSettingsRequest{
		Index: []string{c.Alias(mappings.Content)},
		Body:  strings.NewReader(`{"index":{"refresh_interval":"20ms"}}`),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// TestGroupCommit: concurrent writes sent in groups (GroupWindow) each land whole and
// searchable when their call returns.
func TestGroupCommit(t *testing.T) {
	c := newClient(t)
	ix := open(t, c, indexertest.Model)
	ix.commits.Window = 20 * time.Millisecond
	indexertest.ConcurrentWrites(t, ix)
}

func TestContract(t *testing.T) {
	testenv.External(t, "LECTERN_TEST_ELASTICSEARCH_URL")
	indexertest.Run(t, func(t *testing.T) indexer.Index {
		return open(t, newClient(t), indexertest.Model)
	})
}

// TestModel checks that the index records its model and refuses another one.
func TestModel(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t)
	if _, err := New(ctx, c, Options{}); err == nil {
		t.Error("New without a model on a missing index: no error")
	}
	model := indexer.Model{Name: "m", Dims: 3}
	ix := open(t, c, model)
	if ix.Model() != model {
		t.Errorf("Model() = %+v", ix.Model())
	}
	err := ix.IndexContent(ctx, "t", "c", 1, []indexer.Chunk{{Active: true, Location: "p", Text: "persistent carrots", Vector: []float32{1, 0, 0}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []indexer.Model{{Name: "other", Dims: 3}, {Name: "m", Dims: 4}} {
		if _, err := New(ctx, c, Options{Model: other}); !errors.Is(err, indexer.ErrModelMismatch) {
			t.Errorf("New with model %+v: %v, want ErrModelMismatch", other, err)
		}
	}
	again, err := New(ctx, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Model() != model {
		t.Errorf("recorded model = %+v, want %+v", again.Model(), model)
	}
	hits, err := again.Search(ctx, indexer.Query{Tenant: "t", Type: indexer.Semantic, Vector: []float32{1, 1, 0}})
	if err != nil || len(hits) != 1 || hits[0].ContentID != "c" {
		t.Errorf("semantic search on the reopened index: %+v, %v", hits, err)
	}
}

// TestReplaceIsAtomic re-indexes a version over and over while searches run: each chunk is
// replaced in place, so every search sees every chunk (old or new text), never nothing.
func TestReplaceIsAtomic(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t)
	ix := open(t, c, indexertest.Model)
	texts := []string{"apple", "banana"}
	put := func(i int) {
		var chunks []indexer.Chunk
		for j := range 3 {
			chunks = append(chunks, indexer.Chunk{Active: true, Location: fmt.Sprint("p", j), Text: texts[i%2] + " fruit"})
		}
		if err := ix.IndexContent(ctx, "t", "c", 1, chunks, nil); err != nil {
			t.Error(err)
		}
	}
	put(0)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= 10; i++ {
			put(i)
		}
		stop.Store(true)
	}()
	searches := 0
	for !stop.Load() {
		q := indexer.Query{Tenant: "t", Type: indexer.Lexical, Term: "fruit", ContentID: "c", ReturnMatch: true}
		hits, err := ix.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 3 {
			t.Fatalf("search during re-index: %d hits %+v, want 3", len(hits), hits)
		}
		searches++
	}
	wg.Wait()
	t.Logf("%d searches during 10 re-indexes", searches)
	// Nothing of the earlier calls is left over.
	if err := c.Do(ctx, "refresh", esapi.IndicesRefreshRequest{Index: []string{c.Alias(mappings.Content)}}, nil); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Count int `json:"count"`
	}
	if err := c.Do(ctx, "count", esapi.CountRequest{Index: []string{c.Alias(mappings.Content)}}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Count != 4 { // three chunks and the status document
		t.Errorf("%d documents in the index, want 4", res.Count)
	}
}

// TestPhraseAnalyzerMatchesGo checks that the analyzer of the phrase field
// (mappings.AnalyzerTerms, Elasticsearch's built-in whitespace analyzer) gives back exactly
// mappings/analysis.PhraseTerms from the field's value (phraseField), each at its word's
// position, for every line of mappings/analysis's corpus and for words the chain cuts or
// splits: what a phrase query matches depends on nothing else.
func TestPhraseAnalyzerMatchesGo(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t)
	if _, _, err := c.EnsureIndex(ctx, mappings.Content, mappings.Options{EmbeddingDims: 4}); err != nil {
		t.Fatal(err)
	}
	lines := analysistest.Corpus()
	extra := []string{
		"Management of change", "management for the changes", "Don't panic", "We can’t panic now",
		"_STOP_ _stop_ STOP stop", "the THE The tHe", "a b c d e f", "Is on the", "don’t won't shan't",
		strings.Repeat("longword", 40) + " end", strings.Repeat("𝐀", 200) + " x", "tab\tnew\nline\u3000ideographic\u00a0nbsp",
	}
	lines = append(lines, extra...)
	if len(lines) < 200 {
		t.Fatalf("corpus has %d lines, want at least 200", len(lines))
	}
	diverged := 0
	for _, line := range lines {
		var want []string
		terms := analysis.PhraseTerms(line)
		for i, tk := range analysis.Tokens(line) {
			want = append(want, fmt.Sprintf("%q@%d", terms[i], tk.Position))
		}
		toks, err := c.Analyze(ctx, mappings.Content, mappings.AnalyzerTerms, phraseField(line))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tk := range toks {
			got = append(got, fmt.Sprintf("%q@%d", tk.Token, tk.Position))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			diverged++
			t.Errorf("%s %q:\n  elasticsearch %v\n  go            %v", mappings.AnalyzerTerms, line, got, want)
		}
	}
	t.Logf("compared %d lines, %d divergences", len(lines), diverged)
}

// TestFieldValues checks what the contract suite does not: long values and times.
func TestFieldValues(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t)
	ix := open(t, c, indexertest.Model)
	created := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 7200))
	long := strings.Repeat("Ünïcode value ", 400)
	err := ix.IndexContent(ctx, "t", "c", 3, nil, []indexer.Field{
		{FieldType: indexer.FieldSummary, Value: long, Created: created},
		{FieldType: indexer.FieldTitle, Value: "ÉCOLE"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range []string{strings.ToUpper(long), "école"} {
		hits, err := ix.Search(ctx, indexer.Query{Tenant: "t", Type: indexer.FieldSearch, Term: term})
		if err != nil || len(hits) != 1 || hits[0].Version != 3 {
			t.Fatalf("field search %.20q: %+v, %v", term, hits, err)
		}
		if f := hits[0].Field; f.FieldType == indexer.FieldSummary && (!f.Created.Equal(created) || !f.Updated.IsZero() || f.Value != long) {
			t.Errorf("field = %+v", f)
		}
	}
	// A version without chunks exists: it can be re-tagged and deleted.
	if err := ix.SetStatus(ctx, "t", "c", 3, []string{"x"}, false); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(ctx, indexer.Query{Tenant: "t", Type: indexer.FieldSearch, Term: "école", IncludeInactive: true, Tags: []string{"x"}})
	if err != nil || len(hits) != 1 {
		t.Errorf("after SetStatus: %+v, %v", hits, err)
	}
	if err := ix.DeleteContent(ctx, "t", "c", nil); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Count int `json:"count"`
	}
	if err := c.Do(ctx, "count", esapi.CountRequest{Index: []string{c.Alias(mappings.Content)}}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Count != 0 {
		t.Errorf("%d documents left after DeleteContent", res.Count)
	}
}

// rankingCorpus indexes 30 versions of 3 chunks of random words (up to 80 each, stop words
// among them) and returns the chunks by "id@location".
func rankingCorpus(t *testing.T, ix *Index) map[string]string {
	t.Helper()
	ctx := testCtx(t)
	words := []string{"alpha", "beta", "gamma", "delta", "the", "of"}
	rnd := mrand.New(mrand.NewPCG(1, 2))
	corpus := map[string]string{}
	for v := range 30 {
		id := fmt.Sprintf("c%02d", v)
		var chunks []indexer.Chunk
		for k := range 3 {
			var ws []string
			for range rnd.IntN(80) {
				ws = append(ws, words[rnd.IntN(len(words))])
			}
			loc := fmt.Sprint("p", k)
			corpus[id+"@"+loc] = strings.Join(ws, " ")
			chunks = append(chunks, indexer.Chunk{Active: true, Location: loc, Text: corpus[id+"@"+loc]})
		}
		if err := ix.IndexContent(ctx, "t", id, 1, chunks, nil); err != nil {
			t.Fatal(err)
		}
	}
	return corpus
}

func hitStrings(hits []indexer.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s/%d@%s=%v", h.ContentID, h.Version, h.Location, h.Score)
	}
	return out
}

// TestRankingInElasticsearch checks that Elasticsearch ranks and pages keyword and phrase
// searches by exactly the shared scores of package indexer, computed here in Go from the
// texts: keyword scores to the bit over many term frequencies and lexeme counts, phrase hits
// by occurrence count (overlapping ones included) — also for pages beyond the result window,
// which are collected whole.
func TestRankingInElasticsearch(t *testing.T) {
	ix := open(t, newClient(t), indexertest.Model)
	ctx := testCtx(t)
	corpus := rankingCorpus(t, ix)
	keys := slices.Sorted(maps.Keys(corpus))
	split := func(key string) (string, string) { id, loc, _ := strings.Cut(key, "@"); return id, loc }
	keyword := func(q indexer.Query) []indexer.Hit {
		lexemes := analysis.Lexemes(q.Term)
		var cands []indexer.Hit
		var counts [][]int
		held := map[string][]bool{}
		for _, k := range keys {
			id, loc := split(k)
			tf := indexer.TermCounts(corpus[k], lexemes)
			if q.ContentID != "" && id != q.ContentID || !slices.ContainsFunc(tf, func(n int) bool { return n > 0 }) {
				continue
			}
			cands = append(cands, indexer.Hit{ContentID: id, Version: 1, Location: loc})
			counts = append(counts, tf)
			if held[id] == nil {
				held[id] = make([]bool, len(lexemes))
			}
			for j, n := range tf {
				held[id][j] = held[id][j] || n > 0
			}
		}
		scores := indexer.KeywordScores(counts)
		var hits []indexer.Hit
		for i, h := range cands {
			if !slices.Contains(held[h.ContentID], false) {
				h.Score = scores[i]
				hits = append(hits, h)
			}
		}
		return indexer.Page(indexer.Collapse(hits, q), q)
	}
	phrase := func(q indexer.Query) []indexer.Hit {
		p, _ := indexer.Phrase(q.Term)
		terms := analysis.PhraseTerms(p)
		var hits []indexer.Hit
		for _, k := range keys {
			id, loc := split(k)
			if n := indexer.PhraseOccurrences(corpus[k], terms); n > 0 && (q.ContentID == "" || id == q.ContentID) {
				hits = append(hits, indexer.Hit{ContentID: id, Version: 1, Location: loc, Score: float64(n)})
			}
		}
		return indexer.Page(indexer.Collapse(hits, q), q)
	}
	for _, term := range []string{"alpha", "alphas beta", "gamma alpha delta", "delta gamma beta alpha", `"alpha beta"`,
		`"alpha alpha"`, `"beta of the gamma"`, `"delta"`} {
		want := keyword
		if _, ok := indexer.Phrase(term); ok {
			want = phrase
		}
		for _, q := range []indexer.Query{
			{Term: term},
			{Term: term, Skip: 3, Limit: 7},
			{Term: term, ContentID: "c07"},
			{Term: term, ContentID: "c11", Skip: 1, Limit: 1},
		} {
			q.Tenant, q.Type = "t", indexer.Lexical
			w := hitStrings(want(q))
			for _, window := range []int{maxResultWindow, 5} {
				ix.window = window
				hits, err := ix.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if got := hitStrings(hits); !slices.Equal(got, w) {
					t.Errorf("%+v (window %d):\n  got  %v\n  want %v", q, window, got, w)
				}
			}
			ix.window = maxResultWindow
			if p, ok := indexer.Phrase(term); ok {
				// Elasticsearch's own order, not the fallback that counts in every hit.
				terms := analysis.PhraseTerms(p)
				query := map[string]any{"bool": map[string]any{"filter": filters(q, kindChunk), "must": map[string]any{
					"match_phrase": map[string]any{"phrase": strings.Join(terms, " ")}}}}
				hits, ok, err := ix.phraseRanked(ctx, q, query, terms)
				if err != nil || !ok || !slices.Equal(hitStrings(hits), w) {
					t.Errorf("%+v: phraseRanked = %v, %v, %v; want %v", q, hitStrings(hits), ok, err, w)
				}
			}
		}
	}
}

// TestLongKeywordQuery checks that a keyword query of many lexemes (each a handful of
// clauses) is answered, not refused by the engine's clause limit, with the shared scores and
// the rule that the version holds every lexeme.
func TestLongKeywordQuery(t *testing.T) {
	ix := open(t, newClient(t), indexertest.Model)
	ctx := testCtx(t)
	var words []string
	for i := range 1500 {
		words = append(words, fmt.Sprintf("w%dx", i))
	}
	half := strings.Join(words[:750], " ")
	for id, chunks := range map[string][]indexer.Chunk{
		"all":  {{Active: true, Location: "p1", Text: half + " " + words[0]}, {Active: true, Location: "p2", Text: strings.Join(words[750:], " ")}},
		"half": {{Active: true, Location: "p1", Text: half}},
	} {
		if err := ix.IndexContent(ctx, "t", id, 1, chunks, nil); err != nil {
			t.Fatal(err)
		}
	}
	q := indexer.Query{Tenant: "t", Type: indexer.Lexical, Term: strings.Join(words, " ")}
	// Candidates: all@p1 (words 0-749, word 0 twice), all@p2 (words 750-1499), half@p1
	// (words 0-749); only "all" holds every word, and its best chunk is p2, whose words are
	// the rarer.
	lexemes := analysis.Lexemes(q.Term)
	scores := indexer.KeywordScores([][]int{
		indexer.TermCounts(half+" "+words[0], lexemes),
		indexer.TermCounts(strings.Join(words[750:], " "), lexemes),
		indexer.TermCounts(half, lexemes),
	})
	if scores[1] <= scores[0] {
		t.Fatalf("scores %v: want p2 best", scores)
	}
	want := []string{fmt.Sprintf("all/1@=%v", scores[1])}
	hits, err := ix.Search(ctx, q)
	if err != nil || !slices.Equal(hitStrings(hits), want) {
		t.Fatalf("search of %d words: %v, %v; want %v", len(words), hitStrings(hits), err, want)
	}
}

// TestFieldSearchValues checks that field hits carry each field exactly as indexed — the
// value's case, timestamps to the nanosecond and in their zone, read from sort values and
// doc values rather than _source — in indexer.Compare order, also for pages beyond the
// result window, which are collected whole.
func TestFieldSearchValues(t *testing.T) {
	ix := open(t, newClient(t), indexertest.Model)
	ctx := testCtx(t)
	zone := time.FixedZone("x", 5*3600+1800)
	var want []indexer.Hit
	for i := range 7 {
		id := fmt.Sprintf("c%d, \"quoted\" é", 6-i) // indexed out of order, sorted by id
		base := time.Date(2020+i, 3, 4, 5, 6, 7, 123456789+i, zone)
		var fields []indexer.Field
		for _, ft := range []string{indexer.FieldTitle, indexer.FieldSummary} {
			f := indexer.Field{FieldType: ft, Value: fmt.Sprintf("Shared VALUE %c", 'a'+i%2), Created: base,
				Updated: base.Add(time.Duration(i) * time.Microsecond).UTC()}
			fields = append(fields, f)
			f.Tenant, f.ContentID, f.Version = "t", id, 2
			if i%2 == 0 {
				want = append(want, indexer.Hit{ContentID: id, Version: 2, Score: indexer.FieldScore, Field: &f})
			}
		}
		if err := ix.IndexContent(ctx, "t", id, 2, nil, fields); err != nil {
			t.Fatal(err)
		}
		if err := ix.SetStatus(ctx, "t", id, 2, nil, true); err != nil {
			t.Fatal(err)
		}
	}
	indexer.Sort(want)
	str := func(hits []indexer.Hit) []string {
		out := make([]string, len(hits))
		for i, h := range hits {
			f := h.Field
			out[i] = fmt.Sprintf("%s/%d %s %q %s %s %v", h.ContentID, h.Version, f.FieldType, f.Value,
				f.Created.Format(time.RFC3339Nano), f.Updated.Format(time.RFC3339Nano), h.Score)
		}
		return out
	}
	for _, q := range []indexer.Query{{}, {Skip: 2, Limit: 3}, {FieldTypes: []string{indexer.FieldSummary}, Skip: 1}} {
		q.Tenant, q.Type, q.Term = "t", indexer.FieldSearch, "shared value A"
		w := want
		if len(q.FieldTypes) > 0 {
			w = slices.DeleteFunc(slices.Clone(w), func(h indexer.Hit) bool { return h.Field.FieldType != indexer.FieldSummary })
		}
		w = indexer.Page(w, q)
		for _, window := range []int{maxResultWindow, 2} {
			ix.window = window
			hits, err := ix.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if got := str(hits); !slices.Equal(got, str(w)) {
				t.Errorf("%+v (window %d):\n  got  %q\n  want %q", q, window, got, str(w))
			}
		}
	}
	ix.window = maxResultWindow
}
