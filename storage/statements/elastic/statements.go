package elastic

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/statements"
)

// stmtDoc is a statement's document in the statements index.
type stmtDoc struct {
	Tenant            string   `json:"tenant_id"`
	ID                string   `json:"id"`
	Hash              string   `json:"hash"`
	Stored            string   `json:"stored"`
	Timestamp         string   `json:"timestamp"`
	VerbID            string   `json:"verb_id,omitempty"`
	Activity          string   `json:"activity_id,omitempty"`
	RelatedActivities []string `json:"related_activity_ids,omitempty"`
	Agents            []string `json:"agent_ifis,omitempty"`
	RelatedAgents     []string `json:"related_agent_ifis,omitempty"`
	Registration      string   `json:"registration,omitempty"`
	Voided            bool     `json:"voided"`
	// Voids is the id a voiding statement voids.
	Voids string `json:"voids,omitempty"`
	// Target is the id any StatementRef object points at (voiding statements included), for
	// the rule that a query also returns statements targeting a matching one.
	Target           string   `json:"target,omitempty"`
	AttachmentHashes []string `json:"attachment_hashes,omitempty"`
	// Result, ReportActorIFIs and ReportActors are what the reports filter and aggregate on
	// (statements.Statement.Result and ReportActors); report_actors is stored, not indexed.
	Result          bool                     `json:"result,omitempty"`
	ReportActorIFIs []string                 `json:"report_actor_ifis,omitempty"`
	ReportActors    []statements.ReportActor `json:"report_actors,omitempty"`
	// Statement is the raw statement as a JSON string, not as an object: the field is mapped
	// enabled:false (never parsed, whatever JSON value it holds), and a string survives the
	// re-serialization of _source that a partial update (voiding) does byte for byte, where an
	// object's numbers and escapes could be rewritten.
	Statement string `json:"statement"`
}

// toDoc is st's document; voided is decided by Put, never taken from st.
func toDoc(st *statements.Statement, voided bool) *stmtDoc {
	return &stmtDoc{
		Tenant: st.Tenant, ID: st.ID, Hash: st.Hash,
		Stored:            st.Stored.UTC().Format(time.RFC3339Nano),
		Timestamp:         st.Timestamp.UTC().Format(time.RFC3339Nano),
		VerbID:            st.VerbID,
		Activity:          st.Activity,
		RelatedActivities: st.RelatedActivities,
		Agents:            st.Agents,
		RelatedAgents:     st.RelatedAgents,
		Registration:      st.Registration,
		Voided:            voided,
		Voids:             st.Voids,
		Target:            st.TargetID(),
		AttachmentHashes:  st.AttachmentHashes,
		Result:            st.Result,
		ReportActorIFIs:   reportIFIs(st.ReportActors),
		ReportActors:      st.ReportActors,
		Statement:         string(st.Raw),
	}
}

func reportIFIs(actors []statements.ReportActor) []string {
	var out []string
	for _, a := range actors {
		out = append(out, a.IFI)
	}
	return out
}

// statement is the statement d stores.
func (d *stmtDoc) statement() (*statements.Statement, error) {
	stored, err := time.Parse(time.RFC3339Nano, d.Stored)
	if err != nil {
		return nil, fmt.Errorf("statements/elastic: statement %s: stored: %w", d.ID, err)
	}
	ts, err := time.Parse(time.RFC3339Nano, d.Timestamp)
	if err != nil {
		return nil, fmt.Errorf("statements/elastic: statement %s: timestamp: %w", d.ID, err)
	}
	return &statements.Statement{
		Tenant: d.Tenant, ID: d.ID, Raw: json.RawMessage(d.Statement), Hash: d.Hash,
		Stored: stored, Timestamp: ts, Voided: d.Voided, Voids: d.Voids, Target: d.Target, VerbID: d.VerbID,
		Agents: d.Agents, RelatedAgents: d.RelatedAgents, Activity: d.Activity,
		RelatedActivities: d.RelatedActivities, Registration: d.Registration,
		AttachmentHashes: d.AttachmentHashes,
		Result:           d.Result, ReportActors: d.ReportActors,
	}, nil
}

// minStored is the earliest instant a date_nanos field holds.
var minStored = time.Unix(0, 0)

// Get returns one statement, voided or not; it reads in realtime, so a statement is found as
// soon as its Put returned.
func (s *Store) Get(ctx context.Context, tenant, id string) (*statements.Statement, error) {
	if err := validTenant(tenant); err != nil {
		return nil, err
	}
	if id == "" || len(docID(tenant, id)) > 512 {
		return nil, fmt.Errorf("statements/elastic: statement %q: %w", id, statements.ErrNotFound)
	}
	var res struct {
		Source stmtDoc `json:"_source"`
	}
	err := s.c.Do(ctx, "get statement", esapi.GetRequest{Index: s.stmts, DocumentID: pathID(docID(tenant, id))}, &res)
	if errors.Is(err, elastic.ErrNotFound) {
		return nil, fmt.Errorf("statements/elastic: statement %s: %w", id, statements.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("statements/elastic: %w", err)
	}
	if res.Source.Tenant != tenant {
		return nil, fmt.Errorf("statements/elastic: statement %s: %w", id, statements.ErrNotFound)
	}
	return res.Source.statement()
}

// cursor is the decoded form of Page.Next: the sort values of the last statement returned
// and a fingerprint of the query's filters, so a cursor used with other filters is refused.
type cursor struct {
	Stored int64  `json:"s"`
	ID     string `json:"i"`
	Query  string `json:"q"`
}

// fingerprint identifies q's filters and order (not its limit or cursor).
func fingerprint(q statements.Query) string {
	b, _ := json.Marshal([]any{q.Tenant, q.Agent, q.Verb, q.Activity, q.Registration,
		q.RelatedActivities, q.RelatedAgents, q.Since.UnixNano(), q.Since.IsZero(),
		q.Until.UnixNano(), q.Until.IsZero(), q.Ascending, q.IncludeVoided})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Query returns a page of q's statements (non-voided unless IncludeVoided) ordered by (stored, id), a total order,
// continuing with search_after from q.Cursor.
func (s *Store) Query(ctx context.Context, q statements.Query) (*statements.Page, error) {
	if err := validTenant(q.Tenant); err != nil {
		return nil, err
	}
	// Read-your-writes: see the writes acknowledged before the call.
	if err := s.visible(ctx, false); err != nil {
		return nil, err
	}
	through := time.UnixMicro(s.snapshot()).UTC()
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, statements.MaxLimit)
	fp := fingerprint(q)

	filter := []any{term("tenant_id", q.Tenant)}
	if !q.IncludeVoided {
		filter = append(filter, term("voided", false))
	}
	if direct := matchFilters(q); len(direct) > 0 {
		refs, err := s.refMatches(ctx, q, direct)
		if err != nil {
			return nil, err
		}
		if len(refs) == 0 {
			filter = append(filter, direct...)
		} else {
			filter = append(filter, map[string]any{"bool": map[string]any{
				"should": []any{
					map[string]any{"bool": map[string]any{"filter": direct}},
					map[string]any{"terms": map[string]any{"id": refs}},
				},
				"minimum_should_match": 1,
			}})
		}
	}
	rng := map[string]any{}
	// date_nanos holds nothing before 1970: a bound there is no bound (since) or matches
	// nothing (until).
	if !q.Since.IsZero() && !q.Since.Before(minStored) {
		rng["gt"] = q.Since.UTC().Format(time.RFC3339Nano)
	}
	if !q.Until.IsZero() {
		if q.Until.Before(minStored) {
			return &statements.Page{ConsistentThrough: through}, nil
		}
		rng["lte"] = q.Until.UTC().Format(time.RFC3339Nano)
	}
	if len(rng) > 0 {
		filter = append(filter, map[string]any{"range": map[string]any{"stored": rng}})
	}
	order := "desc"
	if q.Ascending {
		order = "asc"
	}
	body := map[string]any{
		"query":            map[string]any{"bool": map[string]any{"filter": filter}},
		"sort":             []any{map[string]any{"stored": order}, map[string]any{"id": order}},
		"size":             limit + 1,
		"track_total_hits": false,
	}
	if q.Cursor != "" {
		c, err := decodeCursor(q.Cursor)
		if err != nil {
			return nil, err
		}
		if c.Query != fp {
			return nil, fmt.Errorf("statements/elastic: cursor of another query: %w", statements.ErrInvalid)
		}
		body["search_after"] = []any{c.Stored, c.ID}
	}
	hits, err := s.search(ctx, "query statements", s.stmts, body)
	if err != nil {
		return nil, err
	}
	page := &statements.Page{ConsistentThrough: through}
	for i, h := range hits {
		if i == limit {
			last := page.Statements[limit-1]
			page.Next = encodeCursor(cursor{Stored: last.Stored.UnixNano(), ID: last.ID, Query: fp})
			break
		}
		var d stmtDoc
		if err := json.Unmarshal(h.Source, &d); err != nil {
			return nil, fmt.Errorf("statements/elastic: query statements: %w", err)
		}
		st, err := d.statement()
		if err != nil {
			return nil, err
		}
		page.Statements = append(page.Statements, st)
	}
	return page, nil
}

// matchFilters are q's non-time filters as term queries, none when q has none. The related
// fields hold only the other places of the statement, so the broad filters match either field
// (as the SQLite backend does): related never misses what narrow finds.
func matchFilters(q statements.Query) []any {
	var filter []any
	if q.Agent != "" {
		filter = append(filter, either(q.RelatedAgents, "agent_ifis", "related_agent_ifis", q.Agent))
	}
	if q.Verb != "" {
		filter = append(filter, term("verb_id", q.Verb))
	}
	if q.Activity != "" {
		filter = append(filter, either(q.RelatedActivities, "activity_id", "related_activity_ids", q.Activity))
	}
	if q.Registration != "" {
		filter = append(filter, term("registration", q.Registration))
	}
	return filter
}

// refMatches returns the ids of q's tenant's statements that meet the filters direct through
// the StatementRef rule: it reads every targeting statement of the tenant (id → target),
// paging with search_after in pages of pageSize so that no edge count bounds the rule (the
// former cap of 10,000 edges, the index's max_result_window, is gone), asks which targets
// meet direct (voided or not), and follows the targeting edges backwards from those,
// recursively (cycles included). Time bounds are left to the caller's query, which applies
// them to the returned statements. Edges are sorted stored desc, id desc; a statement stored
// while the pages are read sorts before the cursor and is missed, as it would be by a search
// that started earlier.
func (s *Store) refMatches(ctx context.Context, q statements.Query, direct []any) ([]string, error) {
	targeting := map[string][]string{} // target → ids of the statements targeting it
	var after []any
	for {
		body := map[string]any{
			"query": map[string]any{"bool": map[string]any{"filter": []any{
				term("tenant_id", q.Tenant), map[string]any{"exists": map[string]any{"field": "target"}},
			}}},
			"sort":             []any{map[string]any{"stored": "desc"}, map[string]any{"id": "desc"}},
			"size":             pageSize,
			"_source":          []string{"id", "target", "stored"},
			"track_total_hits": false,
		}
		if after != nil {
			body["search_after"] = after
		}
		hits, err := s.search(ctx, "find targeting statements", s.stmts, body)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			var d struct {
				ID     string `json:"id"`
				Target string `json:"target"`
				Stored string `json:"stored"`
			}
			if err := json.Unmarshal(h.Source, &d); err != nil {
				return nil, fmt.Errorf("statements/elastic: find targeting statements: %w", err)
			}
			targeting[d.Target] = append(targeting[d.Target], d.ID)
			t, err := time.Parse(time.RFC3339Nano, d.Stored)
			if err != nil {
				return nil, fmt.Errorf("statements/elastic: statement %s: stored: %w", d.ID, err)
			}
			after = []any{t.UnixNano(), d.ID}
		}
		if len(hits) < pageSize {
			break
		}
	}
	if len(targeting) == 0 {
		return nil, nil
	}
	// Which targets meet the filters themselves.
	targets := make([]string, 0, len(targeting))
	for t := range targeting {
		targets = append(targets, t)
	}
	slices.Sort(targets)
	var queue []string
	for chunk := range slices.Chunk(targets, pageSize) {
		hits, err := s.search(ctx, "match targeted statements", s.stmts, map[string]any{
			"query": map[string]any{"bool": map[string]any{"filter": append([]any{
				term("tenant_id", q.Tenant), map[string]any{"terms": map[string]any{"id": chunk}},
			}, direct...)}},
			"size":             len(chunk),
			"_source":          []string{"id"},
			"track_total_hits": false,
		})
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			var d struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(h.Source, &d); err != nil {
				return nil, fmt.Errorf("statements/elastic: match targeted statements: %w", err)
			}
			queue = append(queue, d.ID)
		}
	}
	// Everything that reaches one of them through targeting edges.
	seen := map[string]bool{}
	var out []string
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, by := range targeting[id] {
			if !seen[by] {
				seen[by] = true
				out = append(out, by)
				queue = append(queue, by)
			}
		}
	}
	return out, nil
}

// either is a term query on narrow, or with broad on narrow or related.
func either(broad bool, narrow, related, value string) any {
	if !broad {
		return term(narrow, value)
	}
	return map[string]any{"bool": map[string]any{
		"should":               []any{term(narrow, value), term(related, value)},
		"minimum_should_match": 1,
	}}
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.ID == "" || c.Query == "" {
		return cursor{}, fmt.Errorf("statements/elastic: malformed cursor: %w", statements.ErrInvalid)
	}
	return c, nil
}

// Attachments returns the stored attachments of tenant among sha2, in the order asked.
func (s *Store) Attachments(ctx context.Context, tenant string, sha2 []string) ([]*statements.Attachment, error) {
	if err := validTenant(tenant); err != nil {
		return nil, err
	}
	var ids []string
	seen := map[string]bool{}
	for _, h := range sha2 {
		if h != "" && !seen[h] && len(docID(tenant, h)) <= 512 {
			seen[h] = true
			ids = append(ids, docID(tenant, h))
		}
	}
	got, err := s.mget(ctx, "get attachments", s.atts, ids, nil)
	if err != nil {
		return nil, err
	}
	var out []*statements.Attachment
	for _, id := range ids {
		h, ok := got[id]
		if !ok {
			continue
		}
		var d attDoc
		if err := json.Unmarshal(h.Source, &d); err != nil {
			return nil, fmt.Errorf("statements/elastic: attachment %s: %w", id, err)
		}
		if d.Tenant != tenant {
			continue
		}
		out = append(out, &statements.Attachment{SHA2: d.SHA2, ContentType: d.ContentType, Data: d.Data})
	}
	return out, nil
}

// attDoc is an attachment's document; Data is a []byte, so JSON carries it in base64, which
// the binary field expects.
type attDoc struct {
	Tenant      string `json:"tenant_id"`
	SHA2        string `json:"sha2"`
	ContentType string `json:"content_type"`
	Data        []byte `json:"data"`
}
