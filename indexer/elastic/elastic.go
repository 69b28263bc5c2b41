// Package elastic is the distributed content search backend (indexer.Index) on
// Elasticsearch 8, through storage/elastic's client and the index definition
// mappings.Content. It answers every query the way indexer/bleve does (the contract suite
// indexer/indexertest holds both to the same rules).
//
// # Documents
//
// One index (the alias mappings.Content under the client's prefix) holds three kinds of
// documents, told apart by the keyword "kind":
//
//   - "chunk": one per chunk (tenant_id, content_id, version, version_key, tags, active,
//     location, text — stored, not indexed —, phrase, lex, vlex, embedding);
//   - "field": one per metadata field (field_type, value as a keyword with a lowercase
//     normalizer and its exact subfield value.exact, created and updated as the
//     RFC 3339 strings Go writes — keywords with doc values only, so that a search reads
//     them exactly without loading the document — and the version's tags and active flag);
//   - "status": one per content version (its tags and active flag): a version exists when
//     it has one, even without chunks or fields.
//
// Document ids are fixed per version (a hash of tenant, content id and version, the kind,
// and the chunk's or field's index), and every document carries copies of what searches
// filter on, so a search is one _search request (two for keyword queries of several
// lexemes and for phrase queries), with no point in time and no status lookup.
//
// # Consistency
//
// Content versions are immutable in the content service: IndexContent on an existing version
// only happens on job retries and re-embedding, which write the same text. So a version is
// replaced in place: IndexContent sends one bulk request (per 500 documents) that overwrites
// the documents by id, deletes those of the previous call that the new one does not have
// (found by one search before), and ends with refresh=true, so the new version is searchable
// when the call returns (a forced refresh, not a wait for the scheduled one: IndexContent
// takes milliseconds, not the refresh interval twice). Each document is replaced atomically,
// but a scheduled refresh in the middle of the bulk request can show a search some
// documents of the old call next to some of the new one (never fewer chunks than either
// has in common); as both hold the same content that is harmless. SetStatus likewise
// updates the copies of tags and active on every document of the version in one bulk
// request, and DeleteContent and PurgeTenant delete every matching document, each with a
// forced refresh. Writes of one content item are serialised within a process; concurrent
// writers of one version in several processes are not coordinated (the last bulk request
// wins document by document).
//
// # Queries
//
// Document and query terms are computed in Go by mappings/analysis (Tokens, Lexemes,
// PhraseTerms), never by Elasticsearch, so both backends index and look for the same terms
// and the cluster needs no analysis plugin: the index uses only Elasticsearch's built-in
// whitespace analyzer (mappings.AnalyzerTerms), on terms Go joined with spaces. Elasticsearch ranks, collapses
// (tenant-wide: one hit per version_key, the best chunk) and pages every search itself, with
// the sort [_score desc, content_id, version, location] — keyword sort order is Go's byte
// order, so this is indexer.Compare — and returns exactly the page; only pages beyond
// maxResultWindow hits are collected whole in a point in time (collectAll). Keyword and
// phrase searches send their scope (kind, tenant, content id, version, tags, active) as one
// bool filter clause (scopeFilter), which the engine's query cache keeps as a bitset: its
// term queries alone are never cached.
//
// Searches load no stored field (stored_fields _none_: neither _id nor _source). A hit's
// content id, version and location (a field's content id, version, type and exact value)
// are its sort values (semantic hits, which sort by score alone, read them from doc
// values), and a field's created and updated come from doc values. Loading
// the _source of a hit means decompressing its stored fields, embedding included, and
// costs more than the query itself (about 50 µs a hit at 100k chunks: at 100 hits, 5 of a
// keyword search's 8 ms); the text, when a search needs it, is fetched for the few hits
// that need it, or with the hits only when every hit does (keyword ReturnMatch in one
// content item).
//
//   - Keyword: the shared formula of package indexer (KeywordIDF, KeywordTF, KeywordScore)
//     is computed by Lucene exactly. At index time Go analyses each chunk and stores in the
//     keyword field lex (similarity "boolean": a matching term scores its query boost, no
//     statistics) each lexeme l, and "l b" for every set bit b of KeywordTF(tf(l)); vlex holds
//     the lexemes of the whole version on each of its chunks. A query is filter clauses for
//     the scope and, for every query lexeme, vlex = l (the version holds every lexeme,
//     whichever chunks), and should clauses lex = "l b" boosted by w(l)·2^b (at least one
//     matching): a chunk scores Σ w·KeywordTF(tf), integers summed in float64 and rounded to
//     float32 by Lucene as by KeywordScore. The weights w need N and df of the candidates:
//     one size-0 count request with a filters aggregation first, for queries of two or more
//     lexemes (with one, N = df and w is 69). Being of size 0, it is answered from the
//     shard request cache when the same query ran since the last refresh (~0.3 ms instead
//     of ~1.7 ms at 100k chunks; a refresh empties the cache, so the counts are never
//     stale). Queries of more than maxRankedLexemes lexemes would break the engine's clause
//     limit: their candidates are fetched and scored in Go (keywordAll).
//   - Phrase: at index time the field phrase holds the chunk's analysis.PhraseTerms (a
//     placeholder for every stop word, so positions are the words'), joined by spaces (it
//     stays in _source: SetStatus's partial updates rebuild a document from _source); a
//     query is a match_phrase of the query's PhraseTerms on it. Its similarity is BM25 with
//     b = 0: the score is then a function of the phrase frequency alone, strictly increasing, the same
//     for every chunk (on an index of several shards, dfs_query_then_fetch keeps the
//     statistics the same everywhere).
//     Lucene's phrase frequency counts overlapping occurrences as PhraseOccurrences does, so
//     Elasticsearch's order is the order of the occurrence counts; Go counts the
//     occurrences in one hit per distinct score of the page and gives every hit its count.
//     Those texts (usually one or two: most hits hold the phrase once) come from a second,
//     small request by content id, version and location (unique within a version), which
//     costs less than the text of every hit in the first. Should the counts not fall as the
//     scores do, or a chunk be gone by then, the page is recomputed from every hit
//     (phraseAll).
//   - Field: a term query on the normalised value, sorted by [content_id, version,
//     field_type, value.exact]; a value too long for value.exact (ignore_above) is too
//     long for value too, so every hit has its exact value as a sort value.
//   - Semantic: a kNN query with the filters inside; tenant-wide k is half as much again as
//     the hits needed and the engine collapses the k nearest chunks on version_key, so that
//     one request nearly always returns the versions of the page (otherwise k doubles).
//
// # Differences from indexer/bleve
//
//   - Semantic search is approximate (HNSW, exact for small filtered sets) and considers at
//     most maxKNN chunks; scores are float32 cosines (Elasticsearch's (1+c)/2, turned back
//     into c = 2s-1).
//   - A zero vector (all components 0) is stored without an embedding, since cosine is
//     undefined for it: semantic searches do not return its chunk (Bleve returns it at 0).
//   - Field values longer than maxValueLength are stored but cannot be found by field search.
package elastic

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/storage/elastic"
)

// Options configures New.
type Options struct {
	// Model is the embedding model of the vectors to index. The index records it in its
	// mapping's _meta (key metaModel); opening an index that holds another model fails with
	// indexer.ErrModelMismatch. Zero means: use the recorded model; an index that does not
	// exist yet cannot be created without one (its dense_vector needs the dimension count).
	Model indexer.Model
	// GroupWindow is how long the first of a group of concurrent IndexContent calls waits
	// for others before sending them as one bulk request with one forced refresh (zero: it
	// sends at once, with whatever arrived while the previous request ran). The app sets a
	// few tens of milliseconds: a refresh per document costs the cluster more than the
	// documents.
	GroupWindow time.Duration
}

// Index is the Elasticsearch backend. It is safe for concurrent use.
type Index struct {
	c     *elastic.Client
	alias string
	model indexer.Model
	// dims is the embedding dimension of the index's mapping, with which recreate makes a
	// lost index again.
	dims int
	// window is the most hits a search pages through in one request (maxResultWindow;
	// tests lower it to exercise collectAll).
	window int
	// phraseSearchType is the search type of phrase searches: dfs_query_then_fetch when the
	// index has several shards (phrase scores must use the same statistics everywhere, see
	// the package comment), else the default (the statistics phase costs ~1.5 ms even on one
	// shard).
	phraseSearchType string

	// Writes of one content item are serialised within this process (locks, by a hash of
	// tenant and content id); PurgeTenant excludes every other write (purge).
	purge  sync.RWMutex
	locks  [64]sync.Mutex
	closed atomic.Bool

	// IndexContent's bulk requests go one at a time (send), and the writes that arrive
	// while one is in flight wait and go together in the next (group commit, see
	// indexer.Committer): concurrent index tasks then share one bulk request and one forced
	// refresh.
	send    sync.Mutex
	commits indexer.Committer[pendingBulk]
}

// pendingBulk is the bulk actions of one IndexContent call waiting for a group commit.
type pendingBulk struct {
	op  string
	ops []bulkOp
}

// metaModel is the key of the embedding model in the index mapping's _meta.
const metaModel = "lectern_embedding_model"

// Document kinds.
const (
	kindChunk  = "chunk"
	kindField  = "field"
	kindStatus = "status"
)

// pageSize is the number of hits fetched per request when a search collects every hit.
const pageSize = 1000

// maxKNN is the largest k (and num_candidates) of a kNN search.
const maxKNN = 10000

// maxValueLength is the value field's ignore_above in mappings.Content: longer values (in
// UTF-16 code units) are stored but not indexed, since Lucene refuses terms over 32766 bytes.
const maxValueLength = 8191

// New returns the index behind client's content alias, creating the index (mappings.Content)
// when it does not exist, and records or checks the embedding model.
func New(ctx context.Context, client *elastic.Client, opts Options) (*Index, error) {
	if client == nil {
		return nil, errors.New("indexer/elastic: nil client")
	}
	if opts.Model.Dims < 0 || opts.Model.Dims > mappings.MaxEmbeddingDims || (opts.Model.Dims == 0) != (opts.Model.Name == "") {
		return nil, fmt.Errorf("indexer/elastic: invalid model %+v", opts.Model)
	}
	ix := &Index{c: client, alias: client.Alias(mappings.Content), window: maxResultWindow}
	// The others' writes must not fail because the leader's context ends; the group's
	// requests are bounded instead.
	ix.commits = indexer.Committer[pendingBulk]{Window: opts.GroupWindow, Lock: &ix.send, Flush: ix.sendGroup,
		GroupTimeout: 2 * time.Minute}
	if opts.Model.Dims > 0 {
		if _, _, err := client.EnsureIndex(ctx, mappings.Content, mappings.Options{EmbeddingDims: opts.Model.Dims}); err != nil {
			return nil, fmt.Errorf("indexer/elastic: %w", err)
		}
	}
	m, err := ix.readMapping(ctx)
	if errors.Is(err, elastic.ErrNotFound) && opts.Model.Dims == 0 {
		return nil, fmt.Errorf("indexer/elastic: index %s does not exist, and creating it needs Options.Model", ix.alias)
	}
	if err != nil {
		return nil, err
	}
	ix.dims = m.dims
	if ix.phraseSearchType, err = ix.phraseType(ctx); err != nil {
		return nil, err
	}
	switch {
	case opts.Model == (indexer.Model{}):
		ix.model = m.model
	case m.model == (indexer.Model{}):
		if m.dims != opts.Model.Dims {
			return nil, fmt.Errorf("%w: index %s holds %d-dimensional vectors, model %q has %d",
				indexer.ErrModelMismatch, ix.alias, m.dims, opts.Model.Name, opts.Model.Dims)
		}
		if err := ix.recordModel(ctx, m, opts.Model); err != nil {
			return nil, err
		}
		// Another process may have recorded another model at the same time: the last write
		// wins, and whoever reads something else than its own model gives up.
		if m, err = ix.readMapping(ctx); err != nil {
			return nil, err
		}
		if m.model != opts.Model {
			return nil, fmt.Errorf("%w: index %s holds vectors of %s (%d dims), configured model is %s (%d dims)",
				indexer.ErrModelMismatch, ix.alias, m.model.Name, m.model.Dims, opts.Model.Name, opts.Model.Dims)
		}
		ix.model = opts.Model
	case m.model != opts.Model:
		return nil, fmt.Errorf("%w: index %s holds vectors of %s (%d dims), configured model is %s (%d dims)",
			indexer.ErrModelMismatch, ix.alias, m.model.Name, m.model.Dims, opts.Model.Name, opts.Model.Dims)
	default:
		ix.model = m.model
	}
	return ix, nil
}

// Model returns the embedding model the index holds vectors of (zero when none).
func (ix *Index) Model() indexer.Model { return ix.model }

var errClosed = errors.New("indexer/elastic: index is closed")

// Close implements indexer.Index. The client stays open (it belongs to the caller).
func (ix *Index) Close() error {
	ix.closed.Store(true)
	return nil
}
