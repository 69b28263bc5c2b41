// Package report is the use case of the record store's report extension (spec/002 "Report
// result entry", GET {lrs}/TCAPI/Report/results, /activities and /actors): Service asks the
// backend's aggregation port (statements.Reports) for a page, applies the read rule, the
// not-found answers and the continuation tokens of `more`, and shapes the entries. The HTTP
// layer only parses parameters and writes the answer.
//
// Only statements whose object is an Activity count: a report is about activities, and the
// object of the others (an agent, a statement reference, a sub-statement) has no
// definition.name. The verb is given no meaning (spec/002: completion, success, score and time
// come from the result object).
package report

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
)

// Account is an agent's account.
type Account struct {
	HomePage string `json:"homePage"`
	Name     string `json:"name"`
}

// Actor is an agent (or identified group) as the reports give it: objectType, name and the
// inverse functional identifier it was sent with. The spec shows account agents; agents
// identified by mbox, mbox_sha1sum or openid keep that property so they stay identifiable.
type Actor struct {
	ObjectType  string   `json:"objectType"`
	Name        string   `json:"name,omitempty"`
	Mbox        string   `json:"mbox,omitempty"`
	MboxSHA1Sum string   `json:"mbox_sha1sum,omitempty"`
	OpenID      string   `json:"openid,omitempty"`
	Account     *Account `json:"account,omitempty"`
}

// Definition is the part of an activity definition reports carry.
type Definition struct {
	// Name maps language tags to the activity's name.
	Name map[string]string `json:"name,omitempty"`
}

// Activity is an activity object: objectType, id and definition.name.
type Activity struct {
	ObjectType string      `json:"objectType"`
	ID         string      `json:"id"`
	Definition *Definition `json:"definition,omitempty"`
}

// Score is result.score; only raw is reported.
type Score struct {
	Raw *float64 `json:"raw,omitempty"`
}

// Outcome is the result object of an entry. Absent properties are left out.
type Outcome struct {
	Score      *Score `json:"score,omitempty"`
	Success    *bool  `json:"success,omitempty"`
	Completion *bool  `json:"completion,omitempty"`
	// Duration is the ISO 8601 duration as the statement gave it.
	Duration string `json:"duration,omitempty"`
}

// Result is one entry of the results report: one statement with a result object.
type Result struct {
	// Date is the statement's timestamp (when the experience happened), RFC 3339 UTC; its
	// stored time when the timestamp is unknown.
	Date     string   `json:"date"`
	Result   Outcome  `json:"result"`
	Actor    Actor    `json:"actor"`
	Activity Activity `json:"activity"`
}

// The parts of a statement the reports read.
type rawStatement struct {
	Actor  json.RawMessage `json:"actor"`
	Object json.RawMessage `json:"object"`
	Result *rawResult      `json:"result"`
}

type rawResult struct {
	Score *struct {
		Raw *float64 `json:"raw"`
	} `json:"score"`
	Success    *bool  `json:"success"`
	Completion *bool  `json:"completion"`
	Duration   string `json:"duration"`
}

type rawActor struct {
	ObjectType  string   `json:"objectType"`
	Name        string   `json:"name"`
	Mbox        string   `json:"mbox"`
	MboxSHA1Sum string   `json:"mbox_sha1sum"`
	OpenID      string   `json:"openid"`
	Account     *Account `json:"account"`
}

type rawActivity struct {
	ObjectType string `json:"objectType"`
	ID         string `json:"id"`
	Definition *struct {
		Name map[string]string `json:"name"`
	} `json:"definition"`
}

func parse(st *statements.Statement) (rawStatement, bool) {
	var r rawStatement
	if st == nil || json.Unmarshal(st.Raw, &r) != nil {
		return r, false
	}
	return r, true
}

// ActivityOf reads an activity object (a statement's object or a canonical definition from
// statements.Activities); ok is false when raw is not an Activity with an id.
func ActivityOf(raw json.RawMessage) (a Activity, ok bool) {
	var r rawActivity
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil || r.ID == "" {
		return a, false
	}
	if r.ObjectType != "" && r.ObjectType != "Activity" {
		return a, false
	}
	a = Activity{ObjectType: "Activity", ID: r.ID}
	if r.Definition != nil && len(r.Definition.Name) > 0 {
		a.Definition = &Definition{Name: r.Definition.Name}
	}
	return a, true
}

func actorOf(raw json.RawMessage) (rawActor, bool) {
	var r rawActor
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil {
		return r, false
	}
	if r.ObjectType == "" {
		r.ObjectType = "Agent"
	}
	return r, true
}

func (r rawActor) actor() Actor {
	return Actor{ObjectType: r.ObjectType, Name: r.Name, Mbox: r.Mbox, MboxSHA1Sum: r.MboxSHA1Sum, OpenID: r.OpenID, Account: r.Account}
}

// Results turns a page of statements into report entries, in the page's order. Statements
// without a result object, or whose object is not an Activity, give no entry.
func Results(page []*statements.Statement) []Result {
	out := []Result{}
	for _, st := range page {
		r, ok := parse(st)
		if !ok || r.Result == nil {
			continue
		}
		act, ok := ActivityOf(r.Object)
		if !ok {
			continue
		}
		actor, ok := actorOf(r.Actor)
		if !ok {
			continue
		}
		date := st.Timestamp
		if date.IsZero() {
			date = st.Stored
		}
		e := Result{Date: date.UTC().Format(time.RFC3339Nano), Actor: actor.actor(), Activity: act,
			Result: Outcome{Success: r.Result.Success, Completion: r.Result.Completion, Duration: r.Result.Duration}}
		if r.Result.Score != nil && r.Result.Score.Raw != nil {
			e.Result.Score = &Score{Raw: r.Result.Score.Raw}
		}
		out = append(out, e)
	}
	return out
}

// Sentinel errors of Service; the HTTP layer maps them to 404, 400 and 403.
var (
	// ErrNotFound: nothing matches (results and actors; the activities report answers an
	// empty list).
	ErrNotFound = errors.New("report: nothing matches")
	// ErrInvalid: a missing filter or a continuation token this LRS did not issue.
	ErrInvalid = errors.New("report: invalid request")
	// ErrForbidden: a continuation token issued to another principal.
	ErrForbidden = errors.New("report: continuation of another principal")
)

// Page sizes: a results page is as long as a statements page; activities and actors are
// short rows.
const (
	ResultsPageSize = 100
	ListPageSize    = 1000
)

// maxEmptyRounds bounds the store pages one request reads past pages that came back empty
// (a loose index scan skips terms whose statements are all voided, and may return an empty
// page with a continuation).
const maxEmptyRounds = 20

// Request is one report call.
type Request struct {
	Tenant string
	// Agent (an IFI) filters results and activities.
	Agent string
	// Activity filters results and actors.
	Activity string
	// Viewer is the IFI of a principal that may only read the statements it appears in; ""
	// for a principal that may read every statement.
	Viewer string
	// More is the continuation token of a previous answer; it carries the filters, so Agent
	// and Activity are ignored with it.
	More string
}

// Service answers the three reports from a backend's aggregation port.
type Service struct {
	Store statements.Reports
	// ResultsLimit and ListLimit override ResultsPageSize and ListPageSize when positive.
	ResultsLimit, ListLimit int
}

func (s Service) resultsLimit() int {
	if s.ResultsLimit > 0 {
		return s.ResultsLimit
	}
	return ResultsPageSize
}

func (s Service) listLimit() int {
	if s.ListLimit > 0 {
		return s.ListLimit
	}
	return ListPageSize
}

// token is what a continuation carries: the filters and the store's cursor. The tenant is
// not in it: the store's cursor is bound to the tenant that issued it.
type token struct {
	Agent    string `json:"a,omitempty"`
	Activity string `json:"c,omitempty"`
	Viewer   string `json:"v,omitempty"`
	Cursor   string `json:"k"`
}

// query turns r into the store's query, decoding r.More when set.
func (r Request) query(limit int) (statements.ReportQuery, error) {
	q := statements.ReportQuery{Tenant: r.Tenant, Agent: r.Agent, Activity: r.Activity, Viewer: r.Viewer, Limit: limit}
	if r.More == "" {
		return q, nil
	}
	var t token
	b, err := base64.RawURLEncoding.DecodeString(r.More)
	if err != nil || json.Unmarshal(b, &t) != nil || t.Cursor == "" {
		return q, fmt.Errorf("%w: more: not a continuation token of this LRS", ErrInvalid)
	}
	// A principal restricted to its own statements continues only its own walks; one that
	// reads everything may continue any (it sees a subset of what it may read).
	if r.Viewer != "" && t.Viewer != r.Viewer {
		return q, ErrForbidden
	}
	q.Agent, q.Activity, q.Viewer, q.Cursor = t.Agent, t.Activity, t.Viewer, t.Cursor
	return q, nil
}

func more(q statements.ReportQuery, next string) string {
	if next == "" {
		return ""
	}
	b, _ := json.Marshal(token{Agent: q.Agent, Activity: q.Activity, Viewer: q.Viewer, Cursor: next})
	return base64.RawURLEncoding.EncodeToString(b)
}

func storeErr(err error) error {
	if errors.Is(err, statements.ErrInvalid) {
		// The filters are checked before; what the store refuses is the continuation.
		return fmt.Errorf("%w: more: %w", ErrInvalid, err)
	}
	return err
}

// walk reads pages of q until one has items or the walk ends (see maxEmptyRounds).
func walk[T any](ctx context.Context, q statements.ReportQuery, read func(context.Context, statements.ReportQuery) (*statements.ReportPage[T], error)) (*statements.ReportPage[T], error) {
	for round := 0; ; round++ {
		page, err := read(ctx, q)
		if err != nil {
			return nil, storeErr(err)
		}
		if len(page.Items) > 0 || page.Next == "" || round == maxEmptyRounds {
			return page, nil
		}
		q.Cursor = page.Next
	}
}

// ResultsPage is the answer of Results.
type ResultsPage struct {
	Results []Result
	// More is the continuation token, "" on the last page.
	More string
}

// Results is Report/results: the entries of the statements with a result object of an
// agent, an activity or both, newest stored first. ErrNotFound when a first page is empty.
func (s Service) Results(ctx context.Context, r Request) (*ResultsPage, error) {
	if r.More == "" && r.Agent == "" && r.Activity == "" {
		return nil, fmt.Errorf("%w: agent or activity: at least one of the parameters is required", ErrInvalid)
	}
	q, err := r.query(s.resultsLimit())
	if err != nil {
		return nil, err
	}
	page, err := walk(ctx, q, s.Store.ReportResults)
	if err != nil {
		return nil, err
	}
	out := &ResultsPage{Results: Results(page.Items), More: more(q, page.Next)}
	if len(out.Results) == 0 && out.More == "" && r.More == "" {
		return nil, fmt.Errorf("%w: no statement with a result matches the agent and activity", ErrNotFound)
	}
	return out, nil
}

// ActivitiesPage is the answer of Activities.
type ActivitiesPage struct {
	Results []Activity
	More    string
}

// Activities is Report/activities: the distinct object activities of an agent's statements,
// or of all, by id, each with its canonical definition's name when the LRS has one.
func (s Service) Activities(ctx context.Context, r Request) (*ActivitiesPage, error) {
	r.Activity = ""
	q, err := r.query(s.listLimit())
	if err != nil {
		return nil, err
	}
	page, err := walk(ctx, q, s.Store.ReportActivities)
	if err != nil {
		return nil, err
	}
	out := &ActivitiesPage{Results: make([]Activity, 0, len(page.Items)), More: more(q, page.Next)}
	for _, a := range page.Items {
		act, ok := ActivityOf(a.Canonical)
		if !ok {
			act = Activity{ObjectType: "Activity", ID: a.ID}
		}
		out.Results = append(out.Results, act)
	}
	return out, nil
}

// ActorsPage is the answer of Actors.
type ActorsPage struct {
	Results []Actor
	More    string
}

// Actors is Report/actors: the distinct actors of an activity's statements, or of all, by
// IFI, each as its latest statement gives it. ErrNotFound when a first page is empty.
func (s Service) Actors(ctx context.Context, r Request) (*ActorsPage, error) {
	r.Agent = ""
	q, err := r.query(s.listLimit())
	if err != nil {
		return nil, err
	}
	page, err := walk(ctx, q, s.Store.ReportActors)
	if err != nil {
		return nil, err
	}
	out := &ActorsPage{Results: make([]Actor, 0, len(page.Items)), More: more(q, page.Next)}
	for _, a := range page.Items {
		ra, ok := actorOf(a.Agent)
		if !ok {
			return nil, fmt.Errorf("report: actor %s: unreadable agent", a.IFI)
		}
		out.Results = append(out.Results, ra.actor())
	}
	if len(out.Results) == 0 && out.More == "" && r.More == "" {
		return nil, fmt.Errorf("%w: no statement about an activity matches", ErrNotFound)
	}
	return out, nil
}
