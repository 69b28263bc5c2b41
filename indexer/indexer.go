// Package indexer is the content search port: an Index holds the chunks (text and
// embedding, with a location inside the content item) and the generated metadata fields of
// every content version of every tenant, and answers lexical, semantic and field searches.
//
// Two backends implement it with the same behaviour (ARCHITECTURE.md, "Two modes"):
// indexer/bleve (embedded: Bleve plus an in-process vector index) and, later, an
// Elasticsearch backend. indexer/indexertest is the one contract suite both must pass.
//
// The search rules (spec 001, Search; ARCHITECTURE.md, "Text analysis"):
//
//   - Lexical, keyword (term not in double quotes): every lexeme of the term
//     (mappings/analysis.Lexemes: stemmed, stop words dropped) occurs somewhere in the content
//     version, in any order; the chunks need not be the same.
//   - Lexical, phrase (term in double quotes): the lexemes occur adjacent and in order within
//     one chunk; a stop word in the phrase matches any stop word at that position and nothing
//     else (mappings/analysis.PhraseTerms).
//   - Field: exact, case-insensitive match of the whole term on a metadata field value; no
//     stemming, no stop words.
//   - Semantic: cosine similarity of the query vector and chunk vectors; MatchStrength is the
//     cosine clamped to [0, 1].
//   - Hybrid (a Lectern extension): a weighted sum of the scores, each relative to its list's
//     best, of an any-term keyword search (Query.AnyTerm) and a semantic search of the same
//     scope, the keyword part weighing more for short terms (hybrid.go, Fuse).
//
// Lexical, semantic and hybrid searches within one content item (Query.ContentID) return one Hit
// per matching chunk, with its Location; tenant-wide they return one Hit per content
// version, ranked by its best chunk, without Location. Field searches return one Hit per
// matching field. Every backend orders hits by Score (descending), then ContentID, Version,
// Location and, for fields, FieldType and Value, so that equal scores come out in the same
// order everywhere (see Sort).
//
// Lexical and field scores are not the backends' own: each backend only selects the matching
// chunks and fields, and the scores are computed by this package from data both hold (term
// frequencies, phrase occurrences; see KeywordScores, PhraseOccurrences, FieldScore), so both
// backends return the same hits in the same order, with the same scores.
package indexer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Sentinel errors, possibly wrapped; test them with errors.Is.
var (
	// ErrNotFound means the content version (or content item) does not exist in the index.
	ErrNotFound = errors.New("indexer: not found")
	// ErrInvalidQuery means the query (or the data to index) breaks a rule of this package,
	// such as a version without a content id or an empty term; the message says which.
	ErrInvalidQuery = errors.New("indexer: invalid query")
	// ErrModelMismatch means a vector does not come from the embedding model the index was
	// built with (another model name, or another dimension count). Vectors of different
	// models live in unrelated spaces, so the index refuses to mix them.
	ErrModelMismatch = errors.New("indexer: embedding model mismatch")
)

// Model identifies the embedding model of an index's vectors (as embed.Info does for an
// Embedder). A backend is opened with one Model, records it with the first vectors, and
// refuses vectors and queries of another.
type Model struct {
	// Name is the model identifier, such as "all-MiniLM-L6-v2-onnx-int8".
	Name string
	// Dims is the length of every vector.
	Dims int
}

// Chunk is one searchable piece of a content version: a slide, page, section or transcript
// window.
type Chunk struct {
	// Tenant is the tenant id (case-sensitive). IndexContent fills it in from its argument.
	Tenant string
	// ContentID is the content item's id. IndexContent fills it in from its argument.
	ContentID string
	// Version is the content version. IndexContent fills it in from its argument.
	Version int
	// Tags are the content version's tags (a search's tag filter keeps content carrying one
	// of its tags). They belong to the version: every chunk of an IndexContent call must
	// carry the same ones; SetStatus changes them.
	Tags []string
	// Active reports whether the content version is active; searches skip inactive content
	// unless Query.IncludeInactive. Like Tags, it belongs to the version.
	Active bool
	// Location says where the chunk is inside the content item: a slide or chapter name, a
	// heading path, a page, or a timestamp. Unique within a version.
	Location string
	// Text is the chunk's text.
	Text string
	// Vector is the chunk's embedding, of the index's Model; nil when there is none.
	Vector []float32
}

// Field is one generated metadata value of a content version, for field search.
type Field struct {
	// Tenant is the tenant id. IndexContent fills it in from its argument.
	Tenant string
	// ContentID is the content item's id. IndexContent fills it in from its argument.
	ContentID string
	// Version is the content version. IndexContent fills it in from its argument.
	Version int
	// FieldType is the kind of value, such as FieldTitle, FieldSummary or FieldSkills.
	FieldType string
	// Value is the value; field search matches it whole, ignoring case.
	Value string
	// Created is when the value was first generated.
	Created time.Time
	// Updated is when the value last changed.
	Updated time.Time
}

// Field types that occur (the spec names TITLE and SUMMARY; the set is open).
const (
	FieldTitle   = "TITLE"
	FieldSummary = "SUMMARY"
	FieldSkills  = "SKILLS"
)

// SearchType selects how Query.Term is matched.
type SearchType int

// Search types.
const (
	// Lexical matches lexemes: a keyword search, or a phrase search when Term is in double
	// quotes.
	Lexical SearchType = iota + 1
	// Semantic ranks chunks by the cosine similarity of their vectors to Query.Vector.
	Semantic
	// FieldSearch matches Term exactly (ignoring case) against metadata field values.
	FieldSearch
	// Hybrid (a Lectern extension of the spec) fuses ranked lexical evidence (an AnyTerm
	// keyword search of Term, or its phrase search when Term is in double quotes) with
	// semantic evidence (Vector) by a convex combination of their normalised scores; see
	// SearchHybrid and Fuse.
	Hybrid
)

// String returns the spec's name of the search type.
func (t SearchType) String() string {
	switch t {
	case Lexical:
		return "LEXICAL"
	case Semantic:
		return "SEMANTIC"
	case FieldSearch:
		return "FIELD"
	case Hybrid:
		return "HYBRID"
	}
	return fmt.Sprintf("SearchType(%d)", int(t))
}

// DefaultLimit is the number of hits a Query with Limit 0 returns.
const DefaultLimit = 100

// MaxLimit is the largest Limit a Query may ask for.
const MaxLimit = 10000

// Query is one search.
type Query struct {
	// Tenant is the tenant searched (case-sensitive); required.
	Tenant string
	// Type is the search type; required.
	Type SearchType
	// Term is the search term for Lexical (in double quotes for a phrase) and FieldSearch;
	// required for them. Semantic searches use Vector (the caller embeds Term).
	Term string
	// Vector is the query embedding, of the index's Model; required for Semantic.
	Vector []float32
	// ContentID limits the search to one content item; lexical and semantic hits then carry
	// Location, one per matching chunk.
	ContentID string
	// Version limits the search to one version of ContentID; it needs ContentID.
	Version *int
	// Tags keeps only content carrying at least one of them; empty keeps all.
	Tags []string
	// IncludeInactive includes inactive content versions.
	IncludeInactive bool
	// FieldTypes limits a field search to these field types; empty searches all.
	FieldTypes []string
	// Skip is the number of top hits to leave out (paging).
	Skip int
	// Limit is the largest number of hits to return; 0 means DefaultLimit.
	Limit int
	// ReturnMatch asks lexical searches for Hit.Match.
	ReturnMatch bool
	// AnyTerm makes a lexical keyword search rank every content version holding any of the
	// term's lexemes, instead of only those holding all of them (the spec's rule, kept when
	// false). The scores are the same (KeywordScores), so versions holding more of the rarer
	// lexemes rank higher. Hybrid searches use it for their lexical evidence; it does not
	// apply to phrase, semantic or field searches.
	AnyTerm bool
	// ReturnText asks lexical and semantic searches for Hit.Text (a Lectern extension of
	// the spec's search: the text an API client highlights the match in).
	ReturnText bool
}

// Validate checks q against the rules of Query and returns an error wrapping
// ErrInvalidQuery naming the first one broken.
func (q Query) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidQuery, fmt.Sprintf(format, a...))
	}
	switch {
	case q.Tenant == "":
		return bad("tenant is required")
	case q.Version != nil && q.ContentID == "":
		return bad("version needs content_id")
	case q.Skip < 0:
		return bad("skip must not be negative")
	case q.Limit < 0 || q.Limit > MaxLimit:
		return bad("limit must be between 0 and %d", MaxLimit)
	case q.ReturnText && q.Type == FieldSearch:
		return bad("return text applies to lexical and semantic searches; a field hit carries its value")
	case q.AnyTerm && q.Type != Lexical:
		return bad("any-term applies to lexical searches only")
	case q.ReturnMatch && q.Type == Hybrid:
		return bad("return match applies to lexical searches only")
	}
	switch q.Type {
	case Lexical, FieldSearch:
		if strings.TrimSpace(q.Term) == "" {
			return bad("term is required for %s search", q.Type)
		}
	case Semantic, Hybrid:
		if q.Type == Hybrid && strings.TrimSpace(q.Term) == "" {
			return bad("term is required for %s search", q.Type)
		}
		if len(q.Vector) == 0 {
			return bad("a query vector is required for %s search", q.Type)
		}
		zero := true
		for _, x := range q.Vector {
			if x != x { // NaN
				return bad("query vector holds NaN")
			}
			if x != 0 {
				zero = false
			}
		}
		if zero {
			return bad("query vector is zero")
		}
	default:
		return bad("unknown search type %d", int(q.Type))
	}
	return nil
}

// PageSize returns how many hits the query asks for: Limit, or DefaultLimit when 0.
func (q Query) PageSize() int {
	if q.Limit == 0 {
		return DefaultLimit
	}
	return q.Limit
}

// Phrase reports whether a lexical term is a phrase search (in double quotes), and returns
// the term without the quotes.
func Phrase(term string) (phrase string, ok bool) {
	t := strings.TrimSpace(term)
	if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		return t[1 : len(t)-1], true
	}
	return t, false
}

// Hit is one search result.
type Hit struct {
	// ContentID is the matching content item.
	ContentID string
	// Version is the matching content version.
	Version int
	// Location is the matching chunk's location; set only for lexical, semantic and hybrid
	// searches within one content item.
	Location string
	// MatchStrength is the cosine similarity clamped to [0, 1]; set only for semantic
	// searches (and hybrid ones: the fused score, in [0, 1], see Fuse).
	MatchStrength *float64
	// Match is set for lexical searches with ReturnMatch: a []string of the matched words
	// as they appear in the text (mappings/analysis.MatchedTerms) for a keyword search, or
	// the match regex string (mappings/analysis.MatchRegex) for a phrase search.
	Match any
	// Field is the matching field; set only for field searches.
	Field *Field
	// Text is set for lexical and semantic searches with ReturnText: the chunk the hit stands
	// for, within one content item the hit's own, tenant-wide the version's best chunk (whose
	// location the hit itself does not carry).
	Text *ChunkText
	// Score orders the hits (higher first). Its scale depends on the search type: for keyword
	// searches it is KeywordScores', for phrase searches the number of phrase occurrences in
	// the chunk (PhraseOccurrences), for field searches FieldScore, each the same on every
	// backend; for semantic searches it is the unclamped cosine. Tenant-wide, a version
	// scores as its best chunk.
	Score float64
}

// ChunkText is the location and text of one chunk.
type ChunkText struct {
	Location string
	Text     string
}

// Compare orders hits as every backend must return them: Score descending, then
// ContentID, Version, Location, and for field hits FieldType and Value, ascending.
func Compare(a, b Hit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	c := cmp.Or(
		strings.Compare(a.ContentID, b.ContentID),
		cmp.Compare(a.Version, b.Version),
		strings.Compare(a.Location, b.Location),
	)
	if c != 0 || a.Field == nil || b.Field == nil {
		return c
	}
	return cmp.Or(strings.Compare(a.Field.FieldType, b.Field.FieldType), strings.Compare(a.Field.Value, b.Field.Value))
}

// Sort sorts hits by Compare.
func Sort(hits []Hit) { slices.SortStableFunc(hits, Compare) }

// Page returns the hits that q's Skip and Limit select from sorted hits.
func Page(hits []Hit, q Query) []Hit {
	if q.Skip >= len(hits) {
		return []Hit{}
	}
	hits = hits[q.Skip:]
	if n := q.PageSize(); len(hits) > n {
		hits = hits[:n]
	}
	return hits
}

// Index is the content search port. Implementations are safe for concurrent use.
type Index interface {
	// IndexContent replaces everything indexed for one content version with chunks and
	// fields, and they are searchable when it returns. A search running meanwhile never sees
	// nothing in between; indexer/bleve swaps the version atomically, while indexer/elastic
	// replaces document by document (see its package doc: content versions are immutable,
	// so the old and new documents hold the same text). Tenant, ContentID and Version of the chunks and fields
	// are taken from the arguments. Tags and Active belong to the version: every chunk must
	// carry the same ones (a version without chunks is active, without tags, until
	// SetStatus). Locations must be unique within the version. Breaking these rules fails
	// with ErrInvalidQuery, a vector of another model with ErrModelMismatch; either way
	// nothing changes.
	IndexContent(ctx context.Context, tenant, contentID string, version int, chunks []Chunk, fields []Field) error
	// DeleteContent removes one version of a content item, or every version when version is
	// nil. It returns ErrNotFound when nothing matched.
	DeleteContent(ctx context.Context, tenant, contentID string, version *int) error
	// SetStatus sets the tags and the active flag of one content version (its chunks and
	// fields), or returns ErrNotFound.
	SetStatus(ctx context.Context, tenant, contentID string, version int, tags []string, active bool) error
	// Search runs a query (see the package comment for the rules) and returns the page of
	// hits that q.Skip and q.Limit select, never nil. Invalid queries fail with
	// ErrInvalidQuery, query vectors of another model with ErrModelMismatch. A lexical term
	// without lexemes (only stop words) matches nothing.
	Search(ctx context.Context, q Query) ([]Hit, error)
	// PurgeTenant removes everything of a tenant. Purging a tenant with nothing indexed is
	// not an error.
	PurgeTenant(ctx context.Context, tenant string) error
	// Close releases the index; other methods must not be called afterwards.
	Close() error
}
