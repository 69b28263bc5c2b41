package jobs

import (
	"context"
	"encoding/json"
	"fmt"

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
// while data of the old tenant is still around.
func (d *TenantDeleter) ProcessTask(ctx context.Context, t *queue.Task) error {
	var p TenantDeletePayload
	if err := json.Unmarshal(t.Payload, &p); err != nil || p.TenantID == "" || p.JobID == "" {
		return fmt.Errorf("bad %s payload %q: %w", TypeTenantDelete, t.Payload, queue.SkipRetry)
	}
	_ = d.Jobs.Update(ctx, p.JobID, func(j *Job) { j.Status = StatusRunning })
	if _, err := d.Blobs.DeletePrefix(ctx, p.TenantID+"/"); err != nil {
		return fmt.Errorf("delete blobs of tenant %q: %w", p.TenantID, err)
	}
	for _, o := range d.Others {
		if err := o.PurgeTenant(ctx, p.TenantID); err != nil {
			return err
		}
	}
	if err := d.Tenants.Purge(ctx, p.TenantID); err != nil {
		return err
	}
	return d.Jobs.Update(ctx, p.JobID, func(j *Job) {
		j.Status = StatusCompleted
		j.Results = map[string]any{"tenant_id": p.TenantID}
	})
}
