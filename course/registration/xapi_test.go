package registration_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

// TestXAPIRegistrationPerInstance: instance 0 takes the registration's xAPI registration id, a
// restart and a reset give the new instance one of its own, and the lookup of each id names
// its instance (by key) until a reset removes it.
func TestXAPIRegistrationPerInstance(t *testing.T) {
	xapiCourse := registration.CourseRef{Title: "Golf", Standard: "XAPI"}
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			records := be.Open(t)
			ctx := context.Background()
			withCourse(t, records)
			s := registration.NewStore(records, plainSealer{})
			const x0 = "6f1c6b0a-5f52-4c5b-9e0b-1b2c3d4e5f60"
			q := registration.CreateRequest{ID: "r1", CourseID: "c1", Learner: registration.Learner{ID: "ann"}, XAPIRegistrationID: x0}
			_ = q.Check()
			reg, err := s.Create(ctx, "t1", q, 0, xapiCourse)
			if err != nil {
				t.Fatal(err)
			}
			lookup := func(xid string) (*registration.XAPIInstance, error) {
				return s.FoldXAPI(ctx, "t1", xid, func(*registration.XAPIInstance) (bool, error) { return false, nil })
			}
			if x, err := lookup(x0); err != nil || x.Instance != 0 || x.Key != reg.Current().Key || x.Standard != "XAPI" || x.Fold != nil {
				t.Fatalf("lookup of instance 0: %v %+v", err, x)
			}
			reg, err = s.Restart(ctx, "t1", "r1", 0, 1, xapiCourse)
			if err != nil {
				t.Fatal(err)
			}
			x1 := reg.XAPIRegistrationOf(reg.Current())
			if x1 == x0 || reg.XAPIRegistrationOf(reg.Instances[0]) != x0 || reg.XAPIRegistrationID != x0 {
				t.Fatalf("xAPI ids after a restart: %+v", reg.Instances)
			}
			if x, err := lookup(x1); err != nil || x.Instance != 1 || x.Key != reg.Current().Key || x.CourseVersion != 1 {
				t.Fatalf("lookup of instance 1: %v %+v", err, x)
			}
			if r, err := s.ByXAPIRegistration(ctx, "t1", x1); err != nil || r.ID != "r1" {
				t.Errorf("registration of instance 1's id: %v", err)
			}
			// A restart that lost the race adds nothing.
			if again, err := s.Restart(ctx, "t1", "r1", 0, 1, xapiCourse); err != nil || len(again.Instances) != 2 {
				t.Errorf("stale restart: %v %+v", err, again)
			}
			// A fold is kept with the lookup.
			if _, err := s.FoldXAPI(ctx, "t1", x1, func(x *registration.XAPIInstance) (bool, error) {
				x.Fold = &registration.StatementFold{Activities: map[string]*registration.ActivityFold{"a": {Completed: true}}}
				return true, nil
			}); err != nil {
				t.Fatal(err)
			}
			if f, err := s.XAPIFold(ctx, "t1", reg, reg.Current()); err != nil || f == nil || !f.Activities["a"].Completed {
				t.Errorf("stored fold: %v %+v", err, f)
			}
			oldKey := reg.Current().Key
			reg, err = s.Reset(ctx, "t1", "r1", 1, xapiCourse)
			if err != nil {
				t.Fatal(err)
			}
			x2 := reg.XAPIRegistrationOf(reg.Current())
			if len(reg.Instances) != 1 || x2 == x0 || x2 == x1 {
				t.Fatalf("after a reset: %+v", reg.Instances)
			}
			for _, xid := range []string{x0, x1} {
				if _, err := lookup(xid); !errors.Is(err, registration.ErrNotFound) {
					t.Errorf("lookup of %s after a reset: %v", xid, err)
				}
			}
			if x, err := lookup(x2); err != nil || x.Instance != 0 || x.Key != reg.Current().Key {
				t.Errorf("lookup of the reset's instance 0: %v %+v", err, x)
			}
			if _, err := s.UpdateInstanceProgress(ctx, "t1", "r1", oldKey, func(registration.Instance, *registration.Progress) error { return nil }); !errors.Is(err, registration.ErrNotFound) {
				t.Errorf("progress of a removed instance: %v", err)
			}
			// The given id stays reserved.
			q2 := registration.CreateRequest{ID: "r2", CourseID: "c1", Learner: registration.Learner{ID: "bob"}, XAPIRegistrationID: x0}
			_ = q2.Check()
			if _, err := s.Create(ctx, "t1", q2, 0, xapiCourse); !errors.Is(err, registration.ErrInvalid) {
				t.Errorf("another registration with a reset registration's id: %v", err)
			}
		})
	}
}

// TestXAPILookupOfBefore: a registration stored before instances had their own ids (no id on
// the instance, a lookup naming only the registration) resolves to its current instance.
func TestXAPILookupOfBefore(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			records := be.Open(t)
			ctx := context.Background()
			withCourse(t, records)
			s := registration.NewStore(records, plainSealer{})
			const x0 = "7f1c6b0a-5f52-4c5b-9e0b-1b2c3d4e5f60"
			q := registration.CreateRequest{ID: "r1", CourseID: "c1", Learner: registration.Learner{ID: "ann"}, XAPIRegistrationID: x0}
			_ = q.Check()
			if _, err := s.Create(ctx, "t1", q, 0, registration.CourseRef{Standard: "CMI5"}); err != nil {
				t.Fatal(err)
			}
			// Rewrite both records as they were stored before.
			if _, err := record.Modify(ctx, records, "t1", "registration_xapi", x0, func(r *record.Record) error {
				r.Data = json.RawMessage(`{"registrationId":"r1"}`)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := record.Modify(ctx, records, "t1", registration.KindRegistration, "r1", func(r *record.Record) error {
				var m map[string]any
				if err := json.Unmarshal(r.Data, &m); err != nil {
					return err
				}
				delete(m["instances"].([]any)[0].(map[string]any), "xapiRegistrationId")
				var err error
				r.Data, err = json.Marshal(m)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			reg, err := s.Get(ctx, "t1", "r1")
			if err != nil || reg.Current().XAPIRegistrationID != "" || reg.XAPIRegistrationOf(reg.Current()) != x0 {
				t.Fatalf("registration of before: %v %+v", err, reg)
			}
			for i := 0; i < 2; i++ { // migrated by the first, read as migrated by the second
				x, err := s.FoldXAPI(ctx, "t1", x0, func(*registration.XAPIInstance) (bool, error) { return false, nil })
				if err != nil || x.Instance != 0 || x.Key != reg.Current().Key || x.Standard != "CMI5" || x.CourseID != "c1" {
					t.Fatalf("lookup of before (%d): %v %+v", i, err, x)
				}
			}
		})
	}
}
