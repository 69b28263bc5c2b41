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
//     location, text with its phrase subfield text.phrase, lex, vlex, embedding);
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
// Query terms are computed in Go by mappings/analysis (Lexemes, PhraseTerms), never by
// Elasticsearch, so both backends look for the same terms. Elasticsearch ranks, collapses
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
//   - Phrase: a match_phrase query on text.phrase, whose similarity is BM25 with b = 0: the
//     score is then a function of the phrase frequency alone, strictly increasing, the same
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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/mappings/analysis"
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

// bulkBatch is the largest number of actions in one bulk request, and bulkBytes the size
// past which a request is sent early: a version with a large vocabulary carries it (vlex) on
// every chunk, and Elasticsearch refuses requests over http.max_content_length (100 MB).
const (
	bulkBatch = 500
	bulkBytes = 16 << 20
)

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

// mappingInfo is what New needs of the index mapping.
type mappingInfo struct {
	index string         // concrete index behind the alias
	meta  map[string]any // the mapping's _meta
	model indexer.Model  // recorded in _meta; zero when none
	dims  int            // of the embedding field
}

// phraseType returns the search type of phrase searches (Index.phraseSearchType).
func (ix *Index) phraseType(ctx context.Context) (string, error) {
	var res map[string]struct {
		Settings struct {
			Index struct {
				Shards string `json:"number_of_shards"`
			} `json:"index"`
		} `json:"settings"`
	}
	err := ix.c.Do(ctx, "get settings "+ix.alias, esapi.IndicesGetSettingsRequest{Index: []string{ix.alias},
		Name: []string{"index.number_of_shards"}}, &res)
	if err != nil {
		return "", fmt.Errorf("indexer/elastic: %w", err)
	}
	for _, r := range res {
		if r.Settings.Index.Shards != "1" {
			return dfsSearch, nil
		}
	}
	return "", nil
}

func (ix *Index) readMapping(ctx context.Context) (mappingInfo, error) {
	var res map[string]struct {
		Mappings struct {
			Meta       map[string]any `json:"_meta"`
			Properties struct {
				Embedding struct {
					Dims int `json:"dims"`
				} `json:"embedding"`
			} `json:"properties"`
		} `json:"mappings"`
	}
	err := ix.c.Do(ctx, "get mapping "+ix.alias, esapi.IndicesGetMappingRequest{Index: []string{ix.alias}}, &res)
	if err != nil {
		return mappingInfo{}, fmt.Errorf("indexer/elastic: %w", err)
	}
	if len(res) != 1 {
		return mappingInfo{}, fmt.Errorf("indexer/elastic: alias %s points at %d indices, want 1", ix.alias, len(res))
	}
	var m mappingInfo
	for name, r := range res {
		m.index, m.meta, m.dims = name, r.Mappings.Meta, r.Mappings.Properties.Embedding.Dims
	}
	if raw, ok := m.meta[metaModel]; ok {
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &m.model); err != nil {
			return mappingInfo{}, fmt.Errorf("indexer/elastic: _meta.%s of %s: %w", metaModel, m.index, err)
		}
	}
	return m, nil
}

// recordModel adds the model to the mapping's _meta (an update replaces _meta whole, so the
// other keys are sent again).
func (ix *Index) recordModel(ctx context.Context, m mappingInfo, model indexer.Model) error {
	meta := map[string]any{}
	for k, v := range m.meta {
		meta[k] = v
	}
	meta[metaModel] = map[string]any{"name": model.Name, "dims": model.Dims}
	b, err := json.Marshal(map[string]any{"_meta": meta})
	if err != nil {
		return fmt.Errorf("indexer/elastic: %w", err)
	}
	err = ix.c.Do(ctx, "record model in "+m.index, esapi.IndicesPutMappingRequest{Index: []string{m.index}, Body: bytes.NewReader(b)}, nil)
	if err != nil {
		return fmt.Errorf("indexer/elastic: %w", err)
	}
	return nil
}

// recreate makes the content index and its alias again after they were lost (a cluster that
// came back empty, an index deleted by hand), with the mapping and recorded model this Index
// was opened with; callers then retry their request once. The new index is empty: `lectern
// reindex` fills it from the record and blob stores.
func (ix *Index) recreate(ctx context.Context) error {
	if _, _, err := ix.c.EnsureIndex(ctx, mappings.Content, mappings.Options{EmbeddingDims: ix.dims}); err != nil {
		return fmt.Errorf("indexer/elastic: recreate %s: %w", ix.alias, err)
	}
	if ix.model == (indexer.Model{}) {
		return nil
	}
	m, err := ix.readMapping(ctx)
	if err != nil {
		return err
	}
	if m.model == (indexer.Model{}) {
		return ix.recordModel(ctx, m, ix.model)
	}
	return nil
}

// Model returns the embedding model the index holds vectors of (zero when none).
func (ix *Index) Model() indexer.Model { return ix.model }

var errClosed = errors.New("indexer/elastic: index is closed")

// Close implements indexer.Index. The client stays open (it belongs to the caller).
func (ix *Index) Close() error {
	ix.closed.Store(true)
	return nil
}

// lock serialises the writes of one content item in this process and returns the unlock.
func (ix *Index) lock(tenant, contentID string) func() {
	h := fnv.New32a()
	h.Write([]byte(contentPrefix(tenant, contentID)))
	m := &ix.locks[h.Sum32()%uint32(len(ix.locks))]
	ix.purge.RLock()
	m.Lock()
	return func() {
		m.Unlock()
		ix.purge.RUnlock()
	}
}

// contentPrefix encodes tenant and content id unambiguously (length-prefixed).
func contentPrefix(tenant, contentID string) string {
	b := binary.AppendUvarint(nil, uint64(len(tenant)))
	b = append(b, tenant...)
	b = binary.AppendUvarint(b, uint64(len(contentID)))
	return string(append(b, contentID...))
}

// versionKey names a content version in document ids: a hash, so that ids stay short
// whatever the tenant and content ids are.
func versionKey(tenant, contentID string, v int) string {
	s := sha256.Sum256(binary.BigEndian.AppendUint64([]byte(contentPrefix(tenant, contentID)), uint64(int64(v))))
	return hex.EncodeToString(s[:20])
}

func statusID(vkey string) string { return "s:" + vkey }

func docID(kind byte, vkey string, i int) string {
	return string(kind) + ":" + vkey + ":" + strconv.Itoa(i)
}

// chunkIndex returns the index of a chunk document within its version, from its id.
func chunkIndex(id string) int {
	i, err := strconv.Atoi(id[strings.LastIndexByte(id, ':')+1:])
	if err != nil {
		return -1
	}
	return i
}

// status is a version's status document.
type status struct {
	Kind      string   `json:"kind"`
	Tenant    string   `json:"tenant_id"`
	ContentID string   `json:"content_id"`
	Version   int      `json:"version"`
	Tags      []string `json:"tags"`
	Active    bool     `json:"active"`
}

// hasStatus reports whether a version has a status document (realtime).
func (ix *Index) hasStatus(ctx context.Context, tenant, contentID string, v int) (bool, error) {
	var res struct {
		Found bool `json:"found"`
	}
	id := statusID(versionKey(tenant, contentID, v))
	err := ix.c.Do(ctx, "get status "+id, esapi.GetRequest{Index: ix.alias, DocumentID: id, SourceExcludes: []string{"*"}}, &res)
	if errors.Is(err, elastic.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("indexer/elastic: %w", err)
	}
	return res.Found, nil
}

// IndexContent implements indexer.Index.
func (ix *Index) IndexContent(ctx context.Context, tenant, contentID string, v int, chunks []indexer.Chunk, fields []indexer.Field) error {
	if ix.closed.Load() {
		return errClosed
	}
	cs, fs, st, err := indexer.PrepareContent(tenant, contentID, v, chunks, fields, ix.model)
	if err != nil {
		return err
	}
	defer ix.lock(tenant, contentID)()
	ops := versionDocs(tenant, contentID, v, cs, fs, st)
	// A version without a status document was never written (the status document is the
	// last action of a write), so it has no documents to delete: one realtime get instead
	// of a search in a point in time (three requests) for every new version. Versions are
	// immutable, so a write cut short before its status document was written has the same
	// ids as the retry, which overwrites them.
	written, err := ix.hasStatus(ctx, tenant, contentID, v)
	if err != nil {
		return err
	}
	if written {
		old, err := ix.ids(ctx, map[string]any{"bool": map[string]any{"filter": versionFilter(tenant, contentID, &v)}})
		if err != nil {
			return err
		}
		keep := make(map[string]bool, len(ops))
		for _, o := range ops {
			keep[o.id] = true
		}
		for _, id := range old {
			if !keep[id] {
				ops = append(ops, bulkOp{action: "delete", id: id})
			}
		}
	}
	return ix.groupBulk(ctx, "write "+contentID, ops)
}

// groupBulk sends ops with a forced refresh, together with the other IndexContent writes
// that arrive within the group window or while the previous request runs (see Index.send).
// When a group fails, each write is sent alone, so that one bad version fails only its own
// call.
func (ix *Index) groupBulk(ctx context.Context, op string, ops []bulkOp) error {
	return ix.commits.Commit(ctx, pendingBulk{op: op, ops: ops})
}

// sendGroup sends a group of IndexContent writes in one bulk request with a forced refresh.
// The caller holds send.
func (ix *Index) sendGroup(ctx context.Context, group []pendingBulk) error {
	if len(group) == 1 {
		return ix.bulk(ctx, group[0].op, group[0].ops, "true")
	}
	var all []bulkOp
	for _, g := range group {
		all = append(all, g.ops...)
	}
	return ix.bulk(ctx, fmt.Sprintf("write %d versions", len(group)), all, "true")
}

// versionDocs returns the index actions of a content version's documents (see the package
// comment): chunks and fields, prepared by indexer.PrepareContent, and the status document.
func versionDocs(tenant, contentID string, v int, cs []indexer.Chunk, fs []indexer.Field, st indexer.Status) []bulkOp {
	vkey := versionKey(tenant, contentID, v)
	tags := st.Tags
	if tags == nil {
		tags = []string{}
	}
	lex := make([][]string, len(cs))
	vlexSet := map[string]bool{}
	for i, c := range cs {
		var ls []string
		lex[i], ls = lexTerms(c.Text)
		for _, l := range ls {
			vlexSet[l] = true
		}
	}
	vlex := slices.Sorted(maps.Keys(vlexSet))
	ops := make([]bulkOp, 0, len(cs)+len(fs)+1)
	for i, c := range cs {
		d := map[string]any{
			"kind": kindChunk, "tenant_id": tenant, "content_id": contentID, "version": v, "version_key": vkey,
			"tags": tags, "active": st.Active, "location": c.Location, "text": c.Text, "lex": lex[i], "vlex": vlex,
		}
		if c.Vector != nil && !zero(c.Vector) {
			// Cosine similarity is undefined for a zero vector, and Elasticsearch refuses one.
			d["embedding"] = c.Vector
		}
		ops = append(ops, bulkOp{action: "index", id: docID('c', vkey, i), body: d})
	}
	for i, f := range fs {
		ops = append(ops, bulkOp{action: "index", id: docID('f', vkey, i), body: map[string]any{
			"kind": kindField, "tenant_id": tenant, "content_id": contentID, "version": v, "version_key": vkey,
			"tags": tags, "active": st.Active, "field_type": f.FieldType,
			"value": f.Value, "created": f.Created, "updated": f.Updated,
		}})
	}
	return append(ops, bulkOp{action: "index", id: statusID(vkey), body: status{Kind: kindStatus, Tenant: tenant,
		ContentID: contentID, Version: v, Tags: tags, Active: st.Active}})
}

// lexTerms returns the terms of a chunk's lex field for text — each lexeme l, and "l b" for
// every set bit b of indexer.KeywordTF of its term frequency — and the lexemes.
func lexTerms(text string) (terms, lexemes []string) {
	tf := map[string]int{}
	for _, t := range analysis.Tokens(text) {
		if !t.Stop {
			if tf[t.Term] == 0 {
				lexemes = append(lexemes, t.Term)
			}
			tf[t.Term]++
		}
	}
	terms = make([]string, 0, 4*len(lexemes))
	for _, l := range lexemes {
		terms = append(terms, l)
		f := indexer.KeywordTF(tf[l])
		for b := range indexer.KeywordTFBits {
			if f&(1<<b) != 0 {
				terms = append(terms, lexBit(l, b))
			}
		}
	}
	return terms, lexemes
}

// lexBit is the lex term of bit b of a lexeme's KeywordTF: lexemes hold no spaces (the
// tokenizer splits words there), so it cannot be another lexeme.
func lexBit(lexeme string, b int) string { return lexeme + " " + strconv.Itoa(b) }

func zero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func termQuery(field string, value any) map[string]any {
	return map[string]any{"term": map[string]any{field: value}}
}

// versionFilter matches every document of a content item, or of one version of it.
func versionFilter(tenant, contentID string, v *int) []any {
	f := []any{termQuery("tenant_id", tenant), termQuery("content_id", contentID)}
	if v != nil {
		f = append(f, termQuery("version", *v))
	}
	return f
}

// DeleteContent implements indexer.Index.
func (ix *Index) DeleteContent(ctx context.Context, tenant, contentID string, v *int) error {
	if ix.closed.Load() {
		return errClosed
	}
	defer ix.lock(tenant, contentID)()
	ids, err := ix.ids(ctx, map[string]any{"bool": map[string]any{"filter": versionFilter(tenant, contentID, v)}})
	if err != nil {
		return err
	}
	if err := ix.deleteIDs(ctx, "delete "+contentID, ids); err != nil {
		return err
	}
	if !slices.ContainsFunc(ids, func(id string) bool { return strings.HasPrefix(id, "s:") }) {
		return fmt.Errorf("%w: content %q in tenant %q", indexer.ErrNotFound, contentID, tenant)
	}
	return nil
}

// SetStatus implements indexer.Index.
func (ix *Index) SetStatus(ctx context.Context, tenant, contentID string, v int, tags []string, active bool) error {
	if ix.closed.Load() {
		return errClosed
	}
	defer ix.lock(tenant, contentID)()
	tags = indexer.NormalizeTags(tags)
	if tags == nil {
		tags = []string{}
	}
	found, err := ix.hasStatus(ctx, tenant, contentID, v)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%w: content %q version %d in tenant %q", indexer.ErrNotFound, contentID, v, tenant)
	}
	ids, err := ix.ids(ctx, map[string]any{"bool": map[string]any{"filter": versionFilter(tenant, contentID, &v)}})
	if err != nil {
		return err
	}
	ops := make([]bulkOp, len(ids))
	for i, id := range ids {
		ops[i] = bulkOp{action: "update", id: id, body: map[string]any{"doc": map[string]any{"tags": tags, "active": active}}}
	}
	return ix.bulk(ctx, "set status of "+contentID, ops, "true")
}

// PurgeTenant implements indexer.Index.
func (ix *Index) PurgeTenant(ctx context.Context, tenant string) error {
	if ix.closed.Load() {
		return errClosed
	}
	ix.purge.Lock()
	defer ix.purge.Unlock()
	ids, err := ix.ids(ctx, termQuery("tenant_id", tenant))
	if err != nil {
		return err
	}
	return ix.deleteIDs(ctx, "purge "+tenant, ids)
}

// bulkOp is one action of a bulk request.
type bulkOp struct {
	action string // index, update or delete
	id     string
	body   any // the document (index) or the update body (update)
}

// bulk runs ops in batches and fails when any action failed (a delete or update of a
// document that is gone is not a failure). The last batch is sent with the given refresh
// ("true", or "false" for writes that need not be visible at once), the others without one.
func (ix *Index) bulk(ctx context.Context, op string, ops []bulkOp, refresh string) error {
	for len(ops) > 0 {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		n := 0
		for n < len(ops) && n < bulkBatch && buf.Len() < bulkBytes {
			o := ops[n]
			if err := enc.Encode(map[string]any{o.action: map[string]any{"_id": o.id}}); err != nil {
				return fmt.Errorf("indexer/elastic: %s: %w", op, err)
			}
			if o.body != nil {
				if err := enc.Encode(o.body); err != nil {
					return fmt.Errorf("indexer/elastic: %s: %w", op, err)
				}
			}
			n++
		}
		ops = ops[n:]
		r := refresh
		if len(ops) > 0 {
			r = "false"
		}
		body := buf.Bytes()
		var res bulkResult
		err := ix.c.Do(ctx, op, esapi.BulkRequest{Index: ix.alias, Body: bytes.NewReader(body), Refresh: r,
			RequireAlias: esapi.BoolPtr(true)}, &res)
		if elastic.IsIndexNotFound(err) || (err == nil && res.indexNotFound()) {
			// The index was lost: require_alias kept this write from auto-creating a concrete
			// index under the alias's name; make the index again and send the batch once more.
			if err := ix.recreate(ctx); err != nil {
				return err
			}
			res = bulkResult{}
			err = ix.c.Do(ctx, op, esapi.BulkRequest{Index: ix.alias, Body: bytes.NewReader(body), Refresh: r,
				RequireAlias: esapi.BoolPtr(true)}, &res)
		}
		if err != nil {
			return fmt.Errorf("indexer/elastic: %w", err)
		}
		if !res.Errors {
			continue
		}
		for _, item := range res.Items {
			for action, r := range item {
				if r.Status == http.StatusNotFound && action != "index" {
					continue
				}
				if r.Error != nil || r.Status > 299 {
					e := &elastic.Error{Op: op + ": " + action + " " + r.ID, Status: r.Status}
					if r.Error != nil {
						e.Type, e.Reason = r.Error.Type, r.Error.Reason
					}
					return fmt.Errorf("indexer/elastic: %w", e)
				}
			}
		}
	}
	return nil
}

// bulkResult is the part of a bulk response that bulk reads.
type bulkResult struct {
	Errors bool `json:"errors"`
	Items  []map[string]struct {
		ID     string `json:"_id"`
		Status int    `json:"status"`
		Error  *struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		} `json:"error"`
	} `json:"items"`
}

// indexNotFound reports whether an action failed because the index behind the alias is gone.
func (r *bulkResult) indexNotFound() bool {
	for _, item := range r.Items {
		for _, a := range item {
			if a.Error != nil && a.Error.Type == "index_not_found_exception" {
				return true
			}
		}
	}
	return false
}

// ids returns the ids of every document matching query.
func (ix *Index) ids(ctx context.Context, query map[string]any) ([]string, error) {
	hits, err := ix.collectAll(ctx, map[string]any{"query": query, "_source": false,
		"sort": []any{map[string]any{"_shard_doc": "asc"}}})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out, nil
}

// deleteIDs deletes the documents ids, with a forced refresh.
func (ix *Index) deleteIDs(ctx context.Context, op string, ids []string) error {
	ops := make([]bulkOp, len(ids))
	for i, id := range ids {
		ops[i] = bulkOp{action: "delete", id: id}
	}
	return ix.bulk(ctx, op, ops, "true")
}

// pit is an open point in time.
type pit struct{ id string }

func (ix *Index) openPIT(ctx context.Context) (*pit, error) {
	var res struct {
		ID string `json:"id"`
	}
	err := ix.c.Do(ctx, "open point in time on "+ix.alias, esapi.OpenPointInTimeRequest{Index: []string{ix.alias}, KeepAlive: "1m"}, &res)
	if elastic.IsIndexNotFound(err) {
		if err := ix.recreate(ctx); err != nil {
			return nil, err
		}
		err = ix.c.Do(ctx, "open point in time on "+ix.alias, esapi.OpenPointInTimeRequest{Index: []string{ix.alias}, KeepAlive: "1m"}, &res)
	}
	if err != nil {
		return nil, fmt.Errorf("indexer/elastic: %w", err)
	}
	return &pit{id: res.ID}, nil
}

// closePIT releases a point in time, best effort (it expires by itself otherwise).
func (ix *Index) closePIT(p *pit) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, _ := json.Marshal(map[string]string{"id": p.id})
	_ = ix.c.Do(ctx, "close point in time", esapi.ClosePointInTimeRequest{Body: bytes.NewReader(b)}, nil)
}

// hit is a search hit with the source fields this package reads.
type hit struct {
	ID     string          `json:"_id"`
	Score  float64         `json:"_score"`
	Sort   json.RawMessage `json:"sort"`
	Source source          `json:"_source"`
	Fields struct {
		Created   []time.Time `json:"created"`
		Updated   []time.Time `json:"updated"`
		ContentID []string    `json:"content_id"`
		Version   []int       `json:"version"`
		Location  []string    `json:"location"`
	} `json:"fields"`
}

type source struct {
	ContentID string `json:"content_id"`
	Version   int    `json:"version"`
	Location  string `json:"location"`
	Text      string `json:"text"`
}

type searchResult struct {
	PitID string `json:"pit_id"`
	Hits  struct {
		Total struct {
			Value int `json:"value"`
		} `json:"total"`
		Hits []hit `json:"hits"`
	} `json:"hits"`
	Aggregations json.RawMessage `json:"aggregations"`
}

// dfsSearch is the search type that gathers term statistics from every shard first.
const dfsSearch = "dfs_query_then_fetch"

// search runs one search request, in the point in time p unless p is nil.
func (ix *Index) search(ctx context.Context, p *pit, body map[string]any, searchType string) (searchResult, error) {
	req := esapi.SearchRequest{SearchType: searchType}
	if p != nil {
		body["pit"] = map[string]any{"id": p.id, "keep_alive": "1m"}
	} else {
		req.Index = []string{ix.alias}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return searchResult{}, fmt.Errorf("indexer/elastic: %w", err)
	}
	req.Body = bytes.NewReader(b)
	var res searchResult
	err = ix.c.Do(ctx, "search "+ix.alias, req, &res)
	if p == nil && elastic.IsIndexNotFound(err) {
		// A lost index is made again (empty) rather than failing every search until someone
		// notices; /readyz meanwhile reported it, and reindex refills it.
		if err := ix.recreate(ctx); err != nil {
			return searchResult{}, err
		}
		req.Body = bytes.NewReader(b)
		err = ix.c.Do(ctx, "search "+ix.alias, req, &res)
	}
	if err != nil {
		return searchResult{}, fmt.Errorf("indexer/elastic: %w", err)
	}
	if p != nil && res.PitID != "" {
		p.id = res.PitID
	}
	return res, nil
}

// collectAll returns every hit of body (whose sort must be set), page by page in one point
// in time, with _shard_doc as the last sort key so that search_after never skips a tie.
func (ix *Index) collectAll(ctx context.Context, body map[string]any) ([]hit, error) {
	p, err := ix.openPIT(ctx)
	if err != nil {
		return nil, err
	}
	defer ix.closePIT(p)
	sort, _ := body["sort"].([]any)
	if len(sort) == 0 || !slices.ContainsFunc(sort, func(s any) bool { m, ok := s.(map[string]any); return ok && m["_shard_doc"] != nil }) {
		body["sort"] = append(slices.Clone(sort), map[string]any{"_shard_doc": "asc"})
	}
	body["size"] = pageSize
	body["track_total_hits"] = false
	var out []hit
	for {
		res, err := ix.search(ctx, p, body, "")
		if err != nil {
			return nil, err
		}
		hits := res.Hits.Hits
		out = append(out, hits...)
		if len(hits) < pageSize {
			return out, nil
		}
		body["search_after"] = hits[len(hits)-1].Sort
	}
}

// filters returns the filter clauses of the documents of kind that q may find.
func filters(q indexer.Query, kind string) []any {
	out := []any{termQuery("kind", kind), termQuery("tenant_id", q.Tenant)}
	if q.ContentID != "" {
		out = append(out, termQuery("content_id", q.ContentID))
	}
	if q.Version != nil {
		out = append(out, termQuery("version", *q.Version))
	}
	if len(q.Tags) > 0 {
		out = append(out, map[string]any{"terms": map[string]any{"tags": q.Tags}})
	}
	if !q.IncludeInactive {
		out = append(out, termQuery("active", true))
	}
	return out
}

// scopeFilter is filters(q, kind) as one bool filter clause: the same clause for every
// query of a tenant (and options), so the engine's query cache keeps it as a bitset after
// a few uses, where its term queries alone are never cached and would each be intersected
// again on every search (~0.4 ms of a keyword or phrase search at 100k chunks).
func scopeFilter(q indexer.Query, kind string) map[string]any {
	return map[string]any{"bool": map[string]any{"filter": filters(q, kind)}}
}

// Search implements indexer.Index.
func (ix *Index) Search(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	if ix.closed.Load() {
		return nil, errClosed
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if err := indexer.CheckQueryModel(q, ix.model); err != nil {
		return nil, err
	}
	var (
		hits []indexer.Hit
		err  error
	)
	switch q.Type {
	case indexer.Semantic:
		hits, err = ix.semantic(ctx, q)
	case indexer.FieldSearch:
		hits, err = ix.field(ctx, q)
	default:
		if phrase, ok := indexer.Phrase(q.Term); ok {
			hits, err = ix.phrase(ctx, q, phrase)
		} else {
			hits, err = ix.keyword(ctx, q)
		}
	}
	if err != nil {
		return nil, err
	}
	if hits == nil {
		hits = []indexer.Hit{}
	}
	if err := ix.texts(ctx, q, hits); err != nil {
		return nil, err
	}
	return hits, nil
}

// texts sets the Text of every hit of a query with ReturnText: the chunks' texts, in one
// request (after the search, like phrase counting's: the hits' own requests load no text).
// A chunk deleted in between leaves its hit with an empty text.
func (ix *Index) texts(ctx context.Context, q indexer.Query, hits []indexer.Hit) error {
	if !indexer.TextKeys(q, hits) {
		return nil
	}
	keys := make([]chunkKey, len(hits))
	for i, h := range hits {
		keys[i] = chunkKey{h.ContentID, h.Version, h.Text.Location}
	}
	texts, err := ix.chunkTexts(ctx, q, keys)
	if err != nil {
		return err
	}
	for i := range hits {
		hits[i].Text.Text = texts[keys[i]]
	}
	return nil
}

var (
	chunkSource     = []string{"content_id", "version", "location"}
	chunkTextSource = []string{"content_id", "version", "location", "text"}
)

// chunkSort is the order of chunk hits, indexer.Compare's.
var chunkSort = []any{
	map[string]any{"_score": "desc"}, map[string]any{"content_id": "asc"},
	map[string]any{"version": "asc"}, map[string]any{"location": "asc"},
}

// maxResultWindow is the most hits one search request returns (index.max_result_window).
const maxResultWindow = 10000

// ranked returns the page of chunk hits that q selects among the chunks matching query
// (filters included), in chunkSort order, each hit with Elasticsearch's score; tenant-wide
// one per version (its best chunk, whose Location the caller drops: see dropLocations).
// Within maxResultWindow it is one search request that collapses and pages; beyond it every
// hit is collected. withText fetches each hit's text too.
//
// Without text, the request loads no stored field (stored_fields _none_: no _id, no
// _source) and the hits' content id, version and location are read from their sort values:
// the fetch phase is then nearly free, where loading and filtering the _source of each hit
// (which holds its embedding) cost more than the query itself (~50 µs a hit at 100k chunks).
func (ix *Index) ranked(ctx context.Context, q indexer.Query, query map[string]any, withText bool, searchType string) ([]hit, error) {
	if q.Skip+q.PageSize() > ix.window {
		src := chunkSource
		if withText {
			src = chunkTextSource
		}
		all, err := ix.collectAll(ctx, map[string]any{"query": query, "_source": src, "sort": slices.Clone(chunkSort)})
		if err != nil {
			return nil, err
		}
		hits := make([]indexer.Hit, len(all))
		for i, h := range all {
			hits[i] = indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
				Score: h.Score, Match: i}
		}
		var out []hit
		for _, h := range indexer.Page(indexer.Collapse(hits, q), q) {
			out = append(out, all[h.Match.(int)])
		}
		return out, nil
	}
	body := map[string]any{
		"query": query, "sort": chunkSort, "track_total_hits": false,
		"from": q.Skip, "size": q.PageSize(),
	}
	if withText {
		body["_source"] = chunkTextSource
	} else {
		body["_source"], body["stored_fields"] = false, "_none_"
	}
	if q.ContentID == "" {
		body["collapse"] = map[string]any{"field": "version_key"}
	}
	res, err := ix.search(ctx, nil, body, searchType)
	if err != nil {
		return nil, err
	}
	if !withText {
		for i := range res.Hits.Hits {
			if err := res.Hits.Hits[i].fromChunkSort(); err != nil {
				return nil, err
			}
		}
	}
	return res.Hits.Hits, nil
}

// fromChunkSort sets the hit's content id, version and location from its chunkSort values.
func (h *hit) fromChunkSort() error {
	return h.fromSort(nil, &h.Source.ContentID, &h.Source.Version, &h.Source.Location)
}

// fromSort decodes the hit's sort values into dst, one pointer per sort key (nil skips a
// key). A missing value (null) is an error: every key read this way is set on every
// document it sorts.
func (h *hit) fromSort(dst ...any) error {
	var v []json.RawMessage
	err := json.Unmarshal(h.Sort, &v)
	if err == nil && len(v) != len(dst) {
		err = fmt.Errorf("%d sort values, want %d", len(v), len(dst))
	}
	for i := 0; err == nil && i < len(dst); i++ {
		switch {
		case dst[i] == nil:
		case string(v[i]) == "null":
			err = fmt.Errorf("sort value %d is missing", i)
		default:
			err = json.Unmarshal(v[i], dst[i])
		}
	}
	if err != nil {
		return fmt.Errorf("indexer/elastic: sort values %s: %w", h.Sort, err)
	}
	return nil
}

// dropLocations clears the locations of tenant-wide hits, which name versions, not chunks
// (keeping them for the hits' texts when q asks for them: indexer.KeepLocation).
func dropLocations(q indexer.Query, hits []indexer.Hit) {
	if q.ContentID == "" {
		for i := range hits {
			indexer.KeepLocation(q, &hits[i])
			hits[i].Location = ""
		}
	}
}

func (ix *Index) keyword(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	lexemes := analysis.Lexemes(q.Term)
	if len(lexemes) == 0 {
		return nil, nil
	}
	if len(lexemes) > maxRankedLexemes {
		return ix.keywordAll(ctx, q, lexemes)
	}
	scope := []any{scopeFilter(q, kindChunk)}
	present := make([]any, len(lexemes))
	for j, l := range lexemes {
		present[j] = termQuery("lex", l)
	}
	// With one lexeme every candidate holds it: N = df.
	weights := indexer.KeywordIDF(1, []int{1})
	if len(lexemes) > 1 {
		n, df, err := ix.keywordStats(ctx, scope, present)
		if err != nil {
			return nil, err
		}
		if slices.Contains(df, 0) {
			return nil, nil // no version in scope holds every lexeme
		}
		weights = indexer.KeywordIDF(n, df)
	}
	f := slices.Clone(scope)
	if len(lexemes) > 1 {
		for _, l := range lexemes {
			f = append(f, termQuery("vlex", l))
		}
	}
	var should []any
	for j, l := range lexemes {
		for b := range indexer.KeywordTFBits {
			should = append(should, map[string]any{"term": map[string]any{"lex": map[string]any{
				"value": lexBit(l, b), "boost": weights[j] * float64(int(1)<<b)}}})
		}
	}
	query := map[string]any{"bool": map[string]any{"filter": f, "should": should, "minimum_should_match": 1}}
	raw, err := ix.ranked(ctx, q, query, q.ReturnMatch && q.ContentID != "", "")
	if err != nil {
		return nil, err
	}
	page := make([]indexer.Hit, len(raw))
	for i, h := range raw {
		// Lucene's score is a float32: so is indexer.KeywordScore's.
		page[i] = indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
			Score: float64(float32(h.Score))}
	}
	dropLocations(q, page)
	if !q.ReturnMatch {
		return page, nil
	}
	if q.ContentID != "" {
		for i := range page {
			page[i].Match = matchedTerms(raw[i].Source.Text, lexemes)
		}
		return page, nil
	}
	// Tenant-wide, the matched words come from every chunk of the version holding a lexeme.
	vkeys := make([]string, len(page))
	for i, h := range page {
		vkeys[i] = versionKey(q.Tenant, h.ContentID, h.Version)
	}
	chunks, err := ix.collectAll(ctx, map[string]any{
		"_source": []string{"version_key", "text"}, "sort": []any{map[string]any{"_shard_doc": "asc"}},
		"query": map[string]any{"bool": map[string]any{
			"filter": append(slices.Clone(scope), map[string]any{"terms": map[string]any{"version_key": vkeys}}),
			"should": present, "minimum_should_match": 1,
		}},
	})
	if err != nil {
		return nil, err
	}
	byVersion := map[string][]hit{}
	for _, c := range chunks {
		k := c.ID[2:strings.LastIndexByte(c.ID, ':')]
		byVersion[k] = append(byVersion[k], c)
	}
	for i := range page {
		cs := byVersion[vkeys[i]]
		slices.SortFunc(cs, func(a, b hit) int { return chunkIndex(a.ID) - chunkIndex(b.ID) })
		texts := make([]string, len(cs))
		for k, c := range cs {
			texts[k] = c.Source.Text
		}
		page[i].Match = matchedTerms(strings.Join(texts, "\n"), lexemes)
	}
	return page, nil
}

// maxRankedLexemes is the most lexemes a keyword query ranked by Elasticsearch may have: each
// costs KeywordTFBits+1 clauses, and a search may hold 1,024 clauses or a few more (the
// engine's limit depends on its heap). Longer queries take keywordAll.
const maxRankedLexemes = 64

// keywordAll is keyword search for queries of many lexemes: every candidate is fetched (one
// terms query) and scored in Go, from its text.
func (ix *Index) keywordAll(ctx context.Context, q indexer.Query, lexemes []string) ([]indexer.Hit, error) {
	raw, err := ix.collectAll(ctx, map[string]any{
		"_source": chunkTextSource, "sort": []any{map[string]any{"_shard_doc": "asc"}},
		"query": map[string]any{"bool": map[string]any{
			"filter": append(filters(q, kindChunk), map[string]any{"terms": map[string]any{"lex": lexemes}}),
		}},
	})
	if err != nil {
		return nil, err
	}
	counts := make([][]int, len(raw))
	parallel(len(raw), func(i int) { counts[i] = indexer.TermCounts(raw[i].Source.Text, lexemes) })
	scores := indexer.KeywordScores(counts)
	// Every lexeme must occur in the version, in any of its chunks.
	type vk struct {
		id string
		v  int
	}
	held := map[vk][]bool{}
	for i, h := range raw {
		k := vk{h.Source.ContentID, h.Source.Version}
		if held[k] == nil {
			held[k] = make([]bool, len(lexemes))
		}
		for j, n := range counts[i] {
			held[k][j] = held[k][j] || n > 0
		}
	}
	var hits []indexer.Hit
	texts := map[vk][]hit{}
	for i, h := range raw {
		k := vk{h.Source.ContentID, h.Source.Version}
		if slices.Contains(held[k], false) {
			continue
		}
		texts[k] = append(texts[k], h)
		hits = append(hits, indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version,
			Location: h.Source.Location, Score: scores[i]})
	}
	page := indexer.Page(indexer.Collapse(hits, q), q)
	if q.ReturnMatch {
		for i := range page {
			cs := texts[vk{page[i].ContentID, page[i].Version}]
			slices.SortFunc(cs, func(a, b hit) int { return chunkIndex(a.ID) - chunkIndex(b.ID) })
			var ts []string
			for _, c := range cs {
				if q.ContentID == "" || c.Source.Location == page[i].Location {
					ts = append(ts, c.Source.Text)
				}
			}
			page[i].Match = matchedTerms(strings.Join(ts, "\n"), lexemes)
		}
	}
	return page, nil
}

func matchedTerms(text string, lexemes []string) []string {
	terms := analysis.MatchedTerms(text, lexemes)
	if terms == nil {
		terms = []string{}
	}
	return terms
}

// keywordStats returns the number of candidates (the chunks in scope holding a lexeme) and
// how many of them hold each lexeme: one size-0 request.
func (ix *Index) keywordStats(ctx context.Context, scope, present []any) (int, []int, error) {
	named := map[string]any{}
	for j, p := range present {
		named[strconv.Itoa(j)] = p
	}
	res, err := ix.search(ctx, nil, map[string]any{
		"size": 0, "track_total_hits": true,
		"query": map[string]any{"bool": map[string]any{
			"filter": append(slices.Clone(scope), map[string]any{"bool": map[string]any{"should": present, "minimum_should_match": 1}}),
		}},
		"aggs": map[string]any{"df": map[string]any{"filters": map[string]any{"filters": named}}},
	}, "")
	if err != nil {
		return 0, nil, err
	}
	var aggs struct {
		DF struct {
			Buckets map[string]struct {
				DocCount int `json:"doc_count"`
			} `json:"buckets"`
		} `json:"df"`
	}
	if err := json.Unmarshal(res.Aggregations, &aggs); err != nil {
		return 0, nil, fmt.Errorf("indexer/elastic: keyword statistics: %w", err)
	}
	df := make([]int, len(present))
	for j := range df {
		b, ok := aggs.DF.Buckets[strconv.Itoa(j)]
		if !ok {
			return 0, nil, errors.New("indexer/elastic: keyword statistics: missing bucket")
		}
		df[j] = b.DocCount
	}
	return res.Hits.Total.Value, df, nil
}

func (ix *Index) phrase(ctx context.Context, q indexer.Query, phrase string) ([]indexer.Hit, error) {
	terms := analysis.PhraseTerms(phrase)
	if !slices.ContainsFunc(terms, func(s string) bool { return s != analysis.StopPlaceholder }) {
		return nil, nil
	}
	// The terms are Go's; the whitespace analyzer only splits them apart again.
	mp := map[string]any{"match_phrase": map[string]any{"text.phrase": map[string]any{
		"query": strings.Join(terms, " "), "analyzer": "whitespace",
	}}}
	query := map[string]any{"bool": map[string]any{"filter": scopeFilter(q, kindChunk), "must": mp}}
	page, ok, err := ix.phraseRanked(ctx, q, query, terms)
	if err == nil && !ok {
		// Elasticsearch's order is not the occurrence counts' (it should be): rank in Go.
		page, err = ix.phraseAll(ctx, q, query, terms)
	}
	if err != nil {
		return nil, err
	}
	if q.ReturnMatch {
		re := analysis.MatchRegex(phrase)
		for i := range page {
			page[i].Match = re
		}
	}
	return page, nil
}

// phraseRanked returns the page of a phrase search as Elasticsearch ranks it, with the
// occurrence counts as scores; ok is false when the counts do not fall as the scores do.
func (ix *Index) phraseRanked(ctx context.Context, q indexer.Query, query map[string]any, terms []string) (page []indexer.Hit, ok bool, err error) {
	raw, err := ix.ranked(ctx, q, query, false, ix.phraseSearchType)
	if err != nil {
		return nil, false, err
	}
	// Equal scores mean equal occurrence counts: count them in one hit per score, whose
	// texts a second request fetches (cheaper than the text of every hit in the first).
	reps := map[float64]int{} // score → index in raw of the hit to count in
	var keys []chunkKey
	for i, h := range raw {
		if _, ok := reps[h.Score]; !ok {
			reps[h.Score] = i
			keys = append(keys, chunkKey{h.Source.ContentID, h.Source.Version, h.Source.Location})
		}
	}
	texts, err := ix.chunkTexts(ctx, q, keys)
	if err != nil {
		return nil, false, err
	}
	count := make(map[float64]int, len(reps))
	for s, i := range reps {
		h := raw[i]
		text, found := texts[chunkKey{h.Source.ContentID, h.Source.Version, h.Source.Location}]
		if !found {
			return nil, false, nil // deleted since: phraseAll sees the index as it is now
		}
		count[s] = indexer.PhraseOccurrences(text, terms)
	}
	page = make([]indexer.Hit, len(raw))
	for i, h := range raw {
		page[i] = indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
			Score: float64(count[h.Score])}
		if page[i].Score == 0 || i > 0 && (page[i].Score > page[i-1].Score ||
			page[i].Score == page[i-1].Score && h.Score != raw[i-1].Score) {
			return nil, false, nil
		}
	}
	dropLocations(q, page)
	return page, true, nil
}

// chunkKey names a chunk: locations are unique within a version (indexer.Index).
type chunkKey struct {
	contentID string
	version   int
	location  string
}

// chunkTexts returns the texts of the chunks keys of q's tenant, in one request.
func (ix *Index) chunkTexts(ctx context.Context, q indexer.Query, keys []chunkKey) (map[chunkKey]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	// Only chunks have a location: no kind filter. One key is the usual case (most hits of
	// a phrase occur once), and a flat conjunction is then the cheapest query.
	should := make([]any, len(keys))
	for i, k := range keys {
		should[i] = map[string]any{"bool": map[string]any{"filter": []any{termQuery("tenant_id", q.Tenant),
			termQuery("content_id", k.contentID), termQuery("version", k.version), termQuery("location", k.location)}}}
	}
	query := should[0]
	if len(should) > 1 {
		query = map[string]any{"bool": map[string]any{"should": should, "minimum_should_match": 1}}
	}
	res, err := ix.search(ctx, nil, map[string]any{
		"size": len(keys), "track_total_hits": false, "_source": chunkTextSource, "query": query,
	}, "")
	if err != nil {
		return nil, err
	}
	texts := make(map[chunkKey]string, len(keys))
	for _, h := range res.Hits.Hits {
		texts[chunkKey{h.Source.ContentID, h.Source.Version, h.Source.Location}] = h.Source.Text
	}
	return texts, nil
}

// phraseAll is phrase search by counting the occurrences in every hit, in Go.
func (ix *Index) phraseAll(ctx context.Context, q indexer.Query, query map[string]any, terms []string) ([]indexer.Hit, error) {
	raw, err := ix.collectAll(ctx, map[string]any{"query": query, "_source": chunkTextSource,
		"sort": []any{map[string]any{"_shard_doc": "asc"}}})
	if err != nil {
		return nil, err
	}
	hits := make([]indexer.Hit, len(raw))
	parallel(len(raw), func(i int) {
		h := raw[i]
		hits[i] = indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
			Score: float64(indexer.PhraseOccurrences(h.Source.Text, terms))}
	})
	return indexer.Page(indexer.Collapse(hits, q), q), nil
}

// parallel calls f(i) for every i in [0, n), spread over GOMAXPROCS goroutines when n is
// large enough to make it worth it, and returns when every call has.
func parallel(n int, f func(i int)) {
	const minPerWorker = 64
	workers := min(runtime.GOMAXPROCS(0), n/minPerWorker)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				f(i)
			}
		}()
	}
	wg.Wait()
}

func (ix *Index) field(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	if len(utf16.Encode([]rune(q.Term))) > maxValueLength {
		return nil, nil // no value this long is indexed
	}
	// The value's normalizer lowercases the term as it lowercased the values.
	f := append(filters(q, kindField), termQuery("value", q.Term))
	if len(q.FieldTypes) > 0 {
		f = append(f, map[string]any{"terms": map[string]any{"field_type": q.FieldTypes}})
	}
	// An exact match has no degrees: every hit scores the same, and the order is the
	// deterministic tie-break. The hits' fields come from their sort values (value.exact is
	// the value as written; a value too long for it is too long for value too, so never
	// found) and created and updated from doc values: no stored field is loaded (see
	// ranked).
	body := map[string]any{
		"query":   map[string]any{"bool": map[string]any{"filter": f}},
		"_source": false, "stored_fields": "_none_", "docvalue_fields": []string{"created", "updated"},
		"sort": []any{map[string]any{"content_id": "asc"}, map[string]any{"version": "asc"},
			map[string]any{"field_type": "asc"}, map[string]any{"value.exact": "asc"}},
	}
	var raw []hit
	collected := q.Skip+q.PageSize() > ix.window
	if collected {
		all, err := ix.collectAll(ctx, body)
		if err != nil {
			return nil, err
		}
		raw = all[min(q.Skip, len(all)):]
		raw = raw[:min(len(raw), q.PageSize())]
	} else {
		body["from"], body["size"], body["track_total_hits"] = q.Skip, q.PageSize(), false
		res, err := ix.search(ctx, nil, body, "")
		if err != nil {
			return nil, err
		}
		raw = res.Hits.Hits
	}
	hits := make([]indexer.Hit, len(raw))
	for i, h := range raw {
		f := &indexer.Field{Tenant: q.Tenant}
		keys := []any{&f.ContentID, &f.Version, &f.FieldType, &f.Value}
		if collected {
			keys = append(keys, nil) // collectAll's _shard_doc
		}
		if err := h.fromSort(keys...); err != nil {
			return nil, err
		}
		if len(h.Fields.Created) != 1 || len(h.Fields.Updated) != 1 {
			return nil, fmt.Errorf("indexer/elastic: field hit without created or updated: %s", h.Sort)
		}
		f.Created, f.Updated = h.Fields.Created[0], h.Fields.Updated[0]
		hits[i] = indexer.Hit{ContentID: f.ContentID, Version: f.Version, Score: indexer.FieldScore, Field: f}
	}
	return hits, nil
}

func (ix *Index) semantic(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	want := q.Skip + q.PageSize()
	k := min(want, maxKNN)
	if q.ContentID == "" {
		// Several chunks of one version may be among the nearest: ask for more than the
		// versions needed, so that one request nearly always suffices.
		k = min(want+want/2+10, maxKNN)
	}
	for {
		body := map[string]any{
			"size": k, "track_total_hits": false,
			"knn": map[string]any{
				"field": "embedding", "query_vector": q.Vector, "k": k,
				"num_candidates": min(max(2*want, k, 100), maxKNN), "filter": filters(q, kindChunk),
			},
			// Doc values, not stored fields: loading a hit's stored fields (the embedding
			// among them) costs more than the kNN search itself.
			"_source": false, "stored_fields": "_none_", "docvalue_fields": chunkSource,
		}
		if q.ContentID == "" {
			// The engine keeps each version's nearest chunk of the k and fetches only the
			// versions needed, not k chunks.
			body["collapse"] = map[string]any{"field": "version_key"}
			body["size"], body["track_total_hits"] = want, true
		}
		res, err := ix.search(ctx, nil, body, "")
		if err != nil {
			return nil, err
		}
		raw := res.Hits.Hits
		hits := make([]indexer.Hit, len(raw))
		for i, h := range raw {
			f := h.Fields
			if len(f.ContentID) != 1 || len(f.Version) != 1 || len(f.Location) != 1 {
				return nil, fmt.Errorf("indexer/elastic: chunk hit without content_id, version or location doc values")
			}
			// Elasticsearch scores cosine similarity c as (1 + c) / 2.
			c := 2*h.Score - 1
			hits[i] = indexer.Hit{ContentID: f.ContentID[0], Version: f.Version[0], Location: f.Location[0],
				Score: c, MatchStrength: indexer.Strength(c)}
		}
		out := indexer.Collapse(hits, q)
		// Fewer nearest chunks than asked for means there are no more; otherwise, when
		// collapsing left too few versions, ask for more.
		found := len(raw)
		if q.ContentID == "" {
			found = res.Hits.Total.Value
		}
		if len(out) >= want || found < k || k == maxKNN {
			return indexer.Page(out, q), nil
		}
		k = min(2*k, maxKNN)
	}
}
