package engineapi

import (
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/server/httpx"
)

// registerLaunchLink registers the engine's launchLink operation; the player (server/player)
// serves what the link opens.
func (a *API) registerLaunchLink(r httpx.Registrar, engine string) {
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: engine + "/registrations/:registrationId/launchLink", Summary: "Launch link of a registration", Tag: "registrations",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "LaunchLinkBody", Query: []httpx.Param{
			{Name: "expiry", Type: "integer", Description: "seconds until the link expires; 0 (the default) never"},
			{Name: "forceReview", Type: "boolean", Description: "launch in review mode: the content runs but the registration is not changed"},
			{Name: "startSco", Type: "string", Description: "id of the activity to launch first"},
			{Name: "redirectOnExitUrl", Type: "string", Description: "where the learner goes on exit: an absolute http(s) URL, or closer, blank or message (the default)"},
			{Name: "singleUse", Type: "boolean", Description: "Lectern extension: the link works for one launch only; a second launch gets a 410 page"},
			configurationParam}}, a.registrationLaunchLink)
}

// validRedirect reports whether v is a redirectOnExitUrl the player can follow.
func validRedirect(v string) bool {
	switch v {
	case "", "closer", "blank", "message":
		return true
	}
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (a *API) registrationLaunchLink(c *fiber.Ctx) error {
	reg, err := a.registration(c)
	if err != nil {
		return err
	}
	in := reg.Current()
	v, err := a.d.Courses.PinnedVersion(c.UserContext(), httpx.TenantOf(c), reg.CourseID, in.CourseVersion, in.Course.Updated)
	if err != nil {
		return err
	}
	claims := course.LaunchClaims{Tenant: httpx.TenantOf(c), CourseID: reg.CourseID, Version: in.CourseVersion, RegistrationID: reg.ID,
		StartSco: c.Query("startSco"), RedirectOnExit: c.Query("redirectOnExitUrl")}
	if claims.ForceReview, err = httpx.QueryBool(c, "forceReview", false); err != nil {
		return err
	}
	single, err := httpx.QueryBool(c, "singleUse", false)
	if err != nil {
		return err
	}
	if single {
		claims.Nonce = uuid.NewString()
	}
	expiry, err := httpx.QueryInt(c, "expiry", 0, 0, 1<<31-1)
	if err != nil {
		return err
	}
	if expiry > 0 {
		claims.Expires = time.Now().Add(time.Duration(expiry) * time.Second).Unix()
	}
	if !validRedirect(claims.RedirectOnExit) {
		return httpx.BadRequest("redirectOnExitUrl must be an absolute http(s) URL or one of closer, blank, message")
	}
	if claims.RedirectOnExit == "" {
		layers, err := a.registrationLayers(c, reg)
		if err != nil {
			return err
		}
		if claims.RedirectOnExit, err = a.d.Settings.Catalogue().Resolve("RedirectOnExitUrl", layers...); err != nil {
			return err
		}
	}
	if claims.StartSco != "" && !learner.HasActivity(v.Package, claims.StartSco) {
		return httpx.BadRequest("startSco '%s' is not an activity of course '%s'", claims.StartSco, reg.CourseID)
	}
	return c.JSON(LaunchLinkBody{LaunchLink: a.d.PlayerURL + "/player/launch/" + a.d.Launch.Sign(claims)})
}
