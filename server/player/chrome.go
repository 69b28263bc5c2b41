package player

import (
	"context"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course"
)

// The player's chrome and launch settings: what the page shows around the content, how the
// player and its activities open, and the launch parameters passed on to the content
// (docs/decisions.md, "Player chrome and launch settings").

// playerChrome resolves the chrome settings of a session whose course has scos launchable
// activities, and the PlayerLaunchType. A PlayerShow* setting left empty takes the package's
// value; SCORM, AICC, xAPI and cmi5 packages carry none, so Lectern's are: the title bar and
// the Exit button shown, the table of contents and Previous/Next shown when the course has
// more than one launchable activity, the rest hidden.
func (s *API) playerChrome(ctx context.Context, sess *course.SessionClaims, scos int) (Chrome, string, error) {
	layers, err := s.deps.Learner.SessionLayers(ctx, sess)
	if err != nil {
		return Chrome{}, "", err
	}
	cat := s.deps.Settings.Catalogue()
	var firstErr error
	get := func(id string) string {
		v, err := cat.Resolve(id, layers...)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	}
	show := func(id string, pkg bool) bool {
		switch get(id) {
		case "true":
			return true
		case "false":
			return false
		}
		return pkg
	}
	multi := scos > 1
	ch := Chrome{
		Finish: show("PlayerShowFinishButton", true), Close: show("PlayerShowCloseItem", false),
		Nav: show("PlayerShowNavBar", multi), Progress: show("PlayerShowProgressBar", false),
		Help: show("PlayerShowHelp", false), Title: show("PlayerShowTitleBar", true),
		Structure: show("PlayerShowCourseStructure", multi), ScoLaunch: get("PlayerScoLaunchType"),
		PromptOnClose: get("PromptOnPlayerClose") == "true", RedirectOnRefresh: get("RedirectOnRefreshUrl"),
		RedirectLaunchPage: get("RedirectLaunchPageOnExit") == "true", Total: scos,
	}
	launchType := get("PlayerLaunchType")
	return ch, launchType, firstErr
}

// windowFeatures are window.open's features for a launch type: a popup without toolbar and
// address bar for the WITHOUT_BROWSER_TOOLBAR kinds, an ordinary window otherwise.
func windowFeatures(launchType string) string {
	if strings.HasSuffix(launchType, "WITHOUT_BROWSER_TOOLBAR") {
		return "popup=yes,toolbar=no,location=no,menubar=no,status=no,resizable=yes,scrollbars=yes,width=1024,height=768"
	}
	return ""
}

// playerLauncher answers the player page's URL, when PlayerLaunchType opens the player in a
// new window, with the page that opens it there (at the same URL with window=1).
func playerLauncher(c *fiber.Ctx, title, token, launchType string) error {
	page, err := LauncherPage(Launcher{Title: title, URL: "/player/session/" + token + "?window=1",
		Features: windowFeatures(launchType), AfterClick: strings.Contains(launchType, "AFTER_CLICK")})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Type("html", "utf-8")
	return c.Send(page)
}

// supplementalParams picks from a launch request's query the parameters that
// SupplementalQueryStringParametersForAllActivities names (comma-separated, case-sensitive
// as URLs are), encoded for the session.
func supplementalParams(names string, query url.Values) string {
	out := url.Values{}
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n != "" && len(query[n]) > 0 {
			out[n] = query[n]
		}
	}
	return out.Encode()
}

// launchSupplemental is the encoded supplemental parameters of a launch request.
func (s *API) launchSupplemental(c *fiber.Ctx, claims *course.LaunchClaims) (string, error) {
	raw := string(c.Request().URI().QueryString())
	if raw == "" {
		return "", nil
	}
	query, err := url.ParseQuery(raw)
	if err != nil {
		// A launch link's own query is Lectern's; anything unreadable appended to it is ignored.
		return "", nil
	}
	layers, err := s.deps.Learner.SessionLayers(c.UserContext(), &course.SessionClaims{Tenant: claims.Tenant, CourseID: claims.CourseID, RegistrationID: claims.RegistrationID})
	if err != nil {
		return "", err
	}
	names, err := s.deps.Settings.Catalogue().Resolve("SupplementalQueryStringParametersForAllActivities", layers...)
	if err != nil || names == "" {
		return "", err
	}
	return supplementalParams(names, query), nil
}

// withQuery appends an encoded query to a URL that may already have one.
func withQuery(u, q string) string {
	if q == "" {
		return u
	}
	if strings.Contains(u, "?") {
		return u + "&" + q
	}
	return u + "?" + q
}
