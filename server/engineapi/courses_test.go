package engineapi_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

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
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		res := e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		if res.Message != "Import Successful" || res.CourseTitle != "Intro to Testing" {
			t.Fatalf("import result: %+v", res)
		}
		var d detail
		r := e.Do("GET", "/engine/api/v1/acme/courses/intro/detail", servertest.Root, nil)
		e.Expect(r, 200, "detail")
		r.JSON(t, &d)
		if d.Standard != "SCORM_12" || d.Version != 0 || len(d.RootActivity.Children) != 2 {
			t.Fatalf("detail: %s", r.Body)
		}
		c := d.RootActivity.Children
		if c[0].LaunchURL != "one/index.html" || c[1].LaunchURL != "two/index.html?page=2" || c[0].MasteryScore == nil || *c[0].MasteryScore != 80 {
			t.Fatalf("activities: %+v", c)
		}
		if n := e.BlobCount("acme/courses/"); n != 3 {
			t.Fatalf("%d files stored, want 3", n)
		}
		if n := e.BlobCount("acme/uploads/"); n != 0 {
			t.Fatalf("upload left behind: %d", n)
		}
		r = e.Do("GET", "/engine/api/v1/acme/courses/intro/title", servertest.Root, nil)
		if string(bytes.TrimSpace(r.Body)) != `{"title":"Intro to Testing"}` {
			t.Fatalf("title: %s", r.Body)
		}

		// A second import of the same id needs mayCreateNewVersion.
		res = e.WaitJob("acme", e.Upload("acme", "course=intro", servertest.Scorm12Package(t), "c.zip"))
		if res.Status != "ERROR" || !strings.Contains(res.Message, "mayCreateNewVersion") {
			t.Fatalf("second import without mayCreateNewVersion: %+v", res)
		}
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "&mayCreateNewVersion=true")
		r = e.Do("GET", "/engine/api/v1/acme/courses/intro/detail", servertest.Root, nil)
		r.JSON(t, &d)
		if d.Version != 1 {
			t.Fatalf("latest version %d, want 1", d.Version)
		}
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses/intro/detail?version=0", servertest.Root, nil), 200, "version 0")
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses/intro/detail?version=7", servertest.Root, nil), 404, "version 7")
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses/intro/detail?version=x", servertest.Root, nil), 400, "version x")
		// mayCreateNewVersion has no effect on a new course.
		e.ImportOK("acme", "other course/ü", servertest.Scorm12Package(t), "&mayCreateNewVersion=true")
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses/"+url.PathEscape("other course/ü")+"/title", servertest.Root, nil), 200, "odd id")
	})
}

func TestCourseList(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.Expect(e.Do("PUT", "/engine/api/v1/acme/configuration/ApiResultLimitSinceNotSpecified", servertest.Root, map[string]any{"value": "2"}), 204, "page size")
		start := time.Now().UTC().Add(-time.Second)
		for i := 0; i < 3; i++ {
			e.ImportOK("acme", fmt.Sprintf("c%d", i), servertest.Scorm12Package(t), "")
		}
		e.ImportOK("acme", "c0", servertest.Scorm12Package(t), "&mayCreateNewVersion=true")
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
			r := e.Do("GET", path, servertest.Root, nil)
			e.Expect(r, 200, "list")
			r.JSON(t, &l)
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
		r := e.Do("GET", "/engine/api/v1/acme/courses?since="+url.QueryEscape(start.Format(time.RFC3339Nano)), servertest.Root, nil)
		e.Expect(r, 200, "since")
		r.JSON(t, &l)
		if len(l.Courses) != 4 {
			t.Fatalf("since before all: %d entries", len(l.Courses))
		}
		last := l.Courses[3].Updated
		r = e.Do("GET", "/engine/api/v1/acme/courses?since="+url.QueryEscape(last), servertest.Root, nil)
		r.JSON(t, &l)
		if len(l.Courses) != 1 || l.Courses[0].ID != "c0" || l.Courses[0].Version != 1 {
			t.Fatalf("since = last update: %s", r.Body)
		}
		r = e.Do("GET", "/engine/api/v1/acme/courses?since=yesterday", servertest.Root, nil)
		e.Expect(r, 400, "bad since")
		if !strings.Contains(r.Message(), "ISO 8601") {
			t.Fatalf("bad since message: %q", r.Message())
		}
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses?more=garbage", servertest.Root, nil), 400, "bad more")
	})
}

func TestCourseEndpoints(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		// xAPI activity id, switched off by a setting.
		r := e.Do("GET", "/engine/api/v1/acme/courses/intro/xapiActivityId", servertest.Root, nil)
		e.Expect(r, 200, "xapi id")
		var id struct{ ID string }
		r.JSON(t, &id)
		if id.ID != "urn:lectern:course:acme:intro" {
			t.Fatalf("activity id %q", id.ID)
		}
		e.Expect(e.Do("PUT", "/engine/api/v1/acme/courses/intro/configuration/xAPIEnabled", servertest.Root, map[string]any{"value": "NO"}), 204, "disable xAPI for the course")
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses/intro/xapiActivityId", servertest.Root, nil), 404, "xapi disabled")
		r = e.Do("GET", "/engine/api/v1/acme/courses/intro/configuration/xAPIEnabled", servertest.Root, nil)
		if !strings.Contains(string(r.Body), `"false"`) {
			t.Fatalf("course setting: %s", r.Body)
		}
		r = e.Do("GET", "/engine/api/v1/acme/configuration/xAPIEnabled", servertest.Root, nil)
		if !strings.Contains(string(r.Body), `"true"`) {
			t.Fatalf("course setting leaked to the tenant: %s", r.Body)
		}
		e.Expect(e.Do("PUT", "/engine/api/v1/acme/courses/intro/configuration/TinCanRootAccount", servertest.Root, map[string]any{"value": "a:b"}), 400, "tenant-only setting at course level")
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses/nope/configuration", servertest.Root, nil), 404, "configuration of unknown course")

		// Preview link.
		r = e.Do("GET", "/engine/api/v1/acme/courses/intro/preview?expiry=60&startSco=i2", servertest.Root, nil)
		e.Expect(r, 200, "preview")
		var link struct{ LaunchLink string }
		r.JSON(t, &link)
		if !strings.Contains(link.LaunchLink, "/player/launch/") {
			t.Fatalf("launch link %q", link.LaunchLink)
		}
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses/intro/preview?startSco=nope", servertest.Root, nil), 400, "unknown startSco")
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses/intro/preview?expiry=-1", servertest.Root, nil), 400, "negative expiry")

		// Delete cascades to versions, settings and files.
		e.Expect(e.Do("DELETE", "/engine/api/v1/acme/courses/intro", servertest.Root, nil), 204, "delete")
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses/intro/title", servertest.Root, nil), 404, "deleted course")
		e.Expect(e.Do("DELETE", "/engine/api/v1/acme/courses/intro", servertest.Root, nil), 404, "delete twice")
		if n := e.BlobCount("acme/courses/"); n != 0 {
			t.Fatalf("%d files left after delete", n)
		}
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		r = e.Do("GET", "/engine/api/v1/acme/courses/intro/configuration/xAPIEnabled", servertest.Root, nil)
		if !strings.Contains(string(r.Body), `"true"`) {
			t.Fatalf("settings of the deleted course survived: %s", r.Body)
		}
	})
}

func TestImportBadRequests(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		const p = "/engine/api/v1/acme/courses/importJobs"
		e.Expect(e.Upload("acme", "", servertest.Scorm12Package(t), "c.zip"), 400, "no course parameter")
		e.Expect(e.Upload("acme", "course=c&mayCreateNewVersion=perhaps", servertest.Scorm12Package(t), "c.zip"), 400, "bad boolean")
		r := e.Upload("acme", "course=c", []byte("%PDF-1.4 not a zip"), "c.pdf")
		e.Expect(r, 400, "not a zip")
		if !strings.Contains(r.Message(), "zip") {
			t.Fatalf("message %q", r.Message())
		}
		// Multipart without a file part.
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("other", "x")
		mw.Close()
		r = e.Do("POST", p+"?course=c", servertest.Root, buf.Bytes(), "Content-Type", mw.FormDataContentType())
		e.Expect(r, 400, "no file part")
		e.Expect(e.Do("POST", p+"?course=c", servertest.Root, map[string]any{"url": "ftp://x/y.zip", "courseName": "c"}), 400, "ftp url")
		e.Expect(e.Do("POST", p+"?course=c", servertest.Root, map[string]any{"courseName": "c"}), 400, "no url")
		e.Expect(e.Do("POST", p+"?course=c", servertest.Root, map[string]any{"url": "http://x/y.zip", "courseName": "c", "extra": 1}), 400, "extra property")
		e.Expect(e.Do("POST", p+"?course=c", servertest.Root, "plain text", "Content-Type", "text/plain"), 400, "text body")
		e.Expect(e.Upload("nope", "course=c", servertest.Scorm12Package(t), "c.zip"), 404, "unknown tenant")
		e.Expect(e.Do("GET", p+"/no-such-job", servertest.Root, nil), 404, "unknown job")
		if n := e.BlobCount("acme/"); n != 0 {
			t.Fatalf("rejected requests stored %d blobs", n)
		}
	})
}

func TestImportFromURL(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		pkg := servertest.Scorm12Package(t)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/course.zip":
				w.Write(pkg)
			case "/content/imsmanifest.xml":
				io.WriteString(w, servertest.Scorm12Manifest)
			default:
				http.NotFound(w, r)
			}
		}))
		defer srv.Close()
		const p = "/engine/api/v1/acme/courses/importJobs"
		res := e.WaitJob("acme", e.Do("POST", p+"?course=fromurl", servertest.Root, map[string]any{"url": srv.URL + "/course.zip", "courseName": "From URL"}))
		if res.Status != "COMPLETE" {
			t.Fatalf("url import: %+v", res)
		}
		res = e.WaitJob("acme", e.Do("POST", p+"?course=manifestonly", servertest.Root, map[string]any{
			"url": srv.URL + "/content/imsmanifest.xml", "courseName": "Manifest", "webPathToCourse": srv.URL + "/content/"}))
		if res.Status != "COMPLETE" {
			t.Fatalf("manifest import: %+v", res)
		}
		res = e.WaitJob("acme", e.Do("POST", p+"?course=missing", servertest.Root, map[string]any{"url": srv.URL + "/missing.zip", "courseName": "x"}))
		if res.Status != "ERROR" || !strings.Contains(res.Message, "404") {
			t.Fatalf("missing zip: %+v", res)
		}
		// Addresses outside LECTERN_OUTBOUND_ALLOW are refused when the import is asked for
		// (here: the metadata address); the download refuses them again (workers/outbound).
		r := e.Do("POST", p+"?course=ssrf", servertest.Root, map[string]any{"url": "http://169.254.169.254/latest/meta-data.zip", "courseName": "x"})
		e.Expect(r, 400, "SSRF attempt")
		if !strings.Contains(r.Message(), "cloud metadata address") {
			t.Fatalf("SSRF refusal does not name the rule: %s", r.Body)
		}
		e.Expect(e.Do("GET", "/engine/api/v1/acme/courses/ssrf/title", servertest.Root, nil), 404, "no course after failed import")
	})
}

// TestMalformedPackages: each kind of broken package ends the job in ERROR with a message
// naming the problem, and leaves no course, version or file behind.
func TestMalformedPackages(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		cases := map[string]struct {
			pkg  []byte
			want string
		}{
			"bad XML":     {servertest.ZipOf(t, map[string]string{"imsmanifest.xml": "<manifest><organizations>"}), "imsmanifest.xml"},
			"no manifest": {servertest.ZipOf(t, map[string]string{"index.html": "<html/>"}), "no course found"},
			"subfolder":   {servertest.ZipOf(t, map[string]string{"course/imsmanifest.xml": servertest.Scorm12Manifest, "course/one/index.html": "x"}), "course/imsmanifest.xml"},
			"empty orgs":  {servertest.ZipOf(t, map[string]string{"imsmanifest.xml": strings.Replace(servertest.Scorm12Manifest, servertest.Scorm12Manifest[strings.Index(servertest.Scorm12Manifest, "<organization "):strings.Index(servertest.Scorm12Manifest, "</organizations>")], "", 1)}), "organization"},
			"zip slip":    {servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Scorm12Manifest, "../../evil.html": "x"}), "evil.html"},
			"zip bomb":    {bomb(t), "zip bomb"},
			"corrupt zip": {append([]byte("PK\x03\x04"), bytes.Repeat([]byte{0xAB}, 200)...), "zip"},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				id := "bad-" + strings.ReplaceAll(name, " ", "-")
				res := e.WaitJob("acme", e.Upload("acme", "course="+id, tc.pkg, "x.zip"))
				if res.Status != "ERROR" || !strings.Contains(strings.ToLower(res.Message), strings.ToLower(tc.want)) {
					t.Fatalf("%s: %+v, want ERROR mentioning %q", name, res, tc.want)
				}
				e.Expect(e.Do("GET", "/engine/api/v1/acme/courses/"+id+"/title", servertest.Root, nil), 404, "course after failed import")
			})
		}
		if n := e.BlobCount("acme/"); n != 0 {
			t.Fatalf("failed imports left %d blobs", n)
		}
		var l struct{ Courses []json.RawMessage }
		e.Do("GET", "/engine/api/v1/acme/courses", servertest.Root, nil).JSON(t, &l)
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
	io.WriteString(f, servertest.Scorm12Manifest)
	f, _ = w.Create("one/index.html")
	zeros := make([]byte, 1<<20)
	for i := 0; i < 200; i++ {
		f.Write(zeros)
	}
	w.Close()
	return buf.Bytes()
}
