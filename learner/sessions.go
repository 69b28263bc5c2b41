package learner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/settings"
)

// Player sessions as the server measures them (docs/decisions.md, "Player sessions"): each
// tracked launch is a registration.Session; commits, HACP calls and the page's heartbeats are
// its signs of life. They measure the time tracked, refuse a session a later launch of the
// registration took over (ConcurrentLaunchDetectionEnabled, ForceExitConcurrentLaunches), and
// end a session after ApiTokenPostbackValidHours.

// Reasons a session's post is refused (SessionError.Reason); the player page reads them to
// warn the learner or exit.
const (
	ReasonConcurrent     = "concurrent-launch"
	ReasonConcurrentExit = "concurrent-launch-exit"
	ReasonExpired        = "session-expired"
)

// SessionError refuses a post of a player session the server no longer accepts; nothing of
// the post is stored.
type SessionError struct {
	// Reason is one of the Reason constants.
	Reason string
	// Message tells the learner what happened and what to do.
	Message string
}

func (e *SessionError) Error() string { return e.Message }

// minGap is the least silence between two signs of life that still counts as time in the
// content, whatever the heartbeat interval: a heartbeat late by a few seconds is not a pause.
const minGap = 30 * time.Second

// sessionHours resolves ApiTokenPostbackValidHours from a cascade.
func (s *Service) sessionHours(layers []settings.Layer) (int, error) {
	v, err := s.d.Settings.Catalogue().Resolve("ApiTokenPostbackValidHours", layers...)
	if err != nil {
		return 0, err
	}
	h, err := strconv.Atoi(v)
	if err != nil || h < 1 {
		return 0, fmt.Errorf("ApiTokenPostbackValidHours %q is not a positive number of hours", v)
	}
	return h, nil
}

// SessionLifetime is how long a player session of a registration may run
// (ApiTokenPostbackValidHours of its cascade): a review's, which tracks nothing.
func (s *Service) SessionLifetime(ctx context.Context, tenant string, reg *registration.Registration) (time.Duration, error) {
	layers, err := s.RegistrationLayers(ctx, tenant, reg)
	if err != nil {
		return 0, err
	}
	h, err := s.sessionHours(layers)
	return time.Duration(h) * time.Hour, err
}

// StartSession records the launch of a registration instance as a player session and
// returns its id and lifetime, under the registration's cascade.
func (s *Service) StartSession(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) (string, time.Duration, error) {
	layers, err := s.RegistrationLayers(ctx, tenant, reg)
	if err != nil {
		return "", 0, err
	}
	cat := s.d.Settings.Catalogue()
	hours, err := s.sessionHours(layers)
	if err != nil {
		return "", 0, err
	}
	o := registration.SessionOptions{Lifetime: time.Duration(hours) * time.Hour, Gap: minGap}
	for id, dst := range map[string]*bool{"ConcurrentLaunchDetectionEnabled": &o.DetectConcurrent, "ForceExitConcurrentLaunches": &o.ForceExit} {
		v, err := cat.Resolve(id, layers...)
		if err != nil {
			return "", 0, err
		}
		*dst = v == "true"
	}
	// The page heartbeats at the commit interval; two missed beats still count.
	if v, err := cat.Resolve("PlayerCommCommitFrequency", layers...); err == nil {
		if ms, err := strconv.Atoi(v); err == nil && 2*time.Duration(ms)*time.Millisecond > o.Gap {
			o.Gap = 2 * time.Duration(ms) * time.Millisecond
		}
	}
	sess, _, err := s.d.Registrations.StartSession(ctx, tenant, reg, in, o)
	if err != nil {
		return "", 0, err
	}
	return sess.ID, o.Lifetime, nil
}

// PreviewLifetime is how long a preview session may run: ApiTokenPostbackValidHours of the
// tenant and course.
func (s *Service) PreviewLifetime(ctx context.Context, tenant, courseID string) (time.Duration, error) {
	layers, err := s.d.Settings.Layers(ctx, tenant, settings.TenantScope, settings.CourseScope(courseID))
	if err != nil {
		return 0, err
	}
	h, err := s.sessionHours(layers)
	return time.Duration(h) * time.Hour, err
}

// ErrGone refuses a post of a player session whose registration was deleted or reset since
// the launch (the answer is 410: launch again).
var ErrGone = errors.New("the registration was deleted or reset since this launch")

// Touch records a sign of life of a tracked session in activity: a *SessionError when the
// session was taken over by a later launch or has expired, ErrGone when its registration
// was deleted or reset. Sessions without a recorded launch (previews, reviews) are not
// measured: nil, nil.
func (s *Service) Touch(ctx context.Context, sess *course.SessionClaims, activity string, sig registration.Signal) (*registration.Session, error) {
	if sess.Launch == "" || sess.Preview || sess.ForceReview {
		return nil, nil
	}
	ls, err := s.d.Registrations.Touch(ctx, sess.Tenant, sess.Launch, activity, sig)
	switch {
	case errors.Is(err, registration.ErrSessionSuperseded) && ls.ForceExit:
		return nil, &SessionError{Reason: ReasonConcurrentExit,
			Message: "this course was opened in another window, so it was closed here; what you did before is saved. Continue in the other window."}
	case errors.Is(err, registration.ErrSessionSuperseded):
		return nil, &SessionError{Reason: ReasonConcurrent,
			Message: "this course was opened in another window, so this window no longer saves progress. Continue in the other window."}
	case errors.Is(err, registration.ErrSessionExpired):
		return nil, &SessionError{Reason: ReasonExpired,
			Message: "this player session is older than ApiTokenPostbackValidHours allows and can no longer save progress; launch the course again"}
	case errors.Is(err, registration.ErrNotFound):
		return nil, refuse(ErrGone, "registration '%s' was deleted or reset since this launch; launch it again", sess.RegistrationID)
	}
	return ls, err
}

// Heartbeat records the page's sign of life (or its notice that it was hidden or left) and
// stores the instance's measured time in its progress at once, so /progress follows a
// session without a commit. When the page is left and that raised the time, the
// registration's report is posted again (as at an exit): the content's terminating commit
// posted it before the last seconds of the session were measured, and the last report must
// say what progress/detail says. Refused as Touch is.
func (s *Service) Heartbeat(ctx context.Context, sess *course.SessionClaims, activity string, sig registration.Signal) error {
	ls, err := s.Touch(ctx, sess, activity, sig)
	if err != nil || ls == nil {
		return err
	}
	changed := false
	t, err := s.d.Registrations.TrackedTime(ctx, sess.Tenant, sess.RegistrationID, sess.InstanceKey)
	if err == nil {
		changed, err = s.d.Registrations.SetTrackedSeconds(ctx, sess.Tenant, sess.RegistrationID, sess.InstanceKey, t.Seconds)
	}
	if errors.Is(err, registration.ErrNotFound) {
		return refuse(ErrGone, "registration '%s' was deleted or reset since this launch; launch it again", sess.RegistrationID)
	}
	if err == nil && changed && sig == registration.SignalExit {
		s.postBackAtLeave(ctx, sess)
	}
	return err
}

// postBackAtLeave posts the registration's report after the page left raised its measured
// time. Like every post-back it never fails the request that caused it: the time is stored.
func (s *Service) postBackAtLeave(ctx context.Context, sess *course.SessionClaims) {
	reg, err := s.d.Registrations.Get(ctx, sess.Tenant, sess.RegistrationID)
	var layers []settings.Layer
	if err == nil {
		layers, err = s.SessionLayers(ctx, sess)
	}
	if err == nil {
		err = s.postBackAfter(ctx, sess.Tenant, reg, layers, true, true)
	}
	if err != nil && !errors.Is(err, registration.ErrNotFound) {
		s.log.Warn("post-back after the page left not sent", "tenant", sess.Tenant, "registration", sess.RegistrationID, "error", err)
	}
}

// StatementSession counts a statement stored with a launch credential of session as a sign
// of life of the player session the content was launched in. The statements are stored
// whatever happens here: a session taken over by a later launch or expired only stops
// counting time (the record store does not refuse statements, which are never
// overwritten), and a failure is logged.
func (s *Service) StatementSession(ctx context.Context, tenant, session string) {
	if session == "" {
		return
	}
	_, err := s.d.Registrations.Touch(ctx, tenant, session, "", registration.SignalActive)
	if err != nil && !errors.Is(err, registration.ErrSessionSuperseded) && !errors.Is(err, registration.ErrSessionExpired) &&
		!errors.Is(err, registration.ErrNotFound) {
		s.log.Warn("player session not touched by a statement", "tenant", tenant, "session", session, "error", err)
	}
}

// ContentOpen says whether a player session may still load its course's files: a tracked
// session while its registration and its recorded session exist, the session has not expired
// and no later launch has forced it to exit; a review while its registration exists. A
// preview has no registration (its course's files go with the course). ErrGone when the
// registration was deleted or reset, a *SessionError when the session ended; the signed
// token's own expiry is checked before this.
func (s *Service) ContentOpen(ctx context.Context, sess *course.SessionClaims) error {
	if sess.RegistrationID == "" {
		return nil
	}
	if sess.Launch == "" || sess.Preview || sess.ForceReview {
		reg, err := s.d.Registrations.Get(ctx, sess.Tenant, sess.RegistrationID)
		if errors.Is(err, registration.ErrNotFound) || (err == nil && instanceOf(reg, sess.InstanceKey) == nil && sess.InstanceKey != "") {
			return refuse(ErrGone, "registration '%s' was deleted or reset since this launch; launch it again", sess.RegistrationID)
		}
		return err
	}
	ls, err := s.d.Registrations.Session(ctx, sess.Tenant, sess.Launch)
	switch {
	case errors.Is(err, registration.ErrNotFound):
		return refuse(ErrGone, "registration '%s' was deleted or reset since this launch; launch it again", sess.RegistrationID)
	case err != nil:
		return err
	case !time.Now().Before(ls.Expires):
		return &SessionError{Reason: ReasonExpired,
			Message: "this player session is older than ApiTokenPostbackValidHours allows; launch the course again"}
	case ls.Superseded != nil && ls.ForceExit:
		return &SessionError{Reason: ReasonConcurrentExit,
			Message: "this course was opened in another window, so it was closed here; continue in the other window"}
	}
	return nil
}
