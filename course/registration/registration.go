// Package registration is the course engine's record of a learner taking a course: the
// registration, its instances (one "take" each, pinned to a course version) and, per
// instance, the progress the rollup computes. It imports neither HTTP nor database code; its
// records live behind the record port (storage/record), so every backend of that port keeps
// them with the same guarantees.
//
// Layout in the record store, all in the registration's tenant: one record of kind
// "registration", id = registration id, parent = the course record (deleting the course
// deletes its registrations), key = the learner id (the list filter). It holds the
// registration, every instance with its rolled-up progress and a snapshot of the course
// version it is pinned to. So creating, restarting, resetting and rolling up are single
// compare-and-set writes (nothing is ever half-written), a progress change moves the
// registration in the `since` order, and a page of the list is one range read. Bulky
// run-time data (CMI) lives in records of its own, children of the registration, named by
// the instance's Key, which is fresh for every instance so data left behind by a reset is
// never read as the new instance's.
package registration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/lectern-lms/lectern/storage/record"
)

// Record kinds of registrations inside a tenant.
const (
	KindRegistration = "registration"
	// kindCourse is the course record registrations hang from (course.KindCourse).
	kindCourse = "course"
)

// Sentinel errors of the registration store.
var (
	// ErrNotFound means no registration (or no such instance of it) exists.
	ErrNotFound = errors.New("not found")
	// ErrExists means the registration id is already used in the tenant.
	ErrExists = errors.New("registration already exists")
	// ErrInvalid means a create request or query cannot be used; the message names the field.
	ErrInvalid = errors.New("invalid registration")
)

// MaxIDLength bounds registration and learner ids (Rustici Engine allows 255 characters).
const MaxIDLength = 255

// Status values of completion and success, spelled as the engine API spells them.
const (
	Unknown    = "UNKNOWN"
	Completed  = "COMPLETED"
	Incomplete = "INCOMPLETE"
	Passed     = "PASSED"
	Failed     = "FAILED"
)

// Learner is the person a registration belongs to.
type Learner struct {
	ID        string `json:"id"`
	FirstName string `json:"firstName,omitempty"`
	LastName  string `json:"lastName,omitempty"`
}

// PostBack overrides, for one registration, where and how the registration report is sent.
type PostBack struct {
	URL      string `json:"url,omitempty"`
	AuthType string `json:"authType,omitempty"`
	UserName string `json:"userName,omitempty"`
	// Password is sealed at rest by the Store's Sealer and never returned by the API.
	Password      string `json:"password,omitempty"`
	ResultsFormat string `json:"resultsFormat,omitempty"`
}

// Instance is one take of a registration against one course version.
type Instance struct {
	Number int `json:"instance"`
	// Key names the instance's run-time data records; it is unique across resets.
	Key           string `json:"key"`
	CourseVersion int    `json:"courseVersion"`
	// XAPIRegistrationID is the registration id the instance's statements carry (see
	// XAPIRegistrationOf); empty in instances stored before instances had their own.
	XAPIRegistrationID string `json:"xapiRegistrationId,omitempty"`
	// Course is a snapshot of the pinned course version (versions never change once
	// imported), so summaries need no course lookup.
	Course   CourseRef `json:"course"`
	Created  time.Time `json:"created"`
	Progress Progress  `json:"progress"`
}

// CourseRef is what a registration summary shows of its course version.
type CourseRef struct {
	Title    string    `json:"title"`
	Standard string    `json:"standard"`
	Updated  time.Time `json:"updated"`
}

// Registration is a learner's enrolment in one course.
type Registration struct {
	ID                 string    `json:"id"`
	CourseID           string    `json:"courseId"`
	Learner            Learner   `json:"learner"`
	ForCredit          bool      `json:"forCredit"`
	XAPIRegistrationID string    `json:"xapiRegistrationId"`
	PostBack           *PostBack `json:"postBack,omitempty"`
	// Instances lists every instance, oldest first; the last one is current. A reset
	// replaces the list with a fresh instance 0.
	Instances []Instance `json:"instances"`
	Created   time.Time  `json:"-"`
	Updated   time.Time  `json:"-"`
}

// Current returns the registration's latest instance.
func (r *Registration) Current() Instance { return r.Instances[len(r.Instances)-1] }

// Instance returns instance n, n < 0 meaning the latest; ErrNotFound when there is none.
func (r *Registration) Instance(n int) (Instance, error) {
	if n < 0 {
		return r.Current(), nil
	}
	for _, in := range r.Instances {
		if in.Number == n {
			return in, nil
		}
	}
	return Instance{}, fmt.Errorf("registration '%s' instance %d %w", r.ID, n, ErrNotFound)
}

// Progress is what the rollup knows of one instance. Its zero value, with Unknown statuses, is
// the progress of an instance nothing has been tracked in yet.
type Progress struct {
	Completion string `json:"completion"`
	Success    string `json:"success"`
	// ScoreScaled is the score on the API's 0-100 scale, nil while unknown.
	ScoreScaled *float64 `json:"scoreScaled,omitempty"`
	// CompletionAmount is 0-1, nil while unknown.
	CompletionAmount    *float64   `json:"completionAmount,omitempty"`
	TotalSecondsTracked float64    `json:"totalSecondsTracked"`
	FirstAccess         *time.Time `json:"firstAccess,omitempty"`
	LastAccess          *time.Time `json:"lastAccess,omitempty"`
	CompletedAt         *time.Time `json:"completedAt,omitempty"`
	// ReportDigest is the rollup's fingerprint of the activity tree the ACTIVITY and FULL
	// reports show (rollup.Result.Digest): a change below the root is a change to post.
	ReportDigest string `json:"reportDigest,omitempty"`
}

// Untracked is the progress of an instance with no tracked event yet.
func Untracked() Progress { return Progress{Completion: Unknown, Success: Unknown} }

// Sealer encrypts secrets at rest (the settings store's AES-GCM sealer).
type Sealer interface {
	Seal(plain string) string
	Open(sealed string) (string, error)
}

// CreateRequest is what an integration sends to create a registration.
type CreateRequest struct {
	ID                 string
	CourseID           string
	Learner            Learner
	ForCredit          bool
	XAPIRegistrationID string
	PostBack           *PostBack
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ValidateID checks an application-chosen id (registration or learner): 1-255 characters of
// printable UTF-8 without surrounding white space.
func ValidateID(what, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: %s is required", ErrInvalid, what)
	case !utf8.ValidString(id) || len(id) > MaxIDLength:
		return fmt.Errorf("%w: %s must be at most %d characters of UTF-8", ErrInvalid, what, MaxIDLength)
	case strings.TrimSpace(id) != id:
		return fmt.Errorf("%w: %s %q has leading or trailing white space", ErrInvalid, what, id)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: %s %q contains a control character", ErrInvalid, what, id)
		}
	}
	return nil
}

// Check validates a create request and fills in its defaults (the xAPI registration id).
func (q *CreateRequest) Check() error {
	if err := ValidateID("registrationId", q.ID); err != nil {
		return err
	}
	if q.CourseID == "" {
		return fmt.Errorf("%w: courseId is required", ErrInvalid)
	}
	if err := ValidateID("learner.id", q.Learner.ID); err != nil {
		return err
	}
	if q.XAPIRegistrationID == "" {
		q.XAPIRegistrationID = uuid.NewString()
	} else if !uuidRE.MatchString(q.XAPIRegistrationID) {
		return fmt.Errorf("%w: xapiRegistrationId %q is not a UUID", ErrInvalid, q.XAPIRegistrationID)
	} else {
		q.XAPIRegistrationID = strings.ToLower(q.XAPIRegistrationID)
	}
	if pb := q.PostBack; pb != nil {
		pb.AuthType = strings.ToUpper(pb.AuthType)
		pb.ResultsFormat = strings.ToUpper(pb.ResultsFormat)
		if pb.AuthType == "" {
			pb.AuthType = "FORM"
		}
		if pb.ResultsFormat == "" {
			pb.ResultsFormat = "COURSE"
		}
		if pb.AuthType != "FORM" && pb.AuthType != "HTTPBASIC" {
			return fmt.Errorf("%w: postBack.authType %q is not FORM or HTTPBASIC", ErrInvalid, pb.AuthType)
		}
		if pb.ResultsFormat != "COURSE" && pb.ResultsFormat != "ACTIVITY" && pb.ResultsFormat != "FULL" {
			return fmt.Errorf("%w: postBack.resultsFormat %q is not COURSE, ACTIVITY or FULL", ErrInvalid, pb.ResultsFormat)
		}
	}
	return nil
}

// Store keeps registrations and their progress in the record store.
type Store struct {
	records record.Store
	sealer  Sealer
	now     func() time.Time
}

// Option configures a Store.
type Option func(*Store)

// WithClock makes the store read the time from now instead of the system clock: instance
// creation dates and the measured time of player sessions follow it.
func WithClock(now func() time.Time) Option {
	return func(s *Store) {
		if now != nil {
			s.now = now
		}
	}
}

// NewStore returns a registration store over records; sealer encrypts post-back passwords.
func NewStore(records record.Store, sealer Sealer, opts ...Option) *Store {
	s := &Store{records: records, sealer: sealer, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

func decode(r *record.Record) (*Registration, error) {
	var reg Registration
	if err := json.Unmarshal(r.Data, &reg); err != nil {
		return nil, fmt.Errorf("decode registration %s: %w", r.ID, err)
	}
	if len(reg.Instances) == 0 {
		return nil, fmt.Errorf("registration %s has no instance", r.ID)
	}
	reg.Created, reg.Updated = r.Created, r.Updated
	return &reg, nil
}

func notFound(id string) error { return fmt.Errorf("registration '%s' %w", id, ErrNotFound) }

// Create stores a new registration with instance 0 pinned to courseVersion (whose snapshot
// is course). The request must have passed Check; ErrExists when the id is taken.
func (s *Store) Create(ctx context.Context, tenant string, q CreateRequest, courseVersion int, course CourseRef) (*Registration, error) {
	first := s.newInstance(0, courseVersion, course)
	first.XAPIRegistrationID = q.XAPIRegistrationID
	reg := &Registration{ID: q.ID, CourseID: q.CourseID, Learner: q.Learner, ForCredit: q.ForCredit,
		XAPIRegistrationID: q.XAPIRegistrationID, Instances: []Instance{first}}
	if q.PostBack != nil {
		pb := *q.PostBack
		if pb.Password != "" {
			pb.Password = s.sealer.Seal(pb.Password)
		}
		reg.PostBack = &pb
	}
	data, err := json.Marshal(reg)
	if err != nil {
		return nil, err
	}
	// The xAPI registration id's lookup first: one left by a crash before the registration
	// exists resolves to nothing, while a registration always has its lookup.
	if err := s.createLookup(ctx, tenant, reg, first); err != nil {
		if errors.Is(err, record.ErrConflict) {
			if other, err := s.ByXAPIRegistration(ctx, tenant, q.XAPIRegistrationID); err == nil {
				if other.ID == q.ID {
					return nil, fmt.Errorf("registration '%s' %w", q.ID, ErrExists)
				}
				return nil, fmt.Errorf("%w: xapiRegistrationId %s is the xAPI registration of registration '%s'", ErrInvalid, q.XAPIRegistrationID, other.ID)
			}
			// An orphan of a crashed create: take it over.
			if err := s.records.Delete(ctx, tenant, kindXAPILookup, q.XAPIRegistrationID); err != nil && !errors.Is(err, record.ErrNotFound) {
				return nil, err
			}
			return s.Create(ctx, tenant, q, courseVersion, course)
		}
		return nil, err
	}
	r := &record.Record{Tenant: tenant, Kind: KindRegistration, ID: q.ID, Key: q.Learner.ID,
		Parent: &record.Ref{Kind: kindCourse, ID: q.CourseID}, Data: data}
	if err := s.records.Create(ctx, r); err != nil {
		_ = s.records.Delete(ctx, tenant, kindXAPILookup, q.XAPIRegistrationID)
		if errors.Is(err, record.ErrConflict) {
			return nil, fmt.Errorf("registration '%s' %w", q.ID, ErrExists)
		}
		return nil, err
	}
	reg.Created, reg.Updated = r.Created, r.Updated
	return reg, nil
}

// kindXAPILookup records map an xAPI registration id to its registration instance (a child of
// the registration, so it goes with it): statements name registrations by that id (xapi.go).
const kindXAPILookup = "registration_xapi"

// ByXAPIRegistration returns the registration whose xAPI registration id, or one of whose
// instances' ids, is xid, or ErrNotFound.
func (s *Store) ByXAPIRegistration(ctx context.Context, tenant, xid string) (*Registration, error) {
	r, err := s.records.Get(ctx, tenant, kindXAPILookup, strings.ToLower(xid))
	if errors.Is(err, record.ErrNotFound) {
		return nil, fmt.Errorf("xAPI registration '%s' %w", xid, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var l xapiLookup
	if err := json.Unmarshal(r.Data, &l); err != nil {
		return nil, fmt.Errorf("decode xAPI registration %s: %w", xid, err)
	}
	reg, err := s.Get(ctx, tenant, l.RegistrationID)
	if err != nil {
		return nil, err
	}
	if reg.XAPIRegistrationID == strings.ToLower(xid) {
		return reg, nil
	}
	for _, in := range reg.Instances {
		if in.XAPIRegistrationID == strings.ToLower(xid) {
			return reg, nil
		}
	}
	return nil, fmt.Errorf("xAPI registration '%s' %w", xid, ErrNotFound)
}

// Get returns one registration or ErrNotFound.
func (s *Store) Get(ctx context.Context, tenant, id string) (*Registration, error) {
	r, err := s.records.Get(ctx, tenant, KindRegistration, id)
	if errors.Is(err, record.ErrNotFound) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, err
	}
	return decode(r)
}

// PostBackPassword returns the plain post-back password of a registration.
func (s *Store) PostBackPassword(reg *Registration) (string, error) {
	if reg.PostBack == nil || reg.PostBack.Password == "" {
		return "", nil
	}
	return s.sealer.Open(reg.PostBack.Password)
}

// Delete removes a registration with every instance and its progress.
func (s *Store) Delete(ctx context.Context, tenant, id string) error {
	err := s.records.Delete(ctx, tenant, KindRegistration, id)
	if errors.Is(err, record.ErrNotFound) {
		return notFound(id)
	}
	return err
}

// ListQuery selects registrations of a tenant.
type ListQuery struct {
	CourseID  string
	LearnerID string
	Since     time.Time
	Cursor    string
	Limit     int
}

// Page is one page of registrations in update order; Next is empty on the last page.
type Page struct {
	Registrations []*Registration
	Next          string
}

// List returns one page of registrations matching q. A bad cursor is record.ErrInvalid.
func (s *Store) List(ctx context.Context, tenant string, q ListQuery) (*Page, error) {
	rq := record.Query{Tenant: tenant, Kind: KindRegistration, Key: q.LearnerID, Since: q.Since, Cursor: q.Cursor, Limit: q.Limit}
	if q.CourseID != "" {
		rq.Parent = &record.Ref{Kind: kindCourse, ID: q.CourseID}
	}
	p, err := s.records.List(ctx, rq)
	if err != nil {
		return nil, err
	}
	out := &Page{Registrations: make([]*Registration, 0, len(p.Records)), Next: p.Next}
	for _, r := range p.Records {
		reg, err := decode(r)
		if err != nil {
			return nil, err
		}
		out.Registrations = append(out.Registrations, reg)
	}
	return out, nil
}

func (s *Store) newInstance(n, courseVersion int, course CourseRef) Instance {
	return Instance{Number: n, Key: uuid.NewString(), CourseVersion: courseVersion, Course: course,
		Created: s.now().UTC(), Progress: Untracked()}
}

// UpdateProgress applies fn to the progress of instance n (n < 0: the latest) and stores
// it with compare-and-set, so concurrent commits never lose each other's rollup.
func (s *Store) UpdateProgress(ctx context.Context, tenant, id string, n int, fn func(p *Progress) error) (*Registration, error) {
	return s.modify(ctx, tenant, id, func(reg *Registration) error {
		i := len(reg.Instances) - 1
		if n >= 0 {
			for i = len(reg.Instances) - 1; i >= 0 && reg.Instances[i].Number != n; i-- {
			}
			if i < 0 {
				return fmt.Errorf("registration '%s' instance %d %w", id, n, ErrNotFound)
			}
		}
		return fn(&reg.Instances[i].Progress)
	})
}

// modify applies fn to the stored registration and writes it back with compare-and-set (fn
// may run more than once under contention); ErrNotFound when it is gone.
func (s *Store) modify(ctx context.Context, tenant, id string, fn func(reg *Registration) error) (*Registration, error) {
	r, err := record.Modify(ctx, s.records, tenant, KindRegistration, id, func(r *record.Record) error {
		reg, err := decode(r)
		if err != nil {
			return err
		}
		if err := fn(reg); err != nil {
			return err
		}
		r.Data, err = json.Marshal(reg)
		return err
	})
	if errors.Is(err, record.ErrNotFound) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, err
	}
	return decode(r)
}

// Reset wipes a registration's launch history and progress and starts it again at instance 0
// pinned to courseVersion (the course's latest, whose snapshot is course), keeping the
// registration itself, in one write. Run-time data of the old instances is no longer
// reachable (instance keys are fresh) and goes with the registration. The new instance 0 has
// a new xAPI registration id, so the statements of before the reset count for nothing.
func (s *Store) Reset(ctx context.Context, tenant, id string, courseVersion int, course CourseRef) (*Registration, error) {
	cur, err := s.Get(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	in := s.newXAPIInstance(0, courseVersion, course)
	if err := s.createLookup(ctx, tenant, cur, in); err != nil {
		return nil, err
	}
	var old []Instance
	reg, err := s.modify(ctx, tenant, id, func(reg *Registration) error {
		old = reg.Instances
		reg.Instances = []Instance{in}
		return nil
	})
	if err != nil {
		_ = s.records.Delete(ctx, tenant, kindXAPILookup, in.XAPIRegistrationID)
		return nil, err
	}
	s.retireLookups(ctx, tenant, reg, old)
	return reg, nil
}

// retireLookups drops the lookups of instances a reset removed, so their statements roll up
// nothing; the registration's own xapiRegistrationId stays reserved (a retired lookup), so
// no other registration takes it. Failures leave lookups whose instance key no longer
// exists, which roll up nothing either.
func (s *Store) retireLookups(ctx context.Context, tenant string, reg *Registration, old []Instance) {
	for _, o := range old {
		xid := reg.XAPIRegistrationOf(o)
		if xid != reg.XAPIRegistrationID {
			_ = s.records.Delete(ctx, tenant, kindXAPILookup, xid)
			continue
		}
		_, _ = record.Modify(ctx, s.records, tenant, kindXAPILookup, xid, func(r *record.Record) error {
			var err error
			r.Data, err = json.Marshal(xapiLookup{RegistrationID: reg.ID, Retired: true})
			return err
		})
	}
}

// The values of the WhenToRestartRegistration setting: when a launch starts a new instance on
// the course's latest version rather than resuming the current one.
const (
	RestartNever                         = "NEVER"
	RestartWhenCompleteAndNewerVersion   = "WHEN_EXISTING_REG_IS_COMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS"
	RestartWhenNewerVersion              = "WHEN_NEWER_PACKAGE_VERSION_EXISTS"
	RestartWhenComplete                  = "WHEN_EXISTING_REG_IS_COMPLETE"
	RestartWhenSatisfied                 = "WHEN_EXISTING_REG_IS_SATISFIED"
	RestartWhenSatisfiedAndNewerVersion  = "WHEN_EXISTING_REG_IS_SATISFIED_AND_NEWER_PACKAGE_VERSION_EXISTS"
	RestartWhenIncompleteAndNewerVersion = "WHEN_EXISTING_REG_IS_INCOMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS"
	RestartWhenFailed                    = "WHEN_EXISTING_REG_IS_FAILED"
	RestartWhenFailedAndNewerVersion     = "WHEN_EXISTING_REG_IS_FAILED_AND_NEWER_PACKAGE_VERSION_EXISTS"
)

// RestartModes lists the WhenToRestartRegistration values, the default first.
func RestartModes() []string {
	return []string{RestartWhenCompleteAndNewerVersion, RestartNever, RestartWhenNewerVersion, RestartWhenComplete,
		RestartWhenSatisfied, RestartWhenSatisfiedAndNewerVersion, RestartWhenIncompleteAndNewerVersion,
		RestartWhenFailed, RestartWhenFailedAndNewerVersion}
}

// ShouldRestart decides, at launch, whether the current instance gives way to a new one, from
// the WhenToRestartRegistration mode, the current instance and the course's latest version.
// "Satisfied" is PASSED, or COMPLETED when success is unknown (a course without a passing
// rule is satisfied by completing it). An unknown mode never restarts.
func ShouldRestart(mode string, current Instance, latestVersion int) bool {
	newer := latestVersion > current.CourseVersion
	p := current.Progress
	complete := p.Completion == Completed
	satisfied := p.Success == Passed || (p.Success == Unknown && complete)
	switch mode {
	case RestartWhenCompleteAndNewerVersion:
		return complete && newer
	case RestartWhenNewerVersion:
		return newer
	case RestartWhenComplete:
		return complete
	case RestartWhenSatisfied:
		return satisfied
	case RestartWhenSatisfiedAndNewerVersion:
		return satisfied && newer
	case RestartWhenIncompleteAndNewerVersion:
		return !complete && newer
	case RestartWhenFailed:
		return p.Success == Failed
	case RestartWhenFailedAndNewerVersion:
		return p.Success == Failed && newer
	}
	return false
}

// Restart starts instance n+1 of a registration pinned to courseVersion, unless the current
// instance is no longer expected (another launch restarted it first): then it returns the
// registration as it is. Instances before it keep their progress. The new instance has an
// xAPI registration id of its own.
func (s *Store) Restart(ctx context.Context, tenant, id string, expected int, courseVersion int, course CourseRef) (*Registration, error) {
	cur, err := s.Get(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if cur.Current().Number != expected {
		return cur, nil
	}
	in := s.newXAPIInstance(expected+1, courseVersion, course)
	if err := s.createLookup(ctx, tenant, cur, in); err != nil {
		return nil, err
	}
	added := false
	reg, err := s.modify(ctx, tenant, id, func(reg *Registration) error {
		added = reg.Current().Number == expected
		if added {
			reg.Instances = append(reg.Instances, in)
		}
		return nil
	})
	if !added {
		_ = s.records.Delete(ctx, tenant, kindXAPILookup, in.XAPIRegistrationID)
	}
	return reg, err
}
