package player

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/lrs/launch"
	"github.com/lectern-lms/lectern/server/httpx"
)

// The cmi5 launch method (cmi5 section 8): the player opens /player/cmi5/{session}/launch (in
// its frame for an AnyWindow AU, as the whole window for an OwnWindow one), which writes the
// AU's LMS.LaunchData state document and redirects to the AU with endpoint, fetch,
// registration, activityId and actor; the AU's one call to the fetch URL returns the
// record-store credential. An OwnWindow AU gets a returnURL, /player/cmi5/{session}/return,
// which brings the learner back to the player.

// Cmi5FetchAnswer is the fetch URL's answer: the credential, or a cmi5 error.
type Cmi5FetchAnswer struct {
	AuthToken string `json:"auth-token,omitempty"`
	ErrorCode string `json:"error-code,omitempty"`
	ErrorText string `json:"error-text,omitempty"`
}

func (s *API) registerCMI5() {
	s.browser(fiber.MethodGet, "/player/cmi5/:session/launch", httpx.MaxNoBody, s.cmi5Launch)
	s.browser(fiber.MethodPost, "/player/cmi5/fetch/:token", httpx.MaxNoBody, s.cmi5Fetch)
	s.browser(fiber.MethodGet, "/player/cmi5/:session/return", httpx.MaxNoBody, s.cmi5Return)
}

// ownWindow reports whether an AU runs as the whole window rather than in the player's frame.
func ownWindow(au *course.Activity) bool {
	return au.CMI5 != nil && au.CMI5.LaunchMethod == "OwnWindow"
}

// cmi5Return is an OwnWindow AU's returnURL: back to the player page of the session, told
// which AU returned, so it does not launch that AU again (a one-AU course then exits as the
// player's exit settings say, a longer one shows its table of contents).
func (s *API) cmi5Return(c *fiber.Ctx) error {
	token := c.Params("session")
	if _, err := s.deps.Launch.VerifySession(token, time.Now()); err != nil {
		return htmlError(c, fiber.StatusForbidden, "This player session has ended", "Launch the course again from the system that sent you here.")
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect("/player/session/"+token+"?"+url.Values{"returned": {c.Query("au")}}.Encode(), fiber.StatusFound)
}

func (s *API) cmi5Launch(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess, err := s.deps.Launch.VerifySession(c.Params("session"), time.Now())
	if err != nil {
		return htmlError(c, fiber.StatusForbidden, "This player session has ended", "Launch the course again from the system that sent you here.")
	}
	v, err := s.deps.Learner.SessionVersion(ctx, sess)
	if err != nil {
		return err
	}
	var au *course.Activity
	if v.Package != nil && v.Standard == course.CMI5 {
		v.Package.Root.Walk(func(a *course.Activity) {
			if au == nil && a.ID == c.Query("au") && learner.Launchable(a) && a.CMI5 != nil {
				au = a
			}
		})
	}
	if au == nil {
		return htmlError(c, fiber.StatusNotFound, "This unit cannot be launched", "It is not an assignable unit of this course.")
	}
	base, own := s.origins(c)
	target := contentURL(c.Params("session"), au.LaunchURL)
	w := learner.CMI5Window{LaunchURL: target}
	if !strings.Contains(target, "://") {
		w.LaunchURL = own + target
	}
	if ownWindow(au) {
		w.ReturnURL = own + "/player/cmi5/" + c.Params("session") + "/return?" + url.Values{"au": {au.ID}}.Encode()
	}
	l, err := s.deps.Learner.LaunchCMI5(ctx, sess, v, au, base, w)
	if errors.Is(err, registration.ErrNotFound) {
		return htmlError(c, fiber.StatusNotFound, "This registration no longer exists", "The enrolment this link was made for has been deleted.")
	}
	if errors.Is(err, learner.ErrUnavailable) {
		return htmlError(c, fiber.StatusServiceUnavailable, "This course cannot be launched here", "This server has no record store for cmi5 content.")
	}
	if err != nil {
		return err
	}
	life, err := s.deps.Learner.LaunchTokenLife(ctx, sess)
	if err != nil {
		return err
	}
	tok := s.deps.Launch.SignFetch(course.FetchClaims{Tenant: sess.Tenant, RegistrationID: l.RegistrationID, Actor: l.Actor, ActorIFI: l.ActorIFI,
		Launch: sess.Launch, Nonce: uuid.NewString(), Expires: sess.Expires, TokenLife: int64(life / time.Second), CMI5: &l.Session})
	q := url.Values{"endpoint": {l.Endpoint}, "fetch": {own + "/player/cmi5/fetch/" + tok},
		"registration": {l.XAPIRegistration}, "activityId": {l.ActivityID}, "actor": {string(l.Actor)}}
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(withQuery(target+sep+launchQuery(q), sess.Supplemental), fiber.StatusFound)
}

func activityOf(c *course.CMI5Session) string {
	if c == nil {
		return ""
	}
	return c.ActivityID
}

func (s *API) cmi5Fetch(c *fiber.Ctx) error {
	ctx := c.UserContext()
	c.Set(fiber.HeaderCacheControl, "no-store")
	fc, err := s.deps.Launch.VerifyFetch(c.Params("token"), time.Now())
	if err != nil {
		// cmi5 error code 2: the fetch URL is not valid (or no longer).
		return c.JSON(Cmi5FetchAnswer{ErrorCode: "2", ErrorText: "this fetch URL is not valid or has expired"})
	}
	err = s.deps.Registrations.ConsumeLaunch(ctx, fc.Tenant, fc.RegistrationID, "cmi5-fetch-"+fc.Nonce)
	if errors.Is(err, registration.ErrLaunchUsed) {
		// cmi5 error code 1: the fetch URL was already used.
		return c.JSON(Cmi5FetchAnswer{ErrorCode: "1", ErrorText: "this fetch URL was already used"})
	}
	if err != nil {
		return err
	}
	life := time.Duration(fc.TokenLife) * time.Second
	if life <= 0 {
		// A fetch URL of before the setting: as long as its session.
		life = time.Until(time.Unix(fc.Expires, 0))
	}
	token, _ := s.deps.LaunchTokens.Issue(launch.Claims{Tenant: fc.Tenant, Registration: fc.RegistrationID, Actor: fc.Actor, ActorIFI: fc.ActorIFI,
		Session: fc.Launch, ActivityID: activityOf(fc.CMI5), CMI5: fc.CMI5}, life, time.Now())
	return c.JSON(Cmi5FetchAnswer{AuthToken: base64.StdEncoding.EncodeToString([]byte(launch.User + ":" + token))})
}
