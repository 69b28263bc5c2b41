package bleve

import (
	"context"
	"fmt"
	"slices"
	"strings"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/lectern-lms/lectern/indexer"
)

// Search implements indexer.Index.
func (ix *Index) Search(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if err := indexer.CheckQueryModel(q, ix.model); err != nil {
		return nil, err
	}
	if q.Type == indexer.Hybrid {
		return indexer.SearchHybrid(ctx, ix, q) // two searches of this index, each locking
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
