// Package elastic is the Elasticsearch backend of the xAPI record store (statements.Backend):
// statements, the three document resources, activity definitions and attachments, each in an
// index of its own (mappings.Statements, XAPIDocuments, XAPIActivities, XAPIAttachments),
// written and read through the indices' aliases.
//
// Elasticsearch has no transactions, no _delete_by_query and (in the integ-test distribution
// we test against) no scripts, so the guarantees the port asks for are built from single-document
// primitives: realtime get, op_type=create, if_seq_no/if_primary_term and partial updates with a
// doc. How Put approximates an atomic batch, and the race windows that remain, is documented on
// Put. Writes ask for no refresh; searches refresh first when this store acknowledged writes
// since the last refresh began, one shared refresh for every waiting caller (visibility.go).
package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/statements"
)

// Option configures a Store.
type Option func(*Store)

// pageSize is the number of hits fetched per request when a call walks every match (purges,
// DeleteDocs, ListDocs).
const pageSize = 1000

// Store is the Elasticsearch statements.Backend. It is safe for concurrent use.
type Store struct {
	c *elastic.Client
	// Aliases of the four indices.
	stmts, docs, acts, atts string
	// derive fills the report fields of statements migrated from an older index version.
	derive statements.DeriveReport

	mu sync.Mutex
	// last is the latest stored instant assigned (unix microseconds), the clock that keeps
	// stored unique and increasing (see Put); a refresh raises it to its watermark.
	last int64
	// inflight holds the earliest stored instant (unix µs) of each statement batch being
	// written, by token (nextBatch counts them): the watermark stays below them.
	inflight  map[uint64]int64
	nextBatch uint64
	// acked counts the writes that answered; voidersAcked is acked after the latest one
	// holding voiding statements; refreshed is acked when the latest completed refresh began.
	acked, voidersAcked, refreshed uint64
	// watermark is the published consistent-through instant (unix µs).
	watermark int64
	// run is the refresh in progress, nil when none.
	run *refreshRun

	// stop ends the background refresh, which closes stopped when it returns.
	stop, stopped chan struct{}
	closeOnce     sync.Once

	// keepMissing leaves missing indices missing (KeepMissing); missing lists the aliases New
	// found missing then.
	keepMissing bool
	missing     []string
}

// KeepMissing makes New leave a missing index missing instead of creating it empty: for a
// deployment that has stored statements before, a missing statements index means they were
// lost (a new cluster, a deleted index), and an empty one would hide the loss and stand in
// the way of a snapshot restore. The store then answers requests that need a missing index
// with its outage error (writes send require_alias), and Missing names them.
func KeepMissing() Option {
	return func(s *Store) { s.keepMissing = true }
}

// Missing lists the aliases New found missing and left so (KeepMissing).
func (s *Store) Missing() []string { return s.missing }

var _ statements.Backend = (*Store)(nil)

// indexNames are the definitions the store needs, in creation order.
var indexNames = []string{mappings.Statements, mappings.XAPIDocuments, mappings.XAPIActivities, mappings.XAPIAttachments}

// New returns a store on client, creating its indices (and their aliases) when missing.
func New(ctx context.Context, client *elastic.Client, opts ...Option) (*Store, error) {
	s := &Store{
		c:     client,
		stmts: client.Alias(mappings.Statements),
		docs:  client.Alias(mappings.XAPIDocuments),
		acts:  client.Alias(mappings.XAPIActivities),
		atts:  client.Alias(mappings.XAPIAttachments),

		inflight: map[uint64]int64{},
		stop:     make(chan struct{}),
		stopped:  make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	for _, name := range indexNames {
		if s.keepMissing {
			missing, err := client.MissingAliases(ctx, name)
			if err != nil {
				return nil, fmt.Errorf("statements/elastic: %w", err)
			}
			if len(missing) > 0 {
				s.missing = append(s.missing, missing...)
				continue
			}
		}
		if _, _, err := client.EnsureIndex(ctx, name, mappings.Options{}); err != nil {
			return nil, fmt.Errorf("statements/elastic: %w", err)
		}
	}
	if slices.Contains(s.missing, s.stmts) {
		// Nothing to migrate or to read the stored clock from: it starts at now, which is
		// above anything a restore brings back only if the clock did not go back meanwhile.
		s.last, s.watermark = time.Now().UnixMicro(), time.Now().UnixMicro()
		go s.refreshLoop()
		return s, nil
	}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	// Start the stored clock above everything stored, so a restart (or a clock that went
	// back) never stamps a statement before one already stored. Writes acknowledged just
	// before a restart may not be searchable yet: refresh first.
	start := time.Now().UnixMicro()
	refresh := []string{s.stmts}
	if !slices.Contains(s.missing, s.docs) {
		refresh = append(refresh, s.docs)
	}
	if err := s.c.Do(ctx, "refresh", esapi.IndicesRefreshRequest{Index: refresh}, nil); err != nil {
		return nil, fmt.Errorf("statements/elastic: %w", err)
	}
	s.last, s.watermark = start, start
	hits, err := s.search(ctx, "latest stored", s.stmts, map[string]any{
		"size": 1, "sort": []any{map[string]any{"stored": "desc"}}, "_source": []string{"stored"},
		"track_total_hits": false,
	})
	if err != nil {
		return nil, err
	}
	if len(hits) == 1 {
		var d struct {
			Stored string `json:"stored"`
		}
		if err := json.Unmarshal(hits[0].Source, &d); err != nil {
			return nil, fmt.Errorf("statements/elastic: latest stored: %w", err)
		}
		t, err := time.Parse(time.RFC3339Nano, d.Stored)
		if err != nil {
			return nil, fmt.Errorf("statements/elastic: latest stored: %w", err)
		}
		s.last = max(s.last, t.UnixMicro())
	}
	go s.refreshLoop()
	return s, nil
}

// isStatus reports whether err is an Elasticsearch answer with the given status.
func isStatus(err error, status int) bool {
	var e *elastic.Error
	return errors.As(err, &e) && e.Status == status
}

// hit is one search hit or mget doc.
type hit struct {
	ID     string          `json:"_id"`
	Found  bool            `json:"found"`
	Source json.RawMessage `json:"_source"`
	// Error is set on an mget doc that could not be read.
	Error json.RawMessage `json:"error"`
}

// search runs a search body against index and returns the hits.
func (s *Store) search(ctx context.Context, op, index string, body any) ([]hit, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("statements/elastic: %s: %w", op, err)
	}
	var res struct {
		Hits struct {
			Hits []hit `json:"hits"`
		} `json:"hits"`
	}
	err = s.c.Do(ctx, op, esapi.SearchRequest{Index: []string{index}, Body: bytes.NewReader(b)}, &res)
	if err != nil {
		return nil, fmt.Errorf("statements/elastic: %w", err)
	}
	return res.Hits.Hits, nil
}

// mget reads the documents ids of index in realtime (it sees writes not yet refreshed) and
// returns the found ones by _id.
func (s *Store) mget(ctx context.Context, op, index string, ids []string, source []string) (map[string]hit, error) {
	out := make(map[string]hit, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	b, _ := json.Marshal(map[string]any{"ids": ids})
	var res struct {
		Docs []hit `json:"docs"`
	}
	err := s.c.Do(ctx, op, esapi.MgetRequest{Index: index, Body: bytes.NewReader(b), SourceIncludes: source}, &res)
	if err != nil {
		return nil, fmt.Errorf("statements/elastic: %w", err)
	}
	for _, d := range res.Docs {
		if len(d.Error) > 0 {
			return nil, fmt.Errorf("statements/elastic: %s: %s: %s", op, d.ID, d.Error)
		}
		if d.Found {
			out[d.ID] = d
		}
	}
	return out, nil
}

// bulkOp is one action of a bulk request: its metadata and, except for delete, its source
// line.
type bulkOp struct {
	action string // "create", "index", "update" or "delete"
	index  string
	id     string
	// seqNo and primaryTerm, when set, make the action conditional on that version.
	seqNo, primaryTerm *int
	retryOnConflict    int
	doc                any
}

// bulkItem is the outcome of one bulkOp.
type bulkItem struct {
	ID          string `json:"_id"`
	Status      int    `json:"status"`
	SeqNo       int    `json:"_seq_no"`
	PrimaryTerm int    `json:"_primary_term"`
	Error       *struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	} `json:"error"`
}

// err returns the item's failure as an error, or nil when it succeeded.
func (it bulkItem) err(op string) error {
	if it.Status >= 200 && it.Status <= 299 {
		return nil
	}
	e := &elastic.Error{Op: op + " " + it.ID, Status: it.Status}
	if it.Error != nil {
		e.Type, e.Reason = it.Error.Type, it.Error.Reason
	}
	return e
}

// bulk runs ops, without a refresh, and returns one item per op, in order. A failed request is
// an error; failed items are not (the caller decides). The caller counts the write (endWrite).
func (s *Store) bulk(ctx context.Context, op string, ops []bulkOp) ([]bulkItem, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, o := range ops {
		meta := map[string]any{"_index": o.index, "_id": o.id}
		if o.action != "delete" && o.index != "" && slices.Contains([]string{s.stmts, s.docs, s.acts, s.atts}, o.index) {
			// A lost index must fail the write (index_not_found_exception), not be auto-created
			// as a concrete index named like the alias, which would block its restore.
			meta["require_alias"] = true
		}
		if o.seqNo != nil {
			meta["if_seq_no"], meta["if_primary_term"] = *o.seqNo, *o.primaryTerm
		}
		if o.retryOnConflict > 0 {
			meta["retry_on_conflict"] = o.retryOnConflict
		}
		if err := enc.Encode(map[string]any{o.action: meta}); err != nil {
			return nil, fmt.Errorf("statements/elastic: %s: %w", op, err)
		}
		if o.action != "delete" {
			if err := enc.Encode(o.doc); err != nil {
				return nil, fmt.Errorf("statements/elastic: %s: %w", op, err)
			}
		}
	}
	var res struct {
		Items []map[string]bulkItem `json:"items"`
	}
	err := s.c.Do(ctx, op, esapi.BulkRequest{Body: &buf}, &res)
	if err != nil {
		return nil, fmt.Errorf("statements/elastic: %w", err)
	}
	if len(res.Items) != len(ops) {
		return nil, fmt.Errorf("statements/elastic: %s: %d items for %d actions", op, len(res.Items), len(ops))
	}
	items := make([]bulkItem, len(ops))
	for i, m := range res.Items {
		items[i] = m[ops[i].action]
	}
	return items, nil
}

// deleteMatching deletes every document of index that query matches, with searches of ids
// and bulk deletes, since the cluster has no _delete_by_query. The writes acknowledged before
// it are made searchable first, and each round's deletes before the next search, so the loop
// ends once nothing matches; documents written concurrently with it may survive, as with
// _delete_by_query. index must be one the store's refresh covers (statements, documents) or
// refreshed by the caller.
func (s *Store) deleteMatching(ctx context.Context, op, index string, query any) error {
	for {
		if err := s.visible(ctx, false); err != nil {
			return err
		}
		hits, err := s.search(ctx, op, index, map[string]any{
			"query": query, "size": pageSize, "_source": false,
		})
		if err != nil {
			return err
		}
		if len(hits) == 0 {
			return nil
		}
		ops := make([]bulkOp, len(hits))
		for i, h := range hits {
			ops[i] = bulkOp{action: "delete", index: index, id: h.ID}
		}
		items, err := s.bulk(ctx, op, ops)
		s.endWrite(0, false)
		if err != nil {
			return err
		}
		if index != s.stmts && index != s.docs {
			// Not covered by the store's refresh.
			if err := s.c.Do(ctx, "refresh", esapi.IndicesRefreshRequest{Index: []string{index}}, nil); err != nil {
				return fmt.Errorf("statements/elastic: %w", err)
			}
		}
		for _, it := range items {
			// 404: deleted concurrently, which is what we wanted.
			if it.Status != http.StatusNotFound {
				if err := it.err(op); err != nil {
					return fmt.Errorf("statements/elastic: %w", err)
				}
			}
		}
	}
}

// PurgeTenant removes every statement, document, activity and attachment of tenant.
func (s *Store) PurgeTenant(ctx context.Context, tenant string) error {
	if err := validTenant(tenant); err != nil {
		return err
	}
	indices := []string{s.stmts, s.docs, s.acts, s.atts}
	// Activities and attachments are written without waiting for a refresh; make everything
	// written before this call searchable.
	if err := s.c.Do(ctx, "refresh", esapi.IndicesRefreshRequest{Index: indices}, nil); err != nil {
		return fmt.Errorf("statements/elastic: %w", err)
	}
	q := termFilter("tenant_id", tenant)
	for _, index := range indices {
		if err := s.deleteMatching(ctx, "purge "+tenant+" from "+index, index, q); err != nil {
			return err
		}
	}
	return nil
}

// termFilter is a bool query with one term filter.
func termFilter(field, value string) map[string]any {
	return map[string]any{"bool": map[string]any{"filter": []any{term(field, value)}}}
}

// term is a term query.
func term(field string, value any) map[string]any {
	return map[string]any{"term": map[string]any{field: value}}
}

// docID is the _id of a tenant's object with a short key (a statement id, a sha2).
func docID(tenant, id string) string { return tenant + "/" + id }

// validTenant rejects an empty tenant or one with a '/', which would make docID ambiguous.
func validTenant(tenant string) error {
	if tenant == "" || strings.Contains(tenant, "/") {
		return fmt.Errorf("statements/elastic: tenant %q: %w", tenant, statements.ErrInvalid)
	}
	return nil
}

// pathID escapes a document id for the URL path of a single-document request: the official
// client puts it into the path as is, and our ids contain '/'.
func pathID(id string) string { return url.PathEscape(id) }
