package elastic

import "github.com/lectern-lms/lectern/indexer"

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

// scopeFilter is filters(q, kind) as one bool filter clause: the same clause for every
// query of a tenant (and options), so the engine's query cache keeps it as a bitset after
// a few uses, where its term queries alone are never cached and would each be intersected
// again on every search (~0.4 ms of a keyword or phrase search at 100k chunks).
func scopeFilter(q indexer.Query, kind string) map[string]any {
	return map[string]any{"bool": map[string]any{"filter": filters(q, kind)}}
}

var (
	chunkSource     = []string{"content_id", "version", "location"}
	chunkTextSource = []string{"content_id", "version", "location", "text"}
)

// chunkSort is the order of chunk hits, indexer.Compare's.
var chunkSort = []any{
	map[string]any{"_score": "desc"}, map[string]any{"content_id": "asc"},
	map[string]any{"version": "asc"}, map[string]any{"location": "asc"},
}

// dropLocations clears the locations of tenant-wide hits, which name versions, not chunks
// (keeping them for the hits' texts when q asks for them: indexer.KeepLocation).
func dropLocations(q indexer.Query, hits []indexer.Hit) {
	if q.ContentID == "" {
		for i := range hits {
			indexer.KeepLocation(q, &hits[i])
			hits[i].Location = ""
		}
	}
}

// chunkKey names a chunk: locations are unique within a version (indexer.Index).
type chunkKey struct {
	contentID string
	version   int
	location  string
}
