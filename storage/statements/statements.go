// Package statements is the port of the xAPI record store's persistence: statements with the
// fields their queries filter on, the three document resources (state, activity profile,
// agent profile) with ETag concurrency, and canonical activity definitions. Backends: sqlite
// (embedded) and elasticsearch (distributed); statementstest holds the contract suite.
//
// The store does not understand xAPI beyond these fields: lrs/xapi extracts them from a
// validated statement, and the store keeps the statement's JSON verbatim.
package statements

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Sentinel errors; backends wrap them with %w.
var (
	// ErrNotFound means no statement or document matches.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a statement id is already stored with different content.
	ErrConflict = errors.New("statement id already used by a different statement")
	// ErrPrecondition means an If-Match / If-None-Match condition failed (HTTP 412).
	ErrPrecondition = errors.New("precondition failed")
	// ErrInvalid means a malformed query or cursor.
	ErrInvalid = errors.New("invalid statement query")
)

// Statement is one stored statement with its index fields.
type Statement struct {
	Tenant string
	// ID is the statement id, lowercase canonical UUID.
	ID string
	// Raw is the full statement as stored (id, timestamp, stored, authority and version set).
	Raw json.RawMessage
	// Hash identifies the statement's content for the "same id, same statement" rule
	// (lrs/xapi.ContentHash); a second Put of an id with an equal Hash is a no-op.
	Hash string
	// Stored orders statements. Put assigns it (see Store.Put) and writes it back.
	Stored    time.Time
	Timestamp time.Time
	// Voided is true once a voiding statement targeting this one is stored, in whichever order
	// the two arrive. Put computes it; the caller's value is ignored.
	Voided bool
	// Voids holds, for a voiding statement, the id of the statement it voids.
	Voids string
	// Target is the id (lowercase) of the statement the object's StatementRef points at, ""
	// when the object is not a StatementRef; a voiding statement has one too (also when the
	// HTTP layer cleared Voids because it targets a voiding statement). Query uses it for the
	// StatementRef filter rule (see Query). A statement with Voids set and no Target targets
	// Voids.
	Target string
	VerbID string
	// Agents are the IFIs (lrs/xapi.IFI form, e.g. "mbox:mailto:a@b.c") matching the agent
	// parameter: the actor (and a group's members) or an agent/group object.
	Agents []string
	// RelatedAgents are every IFI in the statement and its substatement (authority,
	// instructor, team, context agents…), for related_agents=true.
	RelatedAgents []string
	// Activity is the object's activity id, for activity=…
	Activity string
	// RelatedActivities are every activity id of the statement and its substatement
	// (context activities included), for related_activities=true.
	RelatedActivities []string
	Registration      string
	// AttachmentHashes are the sha2 values of the statement's attachments.
	AttachmentHashes []string
	// Result is true when the statement has a result object (the results report).
	Result bool
	// ReportActors are the agents the actors report lists for this statement when its object
	// is an Activity (none otherwise): the actor, or an anonymous group's identified members.
	ReportActors []ReportActor
}

// TargetID is st's Target, or Voids when Target is empty.
func (st *Statement) TargetID() string {
	if st.Target != "" {
		return st.Target
	}
	return st.Voids
}

// Query is GET /statements' filter, already validated by the HTTP layer.
//
// StatementRef rule (xAPI 1.0.3 Part Three §2.1.3, "Filter Conditions for StatementRefs"; the
// same in 2.0): a statement whose Target is a statement meeting the non-time filters (Agent,
// Verb, Activity, Registration with their Related flags) meets them too, recursively (a
// targets b targets c, c matches: a and b match). The targeted statement counts whether
// voided or not (a voiding statement is returned for a filter its voided target meets);
// Since, Until, Limit, order and the voided exclusion apply to the returned statements only.
// With no non-time filter every statement matches and the rule changes nothing.
type Query struct {
	Tenant            string
	Agent             string // IFI
	Verb              string
	Activity          string
	Registration      string
	RelatedActivities bool
	RelatedAgents     bool
	Since, Until      time.Time // zero: unbounded; Since exclusive, Until inclusive (xAPI)
	Ascending         bool
	// IncludeVoided returns voided statements too (GET /statements never does; statement
	// forwarding copies a store's every statement, the voided ones with their voiders).
	IncludeVoided bool
	Limit         int // 0: backend default (100); capped at MaxLimit
	// Cursor continues a previous Query (opaque; only valid with the same filters).
	Cursor string
}

// MaxLimit caps one page of statements.
const MaxLimit = 1000

// Page is one page of a statement query, ordered by Stored (descending unless Ascending).
// Voided statements are returned only with IncludeVoided.
type Page struct {
	Statements []*Statement
	Next       string
	// ConsistentThrough is the watermark the query ran at: every matching statement stored
	// at or before it was searchable when the query read (see Store.ConsistentThrough).
	// Read-your-writes makes it at least the stored instant of every statement whose Put
	// returned before the Query started.
	ConsistentThrough time.Time
}

// Attachment is raw attachment content, addressed by its sha2.
type Attachment struct {
	SHA2        string
	ContentType string
	Data        []byte
}

// Chunks is a batch handed to Store.PutChunks in chunks: it calls put with each chunk in
// order and returns put's first error, or its own (a chunk it could not make), as it is.
type Chunks func(put func(chunk []*Statement) error) error

// Store is the statement half of the port.
type Store interface {
	// Put stores a batch atomically: all or nothing. Ids already stored with the same Hash
	// are skipped; a different Hash fails the whole batch with ErrConflict. Voiding
	// statements (Voids set) mark their target voided in the same transaction; a target that
	// arrives after its voiding statement is stored voided; a voiding statement is never
	// voided itself (the HTTP layer rejects voiding a voiding statement).
	//
	// Stored is strictly increasing in the order statements are written: Put uses the
	// statement's Stored (its own clock when zero), raised to just after the last statement it
	// stored, so stored order is total. When that changes the value, Raw's top-level "stored"
	// is rewritten to match. Stored, Raw and Voided of the written statements are written back.
	Put(ctx context.Context, tenant string, batch []*Statement, attachments []*Attachment) error
	// PutChunks stores the statements chunks hands it as one batch, with Put's rules: all or
	// nothing (a conflict in any chunk, or an error from chunks, stores none of them), an id
	// repeated in a later chunk is the same as within one Put's batch. The store calls chunks
	// once, during its write, and keeps no reference to a chunk once put returns, so a large
	// batch costs the caller one chunk at a time rather than every statement at once (issue 22).
	// Stored, Raw and Voided are written back into the chunks' statements (a backend may do
	// so before put returns); they only hold once PutChunks has returned nil.
	PutChunks(ctx context.Context, tenant string, chunks Chunks, attachments []*Attachment) error
	// Get returns one statement by id, voided or not (the caller applies the xAPI rule).
	Get(ctx context.Context, tenant, id string) (*Statement, error)
	// Query returns a page of statements matching q (non-voided ones unless IncludeVoided),
	// StatementRef rule included (see Query). It sees every write acknowledged before it
	// started (read-your-writes).
	Query(ctx context.Context, q Query) (*Page, error)
	// Attachments returns stored attachment contents by sha2 (missing ones are left out).
	Attachments(ctx context.Context, tenant string, sha2 []string) ([]*Attachment, error)
	// PurgeTenant removes everything of a tenant (statements, attachments, documents, activities).
	PurgeTenant(ctx context.Context, tenant string) error
	// ConsistentThrough returns a watermark for X-Experience-API-Consistent-Through without
	// waiting for anything: an instant T such that a Query starting after the call returns
	// every matching statement stored at or before T. T is never after the call returned; it
	// lags behind now while writes are in flight or, on a backend whose searches lag behind
	// its writes, not yet searchable. A Query reports its own (Page.ConsistentThrough), which
	// counts every write acknowledged before the Query.
	ConsistentThrough(ctx context.Context) (time.Time, error)
	Close() error
}

// DocKind is one of the three document resources.
type DocKind string

// The document resources.
const (
	State           DocKind = "state"
	ActivityProfile DocKind = "activity_profile"
	AgentProfile    DocKind = "agent_profile"
)

// DocKey addresses a document. State: ActivityID + Agent (+ Registration) + ID;
// activity profile: ActivityID + ID; agent profile: Agent + ID. Registration is matched
// exactly everywhere, ListDocs and DeleteDocs included: "" means "stored without a
// registration", not "any registration".
type DocKey struct {
	Tenant       string
	Kind         DocKind
	ActivityID   string
	Agent        string // IFI
	Registration string
	ID           string
}

// Document is a stored document.
type Document struct {
	Key         DocKey
	ContentType string
	Body        []byte
	// ETag is the quoted SHA-1 of Body, computed by the store.
	ETag    string
	Updated time.Time
}

// Precondition is a request's If-Match / If-None-Match.
type Precondition struct {
	IfMatch     string // an ETag or "*"
	IfNoneMatch string // "*" (or an ETag)
}

// Documents is the document half of the port.
type Documents interface {
	// GetDoc returns one document or ErrNotFound.
	GetDoc(ctx context.Context, key DocKey) (*Document, error)
	// PutDoc stores doc when cond holds (else ErrPrecondition) and returns the stored document.
	// With merge, the existing JSON object and doc.Body (a JSON object) are merged top-level
	// (POST semantics); the caller checks that both are JSON objects.
	PutDoc(ctx context.Context, doc *Document, cond Precondition, merge bool) (*Document, error)
	// DeleteDoc removes one document when cond holds; ErrNotFound when absent.
	DeleteDoc(ctx context.Context, key DocKey, cond Precondition) error
	// ListDocs returns the ids of documents sharing key except ID, updated after since (zero: all).
	ListDocs(ctx context.Context, key DocKey, since time.Time) ([]string, error)
	// DeleteDocs removes every document sharing key except ID (state DELETE without stateId).
	DeleteDocs(ctx context.Context, key DocKey) error
}

// Activities keeps the canonical activity definitions gathered from statements.
type Activities interface {
	// PutActivity stores an activity object's JSON (the LRS merges definitions before).
	PutActivity(ctx context.Context, tenant, id string, activity json.RawMessage) error
	// GetActivity returns the stored activity object or ErrNotFound.
	GetActivity(ctx context.Context, tenant, id string) (json.RawMessage, error)
	// GetActivities returns the stored activity objects of ids, by id; an id with none is
	// left out. A statement batch's activities are read in one request, not one each.
	GetActivities(ctx context.Context, tenant string, ids []string) (map[string]json.RawMessage, error)
	// PutActivities stores (replaces) the activity objects, by id, in one write.
	PutActivities(ctx context.Context, tenant string, acts map[string]json.RawMessage) error
}

// Backend is everything the LRS needs from one backend.
type Backend interface {
	Store
	Documents
	Activities
	Reports
}
