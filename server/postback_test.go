package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lectern-lms/lectern/course/postback"
)

// postReceived is one request a post-back receiver got.
type postReceived struct {
	path, contentType, auth, signature string
	body                               []byte
	arrived, cancelled                 time.Time
}

// postReceiver is an LMS's post-back endpoint on loopback. Paths listed in fail answer 500;
// paths listed in hold wait, without answering, until release (or until the sender gives up).
type postReceiver struct {
	mu   sync.Mutex
	got  []postReceived
	fail map[string]bool
	hold map[string]chan struct{}
	srv  *httptest.Server
}

func newPostReceiver(t *testing.T) *postReceiver {
	rc := &postReceiver{fail: map[string]bool{}, hold: map[string]chan struct{}{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		i := len(rc.got)
		rc.got = append(rc.got, postReceived{path: r.URL.Path, contentType: r.Header.Get("Content-Type"), auth: r.Header.Get("Authorization"),
			signature: r.Header.Get(postback.SignatureHeader), body: body, arrived: time.Now()})
		fail, hold := rc.fail[r.URL.Path], rc.hold[r.URL.Path]
		rc.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				rc.mu.Lock()
				rc.got[i].cancelled = time.Now()
				rc.mu.Unlock()
				return
			}
		}
		if fail {
			w.WriteHeader(500)
		}
	}))
	// Registered before any hold, so it runs after every release: held requests end first.
	t.Cleanup(rc.srv.Close)
	return rc
}

// url is the receiver's address for path.
func (rc *postReceiver) url(path string) string { return rc.srv.URL + path }

// failing makes path answer 500.
func (rc *postReceiver) failing(path string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.fail[path] = true
}

// holding makes path wait until the returned release is called (at the latest, at the end
// of the test).
func (rc *postReceiver) holding(t *testing.T, path string) (release func()) {
	ch := make(chan struct{})
	rc.mu.Lock()
	rc.hold[path] = ch
	rc.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	return release
}

// at returns the requests to path, oldest first.
func (rc *postReceiver) at(path string) []postReceived {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []postReceived
	for _, g := range rc.got {
		if g.path == path {
			out = append(out, g)
		}
	}
	return out
}

// takeCourse launches a registration of the two-SCO SCORM 1.2 course and commits both SCOs
// through the runtime endpoint: SCO 1 passed with 85, then SCO 2 passed with 70 in a
// terminating commit (the one the player's Terminate / LMSFinish sends). The learner spends
// 20 s in each SCO by the test's frozen clock, so the time the server measures is exact.
func (e *env) takeCourse(tn, regID string) {
	e.t.Helper()
	e.clock.freeze()
	session := e.launch(e.launchPath("/engine/api/v1/" + tn + "/registrations/" + regID + "/launchLink"))
	e.activity(session, "i1")
	e.clock.advance(20 * time.Second)
	e.runtimeCommit(session, "i1", false, `{"commitSequence":1,"cmi.core.lesson_status":"incomplete","cmi.core.score.raw":"85","cmi.core.score.min":"0",
		"cmi.core.score.max":"100","cmi.core.total_time":"0000:01:30","cmi.core.exit":""}`)
	e.activity(session, "i2")
	e.clock.advance(20 * time.Second)
	e.runtimeCommit(session, "i2", true, `{"commitSequence":1,"cmi.core.lesson_status":"passed","cmi.core.score.raw":"70","cmi.core.total_time":"0000:02:00"}`)
}

// runtimeCommit commits body for activity in session, as the player does (terminate: the
// content's terminating commit).
func (e *env) runtimeCommit(session, activity string, terminate bool, body string) {
	e.t.Helper()
	st := e.activity(session, activity)
	path := fmt.Sprintf("/player/runtime/%s/commit?activity=%s&attempt=%d", session, activity, st.Attempt)
	if terminate {
		path += "&terminate=true"
	}
	r := e.do("POST", path, noAuth, body, "Content-Type", "text/plain;charset=UTF-8")
	var a commitAnswer
	r.json(e.t, &a)
	if r.Status != 200 || a.Result != "true" {
		e.t.Fatalf("commit %s: %d %s", activity, r.Status, r.Body)
	}
}

// register creates a registration of course intro for Ann Lee with the given postBack (nil:
// none).
func (e *env) register(tn, regID string, postBack map[string]any) {
	e.t.Helper()
	body := map[string]any{"courseId": "intro", "registrationId": regID,
		"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}
	if postBack != nil {
		body["postBack"] = postBack
	}
	e.expect(e.do("POST", "/engine/api/v1/"+tn+"/registrations", root, body), 204, "create registration "+regID)
}

// setConfig PUTs a setting at the level path names ("" = tenant, "/courses/x",
// "/registrations/x").
func (e *env) setConfig(tn, level, id, value string) {
	e.t.Helper()
	e.expect(e.do("PUT", "/engine/api/v1/"+tn+level+"/configuration/"+id, root, map[string]any{"value": value}), 204, "set "+id)
}

// volatileRE matches the values of a report that differ between runs: timestamps.
var volatileRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

// TestPostBackReports takes the course through the runtime endpoint once per report format,
// auth type and data model, and checks the report a receiver on loopback gets at the end:
// the exact bytes (timestamps normalised) against testdata/postback, the form or Basic
// credentials, and the signature header over the raw body.
func TestPostBackReports(t *testing.T) {
	seen := map[string]string{}
	forEachMode(t, func(t *testing.T, e *env) {
		rc := newPostReceiver(t)
		e.createTenant("acme", true)
		e.importOK("acme", "intro", scorm12Package(t), "")
		for _, model := range []string{"v1", "v2"} {
			for _, format := range []string{"COURSE", "ACTIVITY", "FULL"} {
				for _, auth := range []string{"FORM", "HTTPBASIC"} {
					name := strings.ToLower(format + "-" + auth + "-" + model)
					t.Run(name, func(t *testing.T) {
						regID := "reg-" + name
						e.register("acme", regID, map[string]any{"url": rc.url("/" + name), "authType": auth,
							"userName": "lms", "password": "s3cret-" + name, "resultsFormat": format})
						if model == "v2" {
							e.setConfig("acme", "/registrations/"+regID, "ApiPostbackDataModelVersion", "v2")
						}
						e.takeCourse("acme", regID)
						// The first attempt is inline (ApiRollupRegistrationSynchronous): the
						// final report is there when the last commit answers.
						got := rc.at("/" + name)
						if len(got) == 0 {
							t.Fatal("no report reached the receiver")
						}
						last := got[len(got)-1]
						if !postback.Verify([]byte("s3cret-"+name), last.body, last.signature) {
							t.Errorf("signature %q does not verify over the body", last.signature)
						}
						report := e.checkCredentials(t, last, auth, model, "lms", "s3cret-"+name)
						ext := map[string]string{"v1": ".xml", "v2": ".json"}[model]
						normal := volatileRE.ReplaceAllString(report, "<timestamp>")
						checkPostBackGolden(t, filepath.Join("testdata", "postback", name+ext), normal, seen)
					})
				}
			}
		}
	})
}

// checkCredentials checks how the request carries the credentials and the report, and
// returns the report: FORM's raw body is exactly username, password and data form-encoded in
// that order; HTTPBASIC's is the report, with the Basic header.
func (e *env) checkCredentials(t *testing.T, g postReceived, auth, model, user, password string) string {
	t.Helper()
	wantType := map[string]string{"v1": "text/xml; charset=utf-8", "v2": "application/json"}[model]
	if auth == "HTTPBASIC" {
		if g.contentType != wantType || g.auth != "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+password)) {
			t.Errorf("HTTPBASIC: Content-Type %q, Authorization %q", g.contentType, g.auth)
		}
		return string(g.body)
	}
	form, err := url.ParseQuery(string(g.body))
	if err != nil || g.contentType != "application/x-www-form-urlencoded" || g.auth != "" {
		t.Fatalf("FORM: Content-Type %q, Authorization %q, body %q", g.contentType, g.auth, g.body)
	}
	data := form.Get("data")
	want := "data=" + url.QueryEscape(data) + "&password=" + url.QueryEscape(password) + "&username=" + url.QueryEscape(user)
	if string(g.body) != want {
		t.Errorf("FORM raw body:\n%s\nwant\n%s", g.body, want)
	}
	return data
}

// checkPostBackGolden compares a normalised report with its golden file; -update rewrites
// the file (from the first mode; the second must agree).
func checkPostBackGolden(t *testing.T, path, got string, seen map[string]string) {
	t.Helper()
	if prev, ok := seen[path]; ok && prev != got {
		t.Errorf("%s differs between modes:\n%s\nthe other mode:\n%s", path, got, prev)
	}
	seen[path] = got
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./server -run TestPostBackReports -update to create it)", err)
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("%s differs from the report; if intended, run go test ./server -run TestPostBackReports -update and review the diff\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestPostBackAtExitInBrowser: with ApiRollupRegistrationDuringSession false, the player's
// terminating commit (scorm-again adds terminate=true on LMSFinish) is what posts the report;
// the commit during the session posts nothing.
func TestPostBackAtExitInBrowser(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ctx := browser(t)
		rc := newPostReceiver(t)
		e.createTenant("acme", true)
		e.importOK("acme", "b12", zipOf(t, map[string]string{"imsmanifest.xml": manifest12, "sco/index.html": sco12}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.expect(e.do("POST", regs, root, map[string]any{"courseId": "b12", "registrationId": "r12",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}, "postBack": postBackTo(rc.url("/exit"))}), 204, "create r12")
		e.setConfig("acme", "/registrations/r12", "ApiRollupRegistrationDuringSession", "false")
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.url+e.launchPath(regs+"/r12/launchLink?redirectOnExitUrl=message"))); err != nil {
			t.Fatal(err)
		}
		inFrame := `document.getElementById("frame").contentDocument.getElementById("status").textContent`
		waitJS(t, ctx, inFrame, "ready|true|Lee, Ann|ab-initio||true", "SCO after LMSCommit")
		// The commit is stored (its rollup is the progress) without a post-back.
		eventually(t, 10*time.Second, "the commit's rollup", func() bool {
			var p struct{ RegistrationCompletion string }
			e.do("GET", regs+"/r12/progress", root, nil).json(t, &p)
			return p.RegistrationCompletion == "COMPLETED"
		})
		if n := len(rc.at("/exit")); n != 0 {
			t.Fatalf("%d post-backs during the session", n)
		}
		click(t, ctx, `document.getElementById("frame").contentDocument.getElementById("finish")`)
		eventually(t, 10*time.Second, "the post-back at exit", func() bool { return len(rc.at("/exit")) > 0 })
		form, _ := url.ParseQuery(string(rc.at("/exit")[0].body))
		if !strings.Contains(form.Get("data"), "<complete>complete</complete>") {
			t.Errorf("the report at exit: %s", form.Get("data"))
		}
	})
}

// TestPostBackAtAICCExit: with ApiRollupRegistrationDuringSession false, an AICC AU's
// PutParam posts nothing and its ExitAU posts the report.
func TestPostBackAtAICCExit(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		rc := newPostReceiver(t)
		e.createTenant("acme", true)
		files := fixtureFiles(t, "aicc_single")
		e.importOK("acme", "fire", zipOf(t, files), "")
		e.setConfig("acme", "", "ApiRollupRegistrationDuringSession", "false")
		regs := "/engine/api/v1/acme/registrations"
		e.expect(e.do("POST", regs, root, map[string]any{"courseId": "fire", "registrationId": "r1",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}, "postBack": postBackTo(rc.url("/aicc"))}), 204, "create registration")
		session := e.launch(e.launchPath(regs + "/r1/launchLink"))
		au := e.firstActivityURL(t, session)
		hacp := func(command, data string) {
			t.Helper()
			form := url.Values{"command": {command}, "version": {"4.0"}, "session_id": {au.Query().Get("aicc_sid")}, "AICC_Data": {data}}
			res, err := http.Post(au.Query().Get("aicc_url"), "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if !strings.HasPrefix(string(b), "error=0\r\n") {
				t.Fatalf("%s: %s", command, b)
			}
		}
		// The first attempt is inline: had PutParam posted, the receiver would have it now.
		hacp("PutParam", "[Core]\r\nLesson_Status=p\r\nScore=90\r\nTime=00:02:00\r\n")
		if n := len(rc.at("/aicc")); n != 0 {
			t.Fatalf("%d post-backs before ExitAU", n)
		}
		hacp("ExitAU", "")
		got := rc.at("/aicc")
		if len(got) != 1 {
			t.Fatalf("%d post-backs after ExitAU, want 1", len(got))
		}
		if form, _ := url.ParseQuery(string(got[0].body)); !strings.Contains(form.Get("data"), "<success>passed</success>") {
			t.Errorf("the report at exit: %s", form.Get("data"))
		}
	})
}

// TestPostBackAtXAPIExit: with ApiRollupRegistrationDuringSession false, an xAPI course's
// completed statement posts nothing and its terminated statement posts the report.
func TestPostBackAtXAPIExit(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		rc := newPostReceiver(t)
		e.createTenant("acme", true)
		files := fixtureFiles(t, "xapi_single")
		e.importOK("acme", "tc", zipOf(t, files), "")
		e.setConfig("acme", "", "ApiRollupRegistrationDuringSession", "false")
		regs := "/engine/api/v1/acme/registrations"
		const xreg = "5f0c7d1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
		e.expect(e.do("POST", regs, root, map[string]any{"courseId": "tc", "registrationId": "r1", "xapiRegistrationId": xreg,
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}, "postBack": postBackTo(rc.url("/xapi"))}), 204, "create registration")
		session := e.launch(e.launchPath(regs + "/r1/launchLink"))
		u := e.firstActivityURL(t, session)
		q := u.Query()
		endpoint, err := url.Parse(q.Get("endpoint"))
		if err != nil {
			t.Fatal(err)
		}
		var actor map[string]any
		if err := json.Unmarshal([]byte(q.Get("actor")), &actor); err != nil {
			t.Fatal(err)
		}
		send := func(verb string) {
			t.Helper()
			st := map[string]any{"actor": actor, "verb": map[string]any{"id": "http://adlnet.gov/expapi/verbs/" + verb},
				"object": map[string]any{"id": q.Get("activity_id")}, "context": map[string]any{"registration": xreg}}
			e.expect(e.do("POST", endpoint.Path+"statements", authFromHeader(q.Get("auth")), st, v103...), 200, verb+" statement")
		}
		// The statements' rollup and the inline first attempt run before the POST answers.
		send("completed")
		var p struct{ RegistrationCompletion string }
		e.do("GET", regs+"/r1/progress", root, nil).json(t, &p)
		if p.RegistrationCompletion != "COMPLETED" {
			t.Fatalf("progress after completed: %+v", p)
		}
		if n := len(rc.at("/xapi")); n != 0 {
			t.Fatalf("%d post-backs before the exit", n)
		}
		send("terminated")
		got := rc.at("/xapi")
		if len(got) != 1 {
			t.Fatalf("%d post-backs after terminated, want 1", len(got))
		}
		if form, _ := url.ParseQuery(string(got[0].body)); !strings.Contains(form.Get("data"), "<complete>complete</complete>") {
			t.Errorf("the report at exit: %s", form.Get("data"))
		}
	})
}
