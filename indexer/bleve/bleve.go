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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	blevesearch "github.com/blevesearch/bleve/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/lectern-lms/lectern/indexer"
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

// Model returns the embedding model the index holds vectors of (zero when none).
func (ix *Index) Model() indexer.Model { return ix.model }

// DocCount is the number of documents in the Bleve index (chunks and fields of every
// version), which the metrics endpoint reports.
func (ix *Index) DocCount() (uint64, error) { return ix.bi.DocCount() }

// Close implements indexer.Index.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return errors.Join(ix.bi.Close(), ix.db.Close())
}
