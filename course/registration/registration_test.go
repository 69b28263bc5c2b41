package registration_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

type plainSealer struct{}

func (plainSealer) Seal(v string) string          { return "sealed:" + v }
func (plainSealer) Open(v string) (string, error) { return v[len("sealed:"):], nil }

var course0 = registration.CourseRef{Title: "Intro", Standard: "SCORM_12", Updated: time.Unix(1_700_000_000, 0).UTC()}

// TestStore runs the registration store's rules on every record store backend.
func TestStore(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			connect := be.Fresh(t)
			records := connect()
			ctx := context.Background()
			withCourse(t, records)
			s := registration.NewStore(records, plainSealer{})
			q := registration.CreateRequest{ID: "r1", CourseID: "c1", Learner: registration.Learner{ID: "ann"}, ForCredit: true,
				PostBack: &registration.PostBack{URL: "https://lms.example/pb", Password: "pw"}}
			if err := q.Check(); err != nil {
				t.Fatal(err)
			}
			reg, err := s.Create(ctx, "t1", q, 0, course0)
			if err != nil {
				t.Fatal(err)
			}
			if reg.PostBack.Password == "pw" || reg.Current().Progress.Completion != registration.Unknown || reg.PostBack.AuthType != "FORM" {
				t.Errorf("created: %+v", reg)
			}
			if pw, _ := s.PostBackPassword(reg); pw != "pw" {
				t.Errorf("post-back password %q", pw)
			}
			if _, err := s.Create(ctx, "t1", q, 0, course0); !errors.Is(err, registration.ErrExists) {
				t.Errorf("second create: %v", err)
			}
			if _, err := s.Get(ctx, "t2", "r1"); !errors.Is(err, registration.ErrNotFound) {
				t.Errorf("another tenant reads the registration: %v", err)
			}

			// Concurrent rollups of one instance never lose each other: 20 writers each add one
			// second to the tracked time.
			var wg sync.WaitGroup
			for i := 0; i < 20; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := s.UpdateProgress(ctx, "t1", "r1", -1, func(p *registration.Progress) error {
						p.TotalSecondsTracked++
						return nil
					}); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			// A fresh connection, as another process would read it.
			got, err := registration.NewStore(connect(), plainSealer{}).Get(ctx, "t1", "r1")
			if err != nil {
				t.Fatal(err)
			}
			if got.Current().Progress.TotalSecondsTracked != 20 {
				t.Errorf("tracked %v seconds after 20 concurrent updates", got.Current().Progress.TotalSecondsTracked)
			}
			if _, err := s.UpdateProgress(ctx, "t1", "r1", 3, func(*registration.Progress) error { return nil }); !errors.Is(err, registration.ErrNotFound) {
				t.Errorf("progress of a missing instance: %v", err)
			}

			// Reset: one fresh instance 0 on the new version, with a new key and no progress.
			reset, err := s.Reset(ctx, "t1", "r1", 1, course0)
			if err != nil {
				t.Fatal(err)
			}
			in := reset.Current()
			if len(reset.Instances) != 1 || in.Number != 0 || in.CourseVersion != 1 || in.Key == got.Current().Key || in.Progress.TotalSecondsTracked != 0 {
				t.Errorf("after reset: %+v", reset.Instances)
			}

			// List by course and learner; deleting the course deletes the registration.
			p, err := s.List(ctx, "t1", registration.ListQuery{CourseID: "c1", LearnerID: "ann"})
			if err != nil || len(p.Registrations) != 1 {
				t.Fatalf("list: %v %+v", err, p)
			}
			if err := records.Delete(ctx, "t1", "course", "c1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, "t1", "r1"); !errors.Is(err, registration.ErrNotFound) {
				t.Errorf("registration outlived its course: %v", err)
			}
			if err := s.Delete(ctx, "t1", "r1"); !errors.Is(err, registration.ErrNotFound) {
				t.Errorf("delete of a missing registration: %v", err)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		q    registration.CreateRequest
		ok   bool
	}{
		{"minimal", registration.CreateRequest{ID: "r", CourseID: "c", Learner: registration.Learner{ID: "l"}}, true},
		{"no id", registration.CreateRequest{CourseID: "c", Learner: registration.Learner{ID: "l"}}, false},
		{"space", registration.CreateRequest{ID: " r", CourseID: "c", Learner: registration.Learner{ID: "l"}}, false},
		{"control", registration.CreateRequest{ID: "r\x01", CourseID: "c", Learner: registration.Learner{ID: "l"}}, false},
		{"long", registration.CreateRequest{ID: string(make([]byte, 256)), CourseID: "c", Learner: registration.Learner{ID: "l"}}, false},
		{"no learner", registration.CreateRequest{ID: "r", CourseID: "c"}, false},
		{"uuid", registration.CreateRequest{ID: "r", CourseID: "c", Learner: registration.Learner{ID: "l"}, XAPIRegistrationID: "6F1C6B0A-5F52-4C5B-9E0B-1B2C3D4E5F60"}, true},
		{"not uuid", registration.CreateRequest{ID: "r", CourseID: "c", Learner: registration.Learner{ID: "l"}, XAPIRegistrationID: "6F1C6B0A"}, false},
		{"httpbasic", registration.CreateRequest{ID: "r", CourseID: "c", Learner: registration.Learner{ID: "l"}, PostBack: &registration.PostBack{AuthType: "httpbasic"}}, true},
		{"bad auth", registration.CreateRequest{ID: "r", CourseID: "c", Learner: registration.Learner{ID: "l"}, PostBack: &registration.PostBack{AuthType: "oauth"}}, false},
	} {
		err := c.q.Check()
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, registration.ErrInvalid)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestShouldRestart(t *testing.T) {
	at := func(version int, completion, success string) registration.Instance {
		return registration.Instance{CourseVersion: version, Progress: registration.Progress{Completion: completion, Success: success}}
	}
	const U, C, I, P, F = registration.Unknown, registration.Completed, registration.Incomplete, registration.Passed, registration.Failed
	for _, c := range []struct {
		mode   string
		in     registration.Instance
		latest int
		want   bool
	}{
		{registration.RestartWhenCompleteAndNewerVersion, at(0, C, U), 1, true},
		{registration.RestartWhenCompleteAndNewerVersion, at(0, C, U), 0, false},
		{registration.RestartWhenCompleteAndNewerVersion, at(0, I, U), 1, false},
		{registration.RestartNever, at(0, C, P), 5, false},
		{registration.RestartWhenNewerVersion, at(0, I, U), 1, true},
		{registration.RestartWhenNewerVersion, at(1, C, P), 1, false},
		{registration.RestartWhenComplete, at(0, C, F), 0, true},
		{registration.RestartWhenComplete, at(0, I, U), 0, false},
		{registration.RestartWhenSatisfied, at(0, I, P), 0, true},
		{registration.RestartWhenSatisfied, at(0, C, U), 0, true},
		{registration.RestartWhenSatisfied, at(0, C, F), 0, false},
		{registration.RestartWhenSatisfiedAndNewerVersion, at(0, C, P), 0, false},
		{registration.RestartWhenSatisfiedAndNewerVersion, at(0, C, P), 2, true},
		{registration.RestartWhenIncompleteAndNewerVersion, at(0, I, U), 1, true},
		{registration.RestartWhenIncompleteAndNewerVersion, at(0, C, U), 1, false},
		{registration.RestartWhenFailed, at(0, C, F), 0, true},
		{registration.RestartWhenFailed, at(0, C, P), 0, false},
		{registration.RestartWhenFailedAndNewerVersion, at(0, C, F), 0, false},
		{registration.RestartWhenFailedAndNewerVersion, at(0, C, F), 1, true},
		{"SOMETIMES", at(0, C, P), 3, false},
	} {
		if got := registration.ShouldRestart(c.mode, c.in, c.latest); got != c.want {
			t.Errorf("%s at version %d %s/%s, latest %d: %v", c.mode, c.in.CourseVersion, c.in.Progress.Completion, c.in.Progress.Success, c.latest, got)
		}
	}
}

func TestRestart(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			records := be.Open(t)
			ctx := context.Background()
			withCourse(t, records)
			s := registration.NewStore(records, plainSealer{})
			q := registration.CreateRequest{ID: "r1", CourseID: "c1", Learner: registration.Learner{ID: "ann"}}
			_ = q.Check()
			if _, err := s.Create(ctx, "t1", q, 0, course0); err != nil {
				t.Fatal(err)
			}
			if _, err := s.UpdateProgress(ctx, "t1", "r1", 0, func(p *registration.Progress) error { p.Completion = registration.Completed; return nil }); err != nil {
				t.Fatal(err)
			}
			// Two launches race to restart instance 0: one new instance, not two.
			var wg sync.WaitGroup
			for i := 0; i < 2; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := s.Restart(ctx, "t1", "r1", 0, 1, course0); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			reg, err := s.Get(ctx, "t1", "r1")
			if err != nil {
				t.Fatal(err)
			}
			if len(reg.Instances) != 2 || reg.Current().Number != 1 || reg.Current().CourseVersion != 1 ||
				reg.Current().Progress.Completion != registration.Unknown || reg.Instances[0].Progress.Completion != registration.Completed {
				t.Errorf("instances after restart: %+v", reg.Instances)
			}
			if _, err := s.Restart(ctx, "t1", "nope", 0, 1, course0); !errors.Is(err, registration.ErrNotFound) {
				t.Errorf("restart of a missing registration: %v", err)
			}
		})
	}
}

func TestByXAPIRegistration(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			records := be.Open(t)
			ctx := context.Background()
			withCourse(t, records)
			s := registration.NewStore(records, plainSealer{})
			const xid = "6f1c6b0a-5f52-4c5b-9e0b-1b2c3d4e5f60"
			q := registration.CreateRequest{ID: "r1", CourseID: "c1", Learner: registration.Learner{ID: "ann"}, XAPIRegistrationID: xid}
			_ = q.Check()
			if _, err := s.Create(ctx, "t1", q, 0, course0); err != nil {
				t.Fatal(err)
			}
			if reg, err := s.ByXAPIRegistration(ctx, "t1", strings.ToUpper(xid)); err != nil || reg.ID != "r1" {
				t.Fatalf("by xAPI registration: %v %+v", err, reg)
			}
			if _, err := s.ByXAPIRegistration(ctx, "t2", xid); !errors.Is(err, registration.ErrNotFound) {
				t.Errorf("another tenant's xAPI registration: %v", err)
			}
			// Another registration may not take the same xAPI registration id.
			q2 := registration.CreateRequest{ID: "r2", CourseID: "c1", Learner: registration.Learner{ID: "bob"}, XAPIRegistrationID: xid}
			_ = q2.Check()
			if _, err := s.Create(ctx, "t1", q2, 0, course0); !errors.Is(err, registration.ErrInvalid) {
				t.Errorf("duplicate xAPI registration id: %v", err)
			}
			if _, err := s.Get(ctx, "t1", "r2"); !errors.Is(err, registration.ErrNotFound) {
				t.Errorf("refused registration stored: %v", err)
			}
			// Deleting the registration frees its xAPI registration id.
			if err := s.Delete(ctx, "t1", "r1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ByXAPIRegistration(ctx, "t1", xid); !errors.Is(err, registration.ErrNotFound) {
				t.Errorf("deleted registration still found: %v", err)
			}
			if _, err := s.Create(ctx, "t1", q2, 0, course0); err != nil {
				t.Errorf("xAPI registration id after its registration was deleted: %v", err)
			}
		})
	}
}

// withCourse creates the course record c1 of tenant t1, which the tests' registrations hang
// from.
func withCourse(t *testing.T, records record.Store) {
	t.Helper()
	if err := records.Create(context.Background(), &record.Record{Tenant: "t1", Kind: "course", ID: "c1", Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
}
