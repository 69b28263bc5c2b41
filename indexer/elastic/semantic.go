package elastic

import (
	"context"
	"fmt"

	"github.com/lectern-lms/lectern/indexer"
)

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
