package jobs_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/lectern-lms/lectern/storage/record/sqlite"
	"github.com/lectern-lms/lectern/workers/jobs"
)

// TestConcludingHookRunsFirst: the OnConcluding hook sees the job before its conclusion is
// written (so what it queues outlives a process killed right after the write), a failing hook
// leaves the job unconcluded for its handler to retry, and UpdateUnannounced skips the hook.
func TestConcludingHookRunsFirst(t *testing.T) {
	rs, err := sqlite.Open(filepath.Join(t.TempDir(), "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close() })
	ctx := context.Background()
	s := jobs.NewStore(rs)
	refuse := errors.New("queue down")
	var calls int
	var failing bool
	s.OnConcluding(func(ctx context.Context, j *jobs.Job) error {
		calls++
		stored, err := s.Get(ctx, j.ID)
		if err != nil || jobs.Concluded(stored.Status) || j.Status != jobs.StatusCompleted {
			t.Errorf("hook: stored %+v (%v), concluding %+v", stored, err, j)
		}
		if failing {
			return refuse
		}
		return nil
	})
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.Create(ctx, id, "TEST", "t1", false); err != nil {
			t.Fatal(err)
		}
	}
	complete := func(j *jobs.Job) { j.Status = jobs.StatusCompleted }

	if err := s.Update(ctx, "a", func(j *jobs.Job) { j.Status = jobs.StatusRunning }); err != nil || calls != 0 {
		t.Fatalf("RUNNING: %v, %d hook calls", err, calls)
	}
	if err := s.Update(ctx, "a", complete); err != nil || calls != 1 {
		t.Fatalf("COMPLETED: %v, %d hook calls", err, calls)
	}
	if err := s.Update(ctx, "a", complete); err != nil || calls != 1 {
		t.Fatalf("an update of a concluded job: %v, %d hook calls", err, calls)
	}

	failing = true
	if err := s.Update(ctx, "b", complete); !errors.Is(err, refuse) {
		t.Fatalf("update with a failing hook: %v", err)
	}
	if j, _ := s.Get(ctx, "b"); j.Status != jobs.StatusPending {
		t.Fatalf("a failed hook left the job %s", j.Status)
	}
	before := calls
	if err := s.UpdateUnannounced(ctx, "c", complete); err != nil || calls != before {
		t.Fatalf("unannounced: %v, %d hook calls", err, calls-before)
	}
	if j, _ := s.Get(ctx, "c"); j.Status != jobs.StatusCompleted {
		t.Fatalf("unannounced update left the job %s", j.Status)
	}
}
