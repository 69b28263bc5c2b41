package server

import (
	"io"
	"mime/multipart"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course/registration"
)

// The console's course engine pages: course versions (list, detail with the activity tree
// and parser warnings, preview, delete), imports (upload or URL, with a status that polls
// until the job ends) and registrations (list, create, launch, progress with the activity
// tree and runtime data, reset, delete). Every call goes to the engine API of the tenant.

func (s *Server) registerConsoleCourses(g fiber.Router) {
	need, h := s.consoleSessionRequired, s.consoleHandler
	s.addConsoleSection(ConsoleSection{Path: "courses", Label: "Courses", Tenant: true})
	s.addConsoleSection(ConsoleSection{Path: "registrations", Label: "Registrations", Tenant: true})
	g.Get("/t/:tenant/courses", need, h(s.consoleCourses))
	g.Post("/t/:tenant/courses/import", need, h(s.consoleImportCourse))
	g.Get("/t/:tenant/courses/imports/:job", need, h(s.consoleImportStatus))
	g.Get("/t/:tenant/courses/:course", need, h(s.consoleCourseDetail))
	g.Get("/t/:tenant/courses/:course/preview", need, h(s.consoleCoursePreview))
	g.Get("/t/:tenant/courses/:course/delete", need, h(s.consoleConfirmDeleteCourse))
	g.Post("/t/:tenant/courses/:course/delete", need, h(s.consoleDeleteCourse))
	g.Get("/t/:tenant/registrations", need, h(s.consoleRegistrations))
	g.Post("/t/:tenant/registrations", need, h(s.consoleCreateRegistration))
	g.Get("/t/:tenant/registrations/:reg", need, h(s.consoleRegistration))
	g.Get("/t/:tenant/registrations/:reg/launch", need, h(s.consoleLaunchRegistration))
	g.Post("/t/:tenant/registrations/:reg/reset", need, h(s.consoleResetRegistration))
	g.Post("/t/:tenant/registrations/:reg/delete", need, h(s.consoleDeleteRegistration))
}

// engineAPI is the engine API path of the console's tenant.
func engineAPI(c *fiber.Ctx) string {
	return "/engine/api/v1/" + url.PathEscape(c.Params("tenant"))
}

// consoleCoursesData is the course list page.
type consoleCoursesData struct {
	Courses []consoleCourseRow
	More    string
}

// consoleCourseRow is a course version with its id escaped for console paths.
type consoleCourseRow struct {
	CourseSummary
	Path string
}

func (s *Server) consoleCourses(c *fiber.Ctx) error {
	q := url.Values{}
	if m := c.Query("more"); m != "" {
		q.Set("more", m)
	}
	var list CourseList
	if err := s.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses?"+q.Encode(), nil, &list); err != nil {
		return err
	}
	d := consoleCoursesData{More: list.More}
	for _, cs := range list.Courses {
		d.Courses = append(d.Courses, consoleCourseRow{CourseSummary: cs, Path: url.PathEscape(cs.ID)})
	}
	v := &consoleView{Title: "Courses", Section: "courses", Data: d}
	if del := c.Query("deleted"); del != "" {
		v.Notice = "Course " + del + " was deleted."
	}
	return s.render(c, fiber.StatusOK, "courses", "", v)
}

// consoleImportCourse starts an import from an uploaded file or a URL and opens its status.
func (s *Server) consoleImportCourse(c *fiber.Ctx) error {
	courseID := strings.TrimSpace(c.FormValue("course"))
	if courseID == "" {
		return badRequest("enter the id the course gets after import")
	}
	q := url.Values{"course": {courseID}}
	if c.FormValue("mayCreateNewVersion") == "true" {
		q.Set("mayCreateNewVersion", "true")
	}
	path := engineAPI(c) + "/courses/importJobs?" + q.Encode()
	var id ImportJobID
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
		_, err = s.api(c, apiRequest{Method: fiber.MethodPost, Path: path, BodyStream: pr, BodySize: -1,
			ContentType: mw.FormDataContentType()}, &id)
		// An API that stopped reading early (a refused package) must not leave the writer blocked.
		pr.CloseWithError(io.ErrClosedPipe)
		if err != nil {
			return err
		}
	} else {
		u := strings.TrimSpace(c.FormValue("url"))
		if u == "" {
			return badRequest("choose a course package to upload or enter the URL of one")
		}
		name := c.FormValue("courseName")
		if name == "" {
			name = courseID
		}
		if err := s.apiJSON(c, fiber.MethodPost, path, ImportRequest{URL: &u, CourseName: &name}, &id); err != nil {
			return err
		}
	}
	return c.Redirect(consoleTenantPath(c, "/courses/imports/"+url.PathEscape(id.Result)+"?course="+url.QueryEscape(courseID)), fiber.StatusSeeOther)
}

// consoleImportData is an import job's state.
type consoleImportData struct {
	Job        string
	Course     string
	CoursePath string
	ImportResult
	Running bool
}

// consoleImportStatus shows an import job; under htmx the status fragment alone, which
// polls itself while the job runs and stops when it ends.
func (s *Server) consoleImportStatus(c *fiber.Ctx) error {
	job, err := param(c, "job")
	if err != nil {
		return err
	}
	var res ImportResult
	if err := s.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses/importJobs/"+url.PathEscape(job), nil, &res); err != nil {
		return err
	}
	d := consoleImportData{Job: job, Course: c.Query("course"), CoursePath: url.PathEscape(c.Query("course")),
		ImportResult: res, Running: res.Status == "RUNNING"}
	return s.render(c, fiber.StatusOK, "course_import", "import-status", &consoleView{Title: "Import", Section: "courses", Data: d})
}

// consoleCourseData is a course version with its tree.
type consoleCourseData struct {
	CourseDetail
	Path     string
	Versions []CourseSummary
}

func (s *Server) consoleCourseDetail(c *fiber.Ctx) error {
	id, err := param(c, "course")
	if err != nil {
		return err
	}
	q := url.Values{}
	if v := c.Query("version"); v != "" {
		q.Set("version", v)
	}
	var d consoleCourseData
	if err := s.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses/"+url.PathEscape(id)+"/detail?"+q.Encode(), nil, &d.CourseDetail); err != nil {
		return err
	}
	d.Path = url.PathEscape(id)
	// The versions come from the course list (the API has no per-course version list).
	more := ""
	for range 100 {
		var list CourseList
		qs := ""
		if more != "" {
			qs = "?more=" + url.QueryEscape(more)
		}
		if err := s.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses"+qs, nil, &list); err != nil {
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
	return s.render(c, fiber.StatusOK, "course", "", &consoleView{Title: "Course " + id, Section: "courses", Data: d})
}

// consoleCoursePreview opens the player on a preview launch of the course.
func (s *Server) consoleCoursePreview(c *fiber.Ctx) error {
	id, err := param(c, "course")
	if err != nil {
		return err
	}
	q := url.Values{"redirectOnExitUrl": {c.BaseURL() + consoleTenantPath(c, "/courses/"+url.PathEscape(id))}}
	if v := c.Query("version"); v != "" {
		q.Set("version", v)
	}
	var link LaunchLinkBody
	if err := s.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses/"+url.PathEscape(id)+"/preview?"+q.Encode(), nil, &link); err != nil {
		return err
	}
	return c.Redirect(link.LaunchLink, fiber.StatusSeeOther)
}

func (s *Server) consoleConfirmDeleteCourse(c *fiber.Ctx) error {
	id, err := param(c, "course")
	if err != nil {
		return err
	}
	return s.render(c, fiber.StatusOK, "course_delete", "", &consoleView{Title: "Delete course " + id, Section: "courses",
		Data: consoleCourseRow{CourseSummary: CourseSummary{ID: id}, Path: url.PathEscape(id)}})
}

func (s *Server) consoleDeleteCourse(c *fiber.Ctx) error {
	id, err := param(c, "course")
	if err != nil {
		return err
	}
	if err := s.apiJSON(c, fiber.MethodDelete, engineAPI(c)+"/courses/"+url.PathEscape(id), nil, nil); err != nil {
		return err
	}
	return c.Redirect(consoleTenantPath(c, "/courses?deleted="+url.QueryEscape(id)), fiber.StatusSeeOther)
}

// consoleRegistrationsData is the registration list with its filter.
type consoleRegistrationsData struct {
	CourseID      string
	LearnerID     string
	Registrations []consoleRegistrationRow
	More          string
	Courses       []CourseSummary
}

// consoleRegistrationRow is a registration with its id escaped for console paths.
type consoleRegistrationRow struct {
	RegistrationSummary
	Path string
}

func (s *Server) consoleRegistrations(c *fiber.Ctx) error {
	return s.renderRegistrations(c, fiber.StatusOK, "")
}

func (s *Server) renderRegistrations(c *fiber.Ctx, status int, notice string) error {
	q := url.Values{}
	d := consoleRegistrationsData{CourseID: c.Query("courseId"), LearnerID: c.Query("learnerId")}
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
	var list RegistrationList
	if err := s.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/registrations?"+q.Encode(), nil, &list); err != nil {
		return err
	}
	for _, r := range list.Registrations {
		d.Registrations = append(d.Registrations, consoleRegistrationRow{RegistrationSummary: r, Path: url.PathEscape(r.ID)})
	}
	d.More = list.More
	var courses CourseList
	if err := s.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/courses", nil, &courses); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, cs := range courses.Courses {
		if !seen[cs.ID] {
			seen[cs.ID] = true
			d.Courses = append(d.Courses, cs)
		}
	}
	v := &consoleView{Title: "Registrations", Section: "registrations", Data: d, Notice: notice}
	if n := c.Query("deleted"); n != "" {
		v.Notice = "Registration " + n + " was deleted."
	}
	return s.render(c, status, "registrations", "", v)
}

func (s *Server) consoleCreateRegistration(c *fiber.Ctx) error {
	regID := strings.TrimSpace(c.FormValue("registrationId"))
	in := RegistrationCreate{CourseID: strings.TrimSpace(c.FormValue("courseId")), RegistrationID: regID,
		Learner: &registration.Learner{ID: strings.TrimSpace(c.FormValue("learnerId")),
			FirstName: strings.TrimSpace(c.FormValue("firstName")), LastName: strings.TrimSpace(c.FormValue("lastName"))}}
	if err := s.apiJSON(c, fiber.MethodPost, engineAPI(c)+"/registrations", in, nil); err != nil {
		return err
	}
	return c.Redirect(consoleTenantPath(c, "/registrations/"+url.PathEscape(regID)+"?created=1"), fiber.StatusSeeOther)
}

// consoleRegistrationData is a registration's progress with its activity tree.
type consoleRegistrationData struct {
	RegistrationSummary
	Path       string
	CoursePath string
}

func (s *Server) consoleRegistration(c *fiber.Ctx) error {
	id, err := param(c, "reg")
	if err != nil {
		return err
	}
	var d consoleRegistrationData
	if err := s.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/registrations/"+url.PathEscape(id)+"/progress/detail", nil, &d.RegistrationSummary); err != nil {
		return err
	}
	d.Path, d.CoursePath = url.PathEscape(id), url.PathEscape(d.Course.ID)
	v := &consoleView{Title: "Registration " + id, Section: "registrations", Data: d}
	switch {
	case c.Query("created") != "":
		v.Notice = "Registration " + id + " was created."
	case c.Query("reset") != "":
		v.Notice = "Registration " + id + " was reset."
	}
	return s.render(c, fiber.StatusOK, "registration", "", v)
}

// consoleLaunchRegistration opens the player; leaving it comes back to the registration.
func (s *Server) consoleLaunchRegistration(c *fiber.Ctx) error {
	id, err := param(c, "reg")
	if err != nil {
		return err
	}
	q := url.Values{"redirectOnExitUrl": {c.BaseURL() + consoleTenantPath(c, "/registrations/"+url.PathEscape(id))}}
	var link LaunchLinkBody
	if err := s.apiJSON(c, fiber.MethodGet, engineAPI(c)+"/registrations/"+url.PathEscape(id)+"/launchLink?"+q.Encode(), nil, &link); err != nil {
		return err
	}
	return c.Redirect(link.LaunchLink, fiber.StatusSeeOther)
}

func (s *Server) consoleResetRegistration(c *fiber.Ctx) error {
	id, err := param(c, "reg")
	if err != nil {
		return err
	}
	if err := s.apiJSON(c, fiber.MethodDelete, engineAPI(c)+"/registrations/"+url.PathEscape(id)+"/progress", nil, nil); err != nil {
		return err
	}
	return c.Redirect(consoleTenantPath(c, "/registrations/"+url.PathEscape(id)+"?reset=1"), fiber.StatusSeeOther)
}

func (s *Server) consoleDeleteRegistration(c *fiber.Ctx) error {
	id, err := param(c, "reg")
	if err != nil {
		return err
	}
	if err := s.apiJSON(c, fiber.MethodDelete, engineAPI(c)+"/registrations/"+url.PathEscape(id), nil, nil); err != nil {
		return err
	}
	return c.Redirect(consoleTenantPath(c, "/registrations?deleted="+url.QueryEscape(id)), fiber.StatusSeeOther)
}
