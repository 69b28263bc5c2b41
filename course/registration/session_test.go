package registration_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

// TestSessions runs the player-session rules on every record store backend, with a clock the
// test moves: measured time, the gap, idle pages, supersession and expiry.
func TestSessions(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			records := be.Fresh(t)()
			ctx := context.Background()
			withCourse(t, records)
			now := time.Unix(1_700_000_000, 0).UTC()
			s := registration.NewStore(records, plainSealer{}, registration.WithClock(func() time.Time { return now }))
			q := registration.CreateRequest{ID: "r1", CourseID: "c1", Learner: registration.Learner{ID: "ann"}}
			if err := q.Check(); err != nil {
				t.Fatal(err)
			}
			reg, err := s.Create(ctx, "t1", q, 0, course0)
			if err != nil {
				t.Fatal(err)
			}
			in := reg.Current()
			o := registration.SessionOptions{Lifetime: 2 * time.Hour, Gap: 30 * time.Second, DetectConcurrent: true}
			a, n, err := s.StartSession(ctx, "t1", reg, in, o)
			if err != nil || n != 0 {
				t.Fatalf("start: %v, %d superseded", err, n)
			}
			touch := func(id, activity string, sig registration.Signal, after time.Duration) error {
				t.Helper()
				now = now.Add(after)
				_, err := s.Touch(ctx, "t1", id, activity, sig)
				return err
			}
			for _, step := range []struct {
				activity string
				sig      registration.Signal
				after    time.Duration
			}{
				{"sco1", registration.SignalActive, 20 * time.Second}, // 20 s in sco1
				{"sco2", registration.SignalActive, 10 * time.Minute}, // a silence: the gap, 30 s, in sco2
				{"", registration.SignalHidden, 5 * time.Second},      // 5 s more where the last sign was (sco2)
				{"sco2", registration.SignalActive, time.Hour},        // hidden: nothing
				{"sco1", registration.SignalExit, 4 * time.Second},    // 4 s in sco1
				{"sco1", registration.SignalActive, 30 * time.Minute}, // back after leaving (bfcache): nothing
			} {
				if err := touch(a.ID, step.activity, step.sig, step.after); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.TrackedTime(ctx, "t1", reg.ID, in.Key)
			if err != nil || got.Seconds != 59 || got.Activities["sco1"] != 24 || got.Activities["sco2"] != 35 {
				t.Errorf("tracked: %+v, %v; want 59 s: sco1 24, sco2 35", got, err)
			}
			// The session is older than its two hours now.
			if err := touch(a.ID, "sco1", registration.SignalActive, 30*time.Minute); !errors.Is(err, registration.ErrSessionExpired) {
				t.Errorf("touch after the lifetime: %v", err)
			}

			// A second launch supersedes the open one, which is refused from then on and
			// counts nothing more; ForceExit is noted for its page.
			b, _, err := s.StartSession(ctx, "t1", reg, in, o)
			if err != nil {
				t.Fatal(err)
			}
			o.ForceExit = true
			c, n, err := s.StartSession(ctx, "t1", reg, in, o)
			if err != nil || n != 1 {
				t.Fatalf("third launch: %v, %d superseded (the expired and the superseded ones are not counted)", err, n)
			}
			now = now.Add(10 * time.Second)
			if sess, err := s.Touch(ctx, "t1", b.ID, "sco1", registration.SignalActive); !errors.Is(err, registration.ErrSessionSuperseded) || !sess.ForceExit {
				t.Errorf("superseded session: %v, %+v", err, sess)
			}
			if err := touch(c.ID, "sco1", registration.SignalActive, 0); err != nil {
				t.Errorf("latest session: %v", err)
			}
			if got, _ := s.TrackedTime(ctx, "t1", reg.ID, in.Key); got.Seconds != 69 {
				t.Errorf("after the third launch: %v s, want 59 + 10", got.Seconds)
			}
			// Without detection, an open session stays accepted.
			o.DetectConcurrent = false
			if _, n, err := s.StartSession(ctx, "t1", reg, in, o); err != nil || n != 0 {
				t.Fatalf("launch without detection: %v, %d", err, n)
			}
			if err := touch(c.ID, "sco1", registration.SignalActive, time.Second); err != nil {
				t.Errorf("session after a launch without detection: %v", err)
			}
			// The time goes into the progress only when it grows.
			if wrote, err := s.SetTrackedSeconds(ctx, "t1", reg.ID, in.Key, 70); err != nil || !wrote {
				t.Fatalf("raising the time to 70 s: wrote %v, %v", wrote, err)
			}
			if wrote, err := s.SetTrackedSeconds(ctx, "t1", reg.ID, in.Key, 12); err != nil || wrote {
				t.Fatalf("a lower time, 12 s: wrote %v, %v", wrote, err)
			}
			if r, _ := s.Get(ctx, "t1", reg.ID); r.Current().Progress.TotalSecondsTracked != 70 {
				t.Errorf("progress time %v, want 70", r.Current().Progress.TotalSecondsTracked)
			}
			if _, err := s.SetTrackedSeconds(ctx, "t1", reg.ID, "no-such-key", 1); !errors.Is(err, registration.ErrNotFound) {
				t.Errorf("time of a reset instance: %v", err)
			}
			if _, err := s.Touch(ctx, "t1", "no-such-session", "sco1", registration.SignalActive); !errors.Is(err, registration.ErrNotFound) {
				t.Errorf("unknown session: %v", err)
			}
		})
	}
}

// TestConcurrentTouches: signs of life of one session arriving at once (the terminating
// commit, the exit beacon, a heartbeat) count the silence before them once, whichever wins,
// on every record store backend, while the tracked time is read meanwhile.
func TestConcurrentTouches(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			records := be.Fresh(t)()
			ctx := context.Background()
			withCourse(t, records)
			var offset atomic.Int64
			start := time.Unix(1_700_000_000, 0).UTC()
			s := registration.NewStore(records, plainSealer{}, registration.WithClock(func() time.Time { return start.Add(time.Duration(offset.Load())) }))
			q := registration.CreateRequest{ID: "r1", CourseID: "c1", Learner: registration.Learner{ID: "ann"}}
			if err := q.Check(); err != nil {
				t.Fatal(err)
			}
			reg, err := s.Create(ctx, "t1", q, 0, course0)
			if err != nil {
				t.Fatal(err)
			}
			in := reg.Current()
			sess, _, err := s.StartSession(ctx, "t1", reg, in, registration.SessionOptions{Lifetime: time.Hour, Gap: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for round := 1; round <= 5; round++ {
				offset.Add(int64(25 * time.Second))
				var wg sync.WaitGroup
				errs := make(chan error, 16)
				for i := range 12 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						sig := []registration.Signal{registration.SignalActive, registration.SignalActive, registration.SignalExit}[i%3]
						if i%4 == 3 {
							_, err := s.TrackedTime(ctx, "t1", reg.ID, in.Key)
							errs <- err
							return
						}
						_, err := s.Touch(ctx, "t1", sess.ID, "sco1", sig)
						errs <- err
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Fatal(err)
					}
				}
				// Leave the page active again for the next round's silence to count.
				if _, err := s.Touch(ctx, "t1", sess.ID, "sco1", registration.SignalActive); err != nil {
					t.Fatal(err)
				}
				got, err := s.TrackedTime(ctx, "t1", reg.ID, in.Key)
				if err != nil || got.Seconds != float64(25*round) {
					t.Fatalf("round %d: tracked %+v, %v; want %d s", round, got, err, 25*round)
				}
			}
		})
	}
}
