// Package indexertest is the contract suite of the content search port (package indexer):
// every backend's test calls Run, so the embedded and the distributed backends are held to
// the same search rules.
package indexertest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/mappings/analysis"
)

// Model is the embedding model the suite's hand-made vectors belong to; open must return an
// index configured with it.
var Model = indexer.Model{Name: "indexertest-4d", Dims: 4}

// Run runs the contract suite. open returns a new, empty index configured with Model; the
// suite closes it.
func Run(t *testing.T, open func(t *testing.T) indexer.Index) {
	s := &suite{open: open}
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"KeywordAllLexemesAnyOrder", s.keywordAND},
		{"KeywordAcrossChunks", s.keywordAcrossChunks},
		{"Stemming", s.stemming},
		{"StopWordsIgnored", s.stopWordsIgnored},
		{"StopWordOnlyQuery", s.stopWordOnly},
		{"Phrase", s.phrase},
		{"PhraseStopWords", s.phraseStopWords},
		{"Contractions", s.contractions},
		{"ReturnMatch", s.returnMatch},
		{"ReturnText", s.returnText},
		{"Field", s.field},
		{"Semantic", s.semantic},
		{"LocationWithinItem", s.locationWithinItem},
		{"OneEntryPerVersion", s.oneEntryPerVersion},
		{"Tags", s.tags},
		{"Inactive", s.inactive},
		{"SkipLimit", s.skipLimit},
		{"TieBreak", s.tieBreak},
		{"KeywordRanking", s.keywordRanking},
		{"PhraseRanking", s.phraseRanking},
		{"FieldRanking", s.fieldRanking},
		{"KeywordAnyTerm", s.keywordAnyTerm},
		{"Hybrid", s.hybrid},
		{"HybridInvalid", s.hybridInvalid},
		{"TenantIsolation", s.tenantIsolation},
		{"ReindexReplaces", s.reindexReplaces},
		{"Delete", s.delete},
		{"Purge", s.purge},
		{"ModelMismatch", s.modelMismatch},
		{"InvalidInput", s.invalidInput},
	} {
		t.Run(tc.name, tc.fn)
	}
}

type suite struct {
	open func(t *testing.T) indexer.Index
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func (s *suite) index(t *testing.T) indexer.Index {
	t.Helper()
	ix := s.open(t)
	t.Cleanup(func() {
		if err := ix.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return ix
}

// doc is a content version to index in a test.
type doc struct {
	tenant, id string
	version    int
	chunks     []indexer.Chunk
	fields     []indexer.Field
}

// texts makes active, untagged chunks with locations "loc1", "loc2", ...
func texts(ts ...string) []indexer.Chunk {
	var out []indexer.Chunk
	for i, s := range ts {
		out = append(out, indexer.Chunk{Active: true, Location: fmt.Sprintf("loc%d", i+1), Text: s})
	}
	return out
}

func put(t *testing.T, ix indexer.Index, docs ...doc) {
	t.Helper()
	for _, d := range docs {
		if d.tenant == "" {
			d.tenant = "t1"
		}
		if d.version == 0 {
			d.version = 1
		}
		if err := ix.IndexContent(ctx(t), d.tenant, d.id, d.version, d.chunks, d.fields); err != nil {
			t.Fatalf("IndexContent %s/%s/%d: %v", d.tenant, d.id, d.version, err)
		}
	}
}

func search(t *testing.T, ix indexer.Index, q indexer.Query) []indexer.Hit {
	t.Helper()
	if q.Tenant == "" {
		q.Tenant = "t1"
	}
	hits, err := ix.Search(ctx(t), q)
	if err != nil {
		t.Fatalf("Search %+v: %v", q, err)
	}
	if hits == nil {
		t.Fatalf("Search %+v returned nil, want a non-nil slice", q)
	}
	return hits
}

func lexical(term string) indexer.Query { return indexer.Query{Type: indexer.Lexical, Term: term} }

// ids returns "id" (or "id/v" for versions other than 1, or "id@loc" with locations) of
// each hit, in order.
func ids(hits []indexer.Hit) []string {
	var out []string
	for _, h := range hits {
		s := h.ContentID
		if h.Version != 1 {
			s += fmt.Sprintf("/%d", h.Version)
		}
		if h.Location != "" {
			s += "@" + h.Location
		}
		out = append(out, s)
	}
	return out
}

func sortedIDs(hits []indexer.Hit) []string {
	out := ids(hits)
	slices.Sort(out)
	return out
}

func wantIDs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}

func (s *suite) keywordAND(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "both", chunks: texts("A carrot cake recipe")},
		doc{id: "reversed", chunks: texts("cake with carrot")},
		doc{id: "carrot", chunks: texts("carrot soup")},
		doc{id: "cake", chunks: texts("chocolate cake")},
	)
	for _, term := range []string{"carrot cake", "cake carrot", "CARROT Cake"} {
		wantIDs(t, term, sortedIDs(search(t, ix, lexical(term))), "both", "reversed")
	}
	wantIDs(t, "carrot", sortedIDs(search(t, ix, lexical("carrot"))), "both", "carrot", "reversed")
	wantIDs(t, "carrot chocolate", sortedIDs(search(t, ix, lexical("carrot chocolate"))))
	wantIDs(t, "unknown word", sortedIDs(search(t, ix, lexical("zebra"))))
}

func (s *suite) keywordAcrossChunks(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "split", chunks: texts("all about carrots", "and then the cake")},
		doc{id: "half", chunks: texts("carrots only", "nothing else")},
	)
	wantIDs(t, "tenant-wide", ids(search(t, ix, lexical("carrot cake"))), "split")
	// Within the item, every chunk holding a query lexeme is a location of the match.
	q := lexical("carrot cake")
	q.ContentID = "split"
	wantIDs(t, "within item", sortedIDs(search(t, ix, q)), "split@loc1", "split@loc2")
	q.ContentID = "half"
	wantIDs(t, "within item missing a lexeme", ids(search(t, ix, q)))
}

func (s *suite) stemming(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "jumps", chunks: texts("The fox jumps")},
		doc{id: "jumping", chunks: texts("Jumping jacks")},
		doc{id: "jumped", chunks: texts("it jumped over")},
		doc{id: "jumper", chunks: texts("a warm jumper")},
	)
	for _, term := range []string{"jump", "jumps", "jumping", "JUMPED"} {
		wantIDs(t, term, sortedIDs(search(t, ix, lexical(term))), "jumped", "jumping", "jumps")
	}
}

func (s *suite) stopWordsIgnored(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "a", chunks: texts("carrot cake")},
		doc{id: "b", chunks: texts("carrot in cake")},
		doc{id: "c", chunks: texts("the cake of the carrot")},
		doc{id: "d", chunks: texts("carrot juice")},
	)
	plain := search(t, ix, lexical("carrot cake"))
	withStop := search(t, ix, lexical("carrot in cake"))
	wantIDs(t, "carrot cake", sortedIDs(plain), "a", "b", "c")
	if fmt.Sprint(plain) != fmt.Sprint(withStop) {
		t.Errorf("'carrot cake' gave %+v, 'carrot in cake' %+v; want equal results", plain, withStop)
	}
}

func (s *suite) stopWordOnly(t *testing.T) {
	ix := s.index(t)
	put(t, ix, doc{id: "a", chunks: texts("the cat is on the mat")})
	wantIDs(t, "keyword of stop words", ids(search(t, ix, lexical("the on"))))
	wantIDs(t, "phrase of stop words", ids(search(t, ix, lexical(`"is on the"`))))
}

func (s *suite) phrase(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "adjacent", chunks: texts("Carrot cake is great")},
		doc{id: "reversed", chunks: texts("cake carrot")},
		doc{id: "apart", chunks: texts("carrot and walnut cake")},
		doc{id: "stemmed", chunks: texts("two carrots caked")},
		doc{id: "split", chunks: texts("a carrot", "cake")},
	)
	wantIDs(t, `"carrot cake"`, sortedIDs(search(t, ix, lexical(`"carrot cake"`))), "adjacent", "stemmed")
	wantIDs(t, `"cake carrot"`, sortedIDs(search(t, ix, lexical(`"cake carrot"`))), "reversed")
	// Unquoted, the same words are a keyword search.
	wantIDs(t, "carrot cake", sortedIDs(search(t, ix, lexical(`carrot cake`))), "adjacent", "apart", "reversed", "split", "stemmed")
}

func (s *suite) phraseStopWords(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "of", chunks: texts("Management of change")},
		doc{id: "big", chunks: texts("Management big change")},
		doc{id: "none", chunks: texts("management change")},
		doc{id: "two", chunks: texts("management of the change")},
	)
	for _, tc := range []struct {
		term string
		want []string
	}{
		{`"management for change"`, []string{"of"}},
		{`"managing the changes"`, []string{"of"}},
		{`"management big change"`, []string{"big"}},
		{`"management change"`, []string{"none"}},
		{`"management in a change"`, []string{"two"}},
		{`"management of change"`, []string{"of"}},
	} {
		wantIDs(t, tc.term, sortedIDs(search(t, ix, lexical(tc.term))), tc.want...)
	}
}

func (s *suite) contractions(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "dont", chunks: texts("Don't panic")},
		doc{id: "curly", chunks: texts("We can’t panic now")},
		doc{id: "donut", chunks: texts("donut panic")},
	)
	wantIDs(t, `"don't panic"`, sortedIDs(search(t, ix, lexical(`"don't panic"`))), "curly", "dont")
	wantIDs(t, `"do not panic"`, sortedIDs(search(t, ix, lexical(`"do not panic"`))), "curly", "dont")
	wantIDs(t, `"donut panic"`, sortedIDs(search(t, ix, lexical(`"donut panic"`))), "donut")
	// "don't" is only stop words: a keyword search for it alone matches nothing.
	wantIDs(t, "don't", ids(search(t, ix, lexical("don't"))))
	wantIDs(t, "don't panic", sortedIDs(search(t, ix, lexical("don't panic"))), "curly", "dont", "donut")
}

func (s *suite) returnMatch(t *testing.T) {
	ix := s.index(t)
	text := "Jumping jacks: she jumped, then JUMPING again over the fence."
	put(t, ix, doc{id: "a", chunks: texts(text, "fences are high")})

	q := lexical("jump fence")
	q.ReturnMatch = true
	hits := search(t, ix, q)
	if len(hits) != 1 {
		t.Fatalf("keyword: %d hits, want 1", len(hits))
	}
	terms, ok := hits[0].Match.([]string)
	if !ok {
		t.Fatalf("keyword match is %T, want []string", hits[0].Match)
	}
	for _, w := range []string{"Jumping", "jumped", "JUMPING", "fence", "fences"} {
		if !slices.Contains(terms, w) {
			t.Errorf("keyword match %q lacks %q", terms, w)
		}
	}
	q.ContentID = "a"
	for _, h := range search(t, ix, q) {
		terms, _ := h.Match.([]string)
		if h.Location == "loc2" && !slices.Equal(terms, []string{"fences"}) {
			t.Errorf("match of loc2 = %q, want [fences]", terms)
		}
	}

	q = lexical(`"she jumps"`)
	q.ReturnMatch = true
	hits = search(t, ix, q)
	if len(hits) != 1 {
		t.Fatalf("phrase: %d hits, want 1", len(hits))
	}
	expr, ok := hits[0].Match.(string)
	if !ok {
		t.Fatalf("phrase match is %T, want string", hits[0].Match)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Fatalf("phrase match %q: %v", expr, err)
	}
	if got := re.FindString(text); got != "she jumped" {
		t.Errorf("phrase regex %s finds %q in the text, want %q", expr, got, "she jumped")
	}

	q.ReturnMatch = false
	if h := search(t, ix, q); h[0].Match != nil {
		t.Errorf("match without return_match: %v", h[0].Match)
	}
}

// returnText: with ReturnText every lexical and semantic hit carries its chunk's location and
// text, tenant-wide the best chunk's (whose location the hit does not carry), and without it
// none.
func (s *suite) returnText(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "a", chunks: withVectors(texts("the oven is hot", "bake the bread in the oven, then bake again", "cool it"),
			vec(0, 1, 0, 0), vec(1, 0, 0, 0), vec(0, 0, 1, 0))},
		doc{id: "b", chunks: withVectors(texts("nothing here", "bread bake"), vec(0, 0, 0, 1), vec(1, 1, 0, 0))},
	)
	text := func(h indexer.Hit) string {
		if h.Text == nil {
			return "<nil>"
		}
		return h.Text.Location + ": " + h.Text.Text
	}
	check := func(what string, q indexer.Query, want ...string) {
		t.Helper()
		q.ReturnText = true
		var got []string
		for _, h := range search(t, ix, q) {
			got = append(got, h.ContentID+"@"+h.Location+" "+text(h))
		}
		wantIDs(t, what, got, want...)
	}
	check("keyword, tenant-wide", lexical("bake oven"), "a@ loc2: bake the bread in the oven, then bake again")
	q := lexical("bake")
	q.ContentID = "a"
	check("keyword, one item", q, "a@loc2 loc2: bake the bread in the oven, then bake again")
	check("phrase, tenant-wide", lexical(`"bread bake"`), "b@ loc2: bread bake")
	q = lexical(`"the oven"`)
	q.ContentID = "a"
	check("phrase, one item", q, "a@loc1 loc1: the oven is hot", "a@loc2 loc2: bake the bread in the oven, then bake again")
	check("semantic, tenant-wide", indexer.Query{Type: indexer.Semantic, Vector: vec(1, 0, 0, 0)},
		"a@ loc2: bake the bread in the oven, then bake again", "b@ loc2: bread bake")
	check("semantic, one item", indexer.Query{Type: indexer.Semantic, Vector: vec(0, 0, 1, 0), ContentID: "a", Limit: 1},
		"a@loc3 loc3: cool it")
	for _, h := range search(t, ix, lexical("bake")) {
		if h.Text != nil {
			t.Errorf("hit %s carries text without ReturnText", h.ContentID)
		}
	}
	if _, err := ix.Search(ctx(t), indexer.Query{Tenant: "t1", Type: indexer.FieldSearch, Term: "x", ReturnText: true}); !errors.Is(err, indexer.ErrInvalidQuery) {
		t.Errorf("field search with ReturnText: %v, want ErrInvalidQuery", err)
	}
}

func (s *suite) field(t *testing.T) {
	ix := s.index(t)
	created := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	put(t, ix,
		doc{id: "a", chunks: texts("some text"), fields: []indexer.Field{
			{FieldType: indexer.FieldTitle, Value: "Change Management", Created: created, Updated: created.Add(time.Hour)},
			{FieldType: indexer.FieldSummary, Value: "How to manage changes"},
			{FieldType: indexer.FieldSkills, Value: "change management"},
		}},
		doc{id: "b", chunks: texts("change management", "more"), fields: []indexer.Field{
			{FieldType: indexer.FieldTitle, Value: "Change Management 101"},
		}},
	)
	fq := func(term string, types ...string) indexer.Query {
		return indexer.Query{Type: indexer.FieldSearch, Term: term, FieldTypes: types}
	}
	hits := search(t, ix, fq("change management"))
	if len(hits) != 2 {
		t.Fatalf("field search: %+v, want 2 hits", hits)
	}
	// Equal scores: content id, version, then field type decide.
	if hits[0].Field == nil || hits[0].Field.FieldType != indexer.FieldSkills || hits[1].Field.FieldType != indexer.FieldTitle {
		t.Fatalf("field hits %+v, want SKILLS then TITLE of a", hits)
	}
	f := hits[1].Field
	if f.Value != "Change Management" || !f.Created.Equal(created) || !f.Updated.Equal(created.Add(time.Hour)) ||
		f.Tenant != "t1" || f.ContentID != "a" || f.Version != 1 {
		t.Errorf("field = %+v", f)
	}
	for _, h := range hits {
		if h.Location != "" || h.MatchStrength != nil || h.ContentID != "a" {
			t.Errorf("field hit %+v: want content a, no location, no match strength", h)
		}
	}
	wantIDs(t, "upper case", ids(search(t, ix, fq("CHANGE MANAGEMENT"))), "a", "a")
	wantIDs(t, "title only", ids(search(t, ix, fq("change management", indexer.FieldTitle))), "a")
	wantIDs(t, "summary only", ids(search(t, ix, fq("change management", indexer.FieldSummary))))
	wantIDs(t, "part of a value", ids(search(t, ix, fq("change"))))
	wantIDs(t, "no stemming", ids(search(t, ix, fq("change managements"))))
	wantIDs(t, "no stop word removal", ids(search(t, ix, fq("how manage changes"))))
	wantIDs(t, "exact summary", ids(search(t, ix, fq("how to MANAGE changes"))), "a")
	q := fq("change management 101")
	q.ContentID = "b"
	hits = search(t, ix, q)
	wantIDs(t, "within item", ids(hits), "b")
}

// vec returns a Model-sized vector.
func vec(x ...float32) []float32 {
	v := make([]float32, Model.Dims)
	copy(v, x)
	return v
}

func withVectors(cs []indexer.Chunk, vs ...[]float32) []indexer.Chunk {
	for i := range cs {
		cs[i].Vector = vs[i]
	}
	return cs
}

func (s *suite) semantic(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "same", chunks: withVectors(texts("x"), vec(2, 0, 0, 0))},
		doc{id: "near", chunks: withVectors(texts("x", "y"), vec(1, 1, 0, 0), vec(0, 0, 1, 0))},
		doc{id: "opposite", chunks: withVectors(texts("x"), vec(-1, 0, 0, 0))},
		doc{id: "novector", chunks: texts("x")},
	)
	q := indexer.Query{Type: indexer.Semantic, Vector: vec(1, 0, 0, 0)}
	hits := search(t, ix, q)
	wantIDs(t, "tenant-wide", ids(hits), "same", "near", "opposite")
	want := []float64{1, math.Sqrt(0.5), 0}
	for i, h := range hits {
		if h.MatchStrength == nil || math.Abs(*h.MatchStrength-want[i]) > 1e-5 {
			t.Errorf("hit %s: match strength %v, want %v", h.ContentID, h.MatchStrength, want[i])
		}
		if h.Match != nil || h.Field != nil || h.Location != "" {
			t.Errorf("semantic hit %+v carries match, field or location", h)
		}
	}
	q.ContentID = "near"
	hits = search(t, ix, q)
	wantIDs(t, "within item", ids(hits), "near@loc1", "near@loc2")
	if len(hits) == 2 && (hits[1].MatchStrength == nil || *hits[1].MatchStrength != 0) {
		t.Errorf("orthogonal chunk strength %v, want 0", hits[1].MatchStrength)
	}
}

func (s *suite) locationWithinItem(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "a", chunks: texts("safety first", "nothing", "fire safety rules", "safety again")},
		doc{id: "b", chunks: texts("safety")},
	)
	q := lexical("safety")
	q.ContentID = "a"
	wantIDs(t, "within item", sortedIDs(search(t, ix, q)), "a@loc1", "a@loc3", "a@loc4")
	v := 1
	q.Version = &v
	wantIDs(t, "within version", sortedIDs(search(t, ix, q)), "a@loc1", "a@loc3", "a@loc4")
	v = 2
	wantIDs(t, "other version", sortedIDs(search(t, ix, q)))
	wantIDs(t, "tenant-wide", sortedIDs(search(t, ix, lexical("safety"))), "a", "b")
}

func (s *suite) oneEntryPerVersion(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "a", version: 1, chunks: texts("fire drill", "fire exit", "fire alarm")},
		doc{id: "a", version: 2, chunks: texts("fire drill updated")},
		doc{id: "b", chunks: texts("fire")},
	)
	wantIDs(t, "tenant-wide", sortedIDs(search(t, ix, lexical("fire"))), "a", "a/2", "b")
	q := lexical("fire")
	q.ContentID = "a"
	wantIDs(t, "all versions of one item", sortedIDs(search(t, ix, q)), "a/2@loc1", "a@loc1", "a@loc2", "a@loc3")
}

func (s *suite) tags(t *testing.T) {
	ix := s.index(t)
	tagged := func(tags []string, txt string) []indexer.Chunk {
		return []indexer.Chunk{{Active: true, Tags: tags, Location: "p1", Text: txt}}
	}
	put(t, ix,
		doc{id: "red", chunks: tagged([]string{"red"}, "apple"), fields: []indexer.Field{{FieldType: indexer.FieldTitle, Value: "Apple"}}},
		doc{id: "redblue", chunks: tagged([]string{"blue", "red"}, "apple")},
		doc{id: "none", chunks: tagged(nil, "apple")},
	)
	q := lexical("apple")
	wantIDs(t, "no filter", sortedIDs(search(t, ix, q)), "none", "red", "redblue")
	q.Tags = []string{"red"}
	wantIDs(t, "red", sortedIDs(search(t, ix, q)), "red", "redblue")
	q.Tags = []string{"blue", "green"}
	wantIDs(t, "blue or green", sortedIDs(search(t, ix, q)), "redblue")
	q.Tags = []string{"RED"}
	wantIDs(t, "tags are case-sensitive", sortedIDs(search(t, ix, q)))

	if err := ix.SetStatus(ctx(t), "t1", "none", 1, []string{"green"}, true); err != nil {
		t.Fatal(err)
	}
	q.Tags = []string{"green"}
	wantIDs(t, "after SetStatus", sortedIDs(search(t, ix, q)), "none")
	if err := ix.SetStatus(ctx(t), "t1", "red", 1, []string{"blue"}, true); err != nil {
		t.Fatal(err)
	}
	fq := indexer.Query{Type: indexer.FieldSearch, Term: "apple", Tags: []string{"red"}}
	wantIDs(t, "field search after retag", ids(search(t, ix, fq)))
	fq.Tags = []string{"blue"}
	wantIDs(t, "field search with tag", ids(search(t, ix, fq)), "red")
	if err := ix.SetStatus(ctx(t), "t1", "missing", 1, nil, true); !errors.Is(err, indexer.ErrNotFound) {
		t.Errorf("SetStatus of missing content: %v, want ErrNotFound", err)
	}
}

func (s *suite) inactive(t *testing.T) {
	ix := s.index(t)
	off := []indexer.Chunk{{Active: false, Location: "p1", Text: "apple pie", Vector: vec(1)}}
	put(t, ix,
		doc{id: "on", chunks: withVectors(texts("apple pie"), vec(1))},
		doc{id: "off", chunks: off, fields: []indexer.Field{{FieldType: indexer.FieldTitle, Value: "apple pie"}}},
	)
	for _, q := range []indexer.Query{
		lexical("apple"), lexical(`"apple pie"`),
		{Type: indexer.Semantic, Vector: vec(1)},
	} {
		wantIDs(t, q.Type.String()+" default", sortedIDs(search(t, ix, q)), "on")
		q.IncludeInactive = true
		wantIDs(t, q.Type.String()+" include_inactive", sortedIDs(search(t, ix, q)), "off", "on")
	}
	fq := indexer.Query{Type: indexer.FieldSearch, Term: "Apple Pie"}
	wantIDs(t, "field default", ids(search(t, ix, fq)))
	if err := ix.SetStatus(ctx(t), "t1", "off", 1, nil, true); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "field after activation", ids(search(t, ix, fq)), "off")
	wantIDs(t, "lexical after activation", sortedIDs(search(t, ix, lexical("apple"))), "off", "on")
	// A status change rewrites only tags and the active flag: every search still finds the
	// chunk (a backend that rebuilds documents from a stored copy must keep all it indexes).
	wantIDs(t, "phrase after activation", sortedIDs(search(t, ix, lexical(`"apple pie"`))), "off", "on")
	if err := ix.SetStatus(ctx(t), "t1", "on", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "semantic after deactivation", ids(search(t, ix, indexer.Query{Type: indexer.Semantic, Vector: vec(1)})), "off")
}

func (s *suite) skipLimit(t *testing.T) {
	ix := s.index(t)
	for i := range 5 {
		// cos with (1,0,0,0) decreases with i.
		put(t, ix, doc{id: fmt.Sprintf("c%d", i), chunks: withVectors(texts("x"), vec(1, float32(i)))})
	}
	q := indexer.Query{Type: indexer.Semantic, Vector: vec(1)}
	wantIDs(t, "all", ids(search(t, ix, q)), "c0", "c1", "c2", "c3", "c4")
	q.Skip, q.Limit = 1, 2
	wantIDs(t, "skip 1 limit 2", ids(search(t, ix, q)), "c1", "c2")
	q.Skip, q.Limit = 4, 10
	wantIDs(t, "skip 4", ids(search(t, ix, q)), "c4")
	q.Skip = 9
	wantIDs(t, "skip past the end", ids(search(t, ix, q)))
	lq := lexical("x")
	lq.Skip, lq.Limit = 3, 1
	wantIDs(t, "lexical page", ids(search(t, ix, lq)), "c3")
}

func (s *suite) tieBreak(t *testing.T) {
	ix := s.index(t)
	for _, id := range []string{"m", "b", "z", "a"} {
		put(t, ix, doc{id: id, chunks: withVectors(texts("identical words here"), vec(1, 1))})
	}
	put(t, ix, doc{id: "b", version: 2, chunks: withVectors(texts("identical words here"), vec(1, 1))})
	want := []string{"a", "b", "b/2", "m", "z"}
	wantIDs(t, "lexical", ids(search(t, ix, lexical("identical words"))), want...)
	wantIDs(t, "phrase", ids(search(t, ix, lexical(`"identical words"`))), want...)
	wantIDs(t, "semantic", ids(search(t, ix, indexer.Query{Type: indexer.Semantic, Vector: vec(1, 1)})), want...)
	put(t, ix, doc{id: "loc", chunks: withVectors(texts("same", "same", "same"), vec(1), vec(1), vec(1))})
	q := indexer.Query{Type: indexer.Semantic, Vector: vec(1), ContentID: "loc"}
	wantIDs(t, "locations", ids(search(t, ix, q)), "loc@loc1", "loc@loc2", "loc@loc3")
}

func (s *suite) tenantIsolation(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{tenant: "a", id: "x", chunks: withVectors(texts("lower tenant"), vec(1)), fields: []indexer.Field{{FieldType: indexer.FieldTitle, Value: "T"}}},
		doc{tenant: "A", id: "x", chunks: withVectors(texts("upper tenant"), vec(1)), fields: []indexer.Field{{FieldType: indexer.FieldTitle, Value: "T"}}},
	)
	for _, tc := range []struct {
		tenant, term string
		want         []string
	}{
		{"a", "lower", []string{"x"}}, {"a", "upper", nil}, {"A", "upper", []string{"x"}}, {"A", "lower", nil},
		{"b", "tenant", nil},
	} {
		q := lexical(tc.term)
		q.Tenant = tc.tenant
		wantIDs(t, tc.tenant+" "+tc.term, ids(search(t, ix, q)), tc.want...)
	}
	for _, tenant := range []string{"a", "A"} {
		hits := search(t, ix, indexer.Query{Tenant: tenant, Type: indexer.Semantic, Vector: vec(1)})
		wantIDs(t, "semantic "+tenant, ids(hits), "x")
		hits = search(t, ix, indexer.Query{Tenant: tenant, Type: indexer.FieldSearch, Term: "t"})
		if len(hits) != 1 || hits[0].Field.Tenant != tenant {
			t.Errorf("field search in %q: %+v", tenant, hits)
		}
	}
}

func (s *suite) reindexReplaces(t *testing.T) {
	ix := s.index(t)
	put(t, ix, doc{id: "a", chunks: withVectors(texts("apple", "pear"), vec(1), vec(0, 1)),
		fields: []indexer.Field{{FieldType: indexer.FieldTitle, Value: "Old"}}})
	put(t, ix, doc{id: "a", chunks: withVectors(texts("banana"), vec(0, 0, 1)),
		fields: []indexer.Field{{FieldType: indexer.FieldTitle, Value: "New"}}})
	wantIDs(t, "old text", ids(search(t, ix, lexical("apple"))))
	wantIDs(t, "old second chunk", ids(search(t, ix, lexical("pear"))))
	wantIDs(t, "new text", ids(search(t, ix, lexical("banana"))), "a")
	wantIDs(t, "old field", ids(search(t, ix, indexer.Query{Type: indexer.FieldSearch, Term: "old"})))
	wantIDs(t, "new field", ids(search(t, ix, indexer.Query{Type: indexer.FieldSearch, Term: "new"})), "a")
	q := indexer.Query{Type: indexer.Semantic, Vector: vec(1), ContentID: "a"}
	hits := search(t, ix, q)
	if len(hits) != 1 || *hits[0].MatchStrength != 0 {
		t.Errorf("semantic after re-index: %+v, want the one new chunk at strength 0", hits)
	}
	// A failed re-index changes nothing.
	bad := withVectors(texts("cherry"), []float32{1, 2})
	if err := ix.IndexContent(ctx(t), "t1", "a", 1, bad, nil); !errors.Is(err, indexer.ErrModelMismatch) {
		t.Fatalf("IndexContent with a wrong vector: %v", err)
	}
	wantIDs(t, "after failed re-index", ids(search(t, ix, lexical("banana"))), "a")
}

func (s *suite) delete(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{id: "a", version: 1, chunks: withVectors(texts("apple"), vec(1)), fields: []indexer.Field{{FieldType: indexer.FieldTitle, Value: "apple"}}},
		doc{id: "a", version: 2, chunks: withVectors(texts("apple"), vec(1))},
		doc{id: "b", version: 1, chunks: withVectors(texts("apple"), vec(1))},
	)
	v := 1
	if err := ix.DeleteContent(ctx(t), "t1", "a", &v); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "after deleting a/1", sortedIDs(search(t, ix, lexical("apple"))), "a/2", "b")
	wantIDs(t, "field after deleting a/1", ids(search(t, ix, indexer.Query{Type: indexer.FieldSearch, Term: "apple"})))
	if err := ix.DeleteContent(ctx(t), "t1", "a", &v); !errors.Is(err, indexer.ErrNotFound) {
		t.Errorf("deleting a/1 again: %v, want ErrNotFound", err)
	}
	put(t, ix, doc{id: "a", version: 3, chunks: texts("apple")})
	if err := ix.DeleteContent(ctx(t), "t1", "a", nil); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "after deleting a", sortedIDs(search(t, ix, lexical("apple"))), "b")
	wantIDs(t, "semantic after deleting a", ids(search(t, ix, indexer.Query{Type: indexer.Semantic, Vector: vec(1)})), "b")
	if err := ix.DeleteContent(ctx(t), "t1", "a", nil); !errors.Is(err, indexer.ErrNotFound) {
		t.Errorf("deleting a again: %v, want ErrNotFound", err)
	}
	if err := ix.DeleteContent(ctx(t), "other", "b", nil); !errors.Is(err, indexer.ErrNotFound) {
		t.Errorf("deleting b in another tenant: %v, want ErrNotFound", err)
	}
}

func (s *suite) purge(t *testing.T) {
	ix := s.index(t)
	put(t, ix,
		doc{tenant: "t1", id: "a", chunks: withVectors(texts("apple"), vec(1)), fields: []indexer.Field{{FieldType: indexer.FieldTitle, Value: "apple"}}},
		doc{tenant: "t1x", id: "a", chunks: withVectors(texts("apple"), vec(1))},
		doc{tenant: "T1", id: "a", chunks: withVectors(texts("apple"), vec(1))},
	)
	if err := ix.PurgeTenant(ctx(t), "t1"); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "purged lexical", ids(search(t, ix, lexical("apple"))))
	wantIDs(t, "purged semantic", ids(search(t, ix, indexer.Query{Type: indexer.Semantic, Vector: vec(1)})))
	wantIDs(t, "purged field", ids(search(t, ix, indexer.Query{Type: indexer.FieldSearch, Term: "apple"})))
	for _, other := range []string{"t1x", "T1"} {
		q := lexical("apple")
		q.Tenant = other
		wantIDs(t, "other tenant "+other, ids(search(t, ix, q)), "a")
	}
	if err := ix.PurgeTenant(ctx(t), "never-used"); err != nil {
		t.Errorf("purging an empty tenant: %v", err)
	}
	put(t, ix, doc{tenant: "t1", id: "again", chunks: texts("apple")})
	wantIDs(t, "re-use after purge", ids(search(t, ix, lexical("apple"))), "again")
}

func (s *suite) modelMismatch(t *testing.T) {
	ix := s.index(t)
	short := withVectors(texts("x"), make([]float32, Model.Dims-1))
	if err := ix.IndexContent(ctx(t), "t1", "a", 1, short, nil); !errors.Is(err, indexer.ErrModelMismatch) {
		t.Errorf("indexing a %d-d vector: %v, want ErrModelMismatch", Model.Dims-1, err)
	}
	wantIDs(t, "nothing indexed", ids(search(t, ix, lexical("x"))))
	long := make([]float32, Model.Dims+1)
	long[0] = 1
	_, err := ix.Search(ctx(t), indexer.Query{Tenant: "t1", Type: indexer.Semantic, Vector: long})
	if !errors.Is(err, indexer.ErrModelMismatch) {
		t.Errorf("searching with a %d-d vector: %v, want ErrModelMismatch", Model.Dims+1, err)
	}
}

func (s *suite) invalidInput(t *testing.T) {
	ix := s.index(t)
	v := 1
	for _, q := range []indexer.Query{
		{Type: indexer.Lexical, Term: "x"}, // no tenant
		{Tenant: "t1", Type: indexer.Lexical, Term: "  "},
		{Tenant: "t1", Type: indexer.FieldSearch},
		{Tenant: "t1", Type: indexer.Semantic},
		{Tenant: "t1", Type: indexer.Semantic, Vector: vec()},
		{Tenant: "t1", Type: indexer.Lexical, Term: "x", Version: &v},
		{Tenant: "t1", Type: indexer.Lexical, Term: "x", Skip: -1},
		{Tenant: "t1", Type: indexer.Lexical, Term: "x", Limit: -1},
		{Tenant: "t1", Term: "x"},
	} {
		if _, err := ix.Search(ctx(t), q); !errors.Is(err, indexer.ErrInvalidQuery) {
			t.Errorf("Search %+v: %v, want ErrInvalidQuery", q, err)
		}
	}
	for _, tc := range []struct {
		name   string
		chunks []indexer.Chunk
	}{
		{"duplicate location", []indexer.Chunk{{Active: true, Location: "p", Text: "a"}, {Active: true, Location: "p", Text: "b"}}},
		{"mixed status", []indexer.Chunk{{Active: true, Location: "p", Text: "a"}, {Active: false, Location: "q", Text: "b"}}},
	} {
		if err := ix.IndexContent(ctx(t), "t1", "a", 1, tc.chunks, nil); !errors.Is(err, indexer.ErrInvalidQuery) {
			t.Errorf("IndexContent with %s: %v, want ErrInvalidQuery", tc.name, err)
		}
	}
	if err := ix.IndexContent(ctx(t), "t1", "", 1, texts("a"), nil); !errors.Is(err, indexer.ErrInvalidQuery) {
		t.Errorf("IndexContent without content id: %v, want ErrInvalidQuery", err)
	}
	if strings.Contains(fmt.Sprint(search(t, ix, lexical("a"))), "a") {
		t.Error("a rejected IndexContent left something behind")
	}
}

// full returns "id/version@location" of each hit (without "@" tenant-wide), in order: the
// exact result list the ranking subtests compare.
func full(hits []indexer.Hit) []string {
	var out []string
	for _, h := range hits {
		s := fmt.Sprintf("%s/%d", h.ContentID, h.Version)
		if h.Location != "" {
			s += "@" + h.Location
		}
		out = append(out, s)
	}
	return out
}

// rankingCorpus is content with unequal term frequencies, for the ranking subtests: where
// backends that scored by their own relevance formulas (Elasticsearch's BM25, Bleve's TF-IDF)
// disagree, the shared scoring of package indexer must decide alike.
var rankingCorpus = []doc{
	{id: "recipe", version: 1, chunks: texts(
		"Carrot cake. Carrot cake is the best carrot cake.", // carrot 3, cake 3
		"Serve the cake cold.",                              // cake 1
	)},
	{id: "recipe", version: 2, chunks: texts("Carrot cake.")}, // carrot 1, cake 1
	{id: "soup", chunks: texts(
		"Carrot soup: carrots, more carrots, and a little cake on the side.", // carrot 3, cake 1
	)},
	{id: "bakery", chunks: texts(
		"Cakes, cakes, cakes and one carrot.", // cake 3, carrot 1
		"Carrot",                              // carrot 1
	)},
	{id: "zest", chunks: texts("carrot cake and carrot cake with a cake in a tin")}, // carrot 2, cake 3
	{id: "juice", chunks: texts("carrot juice")},                                    // carrot 1
	{id: "tiny", chunks: texts("carrot")},                                           // carrot 1
	{id: "long", chunks: texts(
		"A long text about vegetables: the carrot is an orange root vegetable, and the " +
			"carrot is eaten raw or cooked, in soups, salads and stews, all over the world.", // carrot 2
	)},
	{id: "sponge", chunks: texts("sponge cake")}, // cake 1
}

// keywordScores is the reference computation of keyword scores (indexer.KeywordScores over
// indexer.TermCounts) for the chunks of docs that q may find, keyed like full's entries
// ("id/version@location").
func keywordScores(docs []doc, q indexer.Query) map[string]float64 {
	lexemes := analysis.Lexemes(q.Term)
	var keys []string
	var counts [][]int
	for _, d := range docs {
		if q.ContentID != "" && d.id != q.ContentID {
			continue
		}
		if d.version == 0 {
			d.version = 1 // as put does
		}
		for _, c := range d.chunks {
			tf := indexer.TermCounts(c.Text, lexemes)
			if slices.ContainsFunc(tf, func(n int) bool { return n > 0 }) {
				keys = append(keys, fmt.Sprintf("%s/%d@%s", d.id, d.version, c.Location))
				counts = append(counts, tf)
			}
		}
	}
	out := map[string]float64{}
	for i, s := range indexer.KeywordScores(counts) {
		out[keys[i]] = s
	}
	return out
}

// wantRanked checks that hits are exactly want (full's form), in that order, and, when scores
// is not nil, that every hit scores scores[its chunk] (tenant-wide: the best of its chunks).
func wantRanked(t *testing.T, what string, hits []indexer.Hit, scores map[string]float64, want ...string) {
	t.Helper()
	if got := full(hits); !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
		return
	}
	if scores == nil {
		return
	}
	for _, h := range hits {
		key := fmt.Sprintf("%s/%d@%s", h.ContentID, h.Version, h.Location)
		want, ok := scores[key]
		if h.Location == "" {
			ok = false
			for k, s := range scores {
				if strings.HasPrefix(k, fmt.Sprintf("%s/%d@", h.ContentID, h.Version)) && (!ok || s > want) {
					want, ok = s, true
				}
			}
		}
		if !ok || h.Score != want {
			t.Errorf("%s: %s scores %v, want %v", what, key, h.Score, want)
		}
	}
}

func (s *suite) keywordRanking(t *testing.T) {
	ix := s.index(t)
	put(t, ix, rankingCorpus...)
	for _, tc := range []struct {
		name string
		q    indexer.Query
		want []string
	}{
		{
			// Scores: recipe/1 (carrot 3, cake 3) > zest (2, 3) > bakery (1, 3) > soup (3, 1)
			// > recipe/2 (1, 1); cake is the rarer lexeme among the candidates, so it weighs
			// more than carrot.
			"carrot cake", lexical("carrot cake"),
			[]string{"recipe/1", "zest/1", "bakery/1", "soup/1", "recipe/2"},
		},
		{
			"cake carrot (order of the lexemes does not matter)", lexical("CAKE carrots"),
			[]string{"recipe/1", "zest/1", "bakery/1", "soup/1", "recipe/2"},
		},
		{
			// One lexeme: term frequency alone ranks (no length normalisation: "long", with
			// two carrots in many words, outranks "tiny", one carrot in one word).
			"carrot", lexical("carrot"),
			[]string{"recipe/1", "soup/1", "long/1", "zest/1", "bakery/1", "juice/1", "recipe/2", "tiny/1"},
		},
		{
			"cake", lexical("cakes"),
			[]string{"bakery/1", "recipe/1", "zest/1", "recipe/2", "soup/1", "sponge/1"},
		},
		{
			"carrot cake, page 2", indexer.Query{Type: indexer.Lexical, Term: "carrot cake", Skip: 2, Limit: 2},
			[]string{"bakery/1", "soup/1"},
		},
		{
			// Within one item every chunk with a lexeme is a hit, and the statistics are
			// those of the item's chunks.
			"carrot cake in recipe", indexer.Query{Type: indexer.Lexical, Term: "carrot cake", ContentID: "recipe"},
			[]string{"recipe/1@loc1", "recipe/2@loc1", "recipe/1@loc2"},
		},
		{
			"carrot cake in bakery", indexer.Query{Type: indexer.Lexical, Term: "carrot cake", ContentID: "bakery"},
			[]string{"bakery/1@loc1", "bakery/1@loc2"},
		},
		{
			"carrot in bakery", indexer.Query{Type: indexer.Lexical, Term: "carrot", ContentID: "bakery"},
			[]string{"bakery/1@loc1", "bakery/1@loc2"},
		},
	} {
		wantRanked(t, tc.name, search(t, ix, tc.q), keywordScores(rankingCorpus, tc.q), tc.want...)
	}
}

func (s *suite) phraseRanking(t *testing.T) {
	ix := s.index(t)
	put(t, ix, rankingCorpus...)
	for _, tc := range []struct {
		name string
		q    indexer.Query
		want []string
		// scores holds the number of occurrences of the phrase in each hit.
		scores []float64
	}{
		{
			// recipe/1 holds the phrase 3 times, zest twice, recipe/2 once: the counts decide
			// before the content ids.
			`"carrot cake"`, lexical(`"carrot cake"`),
			[]string{"recipe/1", "zest/1", "recipe/2"}, []float64{3, 2, 1},
		},
		{
			// The stop words of the phrase match any stop words: zest holds "cake with a" and
			// "cake in a", recipe/1 "cake is the", soup "cake on the".
			`"cake in a"`, lexical(`"cake in a"`),
			[]string{"zest/1", "recipe/1", "soup/1"}, []float64{2, 1, 1},
		},
		{
			`"carrots"`, lexical(`"carrots"`),
			[]string{"recipe/1", "soup/1", "long/1", "zest/1", "bakery/1", "juice/1", "recipe/2", "tiny/1"},
			[]float64{3, 3, 2, 2, 1, 1, 1, 1},
		},
		{
			`"carrot cake" in recipe`, indexer.Query{Type: indexer.Lexical, Term: `"carrot cake"`, ContentID: "recipe"},
			[]string{"recipe/1@loc1", "recipe/2@loc1"}, []float64{3, 1},
		},
		{
			`"carrot" in bakery`, indexer.Query{Type: indexer.Lexical, Term: `"carrot"`, ContentID: "bakery"},
			[]string{"bakery/1@loc1", "bakery/1@loc2"}, []float64{1, 1},
		},
	} {
		hits := search(t, ix, tc.q)
		wantRanked(t, tc.name, hits, nil, tc.want...)
		for i, h := range hits {
			if i < len(tc.scores) && h.Score != tc.scores[i] {
				t.Errorf("%s: hit %d (%s) scores %v, want %v", tc.name, i, h.ContentID, h.Score, tc.scores[i])
			}
		}
	}
}

func (s *suite) fieldRanking(t *testing.T) {
	ix := s.index(t)
	f := func(typ, value string) indexer.Field { return indexer.Field{FieldType: typ, Value: value} }
	put(t, ix,
		doc{id: "z", chunks: texts("x"), fields: []indexer.Field{f(indexer.FieldTitle, "Fire Safety")}},
		doc{id: "a", version: 2, chunks: texts("x"), fields: []indexer.Field{f(indexer.FieldSkills, "FIRE SAFETY")}},
		doc{id: "a", version: 1, chunks: texts("x"), fields: []indexer.Field{
			f(indexer.FieldTitle, "fire safety"),
			f(indexer.FieldSkills, "fire safety"),
			f(indexer.FieldSkills, "Fire safety"),
			f(indexer.FieldSummary, "Fire safety, fire safety, fire safety"),
		}},
		doc{id: "m", chunks: texts("x"), fields: []indexer.Field{f(indexer.FieldSummary, "Fire safety")}},
	)
	str := func(hits []indexer.Hit) []string {
		var out []string
		for _, h := range hits {
			if h.Field == nil || h.Location != "" || h.Score != indexer.FieldScore {
				t.Errorf("field hit %+v: want a field, no location, score %v", h, indexer.FieldScore)
				continue
			}
			out = append(out, fmt.Sprintf("%s/%d %s %s", h.ContentID, h.Version, h.Field.FieldType, h.Field.Value))
		}
		return out
	}
	all := []string{
		"a/1 SKILLS Fire safety", "a/1 SKILLS fire safety", "a/1 TITLE fire safety",
		"a/2 SKILLS FIRE SAFETY", "m/1 SUMMARY Fire safety", "z/1 TITLE Fire Safety",
	}
	for _, tc := range []struct {
		name string
		q    indexer.Query
		want []string
	}{
		{"all", indexer.Query{Type: indexer.FieldSearch, Term: "fire SAFETY"}, all},
		{"page", indexer.Query{Type: indexer.FieldSearch, Term: "fire safety", Skip: 1, Limit: 3}, all[1:4]},
		{"skills and summary", indexer.Query{Type: indexer.FieldSearch, Term: "Fire Safety",
			FieldTypes: []string{indexer.FieldSummary, indexer.FieldSkills}},
			[]string{"a/1 SKILLS Fire safety", "a/1 SKILLS fire safety", "a/2 SKILLS FIRE SAFETY", "m/1 SUMMARY Fire safety"}},
		{"within a", indexer.Query{Type: indexer.FieldSearch, Term: "fire safety", ContentID: "a"}, all[:4]},
	} {
		wantIDs(t, tc.name, str(search(t, ix, tc.q)), tc.want...)
	}
}

// ConcurrentWrites checks an index whose writes are group-committed: versions written by many
// goroutines at once (new ones, and one version written again with other text) are each
// searchable with their own chunks and fields as soon as their IndexContent returns, and a
// write refused by PrepareContent fails alone.
func ConcurrentWrites(t *testing.T, ix indexer.Index) {
	const writers = 24
	c := ctx(t)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			id := fmt.Sprintf("doc%02d", w)
			chunks := []indexer.Chunk{{Active: true, Location: "p1", Text: "shared pumpkins " + id, Vector: []float32{1, 0, 0, 0}},
				{Active: true, Location: "p2", Text: "second part " + id, Vector: []float32{0, 1, 0, 0}}}
			if w == writers-1 {
				chunks[0].Vector = []float32{1, 0} // wrong dimension: refused
			}
			fields := []indexer.Field{{FieldType: indexer.FieldTitle, Value: "Title " + id}}
			if errs[w] = ix.IndexContent(c, "grp", id, 1, chunks, fields); errs[w] != nil {
				return
			}
			// Visible at once, with its own chunks and fields.
			hits, err := ix.Search(c, indexer.Query{Tenant: "grp", Type: indexer.FieldSearch, Term: "title " + id})
			if err != nil || len(hits) != 1 || hits[0].ContentID != id {
				errs[w] = fmt.Errorf("field search for %s after its write: %v %+v", id, err, hits)
				return
			}
			v := 1
			hits, err = ix.Search(c, indexer.Query{Tenant: "grp", Type: indexer.Lexical, Term: "part", ContentID: id, Version: &v})
			if err != nil || len(hits) != 1 || hits[0].Location != "p2" {
				errs[w] = fmt.Errorf("lexical search in %s after its write: %v %+v", id, err, hits)
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		if w == writers-1 {
			if !errors.Is(err, indexer.ErrModelMismatch) && !errors.Is(err, indexer.ErrInvalidQuery) {
				t.Errorf("write with a wrong dimension: %v, want ErrModelMismatch or ErrInvalidQuery", err)
			}
			continue
		}
		if err != nil {
			t.Error(err)
		}
	}
	hits := search(t, ix, indexer.Query{Tenant: "grp", Type: indexer.Lexical, Term: "pumpkins", Limit: 100})
	if len(hits) != writers-1 {
		t.Errorf("tenant-wide search finds %d versions, want %d", len(hits), writers-1)
	}
	// A version written again by concurrent writers ends with one of the writes, whole.
	for range 2 {
		wg.Go(func() {
			err := ix.IndexContent(c, "grp", "doc00", 1, []indexer.Chunk{{Active: true, Location: "only", Text: "rewritten turnips", Vector: []float32{0, 0, 1, 0}}}, nil)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	v := 1
	if h := search(t, ix, indexer.Query{Tenant: "grp", Type: indexer.Lexical, Term: "part", ContentID: "doc00", Version: &v}); len(h) != 0 {
		t.Errorf("doc00 still has its old chunk after the rewrite: %+v", h)
	}
	if h := search(t, ix, indexer.Query{Tenant: "grp", Type: indexer.Lexical, Term: "turnips", ContentID: "doc00", Version: &v}); len(h) != 1 {
		t.Errorf("doc00 lacks its new chunk after the rewrite: %+v", h)
	}
}

func (s *suite) keywordAnyTerm(t *testing.T) {
	ix := s.index(t)
	put(t, ix, rankingCorpus...)
	anyTerm := func(q indexer.Query) indexer.Query { q.AnyTerm = true; return q }
	for _, tc := range []struct {
		name string
		q    indexer.Query
		want []string
	}{
		{
			// Only juice holds both lexemes; AnyTerm ranks every version holding either,
			// by the same scores (juice, the rare lexeme, weighs most).
			"carrot juice", anyTerm(lexical("carrot juice")),
			[]string{"juice/1", "recipe/1", "soup/1", "long/1", "zest/1", "bakery/1", "recipe/2", "tiny/1"},
		},
		{
			"sponge carrot, page 2", anyTerm(indexer.Query{Type: indexer.Lexical, Term: "sponge carrot", Skip: 1, Limit: 3}),
			[]string{"recipe/1", "soup/1", "long/1"},
		},
		{
			"juice cake in bakery", anyTerm(indexer.Query{Type: indexer.Lexical, Term: "juice cake", ContentID: "bakery"}),
			[]string{"bakery/1@loc1"},
		},
	} {
		wantRanked(t, tc.name, search(t, ix, tc.q), keywordScores(rankingCorpus, tc.q), tc.want...)
	}
	// Without AnyTerm the spec's rule stands: only juice holds both.
	wantRanked(t, "carrot juice, all lexemes", search(t, ix, lexical("carrot juice")), nil, "juice/1")
}

// hybridCorpus: "a" holds both query lexemes but an orthogonal vector, "b" one lexeme and the
// query's direction, "c" no lexeme and a vector at 45°; "m" has three chunks.
var hybridCorpus = []doc{
	{id: "a", chunks: withVectors(texts("reset the router"), vec(0, 1, 0, 0))},
	{id: "b", chunks: withVectors(texts("router cables"), vec(1, 0, 0, 0))},
	{id: "c", chunks: withVectors(texts("power supply"), vec(1, 1, 0, 0))},
	{id: "m", tenant: "t2", chunks: withVectors(texts("router reset guide", "wireless access", "kitchen"),
		vec(0, 0, 1, 0), vec(1, 0, 0, 0), vec(0, 0, 0, 1))},
}

func (s *suite) hybrid(t *testing.T) {
	ix := s.index(t)
	put(t, ix, hybridCorpus...)
	q := indexer.Query{Type: indexer.Hybrid, Term: "router reset", Vector: vec(1, 0, 0, 0)}
	// Lexical ranks a (both lexemes: 69×64 + 110×64 = 11456) above b (router: 69×64 = 4416);
	// semantic b (cosine 1), c (1/√2), a (0). Two lexemes weigh w = 0.5: b 0.5×4416/11456 +
	// 0.5 > a 0.5 > c 0.5/√2.
	w := indexer.HybridLexicalWeight("router reset")
	if w != 0.5 {
		t.Fatalf("lexical weight of two lexemes %v, want 0.5", w)
	}
	hits := search(t, ix, q)
	wantRanked(t, "tenant-wide", hits, nil, "b/1", "a/1", "c/1")
	want := map[string]float64{"b": w*4416/11456 + (1 - w), "c": (1 - w) / math.Sqrt2, "a": w}
	for _, h := range hits {
		// Elasticsearch's cosines are float32.
		if math.Abs(h.Score-want[h.ContentID]) > 1e-6 {
			t.Errorf("hit %s scores %v, want %v", h.ContentID, h.Score, want[h.ContentID])
		}
		if h.MatchStrength == nil || *h.MatchStrength != h.Score {
			t.Errorf("hit %s: match strength %v, want its score %v", h.ContentID, h.MatchStrength, h.Score)
		}
		if h.Match != nil || h.Field != nil || h.Text != nil {
			t.Errorf("hybrid hit %+v carries match, field or text", h)
		}
	}
	// The hybrid ranking is the fusion of its parts, on every backend.
	lq, sq := indexer.HybridParts(indexer.Query{Tenant: "t1", Type: indexer.Hybrid, Term: "router reset", Vector: vec(1, 0, 0, 0)})
	fused := indexer.Fuse(search(t, ix, lq), search(t, ix, sq), w)
	if !slices.Equal(full(fused), full(hits)) {
		t.Errorf("hybrid %q, fusion of its parts %q", full(hits), full(fused))
	}
	page := q
	page.Skip, page.Limit = 1, 1
	wantRanked(t, "page 2 of 1", search(t, ix, page), nil, "a/1")

	// Within one item: one hit per chunk, with its location. Lexical finds loc1 (three
	// lexemes weigh w = 0.3 + 0.4/3); semantic ranks loc2 (cosine 1: 1 − w), then loc1 and
	// loc3 (0).
	in := indexer.Query{Tenant: "t2", Type: indexer.Hybrid, Term: "router reset guide", Vector: vec(1, 0, 0, 0), ContentID: "m", ReturnText: true}
	hits = search(t, ix, in)
	wantRanked(t, "within item", hits, nil, "m/1@loc2", "m/1@loc1", "m/1@loc3")
	for i, text := range []string{"wireless access", "router reset guide", "kitchen"} {
		if i < len(hits) && (hits[i].Text == nil || hits[i].Text.Text != text || hits[i].Text.Location != hits[i].Location) {
			t.Errorf("hit %d text %+v, want %q at its location", i, hits[i].Text, text)
		}
	}
	// A phrase's lexical part is the phrase search; a semantic part whose best cosine is 0
	// adds nothing, and equal fused scores fall to the tie-break.
	ph := indexer.Query{Type: indexer.Hybrid, Term: `"reset the router"`, Vector: vec(0, 0, 0, 1)}
	wantRanked(t, "phrase", search(t, ix, ph), nil, "a/1", "b/1", "c/1")
}

func (s *suite) hybridInvalid(t *testing.T) {
	ix := s.index(t)
	for _, q := range []indexer.Query{
		{Tenant: "t1", Type: indexer.Hybrid, Term: "x"},                                    // no vector
		{Tenant: "t1", Type: indexer.Hybrid, Term: " ", Vector: vec(1)},                    // no term
		{Tenant: "t1", Type: indexer.Hybrid, Term: "x", Vector: vec(1), ReturnMatch: true}, // no match
		{Tenant: "t1", Type: indexer.Semantic, Vector: vec(1), AnyTerm: true},              // any-term is lexical
	} {
		if _, err := ix.Search(ctx(t), q); !errors.Is(err, indexer.ErrInvalidQuery) {
			t.Errorf("Search %+v: %v, want ErrInvalidQuery", q, err)
		}
	}
	q := indexer.Query{Tenant: "t1", Type: indexer.Hybrid, Term: "x", Vector: []float32{1, 0}}
	if _, err := ix.Search(ctx(t), q); !errors.Is(err, indexer.ErrModelMismatch) {
		t.Errorf("hybrid with a 2-dimensional vector: %v, want ErrModelMismatch", err)
	}
}
