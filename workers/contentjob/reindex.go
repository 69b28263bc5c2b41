package contentjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/tenant"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/queue"
)

// TypeReindex is the task that rebuilds the content index from the record and blob stores.
const TypeReindex = "content:reindex"

// JobTypeReindex is the JobRead type of a rebuild of the content index.
const JobTypeReindex = "CONTENT_REINDEX"

// CodeReindex is the error code of a rebuild that ended FAILED.
const CodeReindex = "REINDEX_FAILED"

// ReindexPayload names the job that reports the rebuild's progress.
type ReindexPayload struct {
	JobID string `json:"job_id"`
}

// NewReindexTask builds the rebuild task; the job id makes enqueueing twice harmless.
func NewReindexTask(p ReindexPayload) (*queue.Task, []queue.Option) {
	b, _ := json.Marshal(p)
	return queue.NewTask(TypeReindex, b), []queue.Option{queue.TaskID("content-reindex-" + p.JobID), queue.MaxRetry(10)}
}

// Progress is how far a rebuild is: versions indexed (or found gone) of those counted at
// its start.
type Progress struct {
	Done, Total int
	// Skipped lists versions that could not be indexed for good (their extracted text is
	// missing or unreadable), as "tenant/content_id/version: reason"; the job shows them as
	// warnings.
	Skipped []string
}

// Reindexer rebuilds the content index in place: every content version of every live tenant
// is indexed again from its record and its sections blob, exactly as its import's index task
// did (vectors come from the record-store cache when it holds them, else from the model).
// Searches keep answering meanwhile, with what is indexed so far; indexing one version is
// idempotent (it replaces the version's documents), so a rebuild that is interrupted simply
// runs again from the start.
type Reindexer struct {
	Indexer *Indexer
	Tenants *tenant.Registry
	Jobs    *jobs.Store
	// Prepare, when set, runs before the rebuild: the distributed mode points the content
	// alias at this version's index when an upgrade left it on an older one, so the rebuild
	// writes where this version searches.
	Prepare func(ctx context.Context) error
}

// Run rebuilds the index, calling progress (when not nil) after each version.
func (r *Reindexer) Run(ctx context.Context, progress func(Progress)) (Progress, error) {
	var p Progress
	if r.Prepare != nil {
		if err := r.Prepare(ctx); err != nil {
			return p, err
		}
	}
	tenants, err := r.Tenants.List(ctx, 0, 1<<30)
	if err != nil {
		return p, err
	}
	// Count first, so progress has a total; versions added meanwhile are indexed by their
	// own import anyway.
	for _, t := range tenants {
		err := r.eachVersion(ctx, t.ID, func(*content.Version) error { p.Total++; return nil })
		if err != nil {
			return p, err
		}
	}
	if progress != nil {
		progress(p)
	}
	for _, t := range tenants {
		err := r.eachVersion(ctx, t.ID, func(v *content.Version) error {
			err := r.Indexer.index(ctx, IndexPayload{Tenant: t.ID, ContentID: v.ContentID, Version: v.Version, Rebuild: true})
			var f *failure
			switch {
			case errors.As(err, &f):
				p.Skipped = append(p.Skipped, fmt.Sprintf("%s/%s/%d: %s", t.ID, v.ContentID, v.Version, f.msg))
			case errors.Is(err, content.ErrNotFound): // deleted meanwhile
			case err != nil:
				return fmt.Errorf("reindex %s/%s/%d: %w", t.ID, v.ContentID, v.Version, err)
			}
			p.Done++
			if progress != nil {
				progress(p)
			}
			return nil
		})
		if err != nil {
			return p, err
		}
	}
	return p, nil
}

// eachVersion calls f with every content version of a tenant.
func (r *Reindexer) eachVersion(ctx context.Context, tenantID string, f func(*content.Version) error) error {
	q := content.ListQuery{Limit: 500}
	for {
		page, err := r.Indexer.Content.List(ctx, tenantID, q)
		if err != nil {
			return err
		}
		for _, v := range page.Versions {
			if err := f(v); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		q.Cursor = page.Next
	}
}

// report puts the rebuild's progress into its JobRead: results versions_done and
// versions_total, and a warning per version skipped.
func (p Progress) report(j *jobs.Job) {
	j.Results = map[string]any{"versions_done": p.Done, "versions_total": p.Total}
	if len(p.Skipped) > 0 {
		j.Warnings = append([]string(nil), p.Skipped...)
	}
}

// ProcessTask implements queue.Handler: it runs the rebuild and reports its progress in the
// job (at most twice a second). A backend outage is retried without limit; anything else
// ends the job FAILED.
func (r *Reindexer) ProcessTask(ctx context.Context, t *queue.Task) error {
	var pl ReindexPayload
	if err := json.Unmarshal(t.Payload, &pl); err != nil || pl.JobID == "" {
		return fmt.Errorf("bad %s payload %q: %w", TypeReindex, t.Payload, queue.SkipRetry)
	}
	_ = r.Jobs.Update(ctx, pl.JobID, func(j *jobs.Job) { j.Status = jobs.StatusRunning })
	var last time.Time
	p, err := r.Run(ctx, func(p Progress) {
		if time.Since(last) < 500*time.Millisecond {
			return
		}
		last = time.Now()
		_ = r.Jobs.Update(ctx, pl.JobID, p.report)
	})
	switch {
	case err == nil:
		return r.Jobs.Update(ctx, pl.JobID, func(j *jobs.Job) {
			j.Status, j.Error = jobs.StatusCompleted, nil
			p.report(j)
		})
	case errors.Is(err, storage.ErrUnavailable) && !queue.LastAttempt(ctx), ctx.Err() != nil:
		return err
	}
	if uerr := r.Jobs.Update(context.WithoutCancel(ctx), pl.JobID, func(j *jobs.Job) {
		j.Status, j.Error = jobs.StatusFailed, &jobs.JobError{Code: CodeReindex, Message: err.Error()}
		p.report(j)
	}); uerr != nil {
		return uerr
	}
	return fmt.Errorf("%w (%w)", err, queue.SkipRetry)
}
