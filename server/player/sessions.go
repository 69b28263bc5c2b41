package player

import (
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/learner"
)

// Player sessions are the learner's path's (learner.Service.Touch, Heartbeat); this file
// answers their refusals as the player page expects them.

// sessionStatus is the HTTP status of a refused session post by its reason: a later launch
// took the session over (409), or it expired (403).
func sessionStatus(reason string) int {
	if reason == learner.ReasonExpired {
		return fiber.StatusForbidden
	}
	return fiber.StatusConflict
}

// sessionRefusal answers a post the learner's path refused with a *learner.SessionError or
// learner.ErrGone (410); ok is false for any other error, which the caller handles.
func sessionRefusal(c *fiber.Ctx, err error) (answered error, ok bool) {
	var se *learner.SessionError
	switch {
	case errors.As(err, &se):
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.Status(sessionStatus(se.Reason)).JSON(CommitAnswer{Result: "false", ErrorCode: 101, ErrorMessage: se.Message,
			Message: se.Message, Reason: se.Reason}), true
	case errors.Is(err, learner.ErrGone):
		return commitRefused(c, fiber.StatusGone, 101, err.Error()), true
	}
	return nil, false
}

// playerHeartbeat answers POST /player/runtime/{session}/heartbeat?activity=…&state=…: the
// page's sign of life while it is visible (state active, the default), and its notices that
// it was hidden (hidden) or left (exit), for every standard. The measured time of the
// instance is stored in its progress at once, so /progress follows a session without a
// commit. Answered like a commit (CommitAnswer), with the refusal's reason.
func (s *API) playerHeartbeat(c *fiber.Ctx) error {
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
	v, err := s.deps.Learner.SessionVersion(ctx, sess)
	if errors.Is(err, course.ErrCourseNotFound) {
		return commitRefused(c, fiber.StatusNotFound, 101, "the course of this session was deleted")
	}
	if err != nil {
		return err
	}
	activity := c.Query("activity")
	if !learner.HasActivity(v.Package, activity) {
		return commitRefused(c, fiber.StatusNotFound, 101, fmt.Sprintf("activity '%s' is not an activity of course '%s'", activity, v.CourseID))
	}
	if err := s.deps.Learner.Heartbeat(ctx, sess, activity, sig); err != nil {
		if answered, ok := sessionRefusal(c, err); ok {
			return answered
		}
		return err
	}
	return c.JSON(CommitAnswer{Result: "true"})
}
