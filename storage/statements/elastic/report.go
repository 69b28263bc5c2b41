package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/storage/statements"
)

// The reports run in the engine: results is a filtered, sorted search paged with
// search_after like Query; activities and actors are composite aggregations (terms on
// activity_id and report_actor_ifis) paged with their after key, so a page costs one request
// whatever the number of statements, and nothing but the page's keys (and, for actors, each
// key's latest statement's report_actors through top_hits) leaves the cluster.

// reportFilter is the filter every report applies: the tenant, non-voided statements about
// an Activity, and q's agent, activity and viewer.
func reportFilter(q statements.ReportQuery) []any {
	f := []any{term("tenant_id", q.Tenant), term("voided", false), map[string]any{"exists": map[string]any{"field": "activity_id"}}}
	if q.Agent != "" {
		f = append(f, term("agent_ifis", q.Agent))
	}
	if q.Activity != "" {
		f = append(f, term("activity_id", q.Activity))
	}
	if q.Viewer != "" {
		f = append(f, either(true, "agent_ifis", "related_agent_ifis", q.Viewer))
	}
	return f
}

// ReportResults implements statements.Reports.
func (s *Store) ReportResults(ctx context.Context, q statements.ReportQuery) (*statements.ReportPage[*statements.Statement], error) {
	if err := validTenant(q.Tenant); err != nil {
		return nil, err
	}
	// Read-your-writes: see the writes acknowledged before the call.
	if err := s.visible(ctx, false); err != nil {
		return nil, err
	}
	limit := statements.ReportLimit(q)
	// The sort values of the last statement returned: stored (epoch nanoseconds) and id.
	var after struct {
		S int64  `json:"s"`
		I string `json:"i"`
	}
	if err := statements.DecodeReportCursor("results", q, &after); err != nil {
		return nil, err
	}
	body := map[string]any{
		"query":            map[string]any{"bool": map[string]any{"filter": append(reportFilter(q), term("result", true))}},
		"sort":             []any{map[string]any{"stored": "desc"}, map[string]any{"id": "desc"}},
		"size":             limit + 1,
		"track_total_hits": false,
	}
	if after.I != "" {
		body["search_after"] = []any{after.S, after.I}
	}
	hits, err := s.search(ctx, "report results", s.stmts, body)
	if err != nil {
		return nil, err
	}
	page := &statements.ReportPage[*statements.Statement]{}
	for i, h := range hits {
		if i == limit {
			last := page.Items[limit-1]
			page.Next = statements.EncodeReportCursor("results", q, map[string]any{"s": last.Stored.UnixNano(), "i": last.ID})
			break
		}
		var d stmtDoc
		if err := json.Unmarshal(h.Source, &d); err != nil {
			return nil, fmt.Errorf("statements/elastic: report results: %w", err)
		}
		st, err := d.statement()
		if err != nil {
			return nil, err
		}
		page.Items = append(page.Items, st)
	}
	return page, nil
}

// bucket is one composite aggregation bucket with an optional top_hits sub-aggregation.
type bucket struct {
	Key    map[string]string `json:"key"`
	Latest struct {
		Hits struct {
			Hits []hit `json:"hits"`
		} `json:"hits"`
	} `json:"latest"`
}

// composite runs a composite aggregation on field over q's statements, limit+1 buckets after
// the key after, with sub as sub-aggregations.
func (s *Store) composite(ctx context.Context, op string, q statements.ReportQuery, field, after string, limit int, sub map[string]any) ([]bucket, error) {
	agg := map[string]any{
		"size":    limit + 1,
		"sources": []any{map[string]any{"k": map[string]any{"terms": map[string]any{"field": field}}}},
	}
	if after != "" {
		agg["after"] = map[string]any{"k": after}
	}
	a := map[string]any{"composite": agg}
	if sub != nil {
		a["aggs"] = sub
	}
	body := map[string]any{
		"query":            map[string]any{"bool": map[string]any{"filter": reportFilter(q)}},
		"size":             0,
		"track_total_hits": false,
		"aggs":             map[string]any{"page": a},
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("statements/elastic: %s: %w", op, err)
	}
	var res struct {
		Aggregations struct {
			Page struct {
				Buckets []bucket `json:"buckets"`
			} `json:"page"`
		} `json:"aggregations"`
	}
	if err := s.c.Do(ctx, op, esapi.SearchRequest{Index: []string{s.stmts}, Body: bytes.NewReader(b)}, &res); err != nil {
		return nil, fmt.Errorf("statements/elastic: %w", err)
	}
	return res.Aggregations.Page.Buckets, nil
}

// ReportActivities implements statements.Reports.
func (s *Store) ReportActivities(ctx context.Context, q statements.ReportQuery) (*statements.ReportPage[statements.ReportActivity], error) {
	if err := validTenant(q.Tenant); err != nil {
		return nil, err
	}
	// Read-your-writes: see the writes acknowledged before the call.
	if err := s.visible(ctx, false); err != nil {
		return nil, err
	}
	if q.Activity != "" {
		return nil, fmt.Errorf("statements/elastic: the activities report has no activity filter: %w", statements.ErrInvalid)
	}
	limit := statements.ReportLimit(q)
	var after string
	if err := statements.DecodeReportCursor("activities", q, &after); err != nil {
		return nil, err
	}
	buckets, err := s.composite(ctx, "report activities", q, "activity_id", after, limit, nil)
	if err != nil {
		return nil, err
	}
	page := &statements.ReportPage[statements.ReportActivity]{}
	if len(buckets) > limit {
		buckets = buckets[:limit]
		page.Next = statements.EncodeReportCursor("activities", q, buckets[limit-1].Key["k"])
	}
	ids := make([]string, len(buckets))
	docIDs := make([]string, len(buckets))
	for i, bk := range buckets {
		ids[i] = bk.Key["k"]
		docIDs[i] = activityID(q.Tenant, ids[i])
	}
	got, err := s.mget(ctx, "report activity definitions", s.acts, docIDs, nil)
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		a := statements.ReportActivity{ID: id}
		if h, ok := got[docIDs[i]]; ok {
			var d actDoc
			if err := json.Unmarshal(h.Source, &d); err != nil {
				return nil, fmt.Errorf("statements/elastic: activity %s: %w", id, err)
			}
			if d.Tenant == q.Tenant && d.ActivityID == id {
				a.Canonical = json.RawMessage(d.Activity)
			}
		}
		page.Items = append(page.Items, a)
	}
	return page, nil
}

// ReportActors implements statements.Reports.
func (s *Store) ReportActors(ctx context.Context, q statements.ReportQuery) (*statements.ReportPage[statements.ReportActor], error) {
	if err := validTenant(q.Tenant); err != nil {
		return nil, err
	}
	// Read-your-writes: see the writes acknowledged before the call.
	if err := s.visible(ctx, false); err != nil {
		return nil, err
	}
	if q.Agent != "" {
		return nil, fmt.Errorf("statements/elastic: the actors report has no agent filter: %w", statements.ErrInvalid)
	}
	limit := statements.ReportLimit(q)
	var after string
	if err := statements.DecodeReportCursor("actors", q, &after); err != nil {
		return nil, err
	}
	latest := map[string]any{"latest": map[string]any{"top_hits": map[string]any{
		"size": 1, "sort": []any{map[string]any{"stored": "desc"}}, "_source": []string{"report_actors"},
	}}}
	buckets, err := s.composite(ctx, "report actors", q, "report_actor_ifis", after, limit, latest)
	if err != nil {
		return nil, err
	}
	page := &statements.ReportPage[statements.ReportActor]{}
	if len(buckets) > limit {
		buckets = buckets[:limit]
		page.Next = statements.EncodeReportCursor("actors", q, buckets[limit-1].Key["k"])
	}
	for _, bk := range buckets {
		ifi := bk.Key["k"]
		hits := bk.Latest.Hits.Hits
		if len(hits) != 1 {
			return nil, fmt.Errorf("statements/elastic: report actors: no statement for %s", ifi)
		}
		var d struct {
			ReportActors []statements.ReportActor `json:"report_actors"`
		}
		if err := json.Unmarshal(hits[0].Source, &d); err != nil {
			return nil, fmt.Errorf("statements/elastic: report actors: %w", err)
		}
		found := false
		for _, a := range d.ReportActors {
			if a.IFI == ifi {
				page.Items, found = append(page.Items, a), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("statements/elastic: report actors: actor %s missing from its statement", ifi)
		}
	}
	return page, nil
}
