// Package elastic is the Elasticsearch backend of the xAPI record store (statements.Backend):
// statements, the three document resources, activity definitions and attachments, each in an
// index of its own (mappings.Statements, XAPIDocuments, XAPIActivities, XAPIAttachments),
// written and read through the indices' aliases.
//
// Elasticsearch has no transactions, no _delete_by_query and (in the integ-test distribution
// we test against) no scripts, so the guarantees the port asks for are built from single-document
// primitives: realtime get, op_type=create, if_seq_no/if_primary_term, partial updates with a
// doc, and refresh=wait_for so that a write is searchable when its call returns. How Put
// approximates an atomic batch, and the race windows that remain, is documented on Put.
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

// RefreshImmediately makes every write refresh the index itself (refresh=true) instead of
// waiting for the next scheduled refresh (refresh=wait_for, the default). Both make a write
// searchable before its call returns. wait_for lets concurrent writers share one refresh per
// interval (1 s), so it suits heavy ingest, but a lone writer waits up to a whole interval
// per Put; forced refreshes answer in milliseconds at the price of one small segment per
// write, which suits low write rates (and tests).
func RefreshImmediately() Option { return func(s *Store) { s.refresh = "true" } }

// pageSize is the number of hits fetched per request when a call walks every match (purges,
// DeleteDocs, ListDocs).
const pageSize = 1000

// Store is the Elasticsearch statements.Backend. It is safe for concurrent use.
type Store struct {
	c *elastic.Client
	// Aliases of the four indices.
	stmts, docs, acts, atts string
	// refresh is the refresh policy of writes that searches must see: "wait_for" or "true".
	refresh string
	// derive fills the report fields of statements migrated from an older index version.
	derive statements.DeriveReport

	mu sync.Mutex
	// last is the latest stored instant assigned (unix microseconds), the clock that keeps
	// stored unique and increasing (see Put).
	last int64
}

var _ statements.Backend = (*Store)(nil)

// indexNames are the definitions the store needs, in creation order.
var indexNames = []string{mappings.Statements, mappings.XAPIDocuments, mappings.XAPIActivities, mappings.XAPIAttachments}

// New returns a store on client, creating its indices (and their aliases) when missing.
func New(ctx context.Context, client *elastic.Client, opts ...Option) (*Store, error) {
	for _, name := range indexNames {
		if _, _, err := client.EnsureIndex(ctx, name, mappings.Options{}); err != nil {
			return nil, fmt.Errorf("statements/elastic: %w", err)
		}
	}
	s := &Store{
		c:     client,
		stmts: client.Alias(mappings.Statements),
		docs:  client.Alias(mappings.XAPIDocuments),
		acts:  client.Alias(mappings.XAPIActivities),
		atts:  client.Alias(mappings.XAPIAttachments),
		// wait_for makes writes visible to searches (the port promises read-your-writes for
		// Query and ListDocs) without a refresh per request; see RefreshImmediately.
		refresh: "wait_for",
	}
	for _, o := range opts {
		o(s)
	}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	// Start the stored clock above everything stored, so a restart (or a clock that went
	// back) never stamps a statement before one already stored.
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
		s.last = t.UnixMicro()
	}
	return s, nil
}

// Close does nothing: the client belongs to the caller.
func (s *Store) Close() error { return nil }

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

// bulk runs ops with the given refresh policy and returns one item per op, in order. A failed
// request is an error; failed items are not (the caller decides).
func (s *Store) bulk(ctx context.Context, op string, ops []bulkOp, refresh string) ([]bulkItem, error) {
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
	err := s.c.Do(ctx, op, esapi.BulkRequest{Body: &buf, Refresh: refresh}, &res)
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
// and bulk deletes, since the cluster has no _delete_by_query. Each round's deletes are
// refreshed before the next search, so the loop ends once nothing matches; documents written
// concurrently with it may survive, as with _delete_by_query.
func (s *Store) deleteMatching(ctx context.Context, op, index string, query any) error {
	for {
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
		items, err := s.bulk(ctx, op, ops, s.refresh)
		if err != nil {
			return err
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
