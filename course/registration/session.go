package registration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-lms/lectern/storage/record"
)

// KindSession records one launch of a registration (a player session): id the session id,
// parent the registration (deleting it removes them; a reset leaves them under the old
// instance's key, never read again), key the instance key, so the time tracked of an instance
// is one range read. A session is its own
// record, not part of the registration, so the player's frequent signs of life never
// contend with the rollup's writes of the registration.
const KindSession = "registration_session"

// Errors a session's sign of life is refused with.
var (
	// ErrSessionSuperseded means the registration was launched again while this session was
	// open (ConcurrentLaunchDetectionEnabled): the session may no longer write anything.
	ErrSessionSuperseded = errors.New("this course was opened in another window, so this window no longer saves progress")
	// ErrSessionExpired means the session is older than its lifetime
	// (ApiTokenPostbackValidHours).
	ErrSessionExpired = errors.New("this player session has expired")
)

// Session is one launch of a registration instance as the server measured it.
type Session struct {
	ID          string    `json:"id"`
	Instance    int       `json:"instance"`
	InstanceKey string    `json:"instanceKey"`
	Started     time.Time `json:"started"`
	// Last is the latest sign of life: the launch, a commit or heartbeat, an HACP call, the
	// page being hidden or left.
	Last time.Time `json:"last"`
	// Expires ends the session: later signs of life are refused (ErrSessionExpired).
	Expires time.Time `json:"expires"`
	// GapSeconds is the longest silence between two signs of life that still counts as time
	// in the content; a longer one counts as this much.
	GapSeconds float64 `json:"gapSeconds"`
	// Idle is set while the page is hidden or after it was left: the silence that follows
	// is not time in the content.
	Idle bool `json:"idle,omitempty"`
	// Ended is when the learner left the page (unset again if the page comes back).
	Ended *time.Time `json:"ended,omitempty"`
	// Seconds is the measured time in the content; Activities splits it by the activity each
	// sign of life named.
	Seconds    float64            `json:"seconds"`
	Activities map[string]float64 `json:"activities,omitempty"`
	// Current is the activity the latest sign of life named; a sign naming none (a
	// statement) counts there.
	Current string `json:"current,omitempty"`
	// Superseded is when a later launch of the registration took over; ForceExit says that
	// launch asked for this session to be exited rather than warned.
	Superseded   *time.Time `json:"superseded,omitempty"`
	SupersededBy string     `json:"supersededBy,omitempty"`
	ForceExit    bool       `json:"forceExit,omitempty"`
}

// SessionOptions are the settings a launch resolved for its session.
type SessionOptions struct {
	// Lifetime bounds the session (ApiTokenPostbackValidHours).
	Lifetime time.Duration
	// Gap is the longest silence counted as time in the content (from the player's
	// heartbeat interval, PlayerCommCommitFrequency).
	Gap time.Duration
	// DetectConcurrent supersedes every earlier session of the registration
	// (ConcurrentLaunchDetectionEnabled); ForceExit marks them to be exited
	// (ForceExitConcurrentLaunches).
	DetectConcurrent bool
	ForceExit        bool
}

// Signal is the kind of a session's sign of life.
type Signal int

// The signals the player and content send.
const (
	// SignalActive is a commit, heartbeat, HACP call or statement: the learner is in the
	// content.
	SignalActive Signal = iota
	// SignalHidden is the page becoming hidden: time counts up to now, then stops.
	SignalHidden
	// SignalExit is the page being left: as hidden, and the session is ended.
	SignalExit
)

// StartSession records a launch of instance in at the store's clock. With
// o.DetectConcurrent, every earlier session of the registration (any instance) that is not
// superseded or expired yet is superseded by it, so a window left open elsewhere can no
// longer overwrite what this one saves; it returns how many were. Two launches racing may
// miss each other; each still supersedes every session that existed when it started.
func (s *Store) StartSession(ctx context.Context, tenant string, reg *Registration, in Instance, o SessionOptions) (*Session, int, error) {
	now := s.now().UTC()
	sess := &Session{ID: uuid.NewString(), Instance: in.Number, InstanceKey: in.Key, Started: now, Last: now,
		Expires: now.Add(o.Lifetime), GapSeconds: o.Gap.Seconds(), Activities: map[string]float64{}}
	superseded := 0
	if o.DetectConcurrent {
		rs, err := record.All(ctx, s.records, record.Query{Tenant: tenant, Kind: KindSession,
			Parent: &record.Ref{Kind: KindRegistration, ID: reg.ID}})
		if err != nil {
			return nil, 0, err
		}
		for _, r := range rs {
			old, err := decodeSession(r)
			if err != nil {
				return nil, 0, err
			}
			if old.Superseded != nil || !now.Before(old.Expires) {
				continue
			}
			_, err = s.modifySession(ctx, tenant, old.ID, func(o2 *Session) error {
				if o2.Superseded == nil {
					o2.Superseded, o2.SupersededBy, o2.ForceExit = &now, sess.ID, o.ForceExit
				}
				return nil
			})
			if err != nil && !errors.Is(err, ErrNotFound) {
				return nil, 0, err
			}
			superseded++
		}
	}
	data, err := json.Marshal(sess)
	if err != nil {
		return nil, 0, err
	}
	err = s.records.Create(ctx, &record.Record{Tenant: tenant, Kind: KindSession, ID: sess.ID, Key: in.Key,
		Parent: &record.Ref{Kind: KindRegistration, ID: reg.ID}, Data: data})
	if errors.Is(err, record.ErrNotFound) {
		return nil, 0, notFound(reg.ID)
	}
	return sess, superseded, err
}

func decodeSession(r *record.Record) (*Session, error) {
	var sess Session
	if err := json.Unmarshal(r.Data, &sess); err != nil {
		return nil, fmt.Errorf("decode session %s: %w", r.ID, err)
	}
	if sess.Activities == nil {
		sess.Activities = map[string]float64{}
	}
	return &sess, nil
}

// Session reads player session id; ErrNotFound when it (or its registration) is gone.
func (s *Store) Session(ctx context.Context, tenant, id string) (*Session, error) {
	r, err := s.records.Get(ctx, tenant, KindSession, id)
	if errors.Is(err, record.ErrNotFound) {
		return nil, fmt.Errorf("player session '%s' %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decodeSession(r)
}

func (s *Store) modifySession(ctx context.Context, tenant, id string, fn func(*Session) error) (*Session, error) {
	var out *Session
	_, err := record.Modify(ctx, s.records, tenant, KindSession, id, func(r *record.Record) error {
		sess, err := decodeSession(r)
		if err != nil {
			return err
		}
		out = sess
		if err := fn(sess); err != nil {
			return err
		}
		r.Data, err = json.Marshal(sess)
		return err
	})
	if errors.Is(err, record.ErrNotFound) {
		return nil, fmt.Errorf("player session '%s' %w", id, ErrNotFound)
	}
	return out, err
}

// Touch records a sign of life of session id, naming the activity the learner is in ("": the
// one the previous sign named), at the store's clock. The silence since the previous sign counts as time in that activity, up to
// the session's gap, unless the page was idle (hidden or left) meanwhile. A superseded
// session is refused with ErrSessionSuperseded (the returned session says whether it is to
// exit) and an expired one with ErrSessionExpired; neither is changed. ErrNotFound when the
// session (or its registration) is gone.
func (s *Store) Touch(ctx context.Context, tenant, id, activity string, sig Signal) (*Session, error) {
	now := s.now().UTC()
	return s.modifySession(ctx, tenant, id, func(sess *Session) error {
		if sess.Superseded != nil {
			return ErrSessionSuperseded
		}
		if !now.Before(sess.Expires) {
			return ErrSessionExpired
		}
		if activity == "" {
			activity = sess.Current
		}
		sess.Current = activity
		if !sess.Idle {
			d := math.Min(math.Max(now.Sub(sess.Last).Seconds(), 0), sess.GapSeconds)
			sess.Seconds += d
			sess.Activities[activity] += d
		}
		if now.After(sess.Last) {
			sess.Last = now
		}
		sess.Idle, sess.Ended = sig != SignalActive, nil
		if sig == SignalExit {
			sess.Ended = &now
		}
		return nil
	})
}

// TrackedTime is the time the server measured the learner in one instance's content.
type TrackedTime struct {
	// Seconds sums every session of the instance, to hundredths.
	Seconds float64
	// Activities splits it by activity id (to hundredths each).
	Activities map[string]float64
}

// TrackedTime sums the measured time of every session of an instance.
func (s *Store) TrackedTime(ctx context.Context, tenant, regID, instanceKey string) (TrackedTime, error) {
	rs, err := record.All(ctx, s.records, record.Query{Tenant: tenant, Kind: KindSession, Key: instanceKey,
		Parent: &record.Ref{Kind: KindRegistration, ID: regID}})
	if err != nil {
		return TrackedTime{}, err
	}
	t := TrackedTime{Activities: map[string]float64{}}
	for _, r := range rs {
		sess, err := decodeSession(r)
		if err != nil {
			return TrackedTime{}, err
		}
		t.Seconds += sess.Seconds
		for a, sec := range sess.Activities {
			t.Activities[a] += sec
		}
	}
	t.Seconds = hundredths(t.Seconds)
	for a, sec := range t.Activities {
		t.Activities[a] = hundredths(sec)
	}
	return t, nil
}

// hundredths is SCORM's resolution of time, so float sums do not leak noise into progress.
func hundredths(s float64) float64 { return math.Round(s*100) / 100 }

// SetTrackedSeconds raises the measured time in the progress of the instance whose key is
// instanceKey to seconds. It writes nothing when the progress already says as much (so a
// heartbeat moves the registration in the `since` order only when the time grew, and a
// heartbeat's total that a newer rollup already passed is not written back), says whether it
// wrote, and answers ErrNotFound when the instance is gone (the registration was reset or
// deleted).
func (s *Store) SetTrackedSeconds(ctx context.Context, tenant, id, instanceKey string, seconds float64) (bool, error) {
	_, err := s.modify(ctx, tenant, id, func(reg *Registration) error {
		for i := range reg.Instances {
			if reg.Instances[i].Key != instanceKey {
				continue
			}
			p := &reg.Instances[i].Progress
			if seconds <= p.TotalSecondsTracked {
				return errTrackedUnchanged
			}
			p.TotalSecondsTracked = seconds
			return nil
		}
		return fmt.Errorf("registration '%s' instance %s %w", id, instanceKey, ErrNotFound)
	})
	if errors.Is(err, errTrackedUnchanged) {
		return false, nil
	}
	return err == nil, err
}

var errTrackedUnchanged = errors.New("tracked time unchanged")
