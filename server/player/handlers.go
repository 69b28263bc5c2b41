package player

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/server/httpx"

	"github.com/lectern-lms/lectern/storage/blob"
)

// The player: launch links of registrations, the launch page, the player page, the course
// files on the player's origin and the SCORM runtime endpoint. The CMI data model lives in
// course/runtime and the page in server/player; this file only translates HTTP.

// browser registers a route of the player: pages, course files and the runtime endpoints the
// content calls (SCORM commits, HACP, cmi5 fetch). They answer browsers and content in the
// formats those expect (HTML pages, the files' own types, scorm-again's and HACP's answers),
// not the API's JSON, so they are not part of /openapi.json; docs/decisions.md describes them.
// Each has a body limit: a declared length over it is refused (413) before the handler runs,
// and the handlers that read a body (commits, HACP) read it only after checking the session
// token (httpx.ReadBody), so a request without one costs no more than its header.
func (s *API) browser(method, path string, limit int64, h fiber.Handler, head ...bool) {
	s.limits = append(s.limits, httpx.PageRoute{Method: method, Path: path, Limit: limit})
	s.app.Add(method, path, httpx.LimitHandler(limit), h)
	if len(head) > 0 && head[0] {
		s.app.Add(fiber.MethodHead, path, httpx.LimitHandler(limit), h)
	}
}

// Limits lists the player's routes with their body limits, so that the server can refuse an
// Expect: 100-continue over a route's limit from the header alone, before routing.
func (s *API) Limits() []httpx.PageRoute { return s.limits }

// Register adds the player's routes to r's application, in the order they must match.
func (s *API) Register(r httpx.Registrar) {
	s.app = r.Router()
	s.browser(fiber.MethodGet, "/player/launch/:token", httpx.MaxNoBody, s.playerLaunch)
	s.browser(fiber.MethodGet, "/player/session/:session", httpx.MaxNoBody, s.playerPage)
	s.browser(fiber.MethodGet, "/player/assets/scorm-again.js", httpx.MaxNoBody, s.playerScript)
	s.browser(fiber.MethodGet, "/player/content/:session/*", httpx.MaxNoBody, s.playerContent, true)
	s.browser(fiber.MethodGet, "/player/runtime/:session/activity", httpx.MaxNoBody, s.playerActivity)
	s.browser(fiber.MethodGet, "/player/runtime/:session/locked", httpx.MaxNoBody, s.playerLocked)
	s.registerCMI5()
	s.browser(fiber.MethodPost, "/player/hacp/:session", httpx.MaxJSONBody, s.playerHACP)
	// A commit may carry the whole data model (10,000 interactions, 64,000 characters of
	// suspend data): the runtime's own bound, not the JSON default.
	s.browser(fiber.MethodPost, "/player/runtime/:session/commit", scormrt.MaxBody, s.playerCommit)
	s.browser(fiber.MethodPost, "/player/runtime/:session/heartbeat", httpx.MaxNoBody, s.playerHeartbeat)
	// A navigation request is all in its query: no body.
	s.browser(fiber.MethodPost, "/player/runtime/:session/navigate", httpx.MaxNoBody, s.playerNavigate)
}

func htmlError(c *fiber.Ctx, status int, title, text string) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Type("html", "utf-8")
	return c.Status(status).Send(ErrorPage(title, text))
}

func (s *API) playerLaunch(c *fiber.Ctx) error {
	ctx := c.UserContext()
	token := c.Params("token")
	claims, err := s.deps.Launch.Verify(token, time.Now())
	if err != nil {
		// A genuine link that verifies at the epoch has only expired.
		if _, e := s.deps.Launch.Verify(token, time.Unix(0, 0)); e == nil {
			return htmlError(c, fiber.StatusGone, "This launch link has expired", "Ask for a new link from the system that sent you here.")
		}
		return htmlError(c, fiber.StatusForbidden, "This launch link is not valid", "The link is damaged or was not issued by this server. Ask for a new link.")
	}
	if _, err := s.deps.Tenants.Get(ctx, claims.Tenant); err != nil {
		return htmlError(c, fiber.StatusNotFound, "This course is no longer available", "The organisation this link belongs to does not exist any more.")
	}
	sess := course.SessionClaims{Tenant: claims.Tenant, CourseID: claims.CourseID, Version: claims.Version, Preview: claims.Preview,
		ForceReview: claims.ForceReview, StartSco: claims.StartSco, RedirectOnExit: claims.RedirectOnExit}
	if sess.Supplemental, err = s.launchSupplemental(c, claims); err != nil {
		return err
	}
	// A session lives ApiTokenPostbackValidHours: the page, its files and its posts.
	lifetime := time.Duration(0)
	if claims.Preview {
		if lifetime, err = s.deps.Learner.PreviewLifetime(ctx, claims.Tenant, claims.CourseID); err != nil {
			return err
		}
	} else {
		reg, err := s.deps.Registrations.Get(ctx, claims.Tenant, claims.RegistrationID)
		if errors.Is(err, registration.ErrNotFound) {
			return htmlError(c, fiber.StatusNotFound, "This registration no longer exists", "The enrolment this link was made for has been deleted.")
		}
		if err != nil {
			return err
		}
		if claims.Nonce != "" {
			err := s.deps.Registrations.ConsumeLaunch(ctx, claims.Tenant, reg.ID, claims.Nonce)
			if errors.Is(err, registration.ErrLaunchUsed) {
				return htmlError(c, fiber.StatusGone, "This launch link was already used", "Each copy of this link opens the course once. Ask for a new link.")
			}
			if err != nil {
				return err
			}
		}
		if reg, err = s.deps.Learner.RestartIfDue(ctx, claims.Tenant, reg); err != nil {
			return err
		}
		in := reg.Current()
		if err := s.deps.Registrations.RecordAccess(ctx, claims.Tenant, reg, in, time.Now()); err != nil {
			return err
		}
		sess.RegistrationID, sess.Instance, sess.InstanceKey, sess.Version = reg.ID, in.Number, in.Key, in.CourseVersion
		if claims.ForceReview {
			// A review tracks nothing: no measured session, no concurrent launch.
			if lifetime, err = s.deps.Learner.SessionLifetime(ctx, claims.Tenant, reg); err != nil {
				return err
			}
		} else if sess.Launch, lifetime, err = s.deps.Learner.StartSession(ctx, claims.Tenant, reg, in); err != nil {
			return err
		}
		if sess.NoCredit, err = s.deps.Learner.LaunchesNoCredit(ctx, claims.Tenant, reg, in); err != nil {
			return err
		}
	}
	sess.Expires = time.Now().Add(lifetime).Unix()
	if _, err := s.deps.Courses.Version(ctx, sess.Tenant, sess.CourseID, sess.Version); errors.Is(err, course.ErrCourseNotFound) {
		return htmlError(c, fiber.StatusNotFound, "This course is no longer available", "The course was deleted.")
	} else if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	// A redirect, so reloading the player does not launch (and consume a single-use link) again.
	return c.Redirect("/player/session/"+s.deps.Launch.SignSession(sess), fiber.StatusSeeOther)
}

// origins are the APIs' origin (the record store's endpoint) and the player's own (the
// content origin, server/origin.go); unset, each is the request's.
func (s *API) origins(c *fiber.Ctx) (api, own string) {
	api, own = s.deps.PublicURL, s.deps.ContentURL
	if api == "" {
		api = c.BaseURL()
	}
	if own == "" {
		own = c.BaseURL()
	}
	return api, own
}

// playerSession verifies the path's session token.
func (s *API) playerSession(c *fiber.Ctx) (*course.SessionClaims, error) {
	sess, err := s.deps.Launch.VerifySession(c.Params("session"), time.Now())
	if err != nil {
		return nil, httpx.Errorf(fiber.StatusForbidden, "the player session is invalid or has expired; launch the course again")
	}
	return sess, nil
}

// contentURL is where the player's iframe loads a launch URL of the package.
func contentURL(session, launch string) string {
	if u, err := url.Parse(launch); err == nil && u.IsAbs() {
		return launch
	}
	p, q, hasQ := strings.Cut(launch, "?")
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	out := "/player/content/" + session + "/" + strings.Join(segs, "/")
	if hasQ {
		out += "?" + q
	}
	return out
}

// runtimeDialect is the CMI data model a course's runtime data is kept in: AICC's is the one
// SCORM 1.2 inherited.
func runtimeDialect(std course.Standard) (scormrt.Dialect, bool) {
	if std == course.AICC {
		return scormrt.SCORM12, true
	}
	return scormrt.DialectOf(std)
}

func (s *API) playerPage(c *fiber.Ctx) error {
	sess, err := s.deps.Launch.VerifySession(c.Params("session"), time.Now())
	if err != nil {
		return htmlError(c, fiber.StatusForbidden, "This player session has ended", "Launch the course again from the system that sent you here.")
	}
	// The page lists the course's activities: like the files, it ends with the registration.
	if err := s.deps.Learner.ContentOpen(c.UserContext(), sess); errors.Is(err, learner.ErrGone) {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return htmlError(c, fiber.StatusGone, "This registration no longer exists", "It was deleted or reset since this launch. Launch the course again from the system that sent you here.")
	}
	v, err := s.deps.Learner.SessionVersion(c.UserContext(), sess)
	if errors.Is(err, course.ErrCourseNotFound) {
		return htmlError(c, fiber.StatusNotFound, "This course is no longer available", "The course was deleted.")
	}
	if err != nil {
		return err
	}
	d, ok := runtimeDialect(v.Standard)
	xapi, cmi5 := v.Standard == course.XAPI, v.Standard == course.CMI5
	if (!ok && !xapi && !cmi5) || v.Package == nil || v.Package.Root == nil {
		return htmlError(c, fiber.StatusNotImplemented, "This course cannot be played yet",
			fmt.Sprintf("The player runs SCORM 1.2, SCORM 2004, AICC, xAPI (TinCan) and cmi5 courses; this one is %s.", v.Standard))
	}
	if _, ok := RuntimeScript(); !ok {
		return htmlError(c, fiber.StatusServiceUnavailable, "The player is not installed", "This server was built without the player's scripts (run scripts/web-assets.sh before building).")
	}
	token := c.Params("session")
	vs, err := s.deps.Learner.SessionSettings(c.UserContext(), sess, "PlayerCommCommitFrequency", settingSuspendDataMax,
		"PlayerCommMaxFailedSubmissions", "PlayerFinishCausesImmediateCommit")
	if err != nil {
		return err
	}
	ms, _ := strconv.Atoi(vs["PlayerCommCommitFrequency"])
	scos := 0
	v.Package.Root.Walk(func(a *course.Activity) {
		if learner.Launchable(a) && (!cmi5 || (a.CMI5 != nil && !a.CMI5.Block)) {
			scos++
		}
	})
	chrome, launchType, err := s.playerChrome(c.UserContext(), sess, scos)
	if err != nil {
		return err
	}
	if launchType != "" && launchType != "FRAMESET" && c.Query("window") == "" {
		return playerLauncher(c, v.Title, token, launchType)
	}
	if chrome.Progress {
		if chrome.Completed, err = s.deps.Learner.CompletedActivities(c.UserContext(), sess); err != nil {
			return err
		}
	}
	start := sess.StartSco
	var nav *learner.NavState
	if learner.Sequenced(v) {
		// SCORM 2004: the sequencer says where the session starts (start, resumeAll, or the
		// activity still current when the page is reloaded).
		if nav, err = s.deps.Learner.SequencingLaunch(c.UserContext(), sess, token, v); err != nil {
			return err
		}
		start = nav.Deliver
	} else if start == "" {
		// A relaunch goes on where the learner left (the last suspended or used activity).
		if start, err = s.deps.Learner.ResumeActivity(c.UserContext(), sess, v); err != nil {
			return err
		}
	}
	// Activities whose prerequisites are not met are locked: the page disables them and
	// skips them, and their load is refused.
	locked, err := s.deps.Learner.Locked(c.UserContext(), sess, v)
	if err != nil {
		return err
	}
	hasPrereqs := false
	v.Package.Root.Walk(func(a *course.Activity) { hasPrereqs = hasPrereqs || a.Prerequisites != "" })
	cfg := Config{Title: v.Title, Dialect: "1.2", Start: start, Returned: c.Query("returned"), RuntimeURL: "/player/runtime/" + token,
		ScriptURL: "/player/assets/scorm-again.js", Redirect: sess.RedirectOnExit, Preview: sess.Preview,
		CommitSeconds: float64(ms) / 1000, Chrome: chrome}
	cfg.Locked, cfg.Prerequisites = locked, hasPrereqs && !sess.Preview && !sess.ForceReview
	cfg.SuspendDataMax, _ = strconv.Atoi(vs[settingSuspendDataMax])
	cfg.MaxFailedSubmissions, _ = strconv.Atoi(vs["PlayerCommMaxFailedSubmissions"])
	cfg.FinishCommit = vs["PlayerFinishCausesImmediateCommit"] != "false"
	if d == scormrt.SCORM2004 {
		cfg.Dialect = "2004"
		cfg.Nav = nav
	}
	aicc := v.Standard == course.AICC
	if aicc {
		cfg.Dialect = "aicc"
	}
	// HACP wants an absolute URL for the AU to post to (on the player's origin); xAPI
	// content, the record store's endpoint (on the APIs').
	base, own := s.origins(c)
	if cmi5 {
		cfg.Dialect = "cmi5"
	}
	var tincan url.Values
	if xapi {
		cfg.Dialect = "xapi"
		if tincan, err = s.deps.Learner.XAPILaunch(c.UserContext(), sess, v, base); err != nil {
			return launchError(err)
		}
	}
	var walk func(a *course.Activity, depth int)
	walk = func(a *course.Activity, depth int) {
		// The root (organization, course) is listed when it is itself launchable (an xAPI
		// course with one activity) and in a sequenced SCORM 2004 course, where it is an
		// activity a choice may target (it starts the course's flow over, as Rustici's table
		// of contents offers it; ADL CM-04b, CM-07d): the sequencer's table of contents says
		// when it is enabled.
		if (a != v.Package.Root && a.Visible) || learner.Launchable(a) || (a == v.Package.Root && nav != nil) {
			e := Activity{ID: a.ID, Title: a.Title, Depth: depth}
			if learner.Launchable(a) && cmi5 {
				if a.CMI5 != nil && !a.CMI5.Block {
					e.URL = "/player/cmi5/" + token + "/launch?au=" + url.QueryEscape(a.ID)
					e.OwnWindow = ownWindow(a)
				}
			} else if learner.Launchable(a) {
				e.URL = contentURL(token, a.LaunchURL)
				if d == scormrt.SCORM2004 {
					e.Hide = a.HideLMSUI
				}
				if aicc {
					sep := "?"
					if strings.Contains(e.URL, "?") {
						sep = "&"
					}
					e.URL += sep + "aicc_sid=" + url.QueryEscape(a.ID) + "&aicc_url=" + url.QueryEscape(own+"/player/hacp/"+token)
				}
				if xapi {
					q := url.Values{}
					for k, vs := range tincan {
						q[k] = vs
					}
					q.Set("activity_id", learner.ActivityID(v.Package, a))
					sep := "?"
					if strings.Contains(e.URL, "?") {
						sep = "&"
					}
					e.URL += sep + launchQuery(q)
				}
				e.URL = withQuery(e.URL, sess.Supplemental)
			}
			cfg.Activities = append(cfg.Activities, e)
			depth++
		}
		for _, ch := range a.Children {
			walk(ch, depth)
		}
	}
	walk(v.Package.Root, 0)
	page, err := Page(cfg)
	if err != nil {
		return err
	}
	// The session is in the URL: links of the content to other sites must not carry it away.
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Type("html", "utf-8")
	return c.Send(page)
}

func (s *API) playerScript(c *fiber.Ctx) error {
	b, ok := RuntimeScript()
	if !ok {
		return httpx.NotFound("the player's scripts were not built into this server (scripts/web-assets.sh)")
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	c.Type("js", "utf-8")
	return c.Send(b)
}

// contentTypes covers the files course packages are made of, so the answer does not depend on
// the machine's mime.types.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
	".mjs": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".json": "application/json",
	".xml": "application/xml", ".txt": "text/plain; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp", ".ico": "image/x-icon",
	".mp4": "video/mp4", ".webm": "video/webm", ".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg",
	".m4a": "audio/mp4", ".vtt": "text/vtt; charset=utf-8", ".pdf": "application/pdf", ".woff": "font/woff",
	".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf", ".swf": "application/x-shockwave-flash", ".wasm": "application/wasm",
}

func contentType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := contentTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// playerFilePath decodes the file path of a content URL, refusing every way out of the course's
// folder: encoded slashes or backslashes, dot segments, empty segments and absolute paths.
func playerFilePath(raw string) (string, error) {
	low := strings.ToLower(raw)
	if strings.Contains(low, "%2f") || strings.Contains(low, "%5c") || strings.Contains(raw, "\\") {
		return "", httpx.BadRequest("file path must not contain encoded slashes or backslashes")
	}
	p, err := url.PathUnescape(raw)
	if err != nil {
		return "", httpx.BadRequest("file path is not valid URL encoding")
	}
	if p == "" || strings.HasPrefix(p, "/") {
		return "", httpx.BadRequest("file path must be relative to the course")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", httpx.BadRequest("file path must not contain empty, '.' or '..' segments")
		}
	}
	return p, nil
}

// byteRange parses a single-range Range header against size. ok false means "serve it all"
// (no header, or one this server does not split: several ranges); satisfiable false means 416.
func byteRange(h string, size int64) (start, end int64, ok, satisfiable bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, true
	}
	a, b, found := strings.Cut(spec, "-")
	if !found {
		return 0, 0, false, true
	}
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n <= 0 {
			return 0, 0, true, false
		}
		if n > size {
			n = size
		}
		return size - n, size - 1, true, size > 0
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 {
		return 0, 0, true, false
	}
	end = size - 1
	if b != "" {
		if end, err = strconv.ParseInt(b, 10, 64); err != nil || end < start {
			return 0, 0, true, false
		}
		if end > size-1 {
			end = size - 1
		}
	}
	return start, end, true, start < size
}

func (s *API) playerContent(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess, err := s.playerSession(c)
	if err != nil {
		return err
	}
	// A signed token lasts its session's lifetime; the files stop loading as soon as the
	// registration is deleted (or its course, which takes it along) or the session ends.
	var se *learner.SessionError
	switch err := s.deps.Learner.ContentOpen(ctx, sess); {
	case errors.Is(err, learner.ErrGone):
		c.Set(fiber.HeaderCacheControl, "no-store")
		return httpx.Errorf(fiber.StatusGone, "%s", err.Error())
	case errors.As(err, &se):
		c.Set(fiber.HeaderCacheControl, "no-store")
		return httpx.Errorf(fiber.StatusForbidden, "%s", se.Message)
	case err != nil:
		return err
	}
	p, err := playerFilePath(c.Params("*"))
	if err != nil {
		return err
	}
	v, err := s.deps.Learner.SessionVersion(ctx, sess)
	if err != nil {
		return err
	}
	if v.FilesPrefix == "" {
		return httpx.NotFound("course '%s' has no files on this server", sess.CourseID)
	}
	key, err := blob.CleanKey(v.FilesPrefix + p)
	if err != nil {
		return httpx.BadRequest("file path '%s' is not a valid file name", p)
	}
	info, err := s.deps.Blobs.Stat(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return httpx.NotFound("file '%s' is not part of the course", p)
	}
	if err != nil {
		return err
	}
	etag := `"` + strings.Trim(info.ETag, `"`) + `"`
	c.Set(fiber.HeaderETag, etag)
	c.Set(fiber.HeaderLastModified, info.ModTime.UTC().Format(time.RFC1123[:len(time.RFC1123)-3]+"GMT"))
	// The files of a course version never change, but the session in the URL expires.
	c.Set(fiber.HeaderCacheControl, "private, no-cache")
	c.Set(fiber.HeaderAcceptRanges, "bytes")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	c.Set(fiber.HeaderContentType, contentType(p))
	if inm := c.Get(fiber.HeaderIfNoneMatch); inm != "" && (inm == "*" || strings.Contains(inm, etag)) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	if ims := c.Get(fiber.HeaderIfModifiedSince); ims != "" && c.Get(fiber.HeaderIfNoneMatch) == "" {
		if t, err := time.Parse(time.RFC1123, ims); err == nil && !info.ModTime.Truncate(time.Second).After(t) {
			return c.SendStatus(fiber.StatusNotModified)
		}
	}
	start, end, partial, satisfiable := byteRange(c.Get(fiber.HeaderRange), info.Size)
	if ir := c.Get(fiber.HeaderIfRange); partial && ir != "" && ir != etag {
		partial, satisfiable = false, true
	}
	if !satisfiable {
		c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes */%d", info.Size))
		return httpx.Errorf(fiber.StatusRequestedRangeNotSatisfiable, "range %q is outside the file's %d bytes", c.Get(fiber.HeaderRange), info.Size)
	}
	if c.Method() == fiber.MethodHead {
		if partial {
			c.Status(fiber.StatusPartialContent)
			c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes %d-%d/%d", start, end, info.Size))
			c.Response().Header.SetContentLength(int(end - start + 1))
		} else {
			c.Response().Header.SetContentLength(int(info.Size))
		}
		c.Response().SkipBody = true
		return nil
	}
	if !partial {
		rc, _, err := s.deps.Blobs.Get(ctx, key)
		if err != nil {
			return err
		}
		return c.SendStream(rc, int(info.Size))
	}
	rc, err := s.deps.Blobs.GetRange(ctx, key, start, end-start+1)
	if err != nil {
		return err
	}
	c.Status(fiber.StatusPartialContent)
	c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes %d-%d/%d", start, end, info.Size))
	return c.SendStream(rc, int(end-start+1))
}

// CommitAnswer is the runtime endpoint's answer, in the shape scorm-again reads: result
// "true"/"false" and a SCORM error code; message says what was wrong.
type CommitAnswer struct {
	Result       string `json:"result"`
	ErrorCode    int    `json:"errorCode"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	Message      string `json:"message,omitempty"`
	// Reason names why a session's post was refused when the player page acts on it:
	// concurrent-launch (warn), concurrent-launch-exit (exit) or session-expired.
	Reason string `json:"reason,omitempty"`
	// Nav is the sequencer's answer to a SCORM 2004 commit: the State after the SCO's
	// outcome, and at Terminate what its pending adl.nav.request delivers.
	Nav *learner.NavState `json:"nav,omitempty"`
	// SharedDataMaps are the activity's SCORM 2004 shared data maps (adl.data.n is the n-th)
	// and SharedData the stores among them it may read that hold a value; the page hands
	// both to the runtime, and a commit carries back the stores the SCO wrote.
	SharedDataMaps []scormrt.SharedMap  `json:"sharedDataMaps,omitempty"`
	SharedData     scormrt.SharedStores `json:"sharedData,omitempty"`
}

func commitRefused(c *fiber.Ctx, status, code int, msg string) error {
	return c.Status(status).JSON(CommitAnswer{Result: "false", ErrorCode: code, ErrorMessage: msg, Message: msg})
}

// sessionActivity resolves the session, its course version and the query's activity, which
// must be a launchable activity of a SCORM course.
func (s *API) sessionActivity(c *fiber.Ctx, activityID string) (*course.SessionClaims, *course.Version, *course.Activity, scormrt.Dialect, error) {
	sess, err := s.playerSession(c)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	v, err := s.deps.Learner.SessionVersion(c.UserContext(), sess)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	d, ok := runtimeDialect(v.Standard)
	if !ok || v.Package == nil || v.Package.Root == nil {
		return nil, nil, nil, 0, httpx.BadRequest("course '%s' is %s, which has no SCORM runtime", v.CourseID, v.Standard)
	}
	id := activityID
	if id == "" {
		id = c.Query("activity")
	}
	var act *course.Activity
	v.Package.Root.Walk(func(a *course.Activity) {
		if act == nil && a.ID == id && learner.Launchable(a) {
			act = a
		}
	})
	if act == nil {
		return nil, nil, nil, 0, httpx.NotFound("activity '%s' is not a launchable activity of course '%s'", id, v.CourseID)
	}
	return sess, v, act, d, nil
}

// ActivityState answers GET /player/runtime/{session}/activity.
type ActivityState struct {
	Attempt int64          `json:"attempt"`
	CMI     scormrt.Values `json:"cmi"`
	// Nav is the sequencer's view for a SCORM 2004 course: the page answers the SCO's
	// adl.nav.request_valid.* from it.
	Nav *learner.NavState `json:"nav,omitempty"`
	// SharedDataMaps are the activity's SCORM 2004 shared data maps (adl.data.n is the n-th)
	// and SharedData the stores among them it may read that hold a value; the page hands
	// both to the runtime, and a commit carries back the stores the SCO wrote.
	SharedDataMaps []scormrt.SharedMap  `json:"sharedDataMaps,omitempty"`
	SharedData     scormrt.SharedStores `json:"sharedData,omitempty"`
}

func (s *API) playerActivity(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess, v, act, d, err := s.sessionActivity(c, "")
	if err != nil {
		return err
	}
	if err := s.refuseLocked(c, sess, v, act); err != nil {
		return err
	}
	reset, err := s.deps.Learner.SessionSetting(ctx, sess, settingResetRunTimeData)
	if err != nil {
		return err
	}
	values, err := s.deps.Learner.InitialValues(ctx, sess, act, d, reset)
	if err != nil {
		return err
	}
	st := ActivityState{Attempt: s.deps.Learner.NewAttempt(), CMI: values}
	if learner.Sequenced(v) {
		st.Nav, err = s.deps.Learner.SequencingActivity(ctx, sess, c.Params("session"), v, act.ID, values)
		if errors.Is(err, learner.ErrNotDelivered) {
			return httpx.Errorf(fiber.StatusConflict, "%v; ask for it with a navigation request (POST /player/runtime/{session}/navigate)", err)
		}
		if err != nil {
			return err
		}
	}
	if d == scormrt.SCORM2004 {
		// After the sequencer's delivery: a new attempt on the course starts with no stores
		// of its own (sharedDataGlobalToSystem false).
		if st.SharedDataMaps, st.SharedData, err = s.deps.Learner.SharedData(ctx, sess, v, act); err != nil {
			return err
		}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(st)
}

// refuseLocked refuses (403) the load of an activity whose prerequisites are not met.
func (s *API) refuseLocked(c *fiber.Ctx, sess *course.SessionClaims, v *course.Version, act *course.Activity) error {
	locked, err := s.deps.Learner.Locked(c.UserContext(), sess, v)
	if err != nil {
		return err
	}
	if expr, ok := locked[act.ID]; ok {
		return httpx.Errorf(fiber.StatusForbidden, "activity '%s' is locked: its prerequisites (%s) are not met yet", act.ID, expr)
	}
	return nil
}

// Locks answers GET /player/runtime/{session}/locked: the activities the learner may not
// launch yet, each with its unmet prerequisites.
type Locks struct {
	Locked map[string]string `json:"locked"`
}

func (s *API) playerLocked(c *fiber.Ctx) error {
	sess, err := s.playerSession(c)
	if err != nil {
		return err
	}
	v, err := s.deps.Learner.SessionVersion(c.UserContext(), sess)
	if err != nil {
		return err
	}
	locked, err := s.deps.Learner.Locked(c.UserContext(), sess, v)
	if err != nil {
		return err
	}
	if locked == nil {
		locked = map[string]string{}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(Locks{Locked: locked})
}

func (s *API) playerCommit(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess, err := s.deps.Launch.VerifySession(c.Params("session"), time.Now())
	if err != nil {
		return commitRefused(c, fiber.StatusForbidden, 101, "the player session is invalid or has expired; launch the course again")
	}
	if err := httpx.ReadBody(c, scormrt.MaxBody); err != nil {
		return err
	}
	_, v, act, d, err := s.sessionActivity(c, "")
	if err != nil {
		var e *httpx.Error
		if errors.As(err, &e) {
			return commitRefused(c, e.Status, 101, e.Message)
		}
		return err
	}
	attempt, err := strconv.ParseInt(c.Query("attempt"), 10, 64)
	if err != nil || attempt <= 0 {
		return commitRefused(c, fiber.StatusBadRequest, scormrt.CodeGeneral, "query parameter attempt must be the positive number the activity load returned")
	}
	// sendBeacon posts text/plain (no preflight) and XHR posts JSON: the body is read as JSON
	// whatever the declared type.
	commit, err := scormrt.ParseCommit(d, c.Body())
	var rerr *scormrt.Error
	if errors.As(err, &rerr) {
		return commitRefused(c, fiber.StatusBadRequest, rerr.Code, rerr.Error())
	}
	if err != nil {
		return err
	}
	if commit.Sequence == 0 {
		return commitRefused(c, fiber.StatusBadRequest, scormrt.CodeGeneral, "commitSequence is required")
	}
	if err := scormrt.CheckSharedWrites(act, commit); err != nil {
		if errors.As(err, &rerr) {
			return commitRefused(c, fiber.StatusBadRequest, rerr.Code, rerr.Error())
		}
		return err
	}
	if err := s.applyRuntimeSettings(ctx, sess, d, commit); err != nil {
		if errors.As(err, &rerr) {
			return commitRefused(c, fiber.StatusBadRequest, rerr.Code, rerr.Error())
		}
		return err
	}
	// The player's scorm-again adds terminate=true to the commit of Terminate / LMSFinish.
	exit := c.Query("terminate") == "true"
	if sess.Preview || sess.ForceReview {
		// Preview and review run without tracking: a valid commit is answered as stored, and
		// dropped, so the content behaves as in a tracked launch. A SCORM 2004 course is still
		// sequenced, in the session's memory.
		answer := CommitAnswer{Result: "true"}
		if learner.Sequenced(v) {
			if answer.Nav, err = s.deps.Learner.SequencingCommit(ctx, sess, c.Params("session"), v, act, commit.Values, commit.NavRequest, exit); err != nil {
				return commitRefused(c, fiber.StatusBadRequest, scormrt.CodeGeneral, err.Error())
			}
		}
		return c.JSON(answer)
	}
	nav, err := s.deps.Learner.Commit(ctx, learner.Commit{Session: sess, Version: v, Activity: act, Dialect: d, Attempt: attempt,
		Data: commit, Exit: exit, Key: c.Params("session")})
	if err != nil {
		if answered, ok := sessionRefusal(c, err); ok {
			return answered
		}
		if status, ok := commitStatus(err); ok {
			return commitRefused(c, status, 101, err.Error())
		}
		return err
	}
	return c.JSON(CommitAnswer{Result: "true", Nav: nav})
}

// commitStatus is the status of a commit the learner's path refused: its registration is
// gone (404) or the commit is older than the stored one (409).
func commitStatus(err error) (int, bool) {
	switch {
	case errors.Is(err, registration.ErrNotFound):
		return fiber.StatusNotFound, true
	case errors.Is(err, scormrt.ErrStale):
		return fiber.StatusConflict, true
	}
	return 0, false
}

// launchError is a launch the learner's path refused as this server's limit (503), or err.
func launchError(err error) error {
	if errors.Is(err, learner.ErrUnavailable) {
		return httpx.Errorf(fiber.StatusServiceUnavailable, "%s", err.Error())
	}
	return err
}

// Run-time settings the commit path reads.
const (
	settingSuspendDataMax   = "PlayerSuspendDataMaxLength"
	settingResetRunTimeData = "PlayerResetRunTimeData"
)

// applyRuntimeSettings applies the session's run-time settings to a validated commit: the
// suspend data limit (a *scormrt.Error with the dialect's code), the reset mode its load was
// started under, and no-credit, which keeps the recorded status and score.
func (s *API) applyRuntimeSettings(ctx context.Context, sess *course.SessionClaims, d scormrt.Dialect, commit *scormrt.Commit) error {
	vs, err := s.deps.Learner.SessionSettings(ctx, sess, settingSuspendDataMax, settingResetRunTimeData)
	if err != nil {
		return err
	}
	max, _ := strconv.Atoi(vs[settingSuspendDataMax])
	if err := (scormrt.Limits{SuspendData: max}).Check(d, commit.Values); err != nil {
		return err
	}
	if commit.Reset == "" {
		commit.Reset = vs[settingResetRunTimeData]
	}
	if sess.NoCredit {
		commit.Values = commit.Values.WithoutResults()
	}
	return nil
}

// playerHACP answers the AICC HACP commands of an AU. Every answer is 200 text/plain with the
// HACP error line, as AUs expect; session_id names the AU (the aicc_sid the player passed).
func (s *API) playerHACP(c *fiber.Ctx) error {
	ctx := c.UserContext()
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Type("txt", "utf-8")
	answer := func(code int, text, data string) error { return c.SendString(scormrt.HACPAnswer(code, text, data)) }
	// The session token first: the body is read only for a session this server signed.
	sess, err := s.deps.Launch.VerifySession(c.Params("session"), time.Now())
	if err != nil {
		return answer(scormrt.HACPInvalidSession, "the player session is invalid or has expired", "")
	}
	if err := httpx.ReadBody(c, httpx.MaxJSONBody); err != nil {
		return err
	}
	form, err := url.ParseQuery(string(c.Body()))
	if err != nil {
		return answer(scormrt.HACPInvalidCommand, "the request is not form-encoded", "")
	}
	field := func(name string) string {
		for k, v := range form {
			if strings.EqualFold(k, name) && len(v) > 0 {
				return v[0]
			}
		}
		return ""
	}
	_, v, act, _, err := s.sessionActivity(c, field("session_id"))
	if err != nil || v.Standard != course.AICC {
		return answer(scormrt.HACPInvalidSession, "session_id does not name an AU of this course", "")
	}
	cmd := strings.ToLower(field("command"))
	if cmd == "getparam" || cmd == "putparam" {
		// The page disables a locked AU, but its URL may be opened directly: the AU gets
		// no data and can store none until its prerequisites are met.
		locked, err := s.deps.Learner.Locked(ctx, sess, v)
		if err != nil {
			return err
		}
		if expr, ok := locked[act.ID]; ok {
			return answer(scormrt.HACPInvalidSession, fmt.Sprintf("AU '%s' is locked: its prerequisites (%s) are not met yet", act.ID, expr), "")
		}
	}
	if cmd != "putparam" { // PutParam's store touches the session itself
		_, err := s.deps.Learner.Touch(ctx, sess, act.ID, registration.SignalActive)
		if hacpRefused(err) {
			return answer(scormrt.HACPInvalidSession, err.Error(), "")
		}
		if err != nil {
			return err
		}
	}
	switch cmd {
	case "getparam":
		// HACP has no load boundary in its PutParams, so AICC keeps its data (NEVER).
		values, err := s.deps.Learner.InitialValues(ctx, sess, act, scormrt.SCORM12, scormrt.ResetNever)
		if err != nil {
			return err
		}
		return answer(scormrt.HACPOK, "Successful", scormrt.GetParamData(values))
	case "putparam":
		values, err := scormrt.ParsePutParam(field("aicc_data"))
		if err != nil {
			return answer(scormrt.HACPInvalidCommand, err.Error(), "")
		}
		put := &scormrt.Commit{Sequence: 1, Values: values, Reset: scormrt.ResetNever}
		var rerr *scormrt.Error
		if err := s.applyRuntimeSettings(ctx, sess, scormrt.SCORM12, put); errors.As(err, &rerr) {
			return answer(scormrt.HACPInvalidCommand, rerr.Error(), "")
		} else if err != nil {
			return err
		}
		if sess.Preview || sess.ForceReview {
			return answer(scormrt.HACPOK, "Successful", "")
		}
		err = s.deps.Learner.HACPPut(ctx, sess, v, act, put)
		if hacpRefused(err) {
			return answer(scormrt.HACPInvalidSession, err.Error(), "")
		}
		if err != nil {
			return err
		}
		return answer(scormrt.HACPOK, "Successful", "")
	case "exitau":
		if !sess.Preview && !sess.ForceReview {
			if err := s.deps.Learner.Exit(ctx, sess, v, act); err != nil {
				return err
			}
		}
		return answer(scormrt.HACPOK, "Successful", "")
	case "putcomments", "putinteractions", "putobjectives", "putpath", "putperformance":
		// Accepted; Lectern keeps the core data of PutParam only.
		return answer(scormrt.HACPOK, "Successful", "")
	}
	return answer(scormrt.HACPInvalidCommand, fmt.Sprintf("unknown command %q", field("command")), "")
}

// hacpRefused reports whether the learner's path refused an AU's post for its session (taken
// over, expired, the registration gone or reset, a stale post): HACP answers all of them as
// an invalid session, with the refusal's message.
func hacpRefused(err error) bool {
	var se *learner.SessionError
	_, status := commitStatus(err)
	return errors.As(err, &se) || errors.Is(err, learner.ErrGone) || status
}

// launchQuery encodes the query of an xAPI or cmi5 launch with spaces as %20, not +: content
// reads it with its own code, and some of it decodes with JavaScript's unescape, which leaves
// a + as it is. Lectora's xAPI runtime did, and sent "Authorization: Basic+…" (refused) and
// a learner named "Ann+Lee". Every decoder turns %20 into a space; Encode writes a literal +
// as %2B, so each + it writes is a space.
func launchQuery(q url.Values) string { return strings.ReplaceAll(q.Encode(), "+", "%20") }
