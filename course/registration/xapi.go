package registration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-lms/lectern/storage/record"
)

// Every instance has an xAPI registration id of its own: instance 0 of a new registration
// takes the registration's xapiRegistrationId, every later instance (a restart) and the fresh
// instance 0 of a reset a new UUID. Statements of an earlier take therefore never count for
// a later one, and content still open on an old instance keeps reporting to that instance.
//
// Each id has a lookup record (kind registration_xapi, id the xAPI registration id, a child
// of the registration) naming its instance, and holding what the instance's statements have
// said so far (StatementFold): the record store's rollup folds each new batch into it, so a
// batch costs its own statements, not a re-read of the registration's history.

// XAPIRegistrationOf is the xAPI registration id the statements of instance in carry.
// Instances stored before instances had ids of their own share the registration's.
func (r *Registration) XAPIRegistrationOf(in Instance) string {
	if in.XAPIRegistrationID != "" {
		return in.XAPIRegistrationID
	}
	return r.XAPIRegistrationID
}

// StatementFold is what the statements of one instance's xAPI registration have said so far,
// per object activity id (course/rollup folds statements into it and reads it). Every field
// merges idempotently, so folding a statement twice changes nothing: a rebuild from the
// stored statements racing the fold of a new batch cannot count that batch twice.
type StatementFold struct {
	Activities map[string]*ActivityFold `json:"activities"`
	// Interactions are the answered questions, by the question activity's id.
	Interactions map[string]*FoldInteraction `json:"interactions,omitempty"`
	// CMI5Sessions are the cmi5 sessions seen, by session id (the context extension): what
	// the record store's cmi5 statement rules check a session's next statement against.
	CMI5Sessions map[string]*CMI5SessionFold `json:"cmi5Sessions,omitempty"`
}

// CMI5SessionFold is what the statements of one cmi5 session said.
type CMI5SessionFold struct {
	// Verbs are the cmi5 defined verbs the session's statements used (each once, cmi5
	// 9.3.0.0-2), in the order first seen.
	Verbs []string `json:"verbs,omitempty"`
	// Launched is the stored time of the LMS's launched statement; Last the latest stored
	// time of any statement of the session.
	Launched time.Time `json:"launched,omitzero"`
	Last     time.Time `json:"last,omitzero"`
	// ActivityID is the AU's activity id (the object of the launched statement).
	ActivityID string `json:"activityId,omitempty"`
	// Ended: the session was terminated or abandoned; nothing more is accepted for it.
	Ended bool `json:"ended,omitempty"`
	// PrefsRead: the AU read the learner preferences (cmi5 11.0.0.0-3), which it must do
	// before it initializes.
	PrefsRead bool `json:"prefsRead,omitempty"`
}

// ActivityFold is what the statements about one activity said.
type ActivityFold struct {
	Completed bool `json:"completed,omitempty"`
	Passed    bool `json:"passed,omitempty"`
	// FailedSeen: some failed statement (it counts unless one passed).
	FailedSeen bool `json:"failed,omitempty"`
	Waived     bool `json:"waived,omitempty"`
	// CompletionSeen: some statement about the activity had result.completion true (its
	// verb whatever it was; the rollup decides by standard what that means).
	CompletionSeen bool `json:"completion,omitempty"`
	// Satisfied: the LMS recorded its satisfied statement of the activity (a cmi5 block or
	// course, by the LMS's id for it).
	Satisfied bool `json:"satisfied,omitempty"`
	// Scaled is result.score.scaled of the latest (by stored time) completed, passed or
	// failed statement that has one; ScaledAt is that statement's stored time.
	Scaled   *float64  `json:"scaled,omitempty"`
	ScaledAt time.Time `json:"scaledAt,omitzero"`
	// Sessions are the terminated statements' durations, in stored order.
	Sessions []FoldSession `json:"sessions,omitempty"`
	// Longest is the longest result.duration of any statement about the activity.
	Longest float64 `json:"longest,omitempty"`
}

// FoldSession is one terminated statement.
type FoldSession struct {
	ID      string    `json:"id"`
	Stored  time.Time `json:"stored"`
	Seconds float64   `json:"seconds"`
}

// FoldInteraction is the latest answer to one question (an answered statement or a statement
// about a cmi.interaction activity with a result).
type FoldInteraction struct {
	ID               string    `json:"id"`
	Type             string    `json:"type,omitempty"`
	Description      string    `json:"description,omitempty"`
	CorrectResponses []string  `json:"correctResponses,omitempty"`
	LearnerResponse  string    `json:"learnerResponse,omitempty"`
	Result           string    `json:"result,omitempty"`
	Latency          string    `json:"latency,omitempty"`
	Timestamp        string    `json:"timestamp,omitempty"`
	Parents          []string  `json:"parents,omitempty"`
	Stored           time.Time `json:"stored"`
}

// XAPIInstance is what the lookup of an xAPI registration id holds.
type XAPIInstance struct {
	XAPIRegistrationID string
	RegistrationID     string
	Instance           int
	// Key is the instance's Key: a reset reuses instance numbers, never keys.
	Key           string
	CourseID      string
	CourseVersion int
	Standard      string
	// Fold is nil until the statements were first folded.
	Fold *StatementFold
}

// xapiLookup is the stored form of XAPIInstance. Instance is nil in lookups written before
// instances had ids of their own: they name the registration's current instance.
type xapiLookup struct {
	RegistrationID string         `json:"registrationId"`
	Instance       *int           `json:"instance,omitempty"`
	Key            string         `json:"key,omitempty"`
	CourseID       string         `json:"courseId,omitempty"`
	CourseVersion  int            `json:"courseVersion,omitempty"`
	Standard       string         `json:"standard,omitempty"`
	Fold           *StatementFold `json:"fold,omitempty"`
	// Retired: the instance was removed by a reset; the id stays reserved to its
	// registration.
	Retired bool `json:"retired,omitempty"`
}

func lookupOf(reg *Registration, in Instance) xapiLookup {
	n := in.Number
	return xapiLookup{RegistrationID: reg.ID, Instance: &n, Key: in.Key, CourseID: reg.CourseID,
		CourseVersion: in.CourseVersion, Standard: in.Course.Standard}
}

// createLookup stores the lookup of instance in's xAPI registration id.
func (s *Store) createLookup(ctx context.Context, tenant string, reg *Registration, in Instance) error {
	data, err := json.Marshal(lookupOf(reg, in))
	if err != nil {
		return err
	}
	return s.records.Create(ctx, &record.Record{Tenant: tenant, Kind: kindXAPILookup, ID: in.XAPIRegistrationID,
		Parent: &record.Ref{Kind: KindRegistration, ID: reg.ID}, Data: data})
}

// errNoChange ends a fold that would write what is stored.
var errNoChange = errors.New("fold unchanged")

// FoldXAPI applies fn to what the lookup of xAPI registration id xid holds and stores the
// result when fn reports a change (fn may run more than once under contention). fn sees a
// nil Fold when the statements were never folded (the caller rebuilds it). ErrNotFound when
// xid is no instance's xAPI registration id.
func (s *Store) FoldXAPI(ctx context.Context, tenant, xid string, fn func(x *XAPIInstance) (changed bool, err error)) (*XAPIInstance, error) {
	xid = strings.ToLower(xid)
	var out *XAPIInstance
	_, err := record.Modify(ctx, s.records, tenant, kindXAPILookup, xid, func(r *record.Record) error {
		var l xapiLookup
		if err := json.Unmarshal(r.Data, &l); err != nil {
			return fmt.Errorf("decode xAPI registration %s: %w", xid, err)
		}
		migrated := false
		if l.Retired {
			return fmt.Errorf("xAPI registration '%s' %w", xid, ErrNotFound)
		}
		if l.Instance == nil {
			// A lookup of before instances had ids: it names the current instance, while
			// that one still uses the registration's id.
			reg, err := s.Get(ctx, tenant, l.RegistrationID)
			if err != nil {
				return err
			}
			in := reg.Current()
			if reg.XAPIRegistrationOf(in) != xid {
				return fmt.Errorf("xAPI registration '%s' %w", xid, ErrNotFound)
			}
			nl := lookupOf(reg, in)
			nl.Fold, l, migrated = l.Fold, nl, true
		}
		x := &XAPIInstance{XAPIRegistrationID: xid, RegistrationID: l.RegistrationID, Instance: *l.Instance, Key: l.Key,
			CourseID: l.CourseID, CourseVersion: l.CourseVersion, Standard: l.Standard, Fold: l.Fold}
		changed, err := fn(x)
		if err != nil {
			return err
		}
		out = x
		if !changed && !migrated {
			return errNoChange
		}
		l.Fold = x.Fold
		r.Data, err = json.Marshal(l)
		return err
	})
	switch {
	case errors.Is(err, errNoChange):
		return out, nil
	case errors.Is(err, record.ErrNotFound):
		return nil, fmt.Errorf("xAPI registration '%s' %w", xid, ErrNotFound)
	case err != nil:
		return nil, err
	}
	return out, nil
}

// XAPIFold reads what the statements of instance in have said so far (nil when never folded).
func (s *Store) XAPIFold(ctx context.Context, tenant string, reg *Registration, in Instance) (*StatementFold, error) {
	r, err := s.records.Get(ctx, tenant, kindXAPILookup, reg.XAPIRegistrationOf(in))
	if errors.Is(err, record.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var l xapiLookup
	if err := json.Unmarshal(r.Data, &l); err != nil {
		return nil, fmt.Errorf("decode xAPI registration %s: %w", r.ID, err)
	}
	if l.Retired || l.RegistrationID != reg.ID || (l.Key != "" && l.Key != in.Key) {
		return nil, nil
	}
	return l.Fold, nil
}

// UpdateInstanceProgress is UpdateProgress for the instance whose Key is key: ErrNotFound when
// a reset replaced it (its number may exist again, its key never).
func (s *Store) UpdateInstanceProgress(ctx context.Context, tenant, id, key string, fn func(in Instance, p *Progress) error) (*Registration, error) {
	return s.modify(ctx, tenant, id, func(reg *Registration) error {
		for i := range reg.Instances {
			if reg.Instances[i].Key == key {
				return fn(reg.Instances[i], &reg.Instances[i].Progress)
			}
		}
		return fmt.Errorf("registration '%s' instance %s %w", id, key, ErrNotFound)
	})
}

// newXAPIInstance is a new instance with an xAPI registration id of its own.
func (s *Store) newXAPIInstance(n, courseVersion int, course CourseRef) Instance {
	in := s.newInstance(n, courseVersion, course)
	in.XAPIRegistrationID = uuid.NewString()
	return in
}
