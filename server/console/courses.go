package console

import (
	"io"
	"mime/multipart"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/server/engineapi"
	"github.com/lectern-lms/lectern/server/httpx"
)

// The console's course engine pages: course versions (list, detail with the activity tree
// and parser warnings, preview, delete), imports (upload or URL, with a status that polls
// until the job ends) and registrations (list, create, launch, progress with the activity
// tree and runtime data, reset, delete). Every call goes to the engine API of the tenant.

func (co *Console) registerCourses(g fiber.Router) {
	need, h := co.sessionRequired, co.handler
	co.addSection(section{Path: "courses", Label: "Courses", Tenant: true})
	co.addSection(section{Path: "registrations", Label: "Registrations", Tenant: true})
	g.Get("/t/:tenant/courses", need, h(co.courses))
	g.Post("/t/:tenant/courses/import", co.uploadRequired, h(co.importCourse))
	g.Get("/t/:tenant/courses/imports/:job", need, h(co.importStatus))
	g.Get("/t/:tenant/courses/:course", need, h(co.courseDetail))
	g.Get("/t/:tenant/courses/:course/preview", need, h(co.coursePreview))
	g.Get("/t/:tenant/courses/:course/delete", need, h(co.confirmDeleteCourse))
	g.Post("/t/:tenant/courses/:course/delete", need, h(co.deleteCourse))
	g.Get("/t/:tenant/registrations", need, h(co.registrations))
	g.Post("/t/:tenant/registrations", need, h(co.createRegistration))
	g.Get("/t/:tenant/registrations/:reg", need, h(co.registration))
	g.Get("/t/:tenant/registrations/:reg/launch", need, h(co.launchRegistration))
	g.Post("/t/:tenant/registrations/:reg/reset", need, h(co.resetRegistration))
	g.Post("/t/:tenant/registrations/:reg/delete", need, h(co.deleteRegistration))
}

// engineAPI is the engine API path of the console's tenant.
func engineAPI(c *fiber.Ctx) string {
	return "/engine/api/v1/" + url.PathEscape(c.Params("tenant"))
}

// coursesData is the course list page.
type coursesData struct {
	Courses []courseRow
	More    string
}

// courseRow is a course version with its id escaped for console paths.
type courseRow struct {
	engineapi.CourseSummary
	Path string
}

func (co *Console) courses(c *fiber.Ctx) error {
	q := url.Values{}
	if m := c.Query("more"); m != "" {
		q.Set("more", m)
	}
	var list engineapi.CourseList
	if err := co.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses?"+q.Encode(), nil, &list); err != nil {
		return err
	}
	d := coursesData{More: list.More}
	for _, cs := range list.Courses {
		d.Courses = append(d.Courses, courseRow{CourseSummary: cs, Path: url.PathEscape(cs.ID)})
	}
	v := &view{Title: "Courses", Section: "courses", Data: d}
	if del := c.Query("deleted"); del != "" {
		v.Notice = "Course " + del + " was deleted."
	}
	return co.render(c, fiber.StatusOK, "courses", "", v)
}

// importCourse starts an import from an uploaded file or a URL and opens its status.
func (co *Console) importCourse(c *fiber.Ctx) error {
	courseID := strings.TrimSpace(c.FormValue("course"))
	if courseID == "" {
		return httpx.BadRequest("enter the id the course gets after import")
	}
	q := url.Values{"course": {courseID}}
	if c.FormValue("mayCreateNewVersion") == "true" {
		q.Set("mayCreateNewVersion", "true")
	}
	path := engineAPI(c) + "/courses/importJobs?" + q.Encode()
	var id engineapi.ImportJobID
	if fh, err := c.FormFile("file"); err == nil && fh.Size > 0 {
		f, err := fh.Open()
		if err != nil {
			return err
		}
		defer f.Close()
		// The API streams uploads: the file is passed on as a multipart body of its own,
		// written into a pipe as the API reads it, so the package is never held in memory.
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			part, err := mw.CreateFormFile("file", fh.Filename)
			if err == nil {
				_, err = io.Copy(part, f)
			}
			if err == nil {
				err = mw.Close()
			}
			pw.CloseWithError(err)
		}()
		_, err = co.api(c, apiRequest{Method: fiber.MethodPost, Path: path, BodyStream: pr, BodySize: -1,
			ContentType: mw.FormDataContentType()}, &id)
		// An API that stopped reading early (a refused package) must not leave the writer blocked.
		pr.CloseWithError(io.ErrClosedPipe)
		if err != nil {
			return err
		}
	} else {
		u := strings.TrimSpace(c.FormValue("url"))
		if u == "" {
			return httpx.BadRequest("choose a course package to upload or enter the URL of one")
		}
		name := c.FormValue("courseName")
		if name == "" {
			name = courseID
		}
		if err := co.apiJSON(c, fiber.MethodPost, path, engineapi.ImportRequest{URL: &u, CourseName: &name}, &id); err != nil {
			return err
		}
	}
	return c.Redirect(tenantPath(c, "/courses/imports/"+url.PathEscape(id.Result)+"?course="+url.QueryEscape(courseID)), fiber.StatusSeeOther)
}

// importData is an import job's state.
type importData struct {
	Job        string
	Course     string
	CoursePath string
	engineapi.ImportResult
	Running bool
}

// importStatus shows an import job; under htmx the status fragment alone, which
// polls itself while the job runs and stops when it ends.
func (co *Console) importStatus(c *fiber.Ctx) error {
	job, err := httpx.PathValue(c, "job")
	if err != nil {
		return err
	}
	var res engineapi.ImportResult
	if err := co.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses/importJobs/"+url.PathEscape(job), nil, &res); err != nil {
		return err
	}
	d := importData{Job: job, Course: c.Query("course"), CoursePath: url.PathEscape(c.Query("course")),
		ImportResult: res, Running: res.Status == "RUNNING"}
	return co.render(c, fiber.StatusOK, "course_import", "import-status", &view{Title: "Import", Section: "courses", Data: d})
}

// courseData is a course version with its tree.
type courseData struct {
	engineapi.CourseDetail
	Path     string
	Versions []engineapi.CourseSummary
}

func (co *Console) courseDetail(c *fiber.Ctx) error {
	id, err := httpx.PathValue(c, "course")
	if err != nil {
		return err
	}
	q := url.Values{}
	if v := c.Query("version"); v != "" {
		q.Set("version", v)
	}
	var d courseData
	if err := co.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses/"+url.PathEscape(id)+"/detail?"+q.Encode(), nil, &d.CourseDetail); err != nil {
		return err
	}
	d.Path = url.PathEscape(id)
	// The versions come from the course list (the API has no per-course version list).
	more := ""
	for range 100 {
		var list engineapi.CourseList
		qs := ""
		if more != "" {
			qs = "?more=" + url.QueryEscape(more)
		}
		if err := co.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses"+qs, nil, &list); err != nil {
			return err
		}
		for _, cs := range list.Courses {
			if cs.ID == id {
				d.Versions = append(d.Versions, cs)
			}
		}
		if more = list.More; more == "" {
			break
		}
	}
	return co.render(c, fiber.StatusOK, "course", "", &view{Title: "Course " + id, Section: "courses", Data: d})
}

// coursePreview opens the player on a preview launch of the course.
func (co *Console) coursePreview(c *fiber.Ctx) error {
	id, err := httpx.PathValue(c, "course")
	if err != nil {
		return err
	}
	q := url.Values{"redirectOnExitUrl": {c.BaseURL() + tenantPath(c, "/courses/"+url.PathEscape(id))}}
	if v := c.Query("version"); v != "" {
		q.Set("version", v)
	}
	var link engineapi.LaunchLinkBody
	if err := co.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses/"+url.PathEscape(id)+"/preview?"+q.Encode(), nil, &link); err != nil {
		return err
	}
	return c.Redirect(link.LaunchLink, fiber.StatusSeeOther)
}

func (co *Console) confirmDeleteCourse(c *fiber.Ctx) error {
	id, err := httpx.PathValue(c, "course")
	if err != nil {
		return err
	}
	return co.render(c, fiber.StatusOK, "course_delete", "", &view{Title: "Delete course " + id, Section: "courses",
		Data: courseRow{CourseSummary: engineapi.CourseSummary{ID: id}, Path: url.PathEscape(id)}})
}

func (co *Console) deleteCourse(c *fiber.Ctx) error {
	id, err := httpx.PathValue(c, "course")
	if err != nil {
		return err
	}
	if err := co.apiJSON(c, fiber.MethodDelete, engineAPI(c)+"/courses/"+url.PathEscape(id), nil, nil); err != nil {
		return err
	}
	return c.Redirect(tenantPath(c, "/courses?deleted="+url.QueryEscape(id)), fiber.StatusSeeOther)
}

// registrationsData is the registration list with its filter.
type registrationsData struct {
	CourseID      string
	LearnerID     string
	Registrations []registrationRow
	More          string
	Courses       []engineapi.CourseSummary
}

// registrationRow is a registration with its id escaped for console paths.
type registrationRow struct {
	engineapi.RegistrationSummary
	Path string
}

func (co *Console) registrations(c *fiber.Ctx) error {
	return co.renderRegistrations(c, fiber.StatusOK, "")
}

func (co *Console) renderRegistrations(c *fiber.Ctx, status int, notice string) error {
	q := url.Values{}
	d := registrationsData{CourseID: c.Query("courseId"), LearnerID: c.Query("learnerId")}
	if m := c.Query("more"); m != "" {
		q.Set("more", m)
	} else {
		if d.CourseID != "" {
			q.Set("courseId", d.CourseID)
		}
		if d.LearnerID != "" {
			q.Set("learnerId", d.LearnerID)
		}
	}
	var list engineapi.RegistrationList
	if err := co.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/registrations?"+q.Encode(), nil, &list); err != nil {
		return err
	}
	for _, r := range list.Registrations {
		d.Registrations = append(d.Registrations, registrationRow{RegistrationSummary: r, Path: url.PathEscape(r.ID)})
	}
	d.More = list.More
	var courses engineapi.CourseList
	if err := co.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses", nil, &courses); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, cs := range courses.Courses {
		if !seen[cs.ID] {
			seen[cs.ID] = true
			d.Courses = append(d.Courses, cs)
		}
	}
	v := &view{Title: "Registrations", Section: "registrations", Data: d, Notice: notice}
	if n := c.Query("deleted"); n != "" {
		v.Notice = "Registration " + n + " was deleted."
	}
	return co.render(c, status, "registrations", "", v)
}

func (co *Console) createRegistration(c *fiber.Ctx) error {
	regID := strings.TrimSpace(c.FormValue("registrationId"))
	in := engineapi.RegistrationCreate{CourseID: strings.TrimSpace(c.FormValue("courseId")), RegistrationID: regID,
		Learner: &registration.Learner{ID: strings.TrimSpace(c.FormValue("learnerId")),
			FirstName: strings.TrimSpace(c.FormValue("firstName")), LastName: strings.TrimSpace(c.FormValue("lastName"))}}
	if err := co.apiJSON(c, fiber.MethodPost, engineAPI(c)+"/registrations", in, nil); err != nil {
		return err
	}
	return c.Redirect(tenantPath(c, "/registrations/"+url.PathEscape(regID)+"?created=1"), fiber.StatusSeeOther)
}

// registrationData is a registration's progress with its activity tree.
type registrationData struct {
	engineapi.RegistrationSummary
	Path       string
	CoursePath string
}

func (co *Console) registration(c *fiber.Ctx) error {
	id, err := httpx.PathValue(c, "reg")
	if err != nil {
		return err
	}
	var d registrationData
	if err := co.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/registrations/"+url.PathEscape(id)+"/progress/detail", nil, &d.RegistrationSummary); err != nil {
		return err
	}
	d.Path, d.CoursePath = url.PathEscape(id), url.PathEscape(d.Course.ID)
	v := &view{Title: "Registration " + id, Section: "registrations", Data: d}
	switch {
	case c.Query("created") != "":
		v.Notice = "Registration " + id + " was created."
	case c.Query("reset") != "":
		v.Notice = "Registration " + id + " was reset."
	}
	return co.render(c, fiber.StatusOK, "registration", "", v)
}

// launchRegistration opens the player; leaving it comes back to the registration.
func (co *Console) launchRegistration(c *fiber.Ctx) error {
	id, err := httpx.PathValue(c, "reg")
	if err != nil {
		return err
	}
	q := url.Values{"redirectOnExitUrl": {c.BaseURL() + tenantPath(c, "/registrations/"+url.PathEscape(id))}}
	var link engineapi.LaunchLinkBody
	if err := co.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/registrations/"+url.PathEscape(id)+"/launchLink?"+q.Encode(), nil, &link); err != nil {
		return err
	}
	return c.Redirect(link.LaunchLink, fiber.StatusSeeOther)
}

func (co *Console) resetRegistration(c *fiber.Ctx) error {
	id, err := httpx.PathValue(c, "reg")
	if err != nil {
		return err
	}
	if err := co.apiJSON(c, fiber.MethodDelete, engineAPI(c)+"/registrations/"+url.PathEscape(id)+"/progress", nil, nil); err != nil {
		return err
	}
	return c.Redirect(tenantPath(c, "/registrations/"+url.PathEscape(id)+"?reset=1"), fiber.StatusSeeOther)
}

func (co *Console) deleteRegistration(c *fiber.Ctx) error {
	id, err := httpx.PathValue(c, "reg")
	if err != nil {
		return err
	}
	if err := co.apiJSON(c, fiber.MethodDelete, engineAPI(c)+"/registrations/"+url.PathEscape(id), nil, nil); err != nil {
		return err
	}
	return c.Redirect(tenantPath(c, "/registrations?deleted="+url.QueryEscape(id)), fiber.StatusSeeOther)
}
