package console_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// manifest12Warned is manifest12 with manifest metadata in a file the package lacks: the
// import succeeds with a parser warning.
var manifest12Warned = strings.Replace(servertest.Manifest12, "</schemaversion>", "</schemaversion><adlcp:location>meta.xml</adlcp:location>", 1)

// TestConsoleCourses: a tenant credential imports a course by upload through the console,
// follows the job to its end with the parser warnings, sees the version, its activity tree and
// a preview link, creates a registration, launches it, resets and deletes it, sees a broken
// package fail with the API's message, and deletes the course after a confirmation page.
func TestConsoleCourses(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		key, secret := e.Credential("acme")
		cc := &servertest.ConsoleClient{T: t, E: e}
		cc.SignIn(key, secret)
		if p := cc.Send("GET", "/console/", nil); p.Status != 303 || p.Header.Get("Location") != "/console/t/acme/courses" {
			t.Fatalf("a tenant credential lands on %d %s, want its courses", p.Status, p.Header.Get("Location"))
		}
		servertest.WantPage(t, cc.Send("GET", "/console/t/acme/courses", nil), 200, `aria-current="page">Courses</a>`,
			`<form method="post" action="/console/t/acme/courses/import" enctype="multipart/form-data"`, "No courses yet.")

		p := cc.ImportForm("acme", "c 1", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifest12Warned, "sco/index.html": servertest.Sco12}))
		loc := p.Header.Get("Location")
		if p.Status != 303 || !strings.HasPrefix(loc, "/console/t/acme/courses/imports/") {
			t.Fatalf("import: %d %s %s", p.Status, loc, p.Body)
		}
		servertest.WantPage(t, cc.Send("GET", loc, nil), 200, "<h1>Import of <code>c 1</code></h1>", `id="import-status"`)
		done := cc.WaitImport(loc)
		servertest.WantPage(t, done, 200, `data-status="COMPLETE"`, `value="100" data-stage="DONE"`, "Imported: Browser 1.2 (COMPLETE)", "meta.xml",
			`<a href="/console/t/acme/courses/c%201" id="import-course-link">`)

		servertest.WantPage(t, cc.Send("GET", "/console/t/acme/courses", nil), 200,
			`<th scope="row"><a href="/console/t/acme/courses/c%201?version=0">c 1</a></th>`, "<td>SCORM_12</td>")
		// Paging: with one course version a page, the list links the next page by its more token.
		e.ImportOK("acme", "c2", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest12, "sco/index.html": servertest.Sco12}), "")
		e.Expect(e.Do("PUT", "/engine/api/v1/acme/configuration/ApiResultLimitSinceNotSpecified", servertest.Root, map[string]any{"value": "1"}), 204, "page size")
		first := cc.Send("GET", "/console/t/acme/courses", nil)
		m := regexp.MustCompile(`<a href="(/console/t/acme/courses\?more=[^"]+)" rel="next">`).FindStringSubmatch(first.Body)
		if m == nil || strings.Count(first.Body, `<th scope="row">`) != 1 {
			t.Fatalf("first page of one: %s", first.Body)
		}
		next := cc.Send("GET", strings.ReplaceAll(m[1], "&amp;", "&"), nil)
		servertest.WantPage(t, next, 200, `<th scope="row">`)
		if strings.Contains(first.Body, "c2</a>") == strings.Contains(next.Body, "c2</a>") {
			t.Fatalf("the second page repeats or misses the other course:\n%s\n%s", first.Body, next.Body)
		}
		e.Expect(e.Do("PUT", "/engine/api/v1/acme/configuration/ApiResultLimitSinceNotSpecified", servertest.Root, map[string]any{"value": "100"}), 204, "page size")
		detail := cc.Send("GET", "/console/t/acme/courses/c%201?version=0", nil)
		servertest.WantPage(t, detail, 200, `<dd id="course-title">Browser 1.2</dd>`, `<ul id="activity-tree" class="tree">`,
			"The Only Lesson</span> <code>sco1</code> <small>sco</small>", "meta.xml", `href="/console/t/acme/courses/c%201/preview?version=0"`)
		p = cc.Send("GET", "/console/t/acme/courses/c%201/preview", nil)
		if p.Status != 303 || !strings.Contains(p.Header.Get("Location"), "/player/launch/") {
			t.Fatalf("preview: %d %s %s", p.Status, p.Header.Get("Location"), p.Body)
		}

		servertest.WantPage(t, cc.Send("GET", "/console/t/acme/registrations", nil), 200, `<option value="c 1">`, "No registrations.")
		p = cc.Send("POST", "/console/t/acme/registrations", url.Values{"courseId": {"c 1"}, "registrationId": {"r1"}, "learnerId": {"l1"}, "firstName": {"Ada"}})
		if p.Status != 303 || p.Header.Get("Location") != "/console/t/acme/registrations/r1?created=1" {
			t.Fatalf("create registration: %d %s %s", p.Status, p.Header.Get("Location"), p.Body)
		}
		servertest.WantPage(t, cc.Send("GET", "/console/t/acme/registrations/r1?created=1", nil), 200, "Registration r1 was created.",
			`<dd id="reg-completion">UNKNOWN</dd>`, `<ul id="activity-results" class="tree">`, "The Only Lesson", `id="launch"`)
		// The API's message for a duplicate id reaches the page.
		servertest.WantPage(t, cc.Send("POST", "/console/t/acme/registrations", url.Values{"courseId": {"c 1"}, "registrationId": {"r1"}, "learnerId": {"l1"}}), 400, `role="alert"`, "r1")
		servertest.WantPage(t, cc.Send("GET", "/console/t/acme/registrations?courseId=c+1", nil), 200, `<th scope="row"><a href="/console/t/acme/registrations/r1">r1</a></th>`, "l1 (Ada)")
		servertest.WantPage(t, cc.Send("GET", "/console/t/acme/registrations?learnerId=nobody", nil), 200, "No registrations.")
		p = cc.Send("GET", "/console/t/acme/registrations/r1/launch", nil)
		if p.Status != 303 || !strings.Contains(p.Header.Get("Location"), "/player/launch/") {
			t.Fatalf("launch: %d %s %s", p.Status, p.Header.Get("Location"), p.Body)
		}
		if p := cc.Send("POST", "/console/t/acme/registrations/r1/reset", url.Values{}); p.Status != 303 {
			t.Fatalf("reset: %d %s", p.Status, p.Body)
		}
		if p := cc.Send("POST", "/console/t/acme/registrations/r1/delete", url.Values{}); p.Status != 303 {
			t.Fatalf("delete registration: %d %s", p.Status, p.Body)
		}
		e.Expect(e.Do("GET", "/engine/api/v1/acme/registrations/r1", servertest.Root, nil), 404, "deleted registration")
		servertest.WantPage(t, cc.Send("GET", "/console/t/acme/registrations/r1", nil), 404, `role="alert"`, "r1")

		// A package that is a zip in name only fails as a job with the API's message.
		p = cc.ImportForm("acme", "broken", []byte("PK\x03\x04 not really a zip"))
		if p.Status != 303 {
			t.Fatalf("broken import: %d %s", p.Status, p.Body)
		}
		servertest.WantPage(t, cc.WaitImport(p.Header.Get("Location")), 200, `data-status="ERROR"`, `<p role="alert" class="error" id="import-error">`)
		// By URL: a package that is there imports; a missing one fails with the download's status.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/course.zip" {
				http.NotFound(w, r)
				return
			}
			w.Write(servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest12, "sco/index.html": servertest.Sco12}))
		}))
		defer srv.Close()
		p = cc.Send("POST", "/console/t/acme/courses/import", url.Values{"course": {"byurl"}, "url": {srv.URL + "/course.zip"}, "courseName": {"By URL"}})
		if p.Status != 303 {
			t.Fatalf("url import: %d %s", p.Status, p.Body)
		}
		servertest.WantPage(t, cc.WaitImport(p.Header.Get("Location")), 200, `data-status="COMPLETE"`, "Imported: Browser 1.2 (COMPLETE)")
		p = cc.Send("POST", "/console/t/acme/courses/import", url.Values{"course": {"nourl"}, "url": {srv.URL + "/missing.zip"}})
		servertest.WantPage(t, cc.WaitImport(p.Header.Get("Location")), 200, `data-status="ERROR"`, `id="import-error">`, "404")
		// A file that is no course package is refused by the API at once, with its message.
		servertest.WantPage(t, cc.ImportForm("acme", "text", bytes.Repeat([]byte("not a course\n"), 20000)), 400, "neither a zip archive nor a cmi5 course structure")
		// Neither a file nor a URL: the console says what is missing.
		servertest.WantPage(t, cc.ImportForm("acme", "none", nil), 400, "choose a course package")

		servertest.WantPage(t, cc.Send("GET", "/console/t/acme/courses/c%201/delete", nil), 200, "<h1>Delete course <code>c 1</code>?</h1>",
			`<form method="post" action="/console/t/acme/courses/c%201/delete">`)
		if p := cc.Send("POST", "/console/t/acme/courses/c%201/delete", url.Values{}); p.Status != 303 {
			t.Fatalf("delete course: %d %s", p.Status, p.Body)
		}
		servertest.WantPage(t, cc.Send("GET", "/console/t/acme/courses?deleted=c+1", nil), 200, "Course c 1 was deleted.", "c2</a>")
		servertest.WantPage(t, cc.Send("GET", "/console/t/acme/courses/c%201", nil), 404, `role="alert"`)
	})
}
