package player

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/sequencing"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/server/httpx"
)

// playerNavigate answers POST /player/runtime/{session}/navigate?request=…&target=…: a
// navigation request of the learner (the player's Previous, Next, table of contents, Exit) for
// a SCORM 2004 course, run by the sequencer on the server. The answer is learner.NavState:
// the activity to deliver next or that the session ended, the table of contents and the
// request_valid answers; a request the sequencer does not honour now is answered 200 with
// its exception. Bad input (an unknown request, a missing target or one that is not an
// activity, a course that is not SCORM 2004) is a 400.
func (s *API) playerNavigate(c *fiber.Ctx) error {
	ctx := c.UserContext()
	c.Set(fiber.HeaderCacheControl, "no-store")
	sess, err := s.playerSession(c)
	if err != nil {
		return err
	}
	v, err := s.deps.Learner.SessionVersion(ctx, sess)
	if err != nil {
		return err
	}
	if !learner.Sequenced(v) {
		return httpx.BadRequest("course '%s' is %s: only SCORM 2004 courses are sequenced", v.CourseID, v.Standard)
	}
	req, err := navRequest(v, c.Query("request"), c.Query("target"))
	if err != nil {
		return err
	}
	if _, err := s.deps.Learner.Touch(ctx, sess, "", registration.SignalActive); err != nil {
		if answered, ok := sessionRefusal(c, err); ok {
			return answered
		}
		return err
	}
	nav, err := s.deps.Learner.SequencingNavigate(ctx, sess, c.Params("session"), v, req)
	if errors.Is(err, registration.ErrNotFound) {
		return httpx.Errorf(fiber.StatusGone, "registration '%s' was deleted since this launch; launch it again", sess.RegistrationID)
	}
	if err != nil {
		return err
	}
	return c.JSON(nav)
}

// navRequest reads the navigate endpoint's request and target for the course v.
func navRequest(v *course.Version, request, target string) (sequencing.Request, error) {
	kind := sequencing.Kind(request)
	if !kind.Known() {
		return sequencing.Request{}, httpx.BadRequest("query parameter request must be one of start, resumeAll, continue, previous, choice, jump, exit, exitAll, abandon, abandonAll, suspendAll; got %q", request)
	}
	if kind != sequencing.Choice && kind != sequencing.Jump {
		if target != "" {
			return sequencing.Request{}, httpx.BadRequest("query parameter target is only for choice and jump requests")
		}
		return sequencing.Request{Kind: kind}, nil
	}
	if strings.TrimSpace(target) == "" {
		return sequencing.Request{}, httpx.BadRequest("a %s request needs query parameter target, the activity to go to", request)
	}
	found := false
	v.Package.Root.Walk(func(a *course.Activity) { found = found || a.ID == target })
	if !found {
		return sequencing.Request{}, httpx.BadRequest("target '%s' is not an activity of course '%s'", target, v.CourseID)
	}
	return sequencing.Request{Kind: kind, Target: target}, nil
}
