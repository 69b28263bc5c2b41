// Package learner is the learner's path through a course, as a use case over the course
// engine's stores: a launch starts a measured player session, the content's commits and
// statements are stored, every change is rolled up into the registration's progress, the
// registration's report is posted back to the LMS, and SCORM run-time data is converted to
// xAPI statements when the configuration says so.
//
// It is plain Go: no HTTP, no drivers. The player's HTTP handlers (server/) translate
// requests into calls on Service and its errors into answers; job handlers (workers/) call
// it for post-back reports and historical conversion. Rollup is the one computation of a
// registration instance's progress: progress, progress/detail, the player's completed
// activities, the post-back report and the commit path all go through it.
package learner

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/lrs/launch"
	"github.com/lectern-lms/lectern/storage/statements"
)

// PostBacks sends registration reports to the LMS. workers/postbackjob implements it over
// the job queue; the learner's path only decides when a report is due.
type PostBacks interface {
	// Send delivers the registration's report with tries attempts in all: the first one
	// inline when inline is true (the caller waits for it), the rest through the queue.
	// Failures are the implementation's to log: the change that caused the report is stored.
	Send(ctx context.Context, tenant, registrationID string, inline bool, tries int)
}

// StoredHook sees statements the learner's path stored itself (converted SCORM data), as
// the record store's TinCanStatementsStored extension point sees a client's.
type StoredHook func(ctx context.Context, tenant string, batch []*statements.Statement)

// Deps is what the learner's path works on.
type Deps struct {
	Courses       *course.Store
	Registrations *registration.Store
	// Runtime keeps the SCORM run-time data the player commits.
	Runtime  *scormrt.Store
	Settings *settings.Store
	// Statements is the record store's backend: the statements xAPI and cmi5 progress is
	// folded from, and where launched and converted statements are written.
	Statements statements.Backend
	// LaunchTokens signs the record-store credentials of launched content; nil launches no
	// xAPI or cmi5 content.
	LaunchTokens *launch.Issuer
	// PostBacks sends the reports; nil sends none.
	PostBacks PostBacks
	// Stored is told of converted statements once stored; StatementsCounted of how many
	// statements a write stored (the metrics). Either may be nil.
	Stored            StoredHook
	StatementsCounted func(n int)
	// PublicURL is the server's public origin: the learner accounts' and the record store's
	// homePage unless configured otherwise.
	PublicURL string
	Logger    *slog.Logger
}

// Service runs the learner's path.
type Service struct {
	d   Deps
	log *slog.Logger
	// seqMem keeps the sequencing States of previews and reviews (sequencing.go).
	seqMem memStates
}

// New returns the learner's path over d.
func New(d Deps) *Service {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Service{d: d, log: log}
}

// refusal is a refused post whose message is meant for the learner as it is: it matches its
// sentinel (errors.Is) without the sentinel's text in its message.
type refusal struct {
	kind error
	msg  string
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return e.kind }

func refuse(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// RecordStoreHomePage is the homePage of the LMS's account, the authority of the statements
// the course engine writes (access.HomePage, as the record store's own accounts).
func (s *Service) RecordStoreHomePage() string { return access.HomePage(s.d.PublicURL) }

// settingSystemHomePage names the learners' account homePage (Rustici's SystemHomepageUrl).
const settingSystemHomePage = "SystemHomepageUrl"

// LearnerHomePage is the one rule for the homePage of a learner's xAPI account, in launched
// xAPI and cmi5 content and in statements converted from SCORM alike: SystemHomepageUrl of
// the registration's cascade (layers), else the server's public URL, so one learner is one
// agent whichever way their statements were made.
func (s *Service) LearnerHomePage(layers []settings.Layer) string {
	if hp, err := s.d.Settings.Catalogue().Resolve(settingSystemHomePage, layers...); err == nil && hp != "" {
		return hp
	}
	return access.Origin(s.d.PublicURL)
}

// RegistrationLayers is the settings cascade tenant → course → registration.
func (s *Service) RegistrationLayers(ctx context.Context, tenant string, reg *registration.Registration) ([]settings.Layer, error) {
	return s.d.Settings.Layers(ctx, tenant, settings.RegistrationScopes(reg.CourseID, reg.ID)...)
}

// SessionLayers is the settings cascade of a player session: its tenant, course and
// (unless a preview) registration.
func (s *Service) SessionLayers(ctx context.Context, sess *course.SessionClaims) ([]settings.Layer, error) {
	scopes := []settings.Scope{settings.TenantScope, settings.CourseScope(sess.CourseID)}
	if sess.RegistrationID != "" {
		scopes = append(scopes, settings.RegistrationScope(sess.RegistrationID))
	}
	return s.d.Settings.Layers(ctx, sess.Tenant, scopes...)
}

// SessionSettings resolves several settings of a session's cascade with one read of its
// layers.
func (s *Service) SessionSettings(ctx context.Context, sess *course.SessionClaims, ids ...string) (map[string]string, error) {
	layers, err := s.SessionLayers(ctx, sess)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		if out[id], err = s.d.Settings.Catalogue().Resolve(id, layers...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SessionSetting resolves one setting of a session's cascade.
func (s *Service) SessionSetting(ctx context.Context, sess *course.SessionClaims, id string) (string, error) {
	vs, err := s.SessionSettings(ctx, sess, id)
	return vs[id], err
}

// SessionVersion is the course version a session plays, from the course store's cache of
// decoded versions (every commit, activity load and content file needs it; the launch that
// signed the session checked that the course exists).
func (s *Service) SessionVersion(ctx context.Context, sess *course.SessionClaims) (*course.Version, error) {
	return s.d.Courses.PinnedVersion(ctx, sess.Tenant, sess.CourseID, sess.Version, time.Time{})
}

// instanceOf is the instance of reg with key, or nil when a reset removed it.
func instanceOf(reg *registration.Registration, key string) *registration.Instance {
	for i := range reg.Instances {
		if reg.Instances[i].Key == key {
			return &reg.Instances[i]
		}
	}
	return nil
}
