package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/course/settings"
)

// Player sessions as the server measures them (docs/decisions.md, "Player sessions"): each
// tracked launch is a registration.Session; commits, HACP calls and the page's heartbeats are
// its signs of life. They measure the time tracked, refuse a session a later launch of the
// registration took over (ConcurrentLaunchDetectionEnabled, ForceExitConcurrentLaunches), and
// end a session after ApiTokenPostbackValidHours.

// Reasons a session's post is refused, in the answer's reason field; the player page reads
// them to warn the learner or exit.
const (
	reasonConcurrent     = "concurrent-launch"
	reasonConcurrentExit = "concurrent-launch-exit"
	reasonExpired        = "session-expired"
)

// minGap is the least silence between two signs of life that still counts as time in the
// content, whatever the heartbeat interval: a heartbeat late by a few seconds is not a pause.
const minGap = 30 * time.Second

// sessionRefused is a post of a session the server no longer accepts.
type sessionRefused struct {
	status int
	reason string
	msg    string
}

func (e *sessionRefused) Error() string { return e.msg }

func (e *sessionRefused) answer(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(e.status).JSON(CommitAnswer{Result: "false", ErrorCode: 101, ErrorMessage: e.msg, Message: e.msg, Reason: e.reason})
}

// sessionHours resolves ApiTokenPostbackValidHours from a cascade.
func (s *Server) sessionHours(layers []settings.Layer) (int, error) {
	v, err := s.deps.Settings.Catalogue().Resolve("ApiTokenPostbackValidHours", layers...)
	if err != nil {
		return 0, err
	}
	h, err := strconv.Atoi(v)
	if err != nil || h < 1 {
		return 0, fmt.Errorf("ApiTokenPostbackValidHours %q is not a positive number of hours", v)
	}
	return h, nil
}

// startSession records the launch of a registration instance as a player session and
// returns its id and lifetime, under the registration's cascade.
func (s *Server) startSession(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) (string, time.Duration, error) {
	layers, err := s.registrationLayersOf(ctx, tenant, reg)
	if err != nil {
		return "", 0, err
	}
	cat := s.deps.Settings.Catalogue()
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
	sess, _, err := s.deps.Registrations.StartSession(ctx, tenant, reg, in, o)
	if err != nil {
		return "", 0, err
	}
	return sess.ID, o.Lifetime, nil
}

// previewLifetime is how long a preview session may run: ApiTokenPostbackValidHours of the
// tenant and course.
func (s *Server) previewLifetime(ctx context.Context, tenant, courseID string) (time.Duration, error) {
	layers, err := s.deps.Settings.Layers(ctx, tenant, settings.TenantScope, settings.CourseScope(courseID))
	if err != nil {
		return 0, err
	}
	h, err := s.sessionHours(layers)
	return time.Duration(h) * time.Hour, err
}

// touchSession records a sign of life of a tracked session in activity; a *sessionRefused
// when the session was taken over by a later launch or has expired. Sessions without a
// recorded launch (previews, reviews) are not measured.
func (s *Server) touchSession(ctx context.Context, sess *course.SessionClaims, activity string, sig registration.Signal) (*registration.Session, error) {
	if sess.Launch == "" || sess.Preview || sess.ForceReview {
		return nil, nil
	}
	ls, err := s.deps.Registrations.Touch(ctx, sess.Tenant, sess.Launch, activity, sig)
	switch {
	case errors.Is(err, registration.ErrSessionSuperseded) && ls.ForceExit:
		return nil, &sessionRefused{status: fiber.StatusConflict, reason: reasonConcurrentExit,
			msg: "this course was opened in another window, so it was closed here; what you did before is saved. Continue in the other window."}
	case errors.Is(err, registration.ErrSessionSuperseded):
		return nil, &sessionRefused{status: fiber.StatusConflict, reason: reasonConcurrent,
			msg: "this course was opened in another window, so this window no longer saves progress. Continue in the other window."}
	case errors.Is(err, registration.ErrSessionExpired):
		return nil, &sessionRefused{status: fiber.StatusForbidden, reason: reasonExpired,
			msg: "this player session is older than ApiTokenPostbackValidHours allows and can no longer save progress; launch the course again"}
	case errors.Is(err, registration.ErrNotFound):
		return nil, errorf(fiber.StatusGone, "registration '%s' was deleted or reset since this launch; launch it again", sess.RegistrationID)
	}
	return ls, err
}

// playerHeartbeat answers POST /player/runtime/{session}/heartbeat?activity=…&state=…: the
// page's sign of life while it is visible (state active, the default), and its notices that
// it was hidden (hidden) or left (exit), for every standard. The measured time of the
// instance is stored in its progress at once, so /progress follows a session without a
// commit. Answered like a commit (CommitAnswer), with the refusal's reason.
func (s *Server) playerHeartbeat(c *fiber.Ctx) error {
	ctx := c.UserContext()
	c.Set(fiber.HeaderCacheControl, "no-store")
	sess, err := s.deps.Launch.VerifySession(c.Params("session"), time.Now())
	if err != nil {
		return commitRefused(c, fiber.StatusForbidden, 101, "the player session is invalid or has expired; launch the course again")
	}
	sig := registration.SignalActive
	switch c.Query("state") {
	case "", "active":
	case "hidden":
		sig = registration.SignalHidden
	case "exit":
		sig = registration.SignalExit
	default:
		return commitRefused(c, fiber.StatusBadRequest, 201, "query parameter state must be active, hidden or exit")
	}
	v, err := s.sessionVersion(ctx, sess)
	if errors.Is(err, course.ErrCourseNotFound) {
		return commitRefused(c, fiber.StatusNotFound, 101, "the course of this session was deleted")
	}
	if err != nil {
		return err
	}
	activity := c.Query("activity")
	if !hasActivity(v.Package, activity) {
		return commitRefused(c, fiber.StatusNotFound, 101, fmt.Sprintf("activity '%s' is not an activity of course '%s'", activity, v.CourseID))
	}
	ls, err := s.touchSession(ctx, sess, activity, sig)
	var sr *sessionRefused
	var e *Error
	switch {
	case errors.As(err, &sr):
		return sr.answer(c)
	case errors.As(err, &e):
		return commitRefused(c, e.Status, 101, e.Message)
	case err != nil:
		return err
	}
	if ls != nil {
		t, err := s.deps.Registrations.TrackedTime(ctx, sess.Tenant, sess.RegistrationID, sess.InstanceKey)
		if err == nil {
			err = s.deps.Registrations.SetTrackedSeconds(ctx, sess.Tenant, sess.RegistrationID, sess.InstanceKey, t.Seconds)
		}
		if errors.Is(err, registration.ErrNotFound) {
			return commitRefused(c, fiber.StatusGone, 101, fmt.Sprintf("registration '%s' was deleted or reset since this launch; launch it again", sess.RegistrationID))
		}
		if err != nil {
			return err
		}
	}
	return c.JSON(CommitAnswer{Result: "true"})
}

// useMeasuredTime puts the time the server measured of an instance's player sessions into
// its rollup (rollup.Result.UseMeasuredTime).
func (s *Server) useMeasuredTime(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, v *course.Version, state rollup.State, res *rollup.Result) error {
	t, err := s.deps.Registrations.TrackedTime(ctx, tenant, reg.ID, in.Key)
	if err != nil {
		return err
	}
	res.UseMeasuredTime(v.Package, state, t)
	return nil
}

// statementSession counts statements stored with a launch credential as signs of life of the
// player session the content was launched in. The statements are stored whatever happens
// here: a session taken over by a later launch or expired only stops counting time (the
// record store does not refuse statements, which are never overwritten), and a failure is
// logged.
func (s *Server) statementSession(ctx context.Context, tenant string, p *LRSPrincipal) {
	if p == nil || p.LaunchSession == "" {
		return
	}
	_, err := s.deps.Registrations.Touch(ctx, tenant, p.LaunchSession, "", registration.SignalActive)
	if err != nil && !errors.Is(err, registration.ErrSessionSuperseded) && !errors.Is(err, registration.ErrSessionExpired) &&
		!errors.Is(err, registration.ErrNotFound) {
		s.log.Warn("player session not touched by a statement", "tenant", tenant, "session", p.LaunchSession, "error", err)
	}
}
