package elastic

import (
	"context"
	"fmt"
	"unicode/utf16"

	"github.com/lectern-lms/lectern/indexer"
)

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
