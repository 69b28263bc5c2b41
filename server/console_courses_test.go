package server_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// manifest12Warned is manifest12 with manifest metadata in a file the package lacks: the
// import succeeds with a parser warning.
var manifest12Warned = strings.Replace(manifest12, "</schemaversion>", "</schemaversion><adlcp:location>meta.xml</adlcp:location>", 1)

// importForm sends the console's import form with a package file (and the course id).
func (cc *consoleClient) importForm(tenantID, courseID string, pkg []byte) consolePage {
	cc.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("course", courseID)
	part, _ := mw.CreateFormFile("file", "course.zip")
	part.Write(pkg)
	mw.Close()
	req, err := http.NewRequest("POST", cc.e.url+"/console/t/"+tenantID+"/courses/import", &buf)
	if err != nil {
		cc.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Cookie", cc.cookie)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		cc.t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return consolePage{Status: res.StatusCode, Header: res.Header, Body: b.String()}
}

var importStatusRE = regexp.MustCompile(`data-status="([A-Z]+)"`)

// waitImport polls the import status fragment as htmx does until the job ends; the fragment
// polls itself while the job runs and no longer once it ended.
func (cc *consoleClient) waitImport(statusPath string) consolePage {
	cc.t.Helper()
	var p consolePage
	eventually(cc.t, 60*time.Second, "console import "+statusPath, func() bool {
		p = cc.send("GET", statusPath, nil, "HX-Request", "true")
		wantPage(cc.t, p, 200, `<progress id="import-progress" max="100"`, `role="status" aria-live="polite"`)
		if strings.Contains(p.Body, "<html") {
			cc.t.Fatal("the status poll got a whole page")
		}
		m := importStatusRE.FindStringSubmatch(p.Body)
		if m == nil {
			cc.t.Fatalf("status fragment without data-status: %s", p.Body)
		}
		if m[1] == "RUNNING" {
			if !strings.Contains(p.Body, `hx-trigger="every 500ms"`) || strings.Contains(p.Body, `value="100"`) {
				cc.t.Fatalf("a running import does not poll or claims its end: %s", p.Body)
			}
			return false
		}
		if strings.Contains(p.Body, "hx-trigger") {
			cc.t.Fatalf("an ended import still polls: %s", p.Body)
		}
		return true
	})
	return p
}

// TestConsoleCourses: a tenant credential imports a course by upload through the console,
// follows the job to its end with the parser warnings, sees the version, its activity tree and
// a preview link, creates a registration, launches it, resets and deletes it, sees a broken
// package fail with the API's message, and deletes the course after a confirmation page.
func TestConsoleCourses(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		key, secret := e.credential("acme")
		cc := &consoleClient{t: t, e: e}
		cc.signIn(key, secret)
		if p := cc.send("GET", "/console/", nil); p.Status != 303 || p.Header.Get("Location") != "/console/t/acme/courses" {
			t.Fatalf("a tenant credential lands on %d %s, want its courses", p.Status, p.Header.Get("Location"))
		}
		wantPage(t, cc.send("GET", "/console/t/acme/courses", nil), 200, `aria-current="page">Courses</a>`,
			`<form method="post" action="/console/t/acme/courses/import" enctype="multipart/form-data"`, "No courses yet.")

		p := cc.importForm("acme", "c 1", zipOf(t, map[string]string{"imsmanifest.xml": manifest12Warned, "sco/index.html": sco12}))
		loc := p.Header.Get("Location")
		if p.Status != 303 || !strings.HasPrefix(loc, "/console/t/acme/courses/imports/") {
			t.Fatalf("import: %d %s %s", p.Status, loc, p.Body)
		}
		wantPage(t, cc.send("GET", loc, nil), 200, "<h1>Import of <code>c 1</code></h1>", `id="import-status"`)
		done := cc.waitImport(loc)
		wantPage(t, done, 200, `data-status="COMPLETE"`, `value="100" data-stage="DONE"`, "Imported: Browser 1.2 (COMPLETE)", "meta.xml",
			`<a href="/console/t/acme/courses/c%201" id="import-course-link">`)

		wantPage(t, cc.send("GET", "/console/t/acme/courses", nil), 200,
			`<th scope="row"><a href="/console/t/acme/courses/c%201?version=0">c 1</a></th>`, "<td>SCORM_12</td>")
		// Paging: with one course version a page, the list links the next page by its more token.
		e.importOK("acme", "c2", zipOf(t, map[string]string{"imsmanifest.xml": manifest12, "sco/index.html": sco12}), "")
		e.expect(e.do("PUT", "/engine/api/v1/acme/configuration/ApiResultLimitSinceNotSpecified", root, map[string]any{"value": "1"}), 204, "page size")
		first := cc.send("GET", "/console/t/acme/courses", nil)
		m := regexp.MustCompile(`<a href="(/console/t/acme/courses\?more=[^"]+)" rel="next">`).FindStringSubmatch(first.Body)
		if m == nil || strings.Count(first.Body, `<th scope="row">`) != 1 {
			t.Fatalf("first page of one: %s", first.Body)
		}
		next := cc.send("GET", strings.ReplaceAll(m[1], "&amp;", "&"), nil)
		wantPage(t, next, 200, `<th scope="row">`)
		if strings.Contains(first.Body, "c2</a>") == strings.Contains(next.Body, "c2</a>") {
			t.Fatalf("the second page repeats or misses the other course:\n%s\n%s", first.Body, next.Body)
		}
		e.expect(e.do("PUT", "/engine/api/v1/acme/configuration/ApiResultLimitSinceNotSpecified", root, map[string]any{"value": "100"}), 204, "page size")
		detail := cc.send("GET", "/console/t/acme/courses/c%201?version=0", nil)
		wantPage(t, detail, 200, `<dd id="course-title">Browser 1.2</dd>`, `<ul id="activity-tree" class="tree">`,
			"The Only Lesson</span> <code>sco1</code> <small>sco</small>", "meta.xml", `href="/console/t/acme/courses/c%201/preview?version=0"`)
		p = cc.send("GET", "/console/t/acme/courses/c%201/preview", nil)
		if p.Status != 303 || !strings.Contains(p.Header.Get("Location"), "/player/launch/") {
			t.Fatalf("preview: %d %s %s", p.Status, p.Header.Get("Location"), p.Body)
		}

		wantPage(t, cc.send("GET", "/console/t/acme/registrations", nil), 200, `<option value="c 1">`, "No registrations.")
		p = cc.send("POST", "/console/t/acme/registrations", url.Values{"courseId": {"c 1"}, "registrationId": {"r1"}, "learnerId": {"l1"}, "firstName": {"Ada"}})
		if p.Status != 303 || p.Header.Get("Location") != "/console/t/acme/registrations/r1?created=1" {
			t.Fatalf("create registration: %d %s %s", p.Status, p.Header.Get("Location"), p.Body)
		}
		wantPage(t, cc.send("GET", "/console/t/acme/registrations/r1?created=1", nil), 200, "Registration r1 was created.",
			`<dd id="reg-completion">UNKNOWN</dd>`, `<ul id="activity-results" class="tree">`, "The Only Lesson", `id="launch"`)
		// The API's message for a duplicate id reaches the page.
		wantPage(t, cc.send("POST", "/console/t/acme/registrations", url.Values{"courseId": {"c 1"}, "registrationId": {"r1"}, "learnerId": {"l1"}}), 400, `role="alert"`, "r1")
		wantPage(t, cc.send("GET", "/console/t/acme/registrations?courseId=c+1", nil), 200, `<th scope="row"><a href="/console/t/acme/registrations/r1">r1</a></th>`, "l1 (Ada)")
		wantPage(t, cc.send("GET", "/console/t/acme/registrations?learnerId=nobody", nil), 200, "No registrations.")
		p = cc.send("GET", "/console/t/acme/registrations/r1/launch", nil)
		if p.Status != 303 || !strings.Contains(p.Header.Get("Location"), "/player/launch/") {
			t.Fatalf("launch: %d %s %s", p.Status, p.Header.Get("Location"), p.Body)
		}
		if p := cc.send("POST", "/console/t/acme/registrations/r1/reset", url.Values{}); p.Status != 303 {
			t.Fatalf("reset: %d %s", p.Status, p.Body)
		}
		if p := cc.send("POST", "/console/t/acme/registrations/r1/delete", url.Values{}); p.Status != 303 {
			t.Fatalf("delete registration: %d %s", p.Status, p.Body)
		}
		e.expect(e.do("GET", "/engine/api/v1/acme/registrations/r1", root, nil), 404, "deleted registration")
		wantPage(t, cc.send("GET", "/console/t/acme/registrations/r1", nil), 404, `role="alert"`, "r1")

		// A package that is a zip in name only fails as a job with the API's message.
		p = cc.importForm("acme", "broken", []byte("PK\x03\x04 not really a zip"))
		if p.Status != 303 {
			t.Fatalf("broken import: %d %s", p.Status, p.Body)
		}
		wantPage(t, cc.waitImport(p.Header.Get("Location")), 200, `data-status="ERROR"`, `<p role="alert" class="error" id="import-error">`)
		// By URL: a package that is there imports; a missing one fails with the download's status.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/course.zip" {
				http.NotFound(w, r)
				return
			}
			w.Write(zipOf(t, map[string]string{"imsmanifest.xml": manifest12, "sco/index.html": sco12}))
		}))
		defer srv.Close()
		p = cc.send("POST", "/console/t/acme/courses/import", url.Values{"course": {"byurl"}, "url": {srv.URL + "/course.zip"}, "courseName": {"By URL"}})
		if p.Status != 303 {
			t.Fatalf("url import: %d %s", p.Status, p.Body)
		}
		wantPage(t, cc.waitImport(p.Header.Get("Location")), 200, `data-status="COMPLETE"`, "Imported: Browser 1.2 (COMPLETE)")
		p = cc.send("POST", "/console/t/acme/courses/import", url.Values{"course": {"nourl"}, "url": {srv.URL + "/missing.zip"}})
		wantPage(t, cc.waitImport(p.Header.Get("Location")), 200, `data-status="ERROR"`, `id="import-error">`, "404")
		// A file that is no course package is refused by the API at once, with its message.
		wantPage(t, cc.importForm("acme", "text", bytes.Repeat([]byte("not a course\n"), 20000)), 400, "neither a zip archive nor a cmi5 course structure")
		// Neither a file nor a URL: the console says what is missing.
		wantPage(t, cc.importForm("acme", "none", nil), 400, "choose a course package")

		wantPage(t, cc.send("GET", "/console/t/acme/courses/c%201/delete", nil), 200, "<h1>Delete course <code>c 1</code>?</h1>",
			`<form method="post" action="/console/t/acme/courses/c%201/delete">`)
		if p := cc.send("POST", "/console/t/acme/courses/c%201/delete", url.Values{}); p.Status != 303 {
			t.Fatalf("delete course: %d %s", p.Status, p.Body)
		}
		wantPage(t, cc.send("GET", "/console/t/acme/courses?deleted=c+1", nil), 200, "Course c 1 was deleted.", "c2</a>")
		wantPage(t, cc.send("GET", "/console/t/acme/courses/c%201", nil), 404, `role="alert"`)
	})
}
