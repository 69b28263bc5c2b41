package engineapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/postback"
)

// setConfig PUTs a setting at the level path names ("" = tenant, "/courses/x",
// "/registrations/x").
func setConfig(e *servertest.Env, tn, level, id, value string) {
	e.T.Helper()
	e.Expect(e.Do("PUT", "/engine/api/v1/"+tn+level+"/configuration/"+id, servertest.Root, map[string]any{"value": value}), 204, "set "+id)
}

// volatileRE matches the values of a report that differ between runs: timestamps.
var volatileRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

// TestPostBackReports takes the course through the runtime endpoint once per report format,
// auth type and data model, and checks the report a receiver on loopback gets at the end:
// the exact bytes (timestamps normalised) against testdata/postback, the form or Basic
// credentials, and the signature header over the raw body.
func TestPostBackReports(t *testing.T) {
	seen := map[string]string{}
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		rc := servertest.NewPostReceiver(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		for _, model := range []string{"v1", "v2"} {
			for _, format := range []string{"COURSE", "ACTIVITY", "FULL"} {
				for _, auth := range []string{"FORM", "HTTPBASIC"} {
					name := strings.ToLower(format + "-" + auth + "-" + model)
					t.Run(name, func(t *testing.T) {
						regID := "reg-" + name
						e.Register("acme", regID, map[string]any{"url": rc.URL("/" + name), "authType": auth,
							"userName": "lms", "password": "s3cret-" + name, "resultsFormat": format})
						if model == "v2" {
							setConfig(e, "acme", "/registrations/"+regID, "ApiPostbackDataModelVersion", "v2")
						}
						e.TakeCourse("acme", regID)
						// The first attempt is inline (ApiRollupRegistrationSynchronous): the
						// final report is there when the last commit answers.
						got := rc.At("/" + name)
						if len(got) == 0 {
							t.Fatal("no report reached the receiver")
						}
						last := got[len(got)-1]
						if !postback.Verify([]byte("s3cret-"+name), last.Body, last.Signature) {
							t.Errorf("signature %q does not verify over the body", last.Signature)
						}
						report := checkCredentials(e, t, last, auth, model, "lms", "s3cret-"+name)
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
func checkCredentials(e *servertest.Env, t *testing.T, g servertest.PostReceived, auth, model, user, password string) string {
	t.Helper()
	wantType := map[string]string{"v1": "text/xml; charset=utf-8", "v2": "application/json"}[model]
	if auth == "HTTPBASIC" {
		if g.ContentType != wantType || g.Auth != "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+password)) {
			t.Errorf("HTTPBASIC: Content-Type %q, Authorization %q", g.ContentType, g.Auth)
		}
		return string(g.Body)
	}
	form, err := url.ParseQuery(string(g.Body))
	if err != nil || g.ContentType != "application/x-www-form-urlencoded" || g.Auth != "" {
		t.Fatalf("FORM: Content-Type %q, Authorization %q, body %q", g.ContentType, g.Auth, g.Body)
	}
	data := form.Get("data")
	want := "data=" + url.QueryEscape(data) + "&password=" + url.QueryEscape(password) + "&username=" + url.QueryEscape(user)
	if string(g.Body) != want {
		t.Errorf("FORM raw body:\n%s\nwant\n%s", g.Body, want)
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
	if *servertest.Update {
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
		t.Fatalf("%v (run go test ./server/engineapi -run TestPostBackReports -update to create it)", err)
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("%s differs from the report; if intended, run go test ./server/engineapi -run TestPostBackReports -update and review the diff\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestPostBackAtExitInBrowser: with ApiRollupRegistrationDuringSession false, the player's
// terminating commit (scorm-again adds terminate=true on LMSFinish) is what posts the report;
// the commit during the session posts nothing.
func TestPostBackAtExitInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		rc := servertest.NewPostReceiver(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "b12", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest12, "sco/index.html": servertest.Sco12}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "b12", "registrationId": "r12",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}, "postBack": postBackTo(rc.URL("/exit"))}), 204, "create r12")
		setConfig(e, "acme", "/registrations/r12", "ApiRollupRegistrationDuringSession", "false")
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r12/launchLink?redirectOnExitUrl=message"))); err != nil {
			t.Fatal(err)
		}
		inFrame := `document.getElementById("frame").contentDocument.getElementById("status").textContent`
		servertest.WaitJS(t, ctx, inFrame, "ready|true|Lee, Ann|ab-initio||true", "SCO after LMSCommit")
		// The commit is stored (its rollup is the progress) without a post-back.
		servertest.Eventually(t, 10*time.Second, "the commit's rollup", func() bool {
			var p struct{ RegistrationCompletion string }
			e.Do("GET", regs+"/r12/progress", servertest.Root, nil).JSON(t, &p)
			return p.RegistrationCompletion == "COMPLETED"
		})
		if n := len(rc.At("/exit")); n != 0 {
			t.Fatalf("%d post-backs during the session", n)
		}
		servertest.Click(t, ctx, `document.getElementById("frame").contentDocument.getElementById("finish")`)
		servertest.Eventually(t, 10*time.Second, "the post-back at exit", func() bool { return len(rc.At("/exit")) > 0 })
		form, _ := url.ParseQuery(string(rc.At("/exit")[0].Body))
		if !strings.Contains(form.Get("data"), "<complete>complete</complete>") {
			t.Errorf("the report at exit: %s", form.Get("data"))
		}
	})
}

// TestPostBackAtAICCExit: with ApiRollupRegistrationDuringSession false, an AICC AU's
// PutParam posts nothing and its ExitAU posts the report.
func TestPostBackAtAICCExit(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		rc := servertest.NewPostReceiver(t)
		e.CreateTenant("acme", true)
		files := servertest.FixtureFiles(t, "aicc_single")
		e.ImportOK("acme", "fire", servertest.ZipOf(t, files), "")
		setConfig(e, "acme", "", "ApiRollupRegistrationDuringSession", "false")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "fire", "registrationId": "r1",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}, "postBack": postBackTo(rc.URL("/aicc"))}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		au := firstActivityURL(e, t, session)
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
		if n := len(rc.At("/aicc")); n != 0 {
			t.Fatalf("%d post-backs before ExitAU", n)
		}
		hacp("ExitAU", "")
		got := rc.At("/aicc")
		if len(got) != 1 {
			t.Fatalf("%d post-backs after ExitAU, want 1", len(got))
		}
		if form, _ := url.ParseQuery(string(got[0].Body)); !strings.Contains(form.Get("data"), "<success>passed</success>") {
			t.Errorf("the report at exit: %s", form.Get("data"))
		}
	})
}

// TestPostBackAtXAPIExit: with ApiRollupRegistrationDuringSession false, an xAPI course's
// completed statement posts nothing and its terminated statement posts the report.
func TestPostBackAtXAPIExit(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		rc := servertest.NewPostReceiver(t)
		e.CreateTenant("acme", true)
		files := servertest.FixtureFiles(t, "xapi_single")
		e.ImportOK("acme", "tc", servertest.ZipOf(t, files), "")
		setConfig(e, "acme", "", "ApiRollupRegistrationDuringSession", "false")
		regs := "/engine/api/v1/acme/registrations"
		const xreg = "5f0c7d1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "tc", "registrationId": "r1", "xapiRegistrationId": xreg,
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}, "postBack": postBackTo(rc.URL("/xapi"))}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		u := firstActivityURL(e, t, session)
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
			e.Expect(e.Do("POST", endpoint.Path+"statements", servertest.AuthFromHeader(q.Get("auth")), st, servertest.V103...), 200, verb+" statement")
		}
		// The statements' rollup and the inline first attempt run before the POST answers.
		send("completed")
		var p struct{ RegistrationCompletion string }
		e.Do("GET", regs+"/r1/progress", servertest.Root, nil).JSON(t, &p)
		if p.RegistrationCompletion != "COMPLETED" {
			t.Fatalf("progress after completed: %+v", p)
		}
		if n := len(rc.At("/xapi")); n != 0 {
			t.Fatalf("%d post-backs before the exit", n)
		}
		send("terminated")
		got := rc.At("/xapi")
		if len(got) != 1 {
			t.Fatalf("%d post-backs after terminated, want 1", len(got))
		}
		if form, _ := url.ParseQuery(string(got[0].Body)); !strings.Contains(form.Get("data"), "<complete>complete</complete>") {
			t.Errorf("the report at exit: %s", form.Get("data"))
		}
	})
}
