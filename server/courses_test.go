package server_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/blob"
)

// zipOf builds a zip from name → content, in name order.
func zipOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f, err := w.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(f, files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const scorm12Manifest = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="com.example.intro" version="1.0"
  xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="org1">
    <organization identifier="org1"><title>Intro to Testing</title>
      <item identifier="i1" identifierref="r1"><title>Lesson One</title><adlcp:masteryscore>80</adlcp:masteryscore></item>
      <item identifier="i2" identifierref="r2" parameters="?page=2"><title>Lesson Two</title></item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="one/index.html"><file href="one/index.html"/></resource>
    <resource identifier="r2" type="webcontent" adlcp:scormtype="sco" href="two/index.html"><file href="two/index.html"/></resource>
  </resources>
</manifest>`

func scorm12Package(t *testing.T) []byte {
	return zipOf(t, map[string]string{"imsmanifest.xml": scorm12Manifest,
		"one/index.html": "<html>one</html>", "two/index.html": "<html>two</html>"})
}

func (e *env) upload(tenantID, query string, body []byte, filename string) resp {
	e.t.Helper()
	form, ct := multipartFile(filename, body)
	return e.do("POST", "/engine/api/v1/"+tenantID+"/courses/importJobs?"+query, root, form, "Content-Type", ct)
}

// multipartFile is a multipart/form-data body with one part "file", and its content type.
func multipartFile(filename string, body []byte) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	part, _ := mw.CreateFormFile("file", filename)
	part.Write(body)
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

type importResult struct {
	Status         string   `json:"status"`
	Message        string   `json:"message"`
	CourseTitle    string   `json:"courseTitle"`
	ParserWarnings []string `json:"parserWarnings"`
}

// waitJob polls an import job until it leaves RUNNING.
func (e *env) waitJob(tenantID string, r resp) importResult {
	e.t.Helper()
	e.expect(r, 200, "start import")
	var id struct{ Result string }
	r.json(e.t, &id)
	if id.Result == "" {
		e.t.Fatalf("no job id: %s", r.Body)
	}
	var res importResult
	eventually(e.t, 60*time.Second, "import job "+id.Result, func() bool {
		rr := e.do("GET", "/engine/api/v1/"+tenantID+"/courses/importJobs/"+id.Result, root, nil)
		e.expect(rr, 200, "job status")
		rr.json(e.t, &res)
		return res.Status != "RUNNING"
	})
	return res
}

func (e *env) importOK(tenantID, courseID string, pkg []byte, query string) importResult {
	e.t.Helper()
	res := e.waitJob(tenantID, e.upload(tenantID, "course="+url.QueryEscape(courseID)+query, pkg, "course.zip"))
	if res.Status != "COMPLETE" {
		e.t.Fatalf("import of %s: %+v", courseID, res)
	}
	return res
}

func (e *env) blobCount(prefix string) int {
	n := 0
	_ = e.app.Blobs.List(context.Background(), prefix, func(blob.Info) error { n++; return nil })
	return n
}

type detail struct {
	ID           string `json:"id"`
	Version      int    `json:"version"`
	Title        string `json:"title"`
	Standard     string `json:"courseLearningStandard"`
	RootActivity struct {
		ID       string `json:"id"`
		Title    string `json:"title"`
		Children []struct {
			ID           string   `json:"id"`
			Title        string   `json:"title"`
			LaunchURL    string   `json:"launchUrl"`
			MasteryScore *float64 `json:"masteryScore"`
		} `json:"children"`
	} `json:"rootActivity"`
}

func TestCourseImport(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		res := e.importOK("acme", "intro", scorm12Package(t), "")
		if res.Message != "Import Successful" || res.CourseTitle != "Intro to Testing" {
			t.Fatalf("import result: %+v", res)
		}
		var d detail
		r := e.do("GET", "/engine/api/v1/acme/courses/intro/detail", root, nil)
		e.expect(r, 200, "detail")
		r.json(t, &d)
		if d.Standard != "SCORM_12" || d.Version != 0 || len(d.RootActivity.Children) != 2 {
			t.Fatalf("detail: %s", r.Body)
		}
		c := d.RootActivity.Children
		if c[0].LaunchURL != "one/index.html" || c[1].LaunchURL != "two/index.html?page=2" || c[0].MasteryScore == nil || *c[0].MasteryScore != 80 {
			t.Fatalf("activities: %+v", c)
		}
		if n := e.blobCount("acme/courses/"); n != 3 {
			t.Fatalf("%d files stored, want 3", n)
		}
		if n := e.blobCount("acme/uploads/"); n != 0 {
			t.Fatalf("upload left behind: %d", n)
		}
		r = e.do("GET", "/engine/api/v1/acme/courses/intro/title", root, nil)
		if string(bytes.TrimSpace(r.Body)) != `{"title":"Intro to Testing"}` {
			t.Fatalf("title: %s", r.Body)
		}

		// A second import of the same id needs mayCreateNewVersion.
		res = e.waitJob("acme", e.upload("acme", "course=intro", scorm12Package(t), "c.zip"))
		if res.Status != "ERROR" || !strings.Contains(res.Message, "mayCreateNewVersion") {
			t.Fatalf("second import without mayCreateNewVersion: %+v", res)
		}
		e.importOK("acme", "intro", scorm12Package(t), "&mayCreateNewVersion=true")
		r = e.do("GET", "/engine/api/v1/acme/courses/intro/detail", root, nil)
		r.json(t, &d)
		if d.Version != 1 {
			t.Fatalf("latest version %d, want 1", d.Version)
		}
		e.expect(e.do("GET", "/engine/api/v1/acme/courses/intro/detail?version=0", root, nil), 200, "version 0")
		e.expect(e.do("GET", "/engine/api/v1/acme/courses/intro/detail?version=7", root, nil), 404, "version 7")
		e.expect(e.do("GET", "/engine/api/v1/acme/courses/intro/detail?version=x", root, nil), 400, "version x")
		// mayCreateNewVersion has no effect on a new course.
		e.importOK("acme", "other course/ü", scorm12Package(t), "&mayCreateNewVersion=true")
		e.expect(e.do("GET", "/engine/api/v1/acme/courses/"+url.PathEscape("other course/ü")+"/title", root, nil), 200, "odd id")
	})
}

func TestCourseList(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		e.expect(e.do("PUT", "/engine/api/v1/acme/configuration/ApiResultLimitSinceNotSpecified", root, map[string]any{"value": "2"}), 204, "page size")
		start := time.Now().UTC().Add(-time.Second)
		for i := 0; i < 3; i++ {
			e.importOK("acme", fmt.Sprintf("c%d", i), scorm12Package(t), "")
		}
		e.importOK("acme", "c0", scorm12Package(t), "&mayCreateNewVersion=true")
		type list struct {
			Courses []struct {
				ID       string `json:"id"`
				Version  int    `json:"version"`
				Title    string `json:"title"`
				Standard string `json:"courseLearningStandard"`
				Updated  string `json:"updated"`
			} `json:"courses"`
			More string `json:"more"`
		}
		var all []string
		path := "/engine/api/v1/acme/courses"
		for pages := 0; ; pages++ {
			var l list
			r := e.do("GET", path, root, nil)
			e.expect(r, 200, "list")
			r.json(t, &l)
			if l.More != "" && len(l.Courses) != 2 {
				t.Fatalf("page of %d entries with more", len(l.Courses))
			}
			for _, c := range l.Courses {
				all = append(all, fmt.Sprintf("%s@%d", c.ID, c.Version))
				if c.Standard != "SCORM_12" || c.Title == "" || c.Updated == "" {
					t.Fatalf("entry %+v", c)
				}
			}
			if l.More == "" {
				break
			}
			if pages > 5 {
				t.Fatal("more never ends")
			}
			path = "/engine/api/v1/acme/courses?more=" + url.QueryEscape(l.More)
		}
		if strings.Join(all, ",") != "c0@0,c1@0,c2@0,c0@1" {
			t.Fatalf("course list: %v", all)
		}
		// since is inclusive and limits to versions updated at or after it.
		var l list
		r := e.do("GET", "/engine/api/v1/acme/courses?since="+url.QueryEscape(start.Format(time.RFC3339Nano)), root, nil)
		e.expect(r, 200, "since")
		r.json(t, &l)
		if len(l.Courses) != 4 {
			t.Fatalf("since before all: %d entries", len(l.Courses))
		}
		last := l.Courses[3].Updated
		r = e.do("GET", "/engine/api/v1/acme/courses?since="+url.QueryEscape(last), root, nil)
		r.json(t, &l)
		if len(l.Courses) != 1 || l.Courses[0].ID != "c0" || l.Courses[0].Version != 1 {
			t.Fatalf("since = last update: %s", r.Body)
		}
		r = e.do("GET", "/engine/api/v1/acme/courses?since=yesterday", root, nil)
		e.expect(r, 400, "bad since")
		if !strings.Contains(r.message(), "ISO 8601") {
			t.Fatalf("bad since message: %q", r.message())
		}
		e.expect(e.do("GET", "/engine/api/v1/acme/courses?more=garbage", root, nil), 400, "bad more")
	})
}

func TestCourseEndpoints(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		e.importOK("acme", "intro", scorm12Package(t), "")
		// xAPI activity id, switched off by a setting.
		r := e.do("GET", "/engine/api/v1/acme/courses/intro/xapiActivityId", root, nil)
		e.expect(r, 200, "xapi id")
		var id struct{ ID string }
		r.json(t, &id)
		if id.ID != "urn:lectern:course:acme:intro" {
			t.Fatalf("activity id %q", id.ID)
		}
		e.expect(e.do("PUT", "/engine/api/v1/acme/courses/intro/configuration/xAPIEnabled", root, map[string]any{"value": "NO"}), 204, "disable xAPI for the course")
		e.expect(e.do("GET", "/engine/api/v1/acme/courses/intro/xapiActivityId", root, nil), 404, "xapi disabled")
		r = e.do("GET", "/engine/api/v1/acme/courses/intro/configuration/xAPIEnabled", root, nil)
		if !strings.Contains(string(r.Body), `"false"`) {
			t.Fatalf("course setting: %s", r.Body)
		}
		r = e.do("GET", "/engine/api/v1/acme/configuration/xAPIEnabled", root, nil)
		if !strings.Contains(string(r.Body), `"true"`) {
			t.Fatalf("course setting leaked to the tenant: %s", r.Body)
		}
		e.expect(e.do("PUT", "/engine/api/v1/acme/courses/intro/configuration/TinCanRootAccount", root, map[string]any{"value": "a:b"}), 400, "tenant-only setting at course level")
		e.expect(e.do("GET", "/engine/api/v1/acme/courses/nope/configuration", root, nil), 404, "configuration of unknown course")

		// Preview link.
		r = e.do("GET", "/engine/api/v1/acme/courses/intro/preview?expiry=60&startSco=i2", root, nil)
		e.expect(r, 200, "preview")
		var link struct{ LaunchLink string }
		r.json(t, &link)
		if !strings.Contains(link.LaunchLink, "/player/launch/") {
			t.Fatalf("launch link %q", link.LaunchLink)
		}
		e.expect(e.do("GET", "/engine/api/v1/acme/courses/intro/preview?startSco=nope", root, nil), 400, "unknown startSco")
		e.expect(e.do("GET", "/engine/api/v1/acme/courses/intro/preview?expiry=-1", root, nil), 400, "negative expiry")

		// Delete cascades to versions, settings and files.
		e.expect(e.do("DELETE", "/engine/api/v1/acme/courses/intro", root, nil), 204, "delete")
		e.expect(e.do("GET", "/engine/api/v1/acme/courses/intro/title", root, nil), 404, "deleted course")
		e.expect(e.do("DELETE", "/engine/api/v1/acme/courses/intro", root, nil), 404, "delete twice")
		if n := e.blobCount("acme/courses/"); n != 0 {
			t.Fatalf("%d files left after delete", n)
		}
		e.importOK("acme", "intro", scorm12Package(t), "")
		r = e.do("GET", "/engine/api/v1/acme/courses/intro/configuration/xAPIEnabled", root, nil)
		if !strings.Contains(string(r.Body), `"true"`) {
			t.Fatalf("settings of the deleted course survived: %s", r.Body)
		}
	})
}

func TestImportBadRequests(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		const p = "/engine/api/v1/acme/courses/importJobs"
		e.expect(e.upload("acme", "", scorm12Package(t), "c.zip"), 400, "no course parameter")
		e.expect(e.upload("acme", "course=c&mayCreateNewVersion=perhaps", scorm12Package(t), "c.zip"), 400, "bad boolean")
		r := e.upload("acme", "course=c", []byte("%PDF-1.4 not a zip"), "c.pdf")
		e.expect(r, 400, "not a zip")
		if !strings.Contains(r.message(), "zip") {
			t.Fatalf("message %q", r.message())
		}
		// Multipart without a file part.
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("other", "x")
		mw.Close()
		r = e.do("POST", p+"?course=c", root, buf.Bytes(), "Content-Type", mw.FormDataContentType())
		e.expect(r, 400, "no file part")
		e.expect(e.do("POST", p+"?course=c", root, map[string]any{"url": "ftp://x/y.zip", "courseName": "c"}), 400, "ftp url")
		e.expect(e.do("POST", p+"?course=c", root, map[string]any{"courseName": "c"}), 400, "no url")
		e.expect(e.do("POST", p+"?course=c", root, map[string]any{"url": "http://x/y.zip", "courseName": "c", "extra": 1}), 400, "extra property")
		e.expect(e.do("POST", p+"?course=c", root, "plain text", "Content-Type", "text/plain"), 400, "text body")
		e.expect(e.upload("nope", "course=c", scorm12Package(t), "c.zip"), 404, "unknown tenant")
		e.expect(e.do("GET", p+"/no-such-job", root, nil), 404, "unknown job")
		if n := e.blobCount("acme/"); n != 0 {
			t.Fatalf("rejected requests stored %d blobs", n)
		}
	})
}

func TestImportFromURL(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		pkg := scorm12Package(t)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/course.zip":
				w.Write(pkg)
			case "/content/imsmanifest.xml":
				io.WriteString(w, scorm12Manifest)
			default:
				http.NotFound(w, r)
			}
		}))
		defer srv.Close()
		const p = "/engine/api/v1/acme/courses/importJobs"
		res := e.waitJob("acme", e.do("POST", p+"?course=fromurl", root, map[string]any{"url": srv.URL + "/course.zip", "courseName": "From URL"}))
		if res.Status != "COMPLETE" {
			t.Fatalf("url import: %+v", res)
		}
		res = e.waitJob("acme", e.do("POST", p+"?course=manifestonly", root, map[string]any{
			"url": srv.URL + "/content/imsmanifest.xml", "courseName": "Manifest", "webPathToCourse": srv.URL + "/content/"}))
		if res.Status != "COMPLETE" {
			t.Fatalf("manifest import: %+v", res)
		}
		res = e.waitJob("acme", e.do("POST", p+"?course=missing", root, map[string]any{"url": srv.URL + "/missing.zip", "courseName": "x"}))
		if res.Status != "ERROR" || !strings.Contains(res.Message, "404") {
			t.Fatalf("missing zip: %+v", res)
		}
		// Addresses outside LECTERN_OUTBOUND_ALLOW are refused when the import is asked for
		// (here: the metadata address); the download refuses them again (workers/outbound).
		r := e.do("POST", p+"?course=ssrf", root, map[string]any{"url": "http://169.254.169.254/latest/meta-data.zip", "courseName": "x"})
		e.expect(r, 400, "SSRF attempt")
		if !strings.Contains(r.message(), "cloud metadata address") {
			t.Fatalf("SSRF refusal does not name the rule: %s", r.Body)
		}
		e.expect(e.do("GET", "/engine/api/v1/acme/courses/ssrf/title", root, nil), 404, "no course after failed import")
	})
}

// TestMalformedPackages: each kind of broken package ends the job in ERROR with a message
// naming the problem, and leaves no course, version or file behind.
func TestMalformedPackages(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		cases := map[string]struct {
			pkg  []byte
			want string
		}{
			"bad XML":     {zipOf(t, map[string]string{"imsmanifest.xml": "<manifest><organizations>"}), "imsmanifest.xml"},
			"no manifest": {zipOf(t, map[string]string{"index.html": "<html/>"}), "no course found"},
			"subfolder":   {zipOf(t, map[string]string{"course/imsmanifest.xml": scorm12Manifest, "course/one/index.html": "x"}), "course/imsmanifest.xml"},
			"empty orgs":  {zipOf(t, map[string]string{"imsmanifest.xml": strings.Replace(scorm12Manifest, scorm12Manifest[strings.Index(scorm12Manifest, "<organization "):strings.Index(scorm12Manifest, "</organizations>")], "", 1)}), "organization"},
			"zip slip":    {zipOf(t, map[string]string{"imsmanifest.xml": scorm12Manifest, "../../evil.html": "x"}), "evil.html"},
			"zip bomb":    {bomb(t), "zip bomb"},
			"corrupt zip": {append([]byte("PK\x03\x04"), bytes.Repeat([]byte{0xAB}, 200)...), "zip"},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				id := "bad-" + strings.ReplaceAll(name, " ", "-")
				res := e.waitJob("acme", e.upload("acme", "course="+id, tc.pkg, "x.zip"))
				if res.Status != "ERROR" || !strings.Contains(strings.ToLower(res.Message), strings.ToLower(tc.want)) {
					t.Fatalf("%s: %+v, want ERROR mentioning %q", name, res, tc.want)
				}
				e.expect(e.do("GET", "/engine/api/v1/acme/courses/"+id+"/title", root, nil), 404, "course after failed import")
			})
		}
		if n := e.blobCount("acme/"); n != 0 {
			t.Fatalf("failed imports left %d blobs", n)
		}
		var l struct{ Courses []json.RawMessage }
		e.do("GET", "/engine/api/v1/acme/courses", root, nil).json(t, &l)
		if len(l.Courses) != 0 {
			t.Fatalf("failed imports left %d course versions", len(l.Courses))
		}
	})
}

// bomb is a valid SCORM package plus 200 MiB of zeros that compress about 1000:1.
func bomb(t *testing.T) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, _ := w.Create("imsmanifest.xml")
	io.WriteString(f, scorm12Manifest)
	f, _ = w.Create("one/index.html")
	zeros := make([]byte, 1<<20)
	for i := 0; i < 200; i++ {
		f.Write(zeros)
	}
	w.Close()
	return buf.Bytes()
}
