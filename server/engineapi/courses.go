package engineapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/cmi5"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/workers/importjob"
	"github.com/lectern-lms/lectern/workers/jobs"
)

// ImportRequest is the JSON import body; no other properties are allowed.
type ImportRequest struct {
	URL             *string `json:"url"`
	CourseName      *string `json:"courseName"`
	WebPathToCourse *string `json:"webPathToCourse"`
}

// ImportJobID is the answer to an import request.
type ImportJobID struct {
	Result string `json:"result"`
}

// ImportResult is the engine's view of an import job.
type ImportResult struct {
	Status         string   `json:"status"`
	Message        string   `json:"message"`
	CourseTitle    string   `json:"courseTitle"`
	ParserWarnings []string `json:"parserWarnings"`
	// Progress is Lectern's extension: the job's stage and files stored.
	Progress course.ImportProgress `json:"progress"`
}

// CourseSummary is one course version in the course list.
type CourseSummary struct {
	ID                     string `json:"id"`
	Version                int    `json:"version"`
	Title                  string `json:"title"`
	CourseLearningStandard string `json:"courseLearningStandard"`
	Updated                string `json:"updated"`
}

// CourseList is a page of course versions.
type CourseList struct {
	Courses []CourseSummary `json:"courses"`
	More    string          `json:"more,omitempty"`
}

// CourseDetail is Lectern's extension: one version with its whole activity tree.
type CourseDetail struct {
	CourseSummary
	ParserWarnings []string         `json:"parserWarnings"`
	RootActivity   *course.Activity `json:"rootActivity"`
}

// param returns a path parameter with its percent-encoding undone (course ids may contain
// any printable character).
func param(c *fiber.Ctx, name string) (string, error) {
	v, err := url.PathUnescape(c.Params(name))
	if err != nil {
		return "", httpx.BadRequest("path parameter %s is not valid percent-encoding", name)
	}
	return v, nil
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func summary(v *course.Version) CourseSummary {
	return CourseSummary{ID: v.CourseID, Version: v.Version, Title: v.Title,
		CourseLearningStandard: string(v.Standard), Updated: isoTime(v.Updated)}
}

// zipMagic are the signatures a zip archive starts with (a local file header or, for an
// empty archive, the end of central directory).
var zipMagic = [][]byte{[]byte("PK\x03\x04"), []byte("PK\x05\x06")}

func (a *API) createImportJob(c *fiber.Ctx) error {
	ctx := c.UserContext()
	tenantID := httpx.TenantOf(c)
	courseID := c.Query("course")
	if courseID == "" {
		return httpx.BadRequest("query parameter course is required")
	}
	if err := course.ValidateCourseID(courseID); err != nil {
		return httpx.BadRequest("%v", err)
	}
	mayCreate, err := httpx.QueryBool(c, "mayCreateNewVersion", false)
	if err != nil {
		return err
	}
	job := &course.ImportJob{ID: jobs.NewID(), CourseID: courseID, MayCreateNewVersion: mayCreate}
	ct := strings.ToLower(c.Get(fiber.HeaderContentType))
	switch {
	case strings.HasPrefix(ct, fiber.MIMEMultipartForm):
		// The file streams from the request to the blob store: memory use does not grow
		// with the package.
		// A course is a zip package or, as cmi5 section 14 requires, a cmi5.xml on its own;
		// the prolog before the root element (licence comments) fits in the head.
		up, err := httpx.OpenUpload(c, "file", 64<<10)
		if err != nil {
			return err
		}
		if !hasZipMagic(up.Head) && !cmi5.IsCourseStructure(up.Head) {
			return httpx.BadRequest("the uploaded file %q is neither a zip archive nor a cmi5 course structure (cmi5.xml); a course must be uploaded as one of these (cmi5 requirements 14.0.0.0-1, 14.1.0.0-1)", up.FileName)
		}
		job.UploadKey = importjob.UploadKey(tenantID, job.ID)
		if err := up.Store(c, a.d.Blobs, job.UploadKey); err != nil {
			return err
		}
	case strings.HasPrefix(ct, fiber.MIMEApplicationJSON) || ct == "":
		var req ImportRequest
		if err := httpx.DecodeJSON(c, &req); err != nil {
			return err
		}
		if req.URL == nil || *req.URL == "" {
			return httpx.BadRequest("property url is required")
		}
		if req.CourseName == nil {
			return httpx.BadRequest("property courseName is required")
		}
		if err := httpx.RequireHTTPURL(req.URL); err != nil {
			return err
		}
		if err := a.d.Outbound.CheckSaved(ctx, *req.URL); err != nil {
			return httpx.BadRequest("property url is not a source this server may download from: %v", err)
		}
		job.URL, job.CourseName = *req.URL, *req.CourseName
		if req.WebPathToCourse != nil && *req.WebPathToCourse != "" {
			w, err := url.Parse(*req.WebPathToCourse)
			if err != nil || (w.Scheme != "" && w.Scheme != "http" && w.Scheme != "https") {
				return httpx.BadRequest("property webPathToCourse must be a URL or an absolute path")
			}
			job.WebPath = *req.WebPathToCourse
		}
	default:
		return httpx.BadRequest("Content-Type %q is not supported: upload multipart/form-data with a 'file' part, or send an application/json import request", ct)
	}
	if err := a.d.Courses.CreateImportJob(ctx, tenantID, job); err != nil {
		httpx.DropUpload(ctx, a.d.Blobs, a.d.Logger, job.UploadKey)
		return err
	}
	task, opts := importjob.NewTask(importjob.Payload{Tenant: tenantID, JobID: job.ID})
	if _, err := a.d.Queue.Enqueue(ctx, task, opts...); err != nil {
		_ = a.d.Courses.UpdateImportJobUnannounced(ctx, tenantID, job.ID, func(j *course.ImportJob) {
			j.Status, j.Message = course.ImportError, "the import could not be queued"
		})
		httpx.DropUpload(ctx, a.d.Blobs, a.d.Logger, job.UploadKey)
		return err
	}
	return c.JSON(ImportJobID{Result: job.ID})
}

func hasZipMagic(b []byte) bool {
	for _, m := range zipMagic {
		if bytes.HasPrefix(b, m) {
			return true
		}
	}
	return false
}

func (a *API) getImportJob(c *fiber.Ctx) error {
	id, err := param(c, "importJobId")
	if err != nil {
		return err
	}
	j, err := a.d.Courses.ImportJob(c.UserContext(), httpx.TenantOf(c), id)
	if err != nil {
		return err
	}
	return c.JSON(ImportResult{Status: j.Status, Message: j.Message, CourseTitle: j.CourseTitle, ParserWarnings: j.ParserWarnings,
		Progress: course.ProgressOf(j)})
}

// pageLimit applies ApiResultLimit (with since) or ApiResultLimitSinceNotSpecified.
func (a *API) pageLimit(c *fiber.Ctx, sinceGiven bool) (int, error) {
	id := "ApiResultLimitSinceNotSpecified"
	if sinceGiven {
		id = "ApiResultLimit"
	}
	layers, err := a.tenantLayers(c)
	if err != nil {
		return 0, err
	}
	v, err := a.d.Settings.Catalogue().Resolve(id, layers...)
	if err != nil {
		return 0, err
	}
	var n int
	if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
		n = 100
	}
	return n, nil
}

// moreToken carries the cursor and the original filters, so a client passes back only more.
type moreToken struct {
	Cursor string `json:"c"`
	Since  string `json:"s,omitempty"`
	// Filters holds the list's other filters by query parameter name (courseId, learnerId).
	Filters map[string]string `json:"f,omitempty"`
}

func encodeMore(t moreToken) string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeMore(s string) (moreToken, error) {
	var t moreToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &t) != nil || t.Cursor == "" {
		return t, httpx.BadRequest("'more' value %q is not a continuation token from this server", s)
	}
	return t, nil
}

// parseSince reads an inclusive ISO 8601 timestamp; without a zone it is UTC.
func parseSince(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, httpx.BadRequest("'%s' is either not a timestamp or seems to be not formatted according to ISO 8601", v)
}

// listPaging reads a list request's paging and filters: the more token, which carries since
// and the named filters of the request that issued it, or else the query's since and
// filters; and the page size the tenant's settings give with or without since. A filter the
// request gives beside more must equal the token's: more continues one list, it does not
// change it.
func (a *API) listPaging(c *fiber.Ctx, filters ...string) (tok moreToken, since time.Time, limit int, err error) {
	if m := c.Query("more"); m != "" {
		if tok, err = decodeMore(m); err != nil {
			return tok, since, 0, err
		}
		for _, name := range append([]string{"since"}, filters...) {
			want := tok.Filters[name]
			if name == "since" {
				want = tok.Since
			}
			if got := c.Query(name); got != "" && got != want {
				return tok, since, 0, httpx.BadRequest("'%s' is '%s' but the 'more' value continues a list with %s '%s'; send 'more' alone", name, got, name, want)
			}
		}
	} else {
		tok.Since = c.Query("since")
		for _, name := range filters {
			if v := c.Query(name); v != "" {
				if tok.Filters == nil {
					tok.Filters = map[string]string{}
				}
				tok.Filters[name] = v
			}
		}
	}
	if tok.Since != "" {
		if since, err = parseSince(tok.Since); err != nil {
			return tok, since, 0, err
		}
	}
	limit, err = a.pageLimit(c, tok.Since != "")
	return tok, since, limit, err
}

// next is the more value of the page after this one, or "" on the last page.
func (t moreToken) next(cursor string) string {
	if cursor == "" {
		return ""
	}
	t.Cursor = cursor
	return encodeMore(t)
}

func (a *API) listCourses(c *fiber.Ctx) error {
	tok, since, limit, err := a.listPaging(c)
	if err != nil {
		return err
	}
	page, err := a.d.Courses.ListVersions(c.UserContext(), httpx.TenantOf(c), since, tok.Cursor, limit)
	if errors.Is(err, record.ErrInvalid) {
		return httpx.BadRequest("'more' value is not a continuation token from this server")
	}
	if err != nil {
		return err
	}
	out := CourseList{Courses: []CourseSummary{}}
	for _, v := range page.Versions {
		out.Courses = append(out.Courses, summary(v))
	}
	out.More = tok.next(page.Next)
	return c.JSON(out)
}

func (a *API) courseVersion(c *fiber.Ctx) (*course.Version, error) {
	id, err := param(c, "courseId")
	if err != nil {
		return nil, err
	}
	v, err := course.ParseVersionParam(c.Query("version"))
	if err != nil {
		return nil, httpx.BadRequest("%v", err)
	}
	return a.d.Courses.Version(c.UserContext(), httpx.TenantOf(c), id, v)
}

func (a *API) deleteCourse(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id, err := param(c, "courseId")
	if err != nil {
		return err
	}
	versions, err := a.d.Courses.DeleteCourse(ctx, httpx.TenantOf(c), id)
	if err != nil {
		return err
	}
	for _, v := range versions {
		if v.FilesPrefix == "" {
			continue
		}
		if _, err := a.d.Blobs.DeletePrefix(ctx, v.FilesPrefix); err != nil {
			a.d.Logger.Warn("course files not deleted", "tenant", httpx.TenantOf(c), "course", id, "prefix", v.FilesPrefix, "error", err)
		}
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// TitleBody is the answer of GET .../title.
type TitleBody struct {
	Title string `json:"title"`
}

// IDBody is the answer of GET .../xapiActivityId.
type IDBody struct {
	ID string `json:"id"`
}

// LaunchLinkBody is the answer of preview and launchLink.
type LaunchLinkBody struct {
	LaunchLink string `json:"launchLink"`
}

func (a *API) courseTitle(c *fiber.Ctx) error {
	v, err := a.courseVersion(c)
	if err != nil {
		return err
	}
	return c.JSON(TitleBody{Title: v.Title})
}

func (a *API) courseLayers(c *fiber.Ctx, courseID string) ([]settings.Layer, error) {
	return a.d.Settings.Layers(c.UserContext(), httpx.TenantOf(c), settings.TenantScope, settings.CourseScope(courseID))
}

func (a *API) courseXAPIActivityID(c *fiber.Ctx) error {
	v, err := a.courseVersion(c)
	if err != nil {
		return err
	}
	layers, err := a.courseLayers(c, v.CourseID)
	if err != nil {
		return err
	}
	if on, _ := a.d.Settings.Catalogue().Resolve("xAPIEnabled", layers...); on != "true" {
		return httpx.NotFound("xAPI is not enabled for course '%s' (setting xAPIEnabled)", v.CourseID)
	}
	return c.JSON(IDBody{ID: learner.CourseActivityID(httpx.TenantOf(c), v)})
}

func (a *API) coursePreview(c *fiber.Ctx) error {
	v, err := a.courseVersion(c)
	if err != nil {
		return err
	}
	claims := course.LaunchClaims{Tenant: httpx.TenantOf(c), CourseID: v.CourseID, Version: v.Version, Preview: true,
		StartSco: c.Query("startSco"), RedirectOnExit: c.Query("redirectOnExitUrl")}
	if claims.RedirectOnExit == "" {
		layers, err := a.courseLayers(c, v.CourseID)
		if err != nil {
			return err
		}
		if claims.RedirectOnExit, err = a.d.Settings.Catalogue().Resolve("RedirectOnExitUrl", layers...); err != nil {
			return err
		}
	}
	if claims.ForceReview, err = httpx.QueryBool(c, "forceReview", false); err != nil {
		return err
	}
	expiry, err := httpx.QueryInt(c, "expiry", 0, 0, 1<<31-1)
	if err != nil {
		return err
	}
	if expiry > 0 {
		claims.Expires = time.Now().Add(time.Duration(expiry) * time.Second).Unix()
	}
	if claims.StartSco != "" {
		found := false
		v.Package.Root.Walk(func(a *course.Activity) { found = found || a.ID == claims.StartSco })
		if !found {
			return httpx.BadRequest("startSco '%s' is not an activity of course '%s'", claims.StartSco, v.CourseID)
		}
	}
	return c.JSON(LaunchLinkBody{LaunchLink: a.d.PlayerURL + "/player/launch/" + a.d.Launch.Sign(claims)})
}

func (a *API) courseDetail(c *fiber.Ctx) error {
	v, err := a.courseVersion(c)
	if err != nil {
		return err
	}
	d := CourseDetail{CourseSummary: summary(v), ParserWarnings: []string{}}
	if v.Package != nil {
		d.RootActivity = v.Package.Root
		if v.Package.Warnings != nil {
			d.ParserWarnings = v.Package.Warnings
		}
	}
	return c.JSON(d)
}

// checkCourse makes sure the course (and the asked version) exists before its settings are used.
func (a *API) checkCourse(c *fiber.Ctx) (string, error) {
	v, err := a.courseVersion(c)
	if err != nil {
		return "", err
	}
	return v.CourseID, nil
}

// courseConfig is the configuration scope of the path's course (checking the version the
// query names).
func (a *API) courseConfig(c *fiber.Ctx) (settings.Scope, []settings.Layer, error) {
	id, err := a.checkCourse(c)
	if err != nil {
		return settings.Scope{}, nil, err
	}
	layers, err := a.courseLayers(c, id)
	return settings.CourseScope(id), layers, err
}
