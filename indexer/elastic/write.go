package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/storage/elastic"
)

// bulkBatch is the largest number of actions in one bulk request, and bulkBytes the size
// past which a request is sent early: a version with a large vocabulary carries it (vlex) on
// every chunk, and Elasticsearch refuses requests over http.max_content_length (100 MB).
const (
	bulkBatch = 500
	bulkBytes = 16 << 20
)

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
