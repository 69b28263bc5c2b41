package servertest

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/blob"
)

// ZipOf builds a zip from name → content, in name order.
func ZipOf(t testing.TB, files map[string]string) []byte {
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

// Scorm12Manifest is the manifest of Scorm12Package: one SCO, one organization.
const Scorm12Manifest = `<?xml version="1.0" encoding="UTF-8"?>
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

// Scorm12Package is a minimal SCORM 1.2 package (Scorm12Manifest and its SCO).
func Scorm12Package(t *testing.T) []byte {
	return ZipOf(t, map[string]string{"imsmanifest.xml": Scorm12Manifest,
		"one/index.html": "<html>one</html>", "two/index.html": "<html>two</html>"})
}

// Upload starts a course import of body (as a multipart file named filename) for tenantID.
func (e *Env) Upload(tenantID, query string, body []byte, filename string) Resp {
	e.T.Helper()
	form, ct := MultipartFile(filename, body)
	return e.Do("POST", "/engine/api/v1/"+tenantID+"/courses/importJobs?"+query, Root, form, "Content-Type", ct)
}

// MultipartFile is a multipart/form-data body with one part "file", and its content type.
func MultipartFile(filename string, body []byte) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	part, _ := mw.CreateFormFile("file", filename)
	part.Write(body)
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// ImportResult is the part of an import job's result the tests read.
type ImportResult struct {
	Status         string   `json:"status"`
	Message        string   `json:"message"`
	CourseTitle    string   `json:"courseTitle"`
	ParserWarnings []string `json:"parserWarnings"`
}

// WaitJob polls an import job until it leaves RUNNING.
func (e *Env) WaitJob(tenantID string, r Resp) ImportResult {
	e.T.Helper()
	e.Expect(r, 200, "start import")
	var id struct{ Result string }
	r.JSON(e.T, &id)
	if id.Result == "" {
		e.T.Fatalf("no job id: %s", r.Body)
	}
	var res ImportResult
	Eventually(e.T, 60*time.Second, "import job "+id.Result, func() bool {
		rr := e.Do("GET", "/engine/api/v1/"+tenantID+"/courses/importJobs/"+id.Result, Root, nil)
		e.Expect(rr, 200, "job status")
		rr.JSON(e.T, &res)
		return res.Status != "RUNNING"
	})
	return res
}

// ImportOK imports pkg as courseID of tenantID and fails the test unless the import completes.
func (e *Env) ImportOK(tenantID, courseID string, pkg []byte, query string) ImportResult {
	e.T.Helper()
	res := e.WaitJob(tenantID, e.Upload(tenantID, "course="+url.QueryEscape(courseID)+query, pkg, "course.zip"))
	if res.Status != "COMPLETE" {
		e.T.Fatalf("import of %s: %+v", courseID, res)
	}
	return res
}

// BlobCount counts the stored blobs under prefix.
func (e *Env) BlobCount(prefix string) int {
	n := 0
	_ = e.App.Blobs.List(context.Background(), prefix, func(blob.Info) error { n++; return nil })
	return n
}
