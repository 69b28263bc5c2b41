// Package report builds the report extension of the xAPI record store (spec/002 "Report
// result entry", GET {lrs}/TCAPI/Report/results, /activities and /actors) from stored
// statements. It is pure: the HTTP layer pages statements out of a statements.Store (Query
// filters by agent and activity already) and hands each page here; nothing in this package
// talks to a backend.
//
// Only statements whose object is an Activity count: a report is about activities, and the
// object of the others (an agent, a statement reference, a sub-statement) has no
// definition.name. The verb is given no meaning (spec/002: completion, success, score and time
// come from the result object).
package report

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/lectern-lms/lectern/lrs/xapi"
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
	ObjectType  string            `json:"objectType"`
	Name        string            `json:"name"`
	Mbox        string            `json:"mbox"`
	MboxSHA1Sum string            `json:"mbox_sha1sum"`
	OpenID      string            `json:"openid"`
	Account     *Account          `json:"account"`
	Member      []json.RawMessage `json:"member"`
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

// ifi is the identity actors are deduplicated by ("" for an anonymous group).
func (a Actor) ifi() string {
	m := map[string]any{}
	switch {
	case a.Mbox != "":
		m["mbox"] = a.Mbox
	case a.MboxSHA1Sum != "":
		m["mbox_sha1sum"] = a.MboxSHA1Sum
	case a.OpenID != "":
		m["openid"] = a.OpenID
	case a.Account != nil:
		m["account"] = map[string]any{"homePage": a.Account.HomePage, "name": a.Account.Name}
	}
	id, _ := xapi.IFI(m)
	return id
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

// Activities collects the distinct activities that are the object of the statements added
// (context activities, the children of a course, are not included). The first definition
// seen of an activity is kept; the HTTP layer replaces it with the canonical one.
type Activities struct {
	byID map[string]Activity
}

// Add adds a page of statements.
func (a *Activities) Add(page []*statements.Statement) {
	if a.byID == nil {
		a.byID = map[string]Activity{}
	}
	for _, st := range page {
		r, ok := parse(st)
		if !ok {
			continue
		}
		act, ok := ActivityOf(r.Object)
		if !ok {
			continue
		}
		if _, seen := a.byID[act.ID]; !seen {
			a.byID[act.ID] = act
		}
	}
}

// List returns the activities sorted by id (an empty slice, never nil).
func (a *Activities) List() []Activity {
	out := make([]Activity, 0, len(a.byID))
	for _, act := range a.byID {
		out = append(out, act)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Actors collects the distinct actors of the statements added whose object is an Activity.
// An identified group is one actor; an anonymous group stands for its identified members.
type Actors struct {
	byIFI map[string]Actor
}

// Add adds a page of statements.
func (a *Actors) Add(page []*statements.Statement) {
	if a.byIFI == nil {
		a.byIFI = map[string]Actor{}
	}
	for _, st := range page {
		r, ok := parse(st)
		if !ok {
			continue
		}
		if _, ok := ActivityOf(r.Object); !ok {
			continue
		}
		ra, ok := actorOf(r.Actor)
		if !ok {
			continue
		}
		a.add(ra.actor())
		if ra.actor().ifi() == "" {
			for _, m := range ra.Member {
				if rm, ok := actorOf(m); ok {
					a.add(rm.actor())
				}
			}
		}
	}
}

func (a *Actors) add(act Actor) {
	id := act.ifi()
	if id == "" {
		return
	}
	if old, seen := a.byIFI[id]; seen && old.Name != "" {
		return
	}
	a.byIFI[id] = act
}

// List returns the actors sorted by their inverse functional identifier (an empty slice,
// never nil).
func (a *Actors) List() []Actor {
	ids := make([]string, 0, len(a.byIFI))
	for id := range a.byIFI {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]Actor, len(ids))
	for i, id := range ids {
		out[i] = a.byIFI[id]
	}
	return out
}
