// Package bleve is the embedded content search backend (indexer.Index): Bleve v2 for lexical
// and field search, and an in-process flat cosine index for semantic search, both in one
// directory.
//
// Layout of the directory:
//
//   - store.db (bbolt) is the source of truth: one record per content version (status,
//     chunks with text and vector, fields), the embedding model, and a "dirty" list of
//     versions whose Bleve documents are being rewritten.
//   - bleve/ is a Bleve (scorch) index derived from the records: one document per chunk
//     (fields text, analysed by mappings/analysis with stop words dropped, and text_phrase,
//     with stop words replaced by a placeholder) and one per metadata field (value, one
//     lowercased token). Its analyzers are registered in Bleve's global registry by this
//     package's init (see analyzers.go).
//   - In memory, loaded from store.db when the index opens: a table of the versions (status,
//     locations, fields), and per tenant one matrix of the chunk vectors, normalised,
//     searched by brute force (exact cosine; see vectorSet).
//
// Lexical and field search read Bleve's postings directly (term frequencies for keyword
// search, positions for phrase search, documents for field search) and take the filters and
// fields from the version table, instead of running Bleve queries that would also walk the
// filters' postings and score every hit. The scores are package indexer's (KeywordScores over
// the term frequencies, PhraseOccurrences counted from the positions, FieldScore), as in
// indexer/elastic.
//
// Every write marks the version dirty in store.db in the same transaction that changes its
// record, then applies one Bleve batch (atomic in scorch), then clears the mark; Open
// replays marked versions, so a crash between the two stores heals on the next start.
package bleve

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	blevesearch "github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
	bolt "go.etcd.io/bbolt"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/mappings/analysis"
)

// Options configures Open.
type Options struct {
	// Model is the embedding model of the vectors to index. The index records it; opening an
	// index that holds another model fails with indexer.ErrModelMismatch (delete the
	// directory and re-index to change models). Zero means: use the recorded model, if any;
	// an index with no model refuses vectors and semantic queries.
	Model indexer.Model
	// GroupWindow is how long the first of a group of concurrent IndexContent calls waits
	// for others before committing them together (zero: it commits at once, with whatever
	// arrived while the previous commit ran). Each commit is a Bleve segment that merges
	// later; the app sets a few tens of milliseconds, so that a stream of imports makes a few
	// big segments instead of one per document.
	GroupWindow time.Duration
}

// Index is the embedded backend. It is safe for concurrent use.
type Index struct {
	db    *bolt.DB
	bi    blevesearch.Index
	model indexer.Model

	// mu orders writes and keeps searches consistent with the in-memory version table:
	// writers hold it exclusively while they change Bleve and the table.
	mu       sync.RWMutex
	versions map[string]*version            // by record key
	byTenant map[string]map[string]*version // tenant -> record key -> version
	vectors  map[string]*vectorSet          // by tenant

	// commits groups IndexContent writes: the first of a group waits the group window, takes
	// mu and commits all that are pending then at once (indexer.Committer), so concurrent index
	// tasks share one store.db transaction, one Bleve batch (one segment) and one clean-up
	// transaction.
	commits indexer.Committer[pendingWrite]
}

// pendingWrite is one IndexContent call waiting in a group commit.
type pendingWrite struct {
	key string
	rec *record
}

// version is the in-memory part of a content version's record: what every search needs
// (status, locations, fields; its vectors are in its tenant's vectorSet). Chunk texts stay
// in store.db.
type version struct {
	key       string
	tenant    string
	contentID string
	version   int
	status    indexer.Status
	locations []string
	fields    []indexer.Field
	span      int // index of its vectors in vectorSet.spans; -1 when it has none
}

// admits reports whether q's filters (tenant, content id, version, tags, active) keep v.
func (v *version) admits(q *indexer.Query) bool {
	return v.tenant == q.Tenant &&
		(q.IncludeInactive || v.status.Active) &&
		(q.ContentID == "" || v.contentID == q.ContentID) &&
		(q.Version == nil || v.version == *q.Version) &&
		(len(q.Tags) == 0 || slices.ContainsFunc(q.Tags, func(t string) bool { return slices.Contains(v.status.Tags, t) }))
}

// record is a content version as stored in store.db.
type record struct {
	Tenant    string
	ContentID string
	Version   int
	Status    indexer.Status
	Chunks    []indexer.Chunk
	Fields    []indexer.Field
}

var (
	bucketRecords = []byte("records")
	bucketDirty   = []byte("dirty")
	bucketMeta    = []byte("meta")
	keyModel      = []byte("model")
)

// Document kinds.
const (
	kindChunk = "chunk"
	kindField = "field"
)

// Open opens (or creates) the index in dir, such as <data>/search.
func Open(dir string, opts Options) (*Index, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("indexer/bleve: %w", err)
	}
	db, err := bolt.Open(filepath.Join(dir, "store.db"), 0o600, nil)
	if err != nil {
		return nil, fmt.Errorf("indexer/bleve: open store: %w", err)
	}
	ix := &Index{db: db, versions: map[string]*version{}, byTenant: map[string]map[string]*version{},
		vectors: map[string]*vectorSet{}}
	ix.commits = indexer.Committer[pendingWrite]{Window: opts.GroupWindow, Lock: &ix.mu, Flush: ix.commit}
	if err := ix.init(dir, opts); err != nil {
		db.Close()
		if ix.bi != nil {
			ix.bi.Close()
		}
		return nil, err
	}
	return ix, nil
}

func (ix *Index) init(dir string, opts Options) error {
	err := ix.db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketRecords, bucketDirty, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		var stored indexer.Model
		if raw := meta.Get(keyModel); raw != nil {
			if err := json.Unmarshal(raw, &stored); err != nil {
				return err
			}
		}
		switch {
		case opts.Model == (indexer.Model{}):
			ix.model = stored
		case stored == (indexer.Model{}):
			ix.model = opts.Model
			raw, _ := json.Marshal(opts.Model)
			return meta.Put(keyModel, raw)
		case stored != opts.Model:
			return fmt.Errorf("%w: the index in %s holds vectors of %s (%d dims), configured model is %s (%d dims)",
				indexer.ErrModelMismatch, dir, stored.Name, stored.Dims, opts.Model.Name, opts.Model.Dims)
		default:
			ix.model = stored
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, indexer.ErrModelMismatch) {
			return err
		}
		return fmt.Errorf("indexer/bleve: init store: %w", err)
	}

	path := filepath.Join(dir, "bleve")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		ix.bi, err = blevesearch.New(path, newMapping())
		if err != nil {
			return fmt.Errorf("indexer/bleve: create index: %w", err)
		}
	} else {
		ix.bi, err = blevesearch.Open(path)
		if err != nil {
			return fmt.Errorf("indexer/bleve: open index: %w", err)
		}
	}

	// Load the version table, then heal versions a crash left half-written.
	var dirty []string
	err = ix.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			var r record
			if err := gob.NewDecoder(bytes.NewReader(v)).Decode(&r); err != nil {
				return fmt.Errorf("record %x: %w", k, err)
			}
			ix.remember(string(k), &r)
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketDirty).ForEach(func(k, _ []byte) error {
			dirty = append(dirty, string(k))
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("indexer/bleve: load store: %w", err)
	}
	for _, k := range dirty {
		r, err := ix.load(k)
		if err != nil {
			return fmt.Errorf("indexer/bleve: recover: %w", err)
		}
		if err := ix.rewrite(k, r); err != nil {
			return fmt.Errorf("indexer/bleve: recover: %w", err)
		}
		if err := ix.clean(k); err != nil {
			return fmt.Errorf("indexer/bleve: recover: %w", err)
		}
	}
	return nil
}

// newMapping returns the Bleve mapping of chunk and field documents. Filters are keyword
// fields; only text, text_phrase and value are analysed, and only text and text_phrase keep
// term vectors (phrase search and matched terms need positions).
func newMapping() mapping.IndexMapping {
	keyword := func() *mapping.FieldMapping {
		f := mapping.NewKeywordFieldMapping()
		f.Store, f.IncludeInAll, f.IncludeTermVectors, f.DocValues = false, false, false, false
		return f
	}
	analysed := func(analyzer string, vectors bool) *mapping.FieldMapping {
		f := mapping.NewTextFieldMapping()
		f.Analyzer = analyzer
		f.Store, f.IncludeInAll, f.IncludeTermVectors, f.DocValues = false, false, vectors, false
		return f
	}
	doc := mapping.NewDocumentStaticMapping()
	for _, name := range []string{"kind", "vkey", "tenant", "content_id", "version", "tags", "active", "field_type"} {
		doc.AddFieldMappingsAt(name, keyword())
	}
	doc.AddFieldMappingsAt("text", analysed(analyzerKeyword, true))
	doc.AddFieldMappingsAt("text_phrase", analysed(analyzerPhrase, true))
	doc.AddFieldMappingsAt("value", analysed(analyzerExact, false))
	m := mapping.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = "keyword"
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	return m
}

// recordKey encodes a version's key so that all keys of a tenant (and of a content item)
// share a prefix: length-prefixed tenant, length-prefixed content id, version.
func recordKey(tenant, contentID string, v int) string {
	return contentPrefix(tenant, contentID) + string(binary.BigEndian.AppendUint64(nil, uint64(int64(v))^(1<<63)))
}

func tenantPrefix(tenant string) string {
	return string(binary.AppendUvarint(nil, uint64(len(tenant)))) + tenant
}

func contentPrefix(tenant, contentID string) string {
	return tenantPrefix(tenant) + string(binary.AppendUvarint(nil, uint64(len(contentID)))) + contentID
}

// docID names a chunk ("c") or field ("f") document: the hex record key and the index.
func docID(kind byte, key string, i int) string {
	return string(kind) + hex.EncodeToString([]byte(key)) + "/" + strconv.Itoa(i)
}

func parseDocID(id string) (key string, i int, ok bool) {
	if len(id) < 2 {
		return "", 0, false
	}
	h, n, found := strings.Cut(id[1:], "/")
	if !found {
		return "", 0, false
	}
	k, err := hex.DecodeString(h)
	if err != nil {
		return "", 0, false
	}
	i, err = strconv.Atoi(n)
	return string(k), i, err == nil
}

func (ix *Index) remember(key string, r *record) {
	v := &version{key: key, tenant: r.Tenant, contentID: r.ContentID, version: r.Version, status: r.Status,
		fields: r.Fields, span: -1}
	for _, c := range r.Chunks {
		v.locations = append(v.locations, c.Location)
	}
	ix.versions[key] = v
	if ix.byTenant[r.Tenant] == nil {
		ix.byTenant[r.Tenant] = map[string]*version{}
	}
	ix.byTenant[r.Tenant][key] = v
	if ix.model.Dims > 0 {
		s := ix.vectors[r.Tenant]
		if s == nil {
			s = &vectorSet{dims: ix.model.Dims}
		}
		if s.add(v, r.Chunks); s.live > 0 {
			ix.vectors[r.Tenant] = s
		}
	}
}

func (ix *Index) forget(key string) {
	v, ok := ix.versions[key]
	if !ok {
		return
	}
	delete(ix.versions, key)
	delete(ix.byTenant[v.tenant], key)
	if len(ix.byTenant[v.tenant]) == 0 {
		delete(ix.byTenant, v.tenant)
	}
	if s := ix.vectors[v.tenant]; s != nil {
		if s.remove(v); s.live == 0 {
			delete(ix.vectors, v.tenant)
		}
	}
}

func normalize(v []float32) []float32 {
	if v == nil {
		return nil
	}
	return normalizeTo(slices.Clone(v), 0)
}

// normalizeTo scales v[from:] to unit length in place (a zero vector stays zero) and
// returns v.
func normalizeTo(v []float32, from int) []float32 {
	var s float64
	for _, x := range v[from:] {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	n := math.Sqrt(s)
	for i, x := range v[from:] {
		v[from+i] = float32(float64(x) / n)
	}
	return v
}

// load reads a record from store.db; nil when there is none.
func (ix *Index) load(key string) (*record, error) {
	var r *record
	err := ix.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketRecords).Get([]byte(key))
		if raw == nil {
			return nil
		}
		r = new(record)
		return gob.NewDecoder(bytes.NewReader(raw)).Decode(r)
	})
	return r, err
}

// store writes (or, with r nil, deletes) records and marks them dirty, in one transaction.
func (ix *Index) store(recs map[string]*record) error {
	return ix.db.Update(func(tx *bolt.Tx) error {
		b, d := tx.Bucket(bucketRecords), tx.Bucket(bucketDirty)
		for k, r := range recs {
			if err := d.Put([]byte(k), nil); err != nil {
				return err
			}
			if r == nil {
				if err := b.Delete([]byte(k)); err != nil {
					return err
				}
				continue
			}
			var buf bytes.Buffer
			if err := gob.NewEncoder(&buf).Encode(r); err != nil {
				return err
			}
			if err := b.Put([]byte(k), buf.Bytes()); err != nil {
				return err
			}
		}
		return nil
	})
}

// clean clears the dirty marks of keys.
func (ix *Index) clean(keys ...string) error {
	return ix.db.Update(func(tx *bolt.Tx) error {
		d := tx.Bucket(bucketDirty)
		for _, k := range keys {
			if err := d.Delete([]byte(k)); err != nil {
				return err
			}
		}
		return nil
	})
}

// rewrite makes Bleve's documents of one version match r (none when r is nil) in one batch,
// and updates the version table.
func (ix *Index) rewrite(key string, r *record) error {
	return ix.rewriteAll(map[string]*record{key: r})
}

// rewriteAll makes Bleve's documents of several versions match recs (none for a nil record)
// in one batch, which scorch applies atomically as one segment, and updates the version
// table.
func (ix *Index) rewriteAll(recs map[string]*record) error {
	b := ix.bi.NewBatch()
	for key, r := range recs {
		if _, known := ix.versions[key]; known || r == nil {
			old, err := ix.docIDs(query.NewTermQuery(hex.EncodeToString([]byte(key))), "vkey")
			if err != nil {
				return err
			}
			for _, id := range old {
				b.Delete(id)
			}
		}
		if r != nil {
			for i, d := range documents(key, r) {
				kind := byte('c')
				if i >= len(r.Chunks) {
					kind, i = 'f', i-len(r.Chunks)
				}
				if err := b.Index(docID(kind, key, i), d); err != nil {
					return err
				}
			}
		}
	}
	if err := ix.bi.Batch(b); err != nil {
		return err
	}
	for key, r := range recs {
		ix.forget(key)
		if r != nil {
			ix.remember(key, r)
		}
	}
	return nil
}

// documents returns the Bleve documents of a record: its chunks, then its fields.
func documents(key string, r *record) []map[string]any {
	common := func(kind string) map[string]any {
		active := "false"
		if r.Status.Active {
			active = "true"
		}
		return map[string]any{
			"kind": kind, "vkey": hex.EncodeToString([]byte(key)), "tenant": r.Tenant,
			"content_id": r.ContentID, "version": strconv.Itoa(r.Version),
			"tags": r.Status.Tags, "active": active,
		}
	}
	var out []map[string]any
	for _, c := range r.Chunks {
		d := common(kindChunk)
		d["text"], d["text_phrase"] = c.Text, c.Text
		out = append(out, d)
	}
	for _, f := range r.Fields {
		d := common(kindField)
		d["field_type"], d["value"] = f.FieldType, f.Value
		out = append(out, d)
	}
	return out
}

// docIDs returns the ids of every document matching a term query on field.
func (ix *Index) docIDs(q *query.TermQuery, field string) ([]string, error) {
	q.SetField(field)
	hits, err := ix.all(context.Background(), q, false)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.id
	}
	return ids, nil
}

type bleveHit struct {
	id    string
	terms map[string]int // terms of field "text" found, with their number of locations
}

// all runs q and returns every hit (Bleve needs a page size; the first guess is raised to
// the total when too small).
func (ix *Index) all(ctx context.Context, q query.Query, locations bool) ([]bleveHit, error) {
	size := 1000
	for {
		req := blevesearch.NewSearchRequestOptions(q, size, 0, false)
		req.IncludeLocations = locations
		res, err := ix.bi.SearchInContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("indexer/bleve: search: %w", err)
		}
		if res.Total > uint64(len(res.Hits)) && len(res.Hits) == size {
			size = int(res.Total)
			continue
		}
		out := make([]bleveHit, len(res.Hits))
		for i, h := range res.Hits {
			out[i] = bleveHit{id: h.ID}
			if locations {
				out[i].terms = map[string]int{}
				for term, locs := range h.Locations["text"] {
					out[i].terms[term] = len(locs)
				}
			}
		}
		return out, nil
	}
}

// Model returns the embedding model the index holds vectors of (zero when none).
func (ix *Index) Model() indexer.Model { return ix.model }

// IndexContent implements indexer.Index.
func (ix *Index) IndexContent(ctx context.Context, tenant, contentID string, v int, chunks []indexer.Chunk, fields []indexer.Field) error {
	cs, fs, st, err := indexer.PrepareContent(tenant, contentID, v, chunks, fields, ix.model)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &record{Tenant: tenant, ContentID: contentID, Version: v, Status: st, Chunks: cs, Fields: fs}
	return ix.commits.Commit(ctx, pendingWrite{key: recordKey(tenant, contentID, v), rec: r})
}

// commit writes a group of IndexContent calls in one replace (indexer.Committer tries each
// alone when it fails). Two writes of one version in a group: the later wins, as it would
// have one after the other. The caller holds mu.
func (ix *Index) commit(_ context.Context, group []pendingWrite) error {
	recs := make(map[string]*record, len(group))
	for _, w := range group {
		recs[w.key] = w.rec
	}
	return ix.replace(recs)
}

// replace stores recs (nil deletes) and rewrites their Bleve documents. When Bleve fails,
// the previous records are put back, so store.db and Bleve agree again.
func (ix *Index) replace(recs map[string]*record) error {
	prev := map[string]*record{}
	err := ix.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		for k := range recs {
			if _, known := ix.versions[k]; !known {
				prev[k] = nil // not in the table, so not in store.db (Open loads every record)
				continue
			}
			raw := b.Get([]byte(k))
			if raw == nil {
				prev[k] = nil
				continue
			}
			r := new(record)
			if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(r); err != nil {
				return err
			}
			prev[k] = r
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("indexer/bleve: %w", err)
	}
	if err := ix.store(recs); err != nil {
		return fmt.Errorf("indexer/bleve: store: %w", err)
	}
	keys := make([]string, 0, len(recs))
	for k := range recs {
		keys = append(keys, k)
	}
	if err := ix.rewriteAll(recs); err != nil {
		// Best effort: restore the old records and documents; whatever stays dirty is
		// replayed by the next Open.
		if ix.store(prev) == nil {
			for k := range prev {
				if ix.rewrite(k, prev[k]) == nil {
					_ = ix.clean(k)
				}
			}
		}
		return fmt.Errorf("indexer/bleve: %w", err)
	}
	if err := ix.clean(keys...); err != nil {
		return fmt.Errorf("indexer/bleve: %w", err)
	}
	return nil
}

// DeleteContent implements indexer.Index.
func (ix *Index) DeleteContent(ctx context.Context, tenant, contentID string, v *int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	recs := map[string]*record{}
	if v != nil {
		if _, ok := ix.versions[recordKey(tenant, contentID, *v)]; ok {
			recs[recordKey(tenant, contentID, *v)] = nil
		}
	} else {
		prefix := contentPrefix(tenant, contentID)
		for k := range ix.byTenant[tenant] {
			if strings.HasPrefix(k, prefix) && len(k) == len(prefix)+8 {
				recs[k] = nil
			}
		}
	}
	if len(recs) == 0 {
		return fmt.Errorf("%w: content %q in tenant %q", indexer.ErrNotFound, contentID, tenant)
	}
	return ix.replace(recs)
}

// SetStatus implements indexer.Index.
func (ix *Index) SetStatus(ctx context.Context, tenant, contentID string, v int, tags []string, active bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	key := recordKey(tenant, contentID, v)
	if _, ok := ix.versions[key]; !ok {
		return fmt.Errorf("%w: content %q version %d in tenant %q", indexer.ErrNotFound, contentID, v, tenant)
	}
	r, err := ix.load(key)
	if err != nil || r == nil {
		return fmt.Errorf("indexer/bleve: load %q: %v", contentID, err)
	}
	r.Status = indexer.Status{Tags: indexer.NormalizeTags(tags), Active: active}
	for i := range r.Chunks {
		r.Chunks[i].Tags, r.Chunks[i].Active = r.Status.Tags, active
	}
	return ix.replace(map[string]*record{key: r})
}

// PurgeTenant implements indexer.Index.
func (ix *Index) PurgeTenant(ctx context.Context, tenant string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	recs := map[string]*record{}
	for k := range ix.byTenant[tenant] {
		recs[k] = nil
	}
	if len(recs) == 0 {
		return nil
	}
	return ix.replace(recs)
}

// DocCount is the number of documents in the Bleve index (chunks and fields of every
// version), which the metrics endpoint reports.
func (ix *Index) DocCount() (uint64, error) { return ix.bi.DocCount() }

// Close implements indexer.Index.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return errors.Join(ix.bi.Close(), ix.db.Close())
}

// Search implements indexer.Index.
func (ix *Index) Search(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if err := indexer.CheckQueryModel(q, ix.model); err != nil {
		return nil, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var (
		hits []indexer.Hit
		err  error
	)
	switch q.Type {
	case indexer.Semantic:
		hits, err = ix.semantic(ctx, q)
	case indexer.FieldSearch:
		return ix.field(ctx, q)
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
	if err := ix.texts(q, hits); err != nil {
		return nil, err
	}
	return hits, nil
}

// texts sets the Text of every hit of a query with ReturnText, from the version records
// (which hold the chunks' texts). The caller holds ix.mu.
func (ix *Index) texts(q indexer.Query, hits []indexer.Hit) error {
	if !indexer.TextKeys(q, hits) {
		return nil
	}
	recs := map[string]*record{}
	for i := range hits {
		key := recordKey(q.Tenant, hits[i].ContentID, hits[i].Version)
		r, ok := recs[key]
		if !ok {
			var err error
			if r, err = ix.load(key); err != nil {
				return fmt.Errorf("indexer/bleve: load chunk text: %w", err)
			}
			recs[key] = r
		}
		if r == nil {
			return fmt.Errorf("indexer/bleve: no record of the hit %s", key)
		}
		for _, c := range r.Chunks {
			if c.Location == hits[i].Text.Location {
				hits[i].Text.Text = c.Text
				break
			}
		}
	}
	return nil
}

// chunkOf resolves a chunk document id to its version and index.
func (ix *Index) chunkOf(id string) (*version, int, bool) {
	key, i, ok := parseDocID(id)
	if !ok {
		return nil, 0, false
	}
	v, ok := ix.versions[key]
	if !ok || i >= len(v.locations) {
		return nil, 0, false
	}
	return v, i, true
}

func (ix *Index) keyword(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	lexemes := analysis.Lexemes(q.Term)
	if len(lexemes) == 0 {
		return []indexer.Hit{}, nil
	}
	cands, err := ix.keywordCandidates(ctx, q, lexemes)
	if err != nil {
		return nil, err
	}
	// The candidates: every chunk the query may find holding a lexeme, with its term
	// frequencies (see keywordCandidates).
	counts := make([][]int, len(cands))
	for k, c := range cands {
		counts[k] = c.tf
	}
	scores := indexer.KeywordScores(counts)
	// Every lexeme must occur in the version, in any of its chunks.
	found := map[*version][]bool{}
	for _, c := range cands {
		f := found[c.v]
		if f == nil {
			f = make([]bool, len(lexemes))
			found[c.v] = f
		}
		for j, n := range c.tf {
			if n > 0 {
				f[j] = true
			}
		}
	}
	complete := func(v *version) bool { return !slices.Contains(found[v], false) }
	matched := map[*version][]int{} // chunk indexes with a lexeme, per matching version
	best := map[*version]int{}      // tenant-wide: index in hits of the version's best chunk
	var hits []indexer.Hit
	for k, c := range cands {
		if !complete(c.v) {
			continue
		}
		matched[c.v] = append(matched[c.v], c.i)
		h := indexer.Hit{ContentID: c.v.contentID, Version: c.v.version, Location: c.v.locations[c.i], Score: scores[k]}
		if q.ContentID != "" {
			hits = append(hits, h)
			continue
		}
		// Tenant-wide only each version's best chunk can survive Collapse: keep just that
		// one here, so that Collapse sorts versions, not chunks.
		if b, ok := best[c.v]; !ok {
			best[c.v] = len(hits)
			hits = append(hits, h)
		} else if indexer.Compare(h, hits[b]) < 0 {
			hits[b] = h
		}
	}
	page := indexer.Page(indexer.Collapse(hits, q), q)
	if q.ReturnMatch {
		for i := range page {
			v := ix.versions[recordKey(q.Tenant, page[i].ContentID, page[i].Version)]
			idx := slices.Sorted(slices.Values(matched[v]))
			if q.ContentID != "" {
				idx = []int{slices.Index(v.locations, page[i].Location)}
			}
			r, err := ix.load(v.key)
			if err != nil || r == nil {
				return nil, fmt.Errorf("indexer/bleve: load match text: %v", err)
			}
			var texts []string
			for _, c := range idx {
				texts = append(texts, r.Chunks[c].Text)
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

// candidate is a chunk a keyword query may find that holds at least one of its lexemes.
type candidate struct {
	v  *version
	i  int   // chunk index
	tf []int // term frequency of each lexeme
}

// keywordCandidates returns the candidates of a keyword query: every chunk document the
// query's filters admit holding at least one of lexemes, with the term frequencies of the
// lexemes. It reads the postings of each lexeme in field "text" directly (the frequencies
// they carry are the term frequencies, as "text" is analysed by the chain of
// indexer.TermCounts, see analyzers.go), without Bleve's search machinery: no scoring, no
// term locations, no filter postings. The filters (tenant, content id, version, tags,
// active) are applied from the version table, which holds exactly the values the chunk
// documents were indexed with (both change under ix.mu); only chunk documents have a "text"
// field. The caller holds ix.mu.
func (ix *Index) keywordCandidates(ctx context.Context, q indexer.Query, lexemes []string) ([]candidate, error) {
	r, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	at := map[uint64]int{} // internal document number -> index in out
	var out []candidate
	for j, l := range lexemes {
		if slices.Index(lexemes, l) < j {
			continue // a repeated lexeme: same frequencies as its first occurrence
		}
		tfr, err := r.TermFieldReader(ctx, []byte(l), "text", true, false, false)
		if err != nil {
			return nil, fmt.Errorf("indexer/bleve: postings: %w", err)
		}
		var d *index.TermFieldDoc
		for n := 0; ; n++ {
			if n%1024 == 1023 && ctx.Err() != nil {
				tfr.Close()
				return nil, ctx.Err()
			}
			d, err = tfr.Next(d)
			if err != nil {
				tfr.Close()
				return nil, fmt.Errorf("indexer/bleve: postings: %w", err)
			}
			if d == nil {
				break
			}
			num := d.ID.Value()
			k, ok := at[num]
			if !ok {
				id, err := r.ExternalID(d.ID)
				if err != nil {
					tfr.Close()
					return nil, fmt.Errorf("indexer/bleve: document id: %w", err)
				}
				k = -1
				if id[0] == 'c' {
					if v, i, ok := ix.chunkOf(id); ok && v.admits(&q) {
						k = len(out)
						out = append(out, candidate{v: v, i: i, tf: make([]int, len(lexemes))})
					}
				}
				at[num] = k
			}
			if k >= 0 {
				for jj := j; jj < len(lexemes); jj++ {
					if lexemes[jj] == l {
						out[k].tf[jj] = int(d.Freq)
					}
				}
			}
		}
		if err := tfr.Close(); err != nil {
			return nil, fmt.Errorf("indexer/bleve: postings: %w", err)
		}
	}
	return out, nil
}

// phrase finds the chunks holding the phrase from the postings of its terms in field
// "text_phrase", with their positions: a conjunction of the terms' postings, led by the
// rarest term, then, in each chunk holding every term, the positions where the terms stand
// in order. Their number is the score, PhraseOccurrences of the chunk's text: "text_phrase"
// holds one term per word of analysis.Tokens (the lexeme, or StopPlaceholder for a stop
// word) at consecutive positions, so the positions give the same count without loading and
// re-analysing the text. The filters are applied from the version table, as in
// keywordCandidates. The caller holds ix.mu.
func (ix *Index) phrase(ctx context.Context, q indexer.Query, phrase string) ([]indexer.Hit, error) {
	terms := analysis.PhraseTerms(phrase)
	if !slices.ContainsFunc(terms, func(s string) bool { return s != analysis.StopPlaceholder }) {
		return []indexer.Hit{}, nil
	}
	r, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// One reader per distinct term; at[j] is the reader of terms[j].
	type postings struct {
		tfr index.TermFieldReader
		d   *index.TermFieldDoc
		pos []uint64 // positions in the current document, sorted
	}
	var ps []*postings
	at := make([]int, len(terms))
	defer func() {
		for _, p := range ps {
			p.tfr.Close()
		}
	}()
	for j, t := range terms {
		if k := slices.Index(terms, t); k < j {
			at[j] = at[k]
			continue
		}
		tfr, err := r.TermFieldReader(ctx, []byte(t), "text_phrase", true, false, true)
		if err != nil {
			return nil, fmt.Errorf("indexer/bleve: postings: %w", err)
		}
		at[j] = len(ps)
		ps = append(ps, &postings{tfr: tfr})
	}
	order := slices.Clone(ps)
	slices.SortStableFunc(order, func(a, b *postings) int { return cmp.Compare(a.tfr.Count(), b.tfr.Count()) })
	lead, rest := order[0], order[1:]

	var hits []indexer.Hit
	best := map[*version]int{} // tenant-wide: index in hits of the version's best chunk
	var target index.IndexInternalID
	next := func(p *postings, advance bool) (bool, error) {
		var err error
		if advance {
			p.d, err = p.tfr.Advance(target, p.d)
		} else {
			p.d, err = p.tfr.Next(p.d)
		}
		if err != nil {
			return false, fmt.Errorf("indexer/bleve: postings: %w", err)
		}
		return p.d != nil, nil
	}
	ok, err := next(lead, false)
	for n := 0; ok && err == nil; n++ {
		if n%1024 == 1023 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		doc := lead.d.ID.Value()
		// Bring every other term's postings to the lead's document; when one has none there,
		// the lead jumps to that one's next document instead.
		aligned := true
		for _, p := range rest {
			if p.d == nil || p.d.ID.Value() < doc {
				target = index.NewIndexInternalID(target, doc)
				if ok, err = next(p, true); !ok {
					break
				}
			}
			if p.d.ID.Value() > doc {
				target = index.NewIndexInternalID(target, p.d.ID.Value())
				ok, err = next(lead, true)
				aligned = false
				break
			}
		}
		if !ok || err != nil || !aligned {
			continue
		}
		for _, p := range ps {
			p.pos = p.pos[:0]
			for _, v := range p.d.Vectors {
				p.pos = append(p.pos, v.Pos)
			}
			slices.Sort(p.pos)
		}
		count := 0
		for _, start := range ps[at[0]].pos {
			j := 1
			for ; j < len(terms); j++ {
				if _, found := slices.BinarySearch(ps[at[j]].pos, start+uint64(j)); !found {
					break
				}
			}
			if j == len(terms) {
				count++
			}
		}
		if count > 0 {
			if err := ix.phraseHit(r, lead.d.ID, count, &q, &hits, best); err != nil {
				return nil, err
			}
		}
		ok, err = next(lead, false)
	}
	if err != nil {
		return nil, err
	}
	page := indexer.Page(indexer.Collapse(hits, q), q)
	if q.ReturnMatch {
		re := analysis.MatchRegex(phrase)
		for i := range page {
			page[i].Match = re
		}
	}
	return page, nil
}

// phraseHit adds the chunk document id, holding count occurrences of a phrase, to hits if q
// admits it; tenant-wide it keeps only each version's best chunk (best: index in hits), so
// that Collapse sorts versions, not chunks.
func (ix *Index) phraseHit(r index.IndexReader, id index.IndexInternalID, count int, q *indexer.Query, hits *[]indexer.Hit, best map[*version]int) error {
	ext, err := r.ExternalID(id)
	if err != nil {
		return fmt.Errorf("indexer/bleve: document id: %w", err)
	}
	if ext == "" || ext[0] != 'c' {
		return nil
	}
	v, i, ok := ix.chunkOf(ext)
	if !ok || !v.admits(q) {
		return nil
	}
	h := indexer.Hit{ContentID: v.contentID, Version: v.version, Location: v.locations[i], Score: float64(count)}
	if q.ContentID != "" {
		*hits = append(*hits, h)
		return nil
	}
	if b, ok := best[v]; !ok {
		best[v] = len(*hits)
		*hits = append(*hits, h)
	} else if indexer.Compare(h, (*hits)[b]) < 0 {
		(*hits)[b] = h
	}
	return nil
}

// field reads the postings of the lowercased term in field "value" (one token per field
// document, see analyzerExact) and takes everything else from the version table: the
// filters, as keywordCandidates does, and the fields themselves. The caller holds ix.mu.
func (ix *Index) field(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	var hits []indexer.Hit
	err := ix.postings(ctx, strings.ToLower(q.Term), "value", false, func(_ *index.TermFieldDoc, id string) {
		if id[0] != 'f' {
			return
		}
		key, i, ok := parseDocID(id)
		if !ok {
			return
		}
		v, ok := ix.versions[key]
		if !ok || i >= len(v.fields) || !v.admits(&q) {
			return
		}
		f := v.fields[i]
		if len(q.FieldTypes) > 0 && !slices.Contains(q.FieldTypes, f.FieldType) {
			return
		}
		// An exact match has no degrees: every hit scores the same, and the order is the
		// deterministic tie-break.
		hits = append(hits, indexer.Hit{ContentID: v.contentID, Version: v.version, Field: &f, Score: indexer.FieldScore})
	})
	if err != nil {
		return nil, err
	}
	indexer.Sort(hits)
	return indexer.Page(hits, q), nil
}

// postings calls fn with every document holding term in field, and its external id, in
// document order; with positions, the TermFieldDoc carries the term's positions. The
// TermFieldDoc is reused between calls.
func (ix *Index) postings(ctx context.Context, term, field string, positions bool, fn func(d *index.TermFieldDoc, id string)) error {
	r, err := ix.reader()
	if err != nil {
		return err
	}
	defer r.Close()
	tfr, err := r.TermFieldReader(ctx, []byte(term), field, positions, false, positions)
	if err != nil {
		return fmt.Errorf("indexer/bleve: postings: %w", err)
	}
	defer tfr.Close()
	var d *index.TermFieldDoc
	for n := 0; ; n++ {
		if n%1024 == 1023 && ctx.Err() != nil {
			return ctx.Err()
		}
		if d, err = tfr.Next(d); err != nil {
			return fmt.Errorf("indexer/bleve: postings: %w", err)
		}
		if d == nil {
			return nil
		}
		id, err := r.ExternalID(d.ID)
		if err != nil {
			return fmt.Errorf("indexer/bleve: document id: %w", err)
		}
		if id != "" {
			fn(d, id)
		}
	}
}

// reader returns a reader of the Bleve index's current snapshot; the caller closes it.
func (ix *Index) reader() (index.IndexReader, error) {
	adv, err := ix.bi.Advanced()
	if err != nil {
		return nil, fmt.Errorf("indexer/bleve: reader: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("indexer/bleve: reader: %w", err)
	}
	return r, nil
}
