package statements

import (
	"context"
	"encoding/json"
)

// ReportActor is one agent the actors report lists for a statement: its IFI (lrs/xapi.IFI
// form) and the agent object as the report shows it (objectType, name and the IFI property).
type ReportActor struct {
	IFI   string          `json:"i"`
	Agent json.RawMessage `json:"a"`
}

// ReportQuery filters the report extension (spec/002 GET Report/results, /activities and
// /actors). Only non-voided statements whose object is an Activity count (Activity set); the
// StatementRef rule of Query does not apply, since a statement matching only through it has a
// StatementRef object.
type ReportQuery struct {
	Tenant string
	// Agent (an IFI) keeps the statements it is an agent of (Statement.Agents), as Query.Agent.
	Agent string
	// Activity keeps the statements whose object is this activity.
	Activity string
	// Viewer (an IFI), when set, keeps only the statements it appears in anywhere
	// (Agents or RelatedAgents): the default read rule for principals that may not read all.
	Viewer string
	// Limit bounds the page (0: the method's default; capped at MaxLimit).
	Limit int
	// Cursor continues a previous page of the same method and filters (opaque).
	Cursor string
}

// ReportPage is one page of a report; Next is "" on the last one. A page may hold fewer items
// than the limit, even none, and still have a Next (a backend may skip keys whose statements
// are all voided within its bound of work per page).
type ReportPage[T any] struct {
	Items []T
	Next  string
}

// ReportActivity is one distinct activity: its id and, when the store holds a canonical
// definition for it (Activities), that activity object.
type ReportActivity struct {
	ID        string
	Canonical json.RawMessage
}

// Reports is the aggregation port of the report extension. Every method applies the tenant,
// the voided exclusion and the filters of q in the backend (an index walk in SQL, a query
// with aggregations in Elasticsearch), never by reading every statement of the tenant.
type Reports interface {
	// ReportResults returns the statements of q that have a result object (Statement.Result),
	// newest stored first.
	ReportResults(ctx context.Context, q ReportQuery) (*ReportPage[*Statement], error)
	// ReportActivities returns the distinct object activities of q's statements (Agent and
	// Viewer apply, Activity must be empty), ordered by id.
	ReportActivities(ctx context.Context, q ReportQuery) (*ReportPage[ReportActivity], error)
	// ReportActors returns the distinct report actors (Statement.ReportActors) of q's
	// statements (Activity and Viewer apply, Agent must be empty), ordered by IFI, each as
	// given by the most recently stored statement listing it.
	ReportActors(ctx context.Context, q ReportQuery) (*ReportPage[ReportActor], error)
}

// DefaultReportLimit is the page size of a ReportQuery without Limit; MaxLimit caps it.
const DefaultReportLimit = 100

// ReportLimit is q.Limit with the default applied and the cap enforced.
func ReportLimit(q ReportQuery) int {
	switch {
	case q.Limit <= 0:
		return DefaultReportLimit
	case q.Limit > MaxLimit:
		return MaxLimit
	}
	return q.Limit
}

// DeriveReport computes a stored statement's Result and ReportActors from its JSON
// (lrs/xapi.ReportFields); backends use it to migrate statements stored before they kept
// these fields.
type DeriveReport func(raw json.RawMessage) (result bool, actors []ReportActor, err error)
