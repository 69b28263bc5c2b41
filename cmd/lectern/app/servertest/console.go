package servertest

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// ConsoleClient talks to the console like a browser that does not run scripts: form posts,
// the session cookie, no redirects followed.
type ConsoleClient struct {
	T      *testing.T
	E      *Env
	Cookie string
}

// ConsolePage is a console response: status, headers and the page.
type ConsolePage struct {
	Status int
	Header http.Header
	Body   string
}

// Send sends one request to the console, with the session cookie and form (if any) as its body.
func (cc *ConsoleClient) Send(method, path string, form url.Values, headers ...string) ConsolePage {
	cc.T.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, cc.E.URL+path, body)
	if err != nil {
		cc.T.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cc.Cookie != "" {
		req.Header.Set("Cookie", cc.Cookie)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		cc.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, c := range res.Cookies() {
		if c.Name == "lectern_console" {
			cc.Cookie = c.Name + "=" + c.Value
			if c.MaxAge < 0 {
				cc.Cookie = ""
			}
		}
	}
	return ConsolePage{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

// SignIn signs in with a tenant credential and keeps the session cookie.
func (cc *ConsoleClient) SignIn(key, secret string) ConsolePage {
	cc.T.Helper()
	return cc.Send("POST", "/console/signin", url.Values{"key": {key}, "secret": {secret}})
}

// WantPage fails the test unless p has status and contains every string given.
func WantPage(t *testing.T, p ConsolePage, status int, contains ...string) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("status %d, want %d; body %s", p.Status, status, Truncate([]byte(p.Body), 800))
	}
	for _, s := range contains {
		if !strings.Contains(p.Body, s) {
			t.Fatalf("page lacks %q: %s", s, Truncate([]byte(p.Body), 1500))
		}
	}
}

// SendFile posts a multipart form with one file part, like a browser's import form.
func (cc *ConsoleClient) SendFile(path, field, filename string, content []byte, values url.Values, headers ...string) ConsolePage {
	cc.T.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, vs := range values {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	if field != "" {
		w, _ := mw.CreateFormFile(field, filename)
		w.Write(content)
	}
	mw.Close()
	req, err := http.NewRequest("POST", cc.E.URL+path, &body)
	if err != nil {
		cc.T.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Cookie", cc.Cookie)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		cc.T.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return ConsolePage{Status: res.StatusCode, Header: res.Header, Body: b.String()}
}

// JobIDRE finds a job's id on a console page.
var JobIDRE = regexp.MustCompile(`id="job-([0-9a-f-]{36})"`)

// FollowJob polls the console's job fragment as htmx does until the job concludes, checking
// that it polls (and shows a progress bar) while running and stops when done.
func (cc *ConsoleClient) FollowJob(tenantID, fragment string) string {
	cc.T.Helper()
	m := JobIDRE.FindStringSubmatch(fragment)
	if m == nil {
		cc.T.Fatalf("no job in %s", fragment)
	}
	page := fragment
	Eventually(cc.T, 60*time.Second, "job "+m[1]+" in the console", func() bool {
		if strings.Contains(page, "COMPLETED") || strings.Contains(page, "FAILED") {
			return true
		}
		if !strings.Contains(page, `hx-trigger="every 1s"`) || !strings.Contains(page, "<progress") {
			cc.T.Fatalf("a running job's fragment neither polls nor shows progress: %s", page)
		}
		p := cc.Send("GET", "/console/t/"+tenantID+"/content-jobs/"+m[1], nil, "HX-Request", "true")
		WantPage(cc.T, p, 200)
		if strings.Contains(p.Body, "<html") {
			cc.T.Fatalf("the job poll got a whole page: %s", p.Body)
		}
		page = p.Body
		return false
	})
	if strings.Contains(page, "hx-trigger") || strings.Contains(page, "<progress") {
		cc.T.Fatalf("a concluded job's fragment still polls: %s", page)
	}
	return page
}

// ImportForm sends the console's import form with a package file (and the course id).
func (cc *ConsoleClient) ImportForm(tenantID, courseID string, pkg []byte) ConsolePage {
	cc.T.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("course", courseID)
	part, _ := mw.CreateFormFile("file", "course.zip")
	part.Write(pkg)
	mw.Close()
	req, err := http.NewRequest("POST", cc.E.URL+"/console/t/"+tenantID+"/courses/import", &buf)
	if err != nil {
		cc.T.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Cookie", cc.Cookie)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		cc.T.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return ConsolePage{Status: res.StatusCode, Header: res.Header, Body: b.String()}
}

// ImportStatusRE finds an import's status on a console page.
var ImportStatusRE = regexp.MustCompile(`data-status="([A-Z]+)"`)

// WaitImport polls the import status fragment as htmx does until the job ends; the fragment
// polls itself while the job runs and no longer once it ended.
func (cc *ConsoleClient) WaitImport(statusPath string) ConsolePage {
	cc.T.Helper()
	var p ConsolePage
	Eventually(cc.T, 60*time.Second, "console import "+statusPath, func() bool {
		p = cc.Send("GET", statusPath, nil, "HX-Request", "true")
		WantPage(cc.T, p, 200, `<progress id="import-progress" max="100"`, `role="status" aria-live="polite"`)
		if strings.Contains(p.Body, "<html") {
			cc.T.Fatal("the status poll got a whole page")
		}
		m := ImportStatusRE.FindStringSubmatch(p.Body)
		if m == nil {
			cc.T.Fatalf("status fragment without data-status: %s", p.Body)
		}
		if m[1] == "RUNNING" {
			if !strings.Contains(p.Body, `hx-trigger="every 500ms"`) || strings.Contains(p.Body, `value="100"`) {
				cc.T.Fatalf("a running import does not poll or claims its end: %s", p.Body)
			}
			return false
		}
		if strings.Contains(p.Body, "hx-trigger") {
			cc.T.Fatalf("an ended import still polls: %s", p.Body)
		}
		return true
	})
	return p
}
