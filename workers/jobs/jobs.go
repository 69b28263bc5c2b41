// Package jobs keeps the status of long-running operations (the JobRead of the content
// service) in the record store and holds the task handlers that are not tied to one domain,
// such as deleting a tenant.
package jobs

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lectern-lms/lectern/storage/record"
)

// Job statuses, as the content service reports them.
const (
	StatusPending   = "PENDING"
	StatusRunning   = "RUNNING"
	StatusCompleted = "COMPLETED"
	StatusFailed    = "FAILED"
)

// ErrNotFound means no job has the id.
var ErrNotFound = errors.New("job not found")

// JobError is the error record of a failed job.
type JobError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Job is one operation's status (JobRead).
type Job struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Status   string         `json:"status"`
	Tenant   string         `json:"tenant_id"`
	Results  map[string]any `json:"results"`
	Error    *JobError      `json:"error"`
	Warnings []string       `json:"warnings"`
	Created  time.Time      `json:"create_dt"`
	Updated  time.Time      `json:"update_dt"`
}

type jobData struct {
	Type     string         `json:"type"`
	Status   string         `json:"status"`
	Tenant   string         `json:"tenant"`
	Results  map[string]any `json:"results,omitempty"`
	Error    *JobError      `json:"error,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
}

// Store persists jobs as records of the system tenant, keyed by the job's tenant.
type Store struct {
	records record.Store
	// concluding is called before an update that concludes a job is written (OnConcluding).
	concluding func(ctx context.Context, j *Job) error
}

// OnConcluding makes f run for every update that concludes a job (its status becomes
// COMPLETED or FAILED from another status), whichever task type or request did it: this is
// the one place jobs conclude. f runs before the conclusion is written, so what it queues
// survives a process killed right after the write; an error from f fails the update (the
// caller retries as for any store error). f may run more than once for one conclusion (a
// compare-and-set retry, a retried handler) and must be idempotent; whatever acts on it reads
// the job back to see the conclusion written. Set it before the store is used.
func (s *Store) OnConcluding(f func(ctx context.Context, j *Job) error) { s.concluding = f }

// Concluded reports whether status is final.
func Concluded(status string) bool { return status == StatusCompleted || status == StatusFailed }

// NewStore returns a job store over records.
func NewStore(records record.Store) *Store { return &Store{records: records} }

const kind = "job"

// NewID returns a random UUID (version 4).
func NewID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func toJob(r *record.Record) (*Job, error) {
	var d jobData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, fmt.Errorf("decode job %s: %w", r.ID, err)
	}
	j := &Job{ID: r.ID, Type: d.Type, Status: d.Status, Tenant: d.Tenant, Results: d.Results, Error: d.Error,
		Warnings: d.Warnings, Created: r.Created, Updated: r.Updated}
	if j.Warnings == nil {
		j.Warnings = []string{}
	}
	if j.Results == nil {
		j.Results = map[string]any{}
	}
	return j, nil
}

// Create records a PENDING job. With ownedByTenant the job is removed with its tenant;
// a tenant-deletion job is not, so its outcome stays readable.
func (s *Store) Create(ctx context.Context, id, typ, tenantID string, ownedByTenant bool) (*Job, error) {
	data, _ := json.Marshal(jobData{Type: typ, Status: StatusPending, Tenant: tenantID})
	r := &record.Record{Kind: kind, ID: id, Key: tenantID, Data: data}
	if ownedByTenant {
		r.Parent = &record.Ref{Kind: "tenant", ID: tenantID}
	}
	if err := s.records.Create(ctx, r); err != nil {
		return nil, err
	}
	return toJob(r)
}

// Get returns a job or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*Job, error) {
	r, err := s.records.Get(ctx, "", kind, id)
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return nil, fmt.Errorf("job '%s' %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return toJob(r)
}

// Update changes a job with compare-and-set; an update that concludes the job calls the
// OnConcluding hook first.
func (s *Store) Update(ctx context.Context, id string, fn func(*Job)) error {
	return s.update(ctx, id, fn, true)
}

// UpdateUnannounced is Update without the OnConcluding hook, for a job that never ran because
// the queue refused it: the hook needs that queue, and the job must still say it failed.
func (s *Store) UpdateUnannounced(ctx context.Context, id string, fn func(*Job)) error {
	return s.update(ctx, id, fn, false)
}

func (s *Store) update(ctx context.Context, id string, fn func(*Job), announce bool) error {
	_, err := record.Modify(ctx, s.records, "", kind, id, func(r *record.Record) error {
		j, err := toJob(r)
		if err != nil {
			return err
		}
		was := j.Status
		fn(j)
		if announce && s.concluding != nil && !Concluded(was) && Concluded(j.Status) {
			if err := s.concluding(ctx, j); err != nil {
				return fmt.Errorf("job %s: %w", id, err)
			}
		}
		r.Data, _ = json.Marshal(jobData{Type: j.Type, Status: j.Status, Tenant: j.Tenant, Results: j.Results,
			Error: j.Error, Warnings: j.Warnings})
		return nil
	})
	return err
}

// ErrBadCursor means a List cursor is not one this store issued.
var ErrBadCursor = errors.New("malformed job list cursor")

// Filter selects a tenant's jobs for List.
type Filter struct {
	Tenant string
	// Status and Type keep jobs with exactly this status or type when set.
	Status, Type string
	// Cursor continues a previous List with the same filter; Limit caps the page (1..record.MaxPage).
	Cursor string
	Limit  int
}

// List returns one page of a tenant's jobs in (update time, id) order, the record port's
// keyset order, and the cursor of the next page ("" on the last). Status and type are
// filtered here, not by the port: a page asks the port for no more records than it still
// needs, so every record read is either returned or filtered out and the port's cursor
// resumes exactly after the page.
func (s *Store) List(ctx context.Context, f Filter) ([]*Job, string, error) {
	if f.Limit <= 0 || f.Limit > record.MaxPage {
		f.Limit = record.MaxPage
	}
	out := []*Job{}
	cursor := f.Cursor
	for len(out) < f.Limit {
		p, err := s.records.List(ctx, record.Query{Kind: kind, Key: f.Tenant, Cursor: cursor, Limit: f.Limit - len(out)})
		if errors.Is(err, record.ErrInvalid) {
			return nil, "", fmt.Errorf("%w: %w", ErrBadCursor, err)
		}
		if err != nil {
			return nil, "", err
		}
		for _, r := range p.Records {
			j, err := toJob(r)
			if err != nil {
				return nil, "", err
			}
			if (f.Status == "" || j.Status == f.Status) && (f.Type == "" || j.Type == f.Type) {
				out = append(out, j)
			}
		}
		if cursor = p.Next; cursor == "" {
			break
		}
	}
	return out, cursor, nil
}
