package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/tenant"
	"github.com/lectern-lms/lectern/workers/queue"
)

// TypeTenantDelete is the task that removes every trace of a tenant.
const TypeTenantDelete = "tenant:delete"

// JobTypeTenantDelete is the JobRead type of a tenant deletion.
const JobTypeTenantDelete = "TENANT_DELETE"

// TenantDeletePayload names the tenant and the job that reports progress.
type TenantDeletePayload struct {
	TenantID string `json:"tenant_id"`
	JobID    string `json:"job_id"`
}

// NewTenantDeleteTask builds the task; its id makes a second DELETE of the same tenant a no-op.
func NewTenantDeleteTask(p TenantDeletePayload) (*queue.Task, []queue.Option) {
	b, _ := json.Marshal(p)
	return queue.NewTask(TypeTenantDelete, b), []queue.Option{queue.TaskID("tenant-delete-" + p.JobID), queue.MaxRetry(10)}
}

// Purger removes one store's data of a tenant (statements, search index entries, ...).
// Purge must be idempotent: a retried job calls it again.
type Purger interface {
	PurgeTenant(ctx context.Context, tenantID string) error
}

// TenantDeleter is the handler of TypeTenantDelete.
type TenantDeleter struct {
	Tenants *tenant.Registry
	Blobs   blob.Store
	Jobs    *Store
	// Others are the further stores holding tenant data, purged before the records.
	Others []Purger
}

// ProcessTask implements queue.Handler. Every step is idempotent, so redelivery after a crash
// simply repeats the remaining work; the registry entry goes last, so the id cannot be reused
// while data of the old tenant is still around. The job always ends: COMPLETED, or FAILED
// with the reason when a step fails for good (anything but a backend outage, which is retried
// without limit) or on the task's last attempt.
func (d *TenantDeleter) ProcessTask(ctx context.Context, t *queue.Task) error {
	var p TenantDeletePayload
	if err := json.Unmarshal(t.Payload, &p); err != nil || p.TenantID == "" || p.JobID == "" {
		return fmt.Errorf("bad %s payload %q: %w", TypeTenantDelete, t.Payload, queue.SkipRetry)
	}
	_ = d.Jobs.Update(ctx, p.JobID, func(j *Job) { j.Status = StatusRunning })
	err := d.purge(ctx, p.TenantID)
	switch {
	case err == nil:
		return d.Jobs.Update(ctx, p.JobID, func(j *Job) {
			j.Status = StatusCompleted
			j.Results = map[string]any{"tenant_id": p.TenantID}
		})
	case errors.Is(err, storage.ErrUnavailable) && !queue.LastAttempt(ctx), ctx.Err() != nil:
		return err // the backend comes back (or the worker stops): the next attempt resumes
	}
	if uerr := d.Jobs.Update(context.WithoutCancel(ctx), p.JobID, func(j *Job) {
		j.Status, j.Error = StatusFailed, &JobError{Code: CodeDeleteFailed, Message: err.Error()}
	}); uerr != nil {
		return uerr // the job could not be ended: retry so it is
	}
	return fmt.Errorf("%w (%w)", err, queue.SkipRetry)
}

// CodeDeleteFailed is the error code of a tenant deletion that ended FAILED.
const CodeDeleteFailed = "DELETE_FAILED"

func (d *TenantDeleter) purge(ctx context.Context, tenantID string) error {
	if _, err := d.Blobs.DeletePrefix(ctx, tenantID+"/"); err != nil {
		return fmt.Errorf("delete blobs of tenant %q: %w", tenantID, err)
	}
	for _, o := range d.Others {
		if err := o.PurgeTenant(ctx, tenantID); err != nil {
			return fmt.Errorf("delete data of tenant %q: %w", tenantID, err)
		}
	}
	return d.Tenants.Purge(ctx, tenantID)
}
