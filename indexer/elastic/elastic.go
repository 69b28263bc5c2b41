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
//   - "chunk": one per chunk (tenant_id, content_id, version, tags, active, location, text
//     with its phrase subfield text.phrase, embedding);
//   - "field": one per metadata field (field_type, value as a keyword with a lowercase
//     normalizer, created, updated, and the version's tags and active flag);
//   - "status": one per content version (its tags, active flag and current generation).
//
// Every chunk and field document carries the generation of the IndexContent call that wrote
// it. The status document is the source of truth: a version exists when it has one, and only
// documents of its current generation (and only while its tags and active flag allow) are
// search results.
//
// # Replacing a version
//
// IndexContent writes the new documents under a fresh generation (waiting for a refresh), then
// switches the status document to that generation (optimistic concurrency on its sequence
// number, waiting for a refresh), then deletes the documents of other generations (search and
// bulk delete, since the cluster has no _delete_by_query; without waiting for a refresh, as no
// search returns them any more). Every search runs inside one point in time (PIT) and checks
// the generation of every hit against the status documents in that same PIT, so it sees either
// the old generation or the new one, never a mix and never nothing. DeleteContent and
// PurgeTenant delete the status documents first, then everything else (search and bulk
// delete). SetStatus writes the status document, then the copies of tags and active on the
// documents of the current generation (by partial updates; no scripts). Writes of one content
// item are serialised within a process; across processes the status document's sequence
// number makes the later of two concurrent IndexContent calls retry.
//
// # Queries
//
// Query terms are computed in Go by content/analysis (Lexemes, PhraseTerms), never by
// Elasticsearch, so both backends look for the same terms; the index side's analyzers
// (mappings.AnalyzerEnglish, mappings.AnalyzerPhraseTerms) produce exactly those terms (tests
// compare them on a real node). Keyword searches keep the versions holding all of the lexemes
// among the chunks holding one of them, as indexer/bleve does: tenant-wide, counts and score
// bounds come from one aggregation and only the chunks of the best versions are fetched
// (keywordTop); within a content item every such chunk is fetched (keywordAll); phrase searches are match_phrase queries on text.phrase; field searches are term
// queries on the normalised value; semantic searches are kNN queries with the filters inside.
// Elasticsearch only selects lexical and field hits: their scores (BM25) are discarded, and
// the shared scoring of package indexer (KeywordScores over the term frequencies of the
// chunk texts, PhraseOccurrences, FieldScore) ranks them, as in indexer/bleve. Results are
// collapsed, ordered and paged by the shared helpers of package indexer.
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
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
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

	"github.com/lectern-lms/lectern/content/analysis"
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
}

// Index is the Elasticsearch backend. It is safe for concurrent use.
type Index struct {
	c     *elastic.Client
	alias string
	model indexer.Model

	// Writes of one content item are serialised within this process (locks, by a hash of
	// tenant and content id); PurgeTenant excludes every other write (purge). Across processes
	// the status document's sequence number guards the switch of a generation.
	purge  sync.RWMutex
	locks  [64]sync.Mutex
	closed atomic.Bool
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

// bulkBatch is the largest number of actions in one bulk request.
const bulkBatch = 500

// New returns the index behind client's content alias, creating the index (mappings.Content)
// when it does not exist, and records or checks the embedding model.
func New(ctx context.Context, client *elastic.Client, opts Options) (*Index, error) {
	if client == nil {
		return nil, errors.New("indexer/elastic: nil client")
	}
	if opts.Model.Dims < 0 || opts.Model.Dims > mappings.MaxEmbeddingDims || (opts.Model.Dims == 0) != (opts.Model.Name == "") {
		return nil, fmt.Errorf("indexer/elastic: invalid model %+v", opts.Model)
	}
	ix := &Index{c: client, alias: client.Alias(mappings.Content)}
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

func docID(kind byte, vkey, gen string, i int) string {
	return string(kind) + ":" + vkey + ":" + gen + ":" + strconv.Itoa(i)
}

// chunkIndex returns the index of a chunk document within its version, from its id.
func chunkIndex(id string) int {
	i, err := strconv.Atoi(id[strings.LastIndexByte(id, ':')+1:])
	if err != nil {
		return -1
	}
	return i
}

func newGeneration() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// status is a version's status document.
type status struct {
	Kind       string   `json:"kind"`
	Tenant     string   `json:"tenant_id"`
	ContentID  string   `json:"content_id"`
	Version    int      `json:"version"`
	Generation string   `json:"generation"`
	Tags       []string `json:"tags"`
	Active     bool     `json:"active"`
}

// getStatus reads a version's status document (realtime). found is false when there is none.
func (ix *Index) getStatus(ctx context.Context, tenant, contentID string, v int) (st status, seq, term int, found bool, err error) {
	var res struct {
		Found       bool   `json:"found"`
		SeqNo       int    `json:"_seq_no"`
		PrimaryTerm int    `json:"_primary_term"`
		Source      status `json:"_source"`
	}
	id := statusID(versionKey(tenant, contentID, v))
	err = ix.c.Do(ctx, "get status "+id, esapi.GetRequest{Index: ix.alias, DocumentID: id}, &res)
	if errors.Is(err, elastic.ErrNotFound) {
		return status{}, 0, 0, false, nil
	}
	if err != nil {
		return status{}, 0, 0, false, fmt.Errorf("indexer/elastic: %w", err)
	}
	return res.Source, res.SeqNo, res.PrimaryTerm, res.Found, nil
}

// errConflict means the status document changed since it was read.
var errConflict = errors.New("indexer/elastic: concurrent change of a content version")

// putStatus writes a status document if it is still at seq/term (or, with found false,
// still absent).
func (ix *Index) putStatus(ctx context.Context, st status, seq, term int, found bool, refresh string) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("indexer/elastic: %w", err)
	}
	id := statusID(versionKey(st.Tenant, st.ContentID, st.Version))
	req := esapi.IndexRequest{Index: ix.alias, DocumentID: id, Body: bytes.NewReader(b), Refresh: refresh}
	if found {
		req.IfSeqNo, req.IfPrimaryTerm = &seq, &term
	} else {
		req.OpType = "create"
	}
	err = ix.c.Do(ctx, "put status "+id, req, nil)
	var e *elastic.Error
	if errors.As(err, &e) && e.Status == http.StatusConflict {
		return errConflict
	}
	if err != nil {
		return fmt.Errorf("indexer/elastic: %w", err)
	}
	return nil
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
	for range 5 {
		err := ix.replace(ctx, tenant, contentID, v, cs, fs, st)
		if !errors.Is(err, errConflict) {
			return err
		}
	}
	return fmt.Errorf("%w: gave up after repeated conflicts", errConflict)
}

// replace is one attempt of IndexContent; it fails with errConflict when another writer
// switched the version's generation meanwhile (its own documents are then removed again).
func (ix *Index) replace(ctx context.Context, tenant, contentID string, v int, cs []indexer.Chunk, fs []indexer.Field, st indexer.Status) error {
	_, seq, term, found, err := ix.getStatus(ctx, tenant, contentID, v)
	if err != nil {
		return err
	}
	vkey := versionKey(tenant, contentID, v)
	gen := newGeneration()
	tags := st.Tags
	if tags == nil {
		tags = []string{}
	}
	var ops []bulkOp
	for i, c := range cs {
		d := map[string]any{
			"kind": kindChunk, "tenant_id": tenant, "content_id": contentID, "version": v,
			"generation": gen, "tags": tags, "active": st.Active, "location": c.Location, "text": c.Text,
		}
		if c.Vector != nil && !zero(c.Vector) {
			// Cosine similarity is undefined for a zero vector, and Elasticsearch refuses one.
			d["embedding"] = c.Vector
		}
		ops = append(ops, bulkOp{action: "index", id: docID('c', vkey, gen, i), body: d})
	}
	for i, f := range fs {
		ops = append(ops, bulkOp{action: "index", id: docID('f', vkey, gen, i), body: map[string]any{
			"kind": kindField, "tenant_id": tenant, "content_id": contentID, "version": v,
			"generation": gen, "tags": tags, "active": st.Active, "field_type": f.FieldType,
			"value": f.Value, "created": f.Created, "updated": f.Updated,
		}})
	}
	// The new generation must be searchable before the status document points at it.
	if err := ix.bulk(ctx, "write "+contentID, ops, "wait_for"); err != nil {
		ix.removeGeneration(tenant, contentID, v, gen)
		return err
	}
	err = ix.putStatus(ctx, status{Kind: kindStatus, Tenant: tenant, ContentID: contentID, Version: v,
		Generation: gen, Tags: tags, Active: st.Active}, seq, term, found, "wait_for")
	if err != nil {
		ix.removeGeneration(tenant, contentID, v, gen)
		return err
	}
	// The switch is done; what is left is garbage no search returns. Remove it unless another
	// writer has switched the version again meanwhile (then its cleanup removes ours).
	cur, _, _, ok, err := ix.getStatus(ctx, tenant, contentID, v)
	if err == nil && ok && cur.Generation == gen {
		_, _ = ix.deleteWith(ctx, "remove old generations of "+contentID, map[string]any{"bool": map[string]any{
			"filter":   versionFilter(tenant, contentID, &v),
			"must_not": []any{termQuery("kind", kindStatus), termQuery("generation", gen)},
		}}, "false")
	}
	return nil
}

// removeGeneration deletes the documents of a failed attempt, best effort: they are garbage
// that no search returns anyway.
func (ix *Index) removeGeneration(tenant, contentID string, v int, gen string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = ix.deleteWith(ctx, "remove failed generation of "+contentID, map[string]any{"bool": map[string]any{
		"filter": append(versionFilter(tenant, contentID, &v), termQuery("generation", gen)),
	}}, "false")
}

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
	// Status documents first: once they are gone no search returns the versions, however far
	// the removal of their documents gets.
	n, err := ix.deleteAll(ctx, "delete status of "+contentID, map[string]any{"bool": map[string]any{
		"filter": append(versionFilter(tenant, contentID, v), termQuery("kind", kindStatus)),
	}})
	if err != nil {
		return err
	}
	if err := ix.deleteMatching(ctx, "delete "+contentID, map[string]any{"bool": map[string]any{
		"filter": versionFilter(tenant, contentID, v),
	}}); err != nil {
		return err
	}
	if n == 0 {
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
	for range 5 {
		st, seq, term, found, err := ix.getStatus(ctx, tenant, contentID, v)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: content %q version %d in tenant %q", indexer.ErrNotFound, contentID, v, tenant)
		}
		// The status document decides first (searches check hits against it), then the copies
		// on the documents that filter searches catch up.
		st.Tags, st.Active = tags, active
		err = ix.putStatus(ctx, st, seq, term, true, "wait_for")
		if errors.Is(err, errConflict) {
			continue
		}
		if err != nil {
			return err
		}
		ids, err := ix.ids(ctx, map[string]any{"bool": map[string]any{
			"filter": append(versionFilter(tenant, contentID, &v), termQuery("generation", st.Generation)),
		}})
		if err != nil {
			return err
		}
		ops := []bulkOp{}
		for _, id := range ids {
			if strings.HasPrefix(id, "s:") {
				continue
			}
			ops = append(ops, bulkOp{action: "update", id: id, body: map[string]any{"doc": map[string]any{"tags": tags, "active": active}}})
		}
		return ix.bulk(ctx, "set status of "+contentID, ops, "wait_for")
	}
	return fmt.Errorf("%w: gave up after repeated conflicts", errConflict)
}

// PurgeTenant implements indexer.Index.
func (ix *Index) PurgeTenant(ctx context.Context, tenant string) error {
	if ix.closed.Load() {
		return errClosed
	}
	ix.purge.Lock()
	defer ix.purge.Unlock()
	if _, err := ix.deleteAll(ctx, "purge status of "+tenant, map[string]any{"bool": map[string]any{
		"filter": []any{termQuery("tenant_id", tenant), termQuery("kind", kindStatus)},
	}}); err != nil {
		return err
	}
	return ix.deleteMatching(ctx, "purge "+tenant, termQuery("tenant_id", tenant))
}

// bulkOp is one action of a bulk request.
type bulkOp struct {
	action string // index, update or delete
	id     string
	body   any // the document (index) or the update body (update)
}

// bulk runs ops in batches, each with the given refresh ("wait_for", or "false" for writes
// that no search must wait for), and fails when any action failed (a delete or update of a
// document that is gone is not a failure).
func (ix *Index) bulk(ctx context.Context, op string, ops []bulkOp, refresh string) error {
	for len(ops) > 0 {
		n := min(len(ops), bulkBatch)
		batch := ops[:n]
		ops = ops[n:]
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, o := range batch {
			if err := enc.Encode(map[string]any{o.action: map[string]any{"_id": o.id}}); err != nil {
				return fmt.Errorf("indexer/elastic: %s: %w", op, err)
			}
			if o.body != nil {
				if err := enc.Encode(o.body); err != nil {
					return fmt.Errorf("indexer/elastic: %s: %w", op, err)
				}
			}
		}
		var res struct {
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
		err := ix.c.Do(ctx, op, esapi.BulkRequest{Index: ix.alias, Body: &buf, Refresh: refresh}, &res)
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

// ids returns the ids of every document matching query.
func (ix *Index) ids(ctx context.Context, query map[string]any) ([]string, error) {
	p, err := ix.openPIT(ctx)
	if err != nil {
		return nil, err
	}
	defer ix.closePIT(p)
	hits, err := ix.searchAll(ctx, p, map[string]any{"query": query, "_source": false})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out, nil
}

// deleteAll deletes every document matching query and returns how many there were.
func (ix *Index) deleteAll(ctx context.Context, op string, query map[string]any) (int, error) {
	return ix.deleteWith(ctx, op, query, "wait_for")
}

// deleteWith is deleteAll with the given refresh.
func (ix *Index) deleteWith(ctx context.Context, op string, query map[string]any, refresh string) (int, error) {
	ids, err := ix.ids(ctx, query)
	if err != nil {
		return 0, err
	}
	ops := make([]bulkOp, len(ids))
	for i, id := range ids {
		ops[i] = bulkOp{action: "delete", id: id}
	}
	return len(ids), ix.bulk(ctx, op, ops, refresh)
}

func (ix *Index) deleteMatching(ctx context.Context, op string, query map[string]any) error {
	_, err := ix.deleteAll(ctx, op, query)
	return err
}

// pit is an open point in time.
type pit struct{ id string }

func (ix *Index) openPIT(ctx context.Context) (*pit, error) {
	var res struct {
		ID string `json:"id"`
	}
	err := ix.c.Do(ctx, "open point in time on "+ix.alias, esapi.OpenPointInTimeRequest{Index: []string{ix.alias}, KeepAlive: "1m"}, &res)
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
	ID             string          `json:"_id"`
	Score          float64         `json:"_score"`
	Sort           json.RawMessage `json:"sort"`
	MatchedQueries []string        `json:"matched_queries"`
	Source         source          `json:"_source"`
}

type source struct {
	ContentID  string    `json:"content_id"`
	Version    int       `json:"version"`
	Generation string    `json:"generation"`
	Location   string    `json:"location"`
	Text       string    `json:"text"`
	Tags       []string  `json:"tags"`
	Active     bool      `json:"active"`
	FieldType  string    `json:"field_type"`
	Value      string    `json:"value"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
}

type searchResult struct {
	PitID string `json:"pit_id"`
	Hits  struct {
		Hits []hit `json:"hits"`
	} `json:"hits"`
}

// search runs one search request in the point in time p.
func (ix *Index) search(ctx context.Context, p *pit, body map[string]any) ([]hit, error) {
	body["pit"] = map[string]any{"id": p.id, "keep_alive": "1m"}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("indexer/elastic: %w", err)
	}
	var res searchResult
	if err := ix.c.Do(ctx, "search "+ix.alias, esapi.SearchRequest{Body: bytes.NewReader(b)}, &res); err != nil {
		return nil, fmt.Errorf("indexer/elastic: %w", err)
	}
	if res.PitID != "" {
		p.id = res.PitID
	}
	return res.Hits.Hits, nil
}

// searchAll runs body in p and returns every hit, page by page (by score, then index order).
func (ix *Index) searchAll(ctx context.Context, p *pit, body map[string]any) ([]hit, error) {
	body["size"] = pageSize
	body["sort"] = []any{map[string]any{"_score": "desc"}, map[string]any{"_shard_doc": "asc"}}
	var out []hit
	for {
		hits, err := ix.search(ctx, p, body)
		if err != nil {
			return nil, err
		}
		out = append(out, hits...)
		if len(hits) < pageSize {
			return out, nil
		}
		body["search_after"] = hits[len(hits)-1].Sort
	}
}

// statuses returns the status documents of the given versions of a tenant, as of p, by
// version key.
func (ix *Index) statuses(ctx context.Context, p *pit, tenant string, hits []hit) (map[string]status, error) {
	seen := map[string]bool{}
	var ids []string
	for _, h := range hits {
		id := statusID(versionKey(tenant, h.Source.ContentID, h.Source.Version))
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	out := map[string]status{}
	for len(ids) > 0 {
		n := min(len(ids), pageSize)
		batch := ids[:n]
		ids = ids[n:]
		res, err := ix.search(ctx, p, map[string]any{
			"size":    n,
			"_source": []string{"tenant_id", "content_id", "version", "generation", "tags", "active"},
			"query": map[string]any{"bool": map[string]any{"filter": []any{
				map[string]any{"ids": map[string]any{"values": batch}},
				termQuery("kind", kindStatus), termQuery("tenant_id", tenant),
			}}},
		})
		if err != nil {
			return nil, err
		}
		for _, h := range res {
			var st status
			st.ContentID, st.Version, st.Generation = h.Source.ContentID, h.Source.Version, h.Source.Generation
			st.Tags, st.Active = h.Source.Tags, h.Source.Active
			out[versionKey(tenant, st.ContentID, st.Version)] = st
		}
	}
	return out, nil
}

// current keeps the hits that belong to the current generation of their version and that
// the version's status lets q find.
func (ix *Index) current(ctx context.Context, p *pit, q indexer.Query, hits []hit) ([]hit, error) {
	sts, err := ix.statuses(ctx, p, q.Tenant, hits)
	if err != nil {
		return nil, err
	}
	out := hits[:0:0]
	for _, h := range hits {
		st, ok := sts[versionKey(q.Tenant, h.Source.ContentID, h.Source.Version)]
		if !ok || st.Generation != h.Source.Generation || !st.Active && !q.IncludeInactive ||
			len(q.Tags) > 0 && !slices.ContainsFunc(q.Tags, func(t string) bool { return slices.Contains(st.Tags, t) }) {
			continue
		}
		out = append(out, h)
	}
	return out, nil
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
	return hits, nil
}

// run opens a point in time, collects every hit of query among the documents of kind that q
// may find, and keeps those of current generations.
func (ix *Index) run(ctx context.Context, q indexer.Query, kind string, query map[string]any, src []string) ([]hit, error) {
	p, err := ix.openPIT(ctx)
	if err != nil {
		return nil, err
	}
	defer ix.closePIT(p)
	// The query goes into the filter context too: Elasticsearch only selects the hits (package
	// indexer scores them), so it need not compute BM25 scores.
	f := filters(q, kind)
	if query != nil {
		f = append(f, query)
	}
	bq := map[string]any{"filter": f}
	hits, err := ix.searchAll(ctx, p, map[string]any{"query": map[string]any{"bool": bq}, "_source": src})
	if err != nil {
		return nil, err
	}
	return ix.current(ctx, p, q, hits)
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

var (
	chunkSource     = []string{"content_id", "version", "generation", "location"}
	chunkTextSource = []string{"content_id", "version", "generation", "location", "text"}
)

func (ix *Index) keyword(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	lexemes := analysis.Lexemes(q.Term)
	if len(lexemes) == 0 {
		return nil, nil
	}
	if q.ContentID == "" && len(lexemes) <= maxBoundLexemes {
		hits, ok, err := ix.keywordTop(ctx, q, lexemes)
		if err != nil || ok {
			return hits, err
		}
	}
	return ix.keywordAll(ctx, q, lexemes)
}

// Tenant-wide keyword search (keywordTop).
//
// Fetching and re-analysing every candidate (keywordAll) costs about 1µs a word for every
// chunk holding a lexeme, thousands of chunks on a large tenant. keywordTop asks the engine
// for what does not need the texts, in one aggregation request: per generation (a generation
// identifies one version's documents), whether the version's status document lets q find
// it, how many candidates it has, how many hold each lexeme (hence N, df and which versions
// hold every lexeme, exactly as keywordAll counts them), and, per lexeme, whether some chunk
// holds it at least k times for k up to maxBoundTF (span_near of k copies of the term, in
// order). The last gives an upper bound of each version's best chunk score,
// Σ log1p(max tf)·idf. The texts are then fetched version by version in decreasing order of
// that bound, and scored exactly as keywordAll scores them, until the page's last hit is
// known to rank before every version not fetched (its exact hit compares before the bound
// of the next one). Everything runs in one point in time, so the counts and the texts agree.

// maxBoundLexemes is the largest number of lexemes keywordTop handles (each costs maxBoundTF
// filters per generation in its aggregation); longer queries take keywordAll.
const maxBoundLexemes = 8

// maxBoundTF is the largest term frequency the aggregation tells apart; a version with a
// chunk holding a lexeme that often has no finite bound and is fetched first.
const maxBoundTF = 4

// maxGenerations is the largest number of generations (versions) keywordTop aggregates; a
// query with more candidates' versions takes keywordAll.
const maxGenerations = 10000

type topVersion struct {
	gen       string
	contentID string
	version   int
	chunks    int     // candidates
	bound     float64 // upper bound of the best chunk's score
}

func (ix *Index) keywordTop(ctx context.Context, q indexer.Query, lexemes []string) ([]indexer.Hit, bool, error) {
	p, err := ix.openPIT(ctx)
	if err != nil {
		return nil, false, err
	}
	defer func() { go ix.closePIT(p) }()

	var should []any
	for _, l := range lexemes {
		should = append(should, termQuery("text", l))
	}
	chunkQ := map[string]any{"bool": map[string]any{
		"filter": append(filters(q, kindChunk), map[string]any{"bool": map[string]any{"should": should, "minimum_should_match": 1}}),
	}}
	statusQ := map[string]any{"bool": map[string]any{"filter": filters(q, kindStatus)}}
	sub := map[string]any{
		"s": map[string]any{"filter": termQuery("kind", kindStatus), "aggs": map[string]any{
			"c": map[string]any{"terms": map[string]any{"field": "content_id", "size": 1}},
			"v": map[string]any{"max": map[string]any{"field": "version"}},
		}},
	}
	all := map[string]any{} // the same frequency filters, among chunks holding every lexeme
	for j, l := range lexemes {
		sub["l"+strconv.Itoa(j)] = map[string]any{"filter": termQuery("text", l)}
		for k := 2; k <= maxBoundTF; k++ {
			clauses := make([]any, k)
			for i := range clauses {
				clauses[i] = map[string]any{"span_term": map[string]any{"text": l}}
			}
			f := map[string]any{"filter": map[string]any{"span_near": map[string]any{
				"clauses": clauses, "slop": 1 << 20, "in_order": true}}}
			sub["l"+strconv.Itoa(j)+"_"+strconv.Itoa(k)] = f
			all["l"+strconv.Itoa(j)+"_"+strconv.Itoa(k)] = f
		}
	}
	if len(lexemes) > 1 {
		sub["a"] = map[string]any{"filter": map[string]any{"bool": map[string]any{"filter": should}}, "aggs": all}
	}
	body := map[string]any{
		"size": 0, "track_total_hits": false,
		"query": map[string]any{"bool": map[string]any{
			"should": []any{chunkQ, statusQ}, "minimum_should_match": 1,
		}},
		"aggs": map[string]any{"g": map[string]any{
			"terms": map[string]any{"field": "generation", "size": maxGenerations},
			"aggs":  sub,
		}},
	}
	body["pit"] = map[string]any{"id": p.id, "keep_alive": "1m"}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, false, fmt.Errorf("indexer/elastic: %w", err)
	}
	type count struct {
		DocCount int `json:"doc_count"`
	}
	var res struct {
		PitID        string `json:"pit_id"`
		Aggregations struct {
			G struct {
				SumOther int `json:"sum_other_doc_count"`
				Buckets  []map[string]json.RawMessage
			} `json:"g"`
		} `json:"aggregations"`
	}
	if err := ix.c.Do(ctx, "search "+ix.alias, esapi.SearchRequest{Body: bytes.NewReader(b)}, &res); err != nil {
		return nil, false, fmt.Errorf("indexer/elastic: %w", err)
	}
	if res.PitID != "" {
		p.id = res.PitID
	}
	if res.Aggregations.G.SumOther > 0 {
		return nil, false, nil
	}
	// Candidates per current, findable generation.
	type genStats struct {
		topVersion
		df    []int
		maxTF []int // 0: no chunk; maxBoundTF+1: at least maxBoundTF
		allTF []int // the same among the chunks holding every lexeme (nil: none does)
	}
	var gens []genStats
	n, df := 0, make([]int, len(lexemes))
	for _, bk := range res.Aggregations.G.Buckets {
		var key string
		var total count
		var st struct {
			DocCount int `json:"doc_count"`
			C        struct {
				Buckets []struct {
					Key string `json:"key"`
				} `json:"buckets"`
			} `json:"c"`
			V struct {
				Value *float64 `json:"value"`
			} `json:"v"`
		}
		if json.Unmarshal(bk["key"], &key) != nil || json.Unmarshal(bk["doc_count"], &total.DocCount) != nil ||
			json.Unmarshal(bk["s"], &st) != nil {
			return nil, false, fmt.Errorf("indexer/elastic: unexpected aggregation response")
		}
		if st.DocCount == 0 {
			continue // not the current generation, or a status q may not find
		}
		if st.DocCount != 1 || len(st.C.Buckets) != 1 || st.V.Value == nil {
			return nil, false, nil
		}
		g := genStats{topVersion: topVersion{gen: key, contentID: st.C.Buckets[0].Key, version: int(*st.V.Value),
			chunks: total.DocCount - st.DocCount}, df: make([]int, len(lexemes)), maxTF: make([]int, len(lexemes))}
		if g.chunks == 0 {
			continue
		}
		// maxTFs reads the frequency filters of aggregation results m into tf.
		maxTFs := func(m map[string]json.RawMessage, tf []int) error {
			for j := range lexemes {
				for k := 2; k <= maxBoundTF; k++ {
					var c count
					if json.Unmarshal(m["l"+strconv.Itoa(j)+"_"+strconv.Itoa(k)], &c) != nil {
						return fmt.Errorf("indexer/elastic: unexpected aggregation response")
					}
					if c.DocCount > 0 {
						tf[j] = k
					}
				}
				if tf[j] == maxBoundTF {
					tf[j] = maxBoundTF + 1
				}
			}
			return nil
		}
		for j := range lexemes {
			var c count
			if json.Unmarshal(bk["l"+strconv.Itoa(j)], &c) != nil {
				return nil, false, fmt.Errorf("indexer/elastic: unexpected aggregation response")
			}
			g.df[j] = c.DocCount
			if c.DocCount > 0 {
				g.maxTF[j] = 1
			}
		}
		if err := maxTFs(bk, g.maxTF); err != nil {
			return nil, false, err
		}
		if len(lexemes) == 1 {
			g.allTF = g.maxTF
		} else if raw, ok := bk["a"]; ok {
			var a map[string]json.RawMessage
			var c count
			if json.Unmarshal(raw, &a) != nil || json.Unmarshal(raw, &c) != nil {
				return nil, false, fmt.Errorf("indexer/elastic: unexpected aggregation response")
			}
			if c.DocCount > 0 {
				g.allTF = make([]int, len(lexemes))
				for j := range g.allTF {
					g.allTF[j] = 1
				}
				if err := maxTFs(a, g.allTF); err != nil {
					return nil, false, err
				}
			}
		} else {
			return nil, false, fmt.Errorf("indexer/elastic: unexpected aggregation response")
		}
		n += g.chunks
		for j, d := range g.df {
			df[j] += d
		}
		gens = append(gens, g)
	}
	idf := indexer.KeywordIDF(n, df)
	// The versions holding every lexeme, by decreasing bound.
	var vs []topVersion
	for _, g := range gens {
		if slices.Contains(g.df, 0) {
			continue
		}
		// A chunk holding every lexeme scores at most KeywordScore(allTF); one missing lexeme
		// j at most KeywordScore(maxTF without j) (KeywordScore grows with each frequency, in
		// floating point too: it sums non-negative terms in a fixed order).
		bound := func(tf []int, skip int) float64 {
			t := slices.Clone(tf)
			for j, m := range t {
				if m > maxBoundTF && j != skip {
					return math.Inf(1)
				}
			}
			if skip >= 0 {
				t[skip] = 0
			}
			return indexer.KeywordScore(t, idf)
		}
		g.bound = math.Inf(-1)
		if g.allTF != nil {
			g.bound = bound(g.allTF, -1)
		}
		if len(lexemes) > 1 {
			for j := range lexemes {
				g.bound = max(g.bound, bound(g.maxTF, j))
			}
		}
		vs = append(vs, g.topVersion)
	}
	boundHit := func(v topVersion) indexer.Hit {
		return indexer.Hit{ContentID: v.contentID, Version: v.version, Score: v.bound}
	}
	slices.SortFunc(vs, func(a, b topVersion) int { return indexer.Compare(boundHit(a), boundHit(b)) })

	need := q.Skip + q.PageSize()
	// The term frequencies of a fetched chunk come from named queries: "t<j>_<k>" matches when
	// lexeme j occurs at least k times (k ≤ maxBoundTF); only a chunk holding a lexeme
	// maxBoundTF times or more has its text fetched and analysed (TermCounts).
	var named []any
	for j, l := range lexemes {
		named = append(named, map[string]any{"term": map[string]any{"text": map[string]any{"value": l, "_name": "t" + strconv.Itoa(j) + "_1"}}})
		for k := 2; k <= maxBoundTF; k++ {
			clauses := make([]any, k)
			for i := range clauses {
				clauses[i] = map[string]any{"span_term": map[string]any{"text": l}}
			}
			named = append(named, map[string]any{"span_near": map[string]any{
				"clauses": clauses, "slop": 1 << 20, "in_order": true, "_name": "t" + strconv.Itoa(j) + "_" + strconv.Itoa(k)}})
		}
	}
	byGen := map[string]topVersion{}
	best := map[string]indexer.Hit{} // best chunk hit per fetched generation
	matched := map[string][]hit{}    // chunks with a lexeme, per fetched generation
	var hits []indexer.Hit
	var kth *indexer.Hit // the page's last hit among the versions fetched so far
	next := 0
	for next < len(vs) {
		if kth != nil && indexer.Compare(*kth, boundHit(vs[next])) < 0 {
			break // no version left can rank before the page's last hit
		}
		// The next batch: the first time what the page needs (and a few more); then every
		// version whose bound ranks before the page's last hit so far (a lower bound of the
		// final one), at most maxResultWindow chunks per request.
		var batch []string
		size := 0
		for next < len(vs) && size+vs[next].chunks <= maxResultWindow {
			if kth == nil && len(batch) >= need+16 || kth != nil && indexer.Compare(*kth, boundHit(vs[next])) < 0 {
				break
			}
			batch = append(batch, vs[next].gen)
			byGen[vs[next].gen] = vs[next]
			size += vs[next].chunks
			next++
		}
		if len(batch) == 0 {
			return nil, false, nil // one version with more chunks than a request returns
		}
		f := append(filters(q, kindChunk), map[string]any{"terms": map[string]any{"generation": batch}},
			map[string]any{"bool": map[string]any{"should": named, "minimum_should_match": 1}})
		raw, err := ix.search(ctx, p, map[string]any{
			"size": size, "track_total_hits": false, "_source": chunkSource,
			"query": map[string]any{"bool": map[string]any{"filter": f}},
		})
		if err != nil {
			return nil, false, err
		}
		if len(raw) != size {
			return nil, false, nil // changed under us (cannot happen in a point in time)
		}
		tfs := make([][]int, len(raw))
		var long []string // ids of chunks whose frequencies need their text
		for i, h := range raw {
			tf := make([]int, len(lexemes))
			for _, m := range h.MatchedQueries {
				js, ks, ok := strings.Cut(strings.TrimPrefix(m, "t"), "_")
				j, err1 := strconv.Atoi(js)
				k, err2 := strconv.Atoi(ks)
				if ok && err1 == nil && err2 == nil && j >= 0 && j < len(tf) {
					tf[j] = max(tf[j], k)
				}
			}
			if slices.Contains(tf, maxBoundTF) {
				long = append(long, h.ID)
			}
			tfs[i] = tf
		}
		if len(long) > 0 {
			texts, err := ix.texts(ctx, p, long)
			if err != nil {
				return nil, false, err
			}
			for i, h := range raw {
				if t, ok := texts[h.ID]; ok {
					tfs[i] = indexer.TermCounts(t, lexemes)
				}
			}
		}
		for i, h := range raw {
			g := h.Source.Generation
			hh := indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
				Score: indexer.KeywordScore(tfs[i], idf)}
			matched[g] = append(matched[g], h)
			hits = append(hits, hh)
			if b, ok := best[g]; !ok || indexer.Compare(hh, b) < 0 {
				best[g] = hh
			}
		}
		if len(best) >= need {
			tops := slices.SortedFunc(maps.Values(best), indexer.Compare)
			kth = &tops[need-1]
		}
	}
	page := indexer.Page(indexer.Collapse(hits, q), q)
	if q.ReturnMatch {
		gen := map[[2]string]string{}
		for g, v := range byGen {
			gen[[2]string{v.contentID, strconv.Itoa(v.version)}] = g
		}
		var ids []string
		for i := range page {
			for _, c := range matched[gen[[2]string{page[i].ContentID, strconv.Itoa(page[i].Version)}]] {
				ids = append(ids, c.ID)
			}
		}
		texts, err := ix.texts(ctx, p, ids)
		if err != nil {
			return nil, false, err
		}
		for i := range page {
			chunks := matched[gen[[2]string{page[i].ContentID, strconv.Itoa(page[i].Version)}]]
			slices.SortFunc(chunks, func(a, b hit) int { return chunkIndex(a.ID) - chunkIndex(b.ID) })
			var ts []string
			for _, c := range chunks {
				ts = append(ts, texts[c.ID])
			}
			terms := analysis.MatchedTerms(strings.Join(ts, "\n"), lexemes)
			if terms == nil {
				terms = []string{}
			}
			page[i].Match = terms
		}
	}
	return page, true, nil
}

// maxResultWindow is the most hits one search request returns (index.max_result_window).
const maxResultWindow = 10000

// texts returns the texts of the chunk documents ids, as of p, by id.
func (ix *Index) texts(ctx context.Context, p *pit, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), pageSize)
		res, err := ix.search(ctx, p, map[string]any{
			"size": n, "track_total_hits": false, "_source": []string{"text"},
			"query": map[string]any{"ids": map[string]any{"values": ids[:n]}},
		})
		if err != nil {
			return nil, err
		}
		for _, h := range res {
			out[h.ID] = h.Source.Text
		}
		ids = ids[n:]
	}
	return out, nil
}

// keywordAll is keyword search by fetching every candidate (see keywordTop).
func (ix *Index) keywordAll(ctx context.Context, q indexer.Query, lexemes []string) ([]indexer.Hit, error) {
	var should []any
	for i, l := range lexemes {
		should = append(should, map[string]any{"term": map[string]any{"text": map[string]any{"value": l, "_name": strconv.Itoa(i)}}})
	}
	raw, err := ix.run(ctx, q, kindChunk, map[string]any{"bool": map[string]any{"should": should, "minimum_should_match": 1}}, chunkTextSource)
	if err != nil {
		return nil, err
	}
	// Every lexeme must occur in the version, in any of its chunks. The candidates (raw) are
	// every current chunk holding a lexeme; their matched queries give the document
	// frequencies of the lexemes among them.
	type vk struct {
		id string
		v  int
	}
	found := map[vk]map[string]bool{}
	df := make([]int, len(lexemes))
	for _, h := range raw {
		k := vk{h.Source.ContentID, h.Source.Version}
		if found[k] == nil {
			found[k] = map[string]bool{}
		}
		for _, n := range h.MatchedQueries {
			found[k][n] = true
			if j, err := strconv.Atoi(n); err == nil && j >= 0 && j < len(df) {
				df[j]++
			}
		}
	}
	idf := indexer.KeywordIDF(len(raw), df)
	matched := map[vk][]hit{} // chunks with a lexeme, per matching version
	var kept []hit
	for _, h := range raw {
		k := vk{h.Source.ContentID, h.Source.Version}
		if len(found[k]) < len(lexemes) {
			continue
		}
		matched[k] = append(matched[k], h)
		kept = append(kept, h)
	}
	// The scores of the kept chunks come from the term frequencies in their texts, counted in
	// Go (Elasticsearch only selected them), on every core: analysing text is the costly part.
	hits := make([]indexer.Hit, len(kept))
	parallel(len(kept), func(i int) {
		h := kept[i]
		hits[i] = indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
			Score: indexer.KeywordScore(indexer.TermCounts(h.Source.Text, lexemes), idf)}
	})
	page := indexer.Page(indexer.Collapse(hits, q), q)
	if q.ReturnMatch {
		for i := range page {
			chunks := matched[vk{page[i].ContentID, page[i].Version}]
			slices.SortFunc(chunks, func(a, b hit) int { return chunkIndex(a.ID) - chunkIndex(b.ID) })
			var texts []string
			for _, c := range chunks {
				if q.ContentID == "" || c.Source.Location == page[i].Location {
					texts = append(texts, c.Source.Text)
				}
			}
			terms := analysis.MatchedTerms(strings.Join(texts, "\n"), lexemes)
			if terms == nil {
				terms = []string{}
			}
			page[i].Match = terms
		}
	}
	return page, nil
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
	raw, err := ix.run(ctx, q, kindChunk, mp, chunkTextSource)
	if err != nil {
		return nil, err
	}
	// The score is the number of occurrences in the chunk's text, counted in Go.
	hits := make([]indexer.Hit, len(raw))
	parallel(len(raw), func(i int) {
		h := raw[i]
		hits[i] = indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
			Score: float64(indexer.PhraseOccurrences(h.Source.Text, terms))}
	})
	page := indexer.Page(indexer.Collapse(hits, q), q)
	if q.ReturnMatch {
		re := analysis.MatchRegex(phrase)
		for i := range page {
			page[i].Match = re
		}
	}
	return page, nil
}

func (ix *Index) field(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	if len(utf16.Encode([]rune(q.Term))) > maxValueLength {
		return nil, nil // no value this long is indexed
	}
	// The value's normalizer lowercases the term as it lowercased the values.
	must := []any{termQuery("value", q.Term)}
	if len(q.FieldTypes) > 0 {
		must = append(must, map[string]any{"terms": map[string]any{"field_type": q.FieldTypes}})
	}
	raw, err := ix.run(ctx, q, kindField, map[string]any{"bool": map[string]any{"filter": must}},
		[]string{"content_id", "version", "generation", "field_type", "value", "created", "updated"})
	if err != nil {
		return nil, err
	}
	hits := make([]indexer.Hit, len(raw))
	for i, h := range raw {
		s := h.Source
		f := &indexer.Field{Tenant: q.Tenant, ContentID: s.ContentID, Version: s.Version, FieldType: s.FieldType,
			Value: s.Value, Created: s.Created, Updated: s.Updated}
		// An exact match has no degrees: every hit scores the same, and the order is the
		// deterministic tie-break.
		hits[i] = indexer.Hit{ContentID: s.ContentID, Version: s.Version, Field: f, Score: indexer.FieldScore}
	}
	indexer.Sort(hits)
	return indexer.Page(hits, q), nil
}

func (ix *Index) semantic(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	p, err := ix.openPIT(ctx)
	if err != nil {
		return nil, err
	}
	defer ix.closePIT(p)
	want := q.Skip + q.PageSize()
	k := min(max(want, 10), maxKNN)
	for {
		raw, err := ix.search(ctx, p, map[string]any{
			"size": k,
			"knn": map[string]any{
				"field": "embedding", "query_vector": q.Vector, "k": k,
				"num_candidates": min(max(2*k, 100), maxKNN), "filter": filters(q, kindChunk),
			},
			"_source": chunkSource,
		})
		if err != nil {
			return nil, err
		}
		n := len(raw)
		if raw, err = ix.current(ctx, p, q, raw); err != nil {
			return nil, err
		}
		hits := make([]indexer.Hit, len(raw))
		for i, h := range raw {
			// Elasticsearch scores cosine similarity c as (1 + c) / 2.
			c := 2*h.Score - 1
			hits[i] = indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
				Score: c, MatchStrength: indexer.Strength(c)}
		}
		out := indexer.Collapse(hits, q)
		// Fewer hits than asked for means there are no more; otherwise, when collapsing or
		// stale generations left too few, ask for more.
		if len(out) >= want || n < k || k == maxKNN {
			return indexer.Page(out, q), nil
		}
		k = min(2*k, maxKNN)
	}
}
