// Package record is the port for Lectern's transactional records: tenants, credentials,
// settings, courses, registrations, jobs and everything else that needs create-if-absent,
// compare-and-set updates and cascading deletes. Backends live in subpackages (sqlite,
// postgres); recordtest holds the contract suite every backend must pass.
//
// A record is addressed by (tenant, kind, id). Records of the system itself (the tenant
// registry, queue tasks) use the empty tenant. A record may name a parent in the same tenant;
// deleting a record deletes its descendants in the same transaction.
package record

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Sentinel errors every backend returns (possibly wrapped); callers test them with errors.Is.
var (
	// ErrNotFound means no record has the given address.
	ErrNotFound = errors.New("record not found")
	// ErrConflict means Create found a record with the same address already there.
	ErrConflict = errors.New("record already exists")
	// ErrStale means a conditional Update saw a revision other than the one expected.
	ErrStale = errors.New("record was changed concurrently")
	// ErrInvalid means the caller passed an unusable record or query (empty kind, bad cursor).
	ErrInvalid = errors.New("invalid record request")
)

// Ref names a record inside one tenant.
type Ref struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// Record is one stored row. Rev, Created and Updated are set by the store.
type Record struct {
	Tenant string
	Kind   string
	ID     string
	// Parent, when set, makes this record part of the parent's cascade on delete.
	Parent *Ref
	// Key is one optional secondary value that List can filter on exactly (a learner id for a
	// registration, a status for a job); it is not unique.
	Key  string
	Data json.RawMessage
	// Rev starts at 1 and grows by one with every update; Update compares it.
	Rev     int64
	Created time.Time
	Updated time.Time
}

// Query selects records of one kind in one tenant for List.
type Query struct {
	Tenant string
	Kind   string
	// Parent limits the result to direct children of this record.
	Parent *Ref
	// Key limits the result to records with this Key.
	Key string
	// Since keeps records updated at or after this instant (inclusive).
	Since time.Time
	// Cursor continues a previous List; it is opaque and only valid with the same query.
	Cursor string
	// Limit caps the page size; zero means 100.
	Limit int
}

// Page is one page of List results in (Updated, ID) order. Next is empty on the last page.
type Page struct {
	Records []*Record
	Next    string
}

// Store is the record port. Every method is atomic; a call that returned nil is durable.
type Store interface {
	// Create inserts r and fills in Rev, Created and Updated; ErrConflict if the address is taken.
	Create(ctx context.Context, r *Record) error
	// Get returns one record or ErrNotFound.
	Get(ctx context.Context, tenant, kind, id string) (*Record, error)
	// Update replaces Data, Key and Parent of the record at r's address when its revision is
	// still r.Rev, and then bumps r.Rev and r.Updated; ErrStale otherwise, ErrNotFound if gone.
	Update(ctx context.Context, r *Record) error
	// List returns one page of records matching q, ordered by Updated then ID.
	List(ctx context.Context, q Query) (*Page, error)
	// Delete removes a record and all its descendants in one transaction; with kind and id
	// empty it removes every record of the tenant. Deleting nothing is ErrNotFound.
	Delete(ctx context.Context, tenant, kind, id string) error
	// Close releases the backend's resources.
	Close() error
}
