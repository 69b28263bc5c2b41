package bleve

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	blevesearch "github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	bolt "go.etcd.io/bbolt"

	"github.com/lectern-lms/lectern/indexer"
)

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
