package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/storage/blob/local"
	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/elastic/elastictest"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/sqlite"
	stelastic "github.com/lectern-lms/lectern/storage/statements/elastic"
	"github.com/lectern-lms/lectern/tenant"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/queue"
)

// fixture is a deleter over SQLite records and a local blob directory, plus further purgers.
type fixture struct {
	records record.Store
	tenants *tenant.Registry
	jobs    *jobs.Store
	deleter *jobs.TenantDeleter
}

func newFixture(t *testing.T, others ...jobs.Purger) *fixture {
	t.Helper()
	rs, err := sqlite.Open(filepath.Join(t.TempDir(), "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close() })
	blobs, err := local.New(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{records: rs, tenants: tenant.NewRegistry(rs), jobs: jobs.NewStore(rs)}
	f.deleter = &jobs.TenantDeleter{Tenants: f.tenants, Blobs: blobs, Jobs: f.jobs, Others: others}
	return f
}

// startDeletion marks the tenant deleting and creates its job, as DELETE does.
func (f *fixture) startDeletion(t *testing.T, id string) (*queue.Task, string) {
	t.Helper()
	if _, err := f.tenants.MarkDeleting(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	j, err := f.jobs.Create(t.Context(), jobs.NewID(), jobs.JobTypeTenantDelete, id, false)
	if err != nil {
		t.Fatal(err)
	}
	task, _ := jobs.NewTenantDeleteTask(jobs.TenantDeletePayload{TenantID: id, JobID: j.ID})
	return task, j.ID
}

func (f *fixture) job(t *testing.T, id string) *jobs.Job {
	t.Helper()
	j, err := f.jobs.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestTenantDeleteFailsForGood: a tenant whose blob prefix the blob store refuses (an id
// created before the tenant id rules, such as ".lectern-evil") cannot be deleted; the job
// must end FAILED with the reason at once instead of staying RUNNING through every retry.
func TestTenantDeleteFailsForGood(t *testing.T) {
	f := newFixture(t)
	const id = ".lectern-evil"
	data, _ := json.Marshal(map[string]any{"enabled": true})
	if err := f.records.Create(t.Context(), &record.Record{Kind: "tenant", ID: id, Data: data}); err != nil {
		t.Fatal(err)
	}
	task, jobID := f.startDeletion(t, id)
	err := f.deleter.ProcessTask(queue.WithAttempt(t.Context(), 0, 10), task)
	if !errors.Is(err, queue.SkipRetry) {
		t.Fatalf("ProcessTask = %v, want an error wrapping SkipRetry (no retry can fix it)", err)
	}
	j := f.job(t, jobID)
	if j.Status != jobs.StatusFailed || j.Error == nil || !strings.Contains(j.Error.Message, id) {
		t.Fatalf("job = %s %+v, want FAILED with a reason naming the tenant", j.Status, j.Error)
	}
}

// TestTenantDeleteOutage: while Elasticsearch is down, the deletion is retried (not failed),
// and it completes once Elasticsearch is back; an outage on the last attempt ends the job
// FAILED with a reason naming the backend.
func TestTenantDeleteOutage(t *testing.T) {
	c := elastictest.NewClient(t, "tenantdelete")
	es, err := url.Parse(testenv.External(t, "LECTERN_TEST_ELASTICSEARCH_URL"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, es.Host)
	pc, err := elastic.New(elastic.Config{URLs: []string{"http://" + proxy.Addr()}, IndexPrefix: c.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := stelastic.New(t.Context(), pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f := newFixture(t, st)
	for _, id := range []string{"acme", "globex"} {
		if _, err := f.tenants.Create(t.Context(), id, true); err != nil {
			t.Fatal(err)
		}
	}

	proxy.Cut()
	task, jobID := f.startDeletion(t, "acme")
	err = f.deleter.ProcessTask(queue.WithAttempt(t.Context(), 0, 10), task)
	if !errors.Is(err, storage.ErrUnavailable) || errors.Is(err, queue.SkipRetry) {
		t.Fatalf("ProcessTask during the outage = %v, want an outage to retry", err)
	}
	if j := f.job(t, jobID); j.Status != jobs.StatusRunning {
		t.Fatalf("job during the outage = %s, want RUNNING", j.Status)
	}
	proxy.Restore()
	if err := f.deleter.ProcessTask(queue.WithAttempt(context.Background(), 0, 10), task); err != nil {
		t.Fatalf("ProcessTask after the outage: %v", err)
	}
	if j := f.job(t, jobID); j.Status != jobs.StatusCompleted {
		t.Fatalf("job after the outage = %s %+v, want COMPLETED", j.Status, j.Error)
	}

	proxy.Cut()
	task, jobID = f.startDeletion(t, "globex")
	err = f.deleter.ProcessTask(queue.WithAttempt(t.Context(), 10, 10), task)
	if err == nil {
		t.Fatal("ProcessTask on the last attempt during an outage succeeded")
	}
	j := f.job(t, jobID)
	if j.Status != jobs.StatusFailed || j.Error == nil || !strings.Contains(j.Error.Message, "elasticsearch") {
		t.Fatalf("job = %s %+v, want FAILED naming elasticsearch", j.Status, j.Error)
	}
}
