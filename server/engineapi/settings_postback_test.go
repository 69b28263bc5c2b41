package engineapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/postback"
)

// The SCORM 1.2 commits the post-back rows make: SCO 1 passed with 85 (the registration
// becomes INCOMPLETE), then SCO 2 passed (COMPLETED).
const (
	sco1Commit = `{"commitSequence":1,"cmi.core.lesson_status":"incomplete","cmi.core.score.raw":"85","cmi.core.score.min":"0","cmi.core.score.max":"100","cmi.core.total_time":"0000:01:30"}`
	sco2Commit = `{"commitSequence":1,"cmi.core.lesson_status":"passed","cmi.core.score.raw":"70","cmi.core.total_time":"0000:02:00"}`
)

// postBackTo is a registration's postBack to u, FORM with credentials lms / pw.
func postBackTo(u string) map[string]any {
	return map[string]any{"url": u, "userName": "lms", "password": "pw"}
}

// launchNew registers regID on course intro of tn with a postBack to u and launches it.
func launchNew(e *servertest.Env, tn, regID, u string) string {
	e.T.Helper()
	e.Register(tn, regID, postBackTo(u))
	return e.Launch(e.LaunchPath("/engine/api/v1/" + tn + "/registrations/" + regID + "/launchLink"))
}

// commitAsync commits body for activity i1 of session from another goroutine (plain HTTP,
// no test helpers) and reports the status when the commit answers.
func commitAsync(e *servertest.Env, session string, body string) <-chan int {
	e.T.Helper()
	st := e.Activity(session, "i1")
	done := make(chan int, 1)
	go func() {
		res, err := http.Post(fmt.Sprintf("%s/player/runtime/%s/commit?activity=i1&attempt=%d", e.URL, session, st.Attempt),
			"text/plain;charset=UTF-8", strings.NewReader(body))
		if err != nil {
			done <- -1
			return
		}
		res.Body.Close()
		done <- res.StatusCode
	}()
	return done
}

// reportFromSettings registers regID on course intro of tn without a postBack, commits SCO 1
// and returns the requests the receiver got at path by the time the commit answered (the
// first attempt is inline).
func reportFromSettings(e *servertest.Env, rc *servertest.PostReceiver, tn, regID, path string) []servertest.PostReceived {
	e.T.Helper()
	e.Register(tn, regID, nil)
	s := e.Launch(e.LaunchPath("/engine/api/v1/" + tn + "/registrations/" + regID + "/launchLink"))
	e.RuntimeCommit(s, "i1", false, sco1Commit)
	return rc.At(path)
}

// lastReport is the last request of got, failing the test when there is none.
func lastReport(t *testing.T, got []servertest.PostReceived) (servertest.PostReceived, url.Values) {
	t.Helper()
	if len(got) == 0 {
		t.Fatal("no post-back reached the receiver")
	}
	g := got[len(got)-1]
	form, _ := url.ParseQuery(string(g.Body))
	return g, form
}

// postbackSettingEffects are the rows of the post-back delivery settings; the receiver is on
// loopback (allowed by the test configuration's outbound policy).
var postbackSettingEffects = []settingEffect{
	{"ApiRollupRegistrationPostBackUrl", func(t *testing.T, e *servertest.Env, tn string) {
		rc := servertest.NewPostReceiver(t)
		e.ImportOK(tn, "intro", servertest.Scorm12Package(t), "")
		// Default empty: no post-back (it would be inline, so it would be there now).
		if got := reportFromSettings(e, rc, tn, "none", "/pb"); len(got) != 0 {
			t.Fatalf("default: %d post-backs", len(got))
		}
		setConfig(e, tn, "", "ApiRollupRegistrationPostBackUrl", rc.URL("/pb"))
		if _, form := lastReport(t, reportFromSettings(e, rc, tn, "some", "/pb")); !strings.Contains(form.Get("data"), `regid="some"`) {
			t.Errorf("set: %v", form)
		}
	}},
	{"ApiRollupRegistrationAuthType", func(t *testing.T, e *servertest.Env, tn string) {
		rc := servertest.NewPostReceiver(t)
		e.ImportOK(tn, "intro", servertest.Scorm12Package(t), "")
		setConfig(e, tn, "", "ApiRollupRegistrationPostBackUrl", rc.URL("/pb"))
		setConfig(e, tn, "", "ApiRollupRegistrationAuthUser", "lms")
		// Default form: the report in field data.
		if g, form := lastReport(t, reportFromSettings(e, rc, tn, "form", "/pb")); g.ContentType != "application/x-www-form-urlencoded" ||
			form.Get("username") != "lms" || !strings.HasPrefix(form.Get("data"), "<?xml") {
			t.Errorf("default: %s %s", g.ContentType, g.Body)
		}
		setConfig(e, tn, "", "ApiRollupRegistrationAuthType", "httpbasic")
		if g, _ := lastReport(t, reportFromSettings(e, rc, tn, "basic", "/pb")); g.Auth != "Basic bG1zOg==" || !strings.HasPrefix(string(g.Body), "<?xml") {
			t.Errorf("httpbasic: %q %s", g.Auth, g.Body)
		}
	}},
	{"ApiRollupRegistrationAuthUser", func(t *testing.T, e *servertest.Env, tn string) {
		rc := servertest.NewPostReceiver(t)
		e.ImportOK(tn, "intro", servertest.Scorm12Package(t), "")
		setConfig(e, tn, "", "ApiRollupRegistrationPostBackUrl", rc.URL("/pb"))
		if _, form := lastReport(t, reportFromSettings(e, rc, tn, "anonymous", "/pb")); form.Get("username") != "" || !form.Has("username") {
			t.Errorf("default: %v", form)
		}
		setConfig(e, tn, "", "ApiRollupRegistrationAuthUser", "lms")
		if _, form := lastReport(t, reportFromSettings(e, rc, tn, "named", "/pb")); form.Get("username") != "lms" {
			t.Errorf("set: %v", form)
		}
	}},
	{"ApiRollupRegistrationAuthPassword", func(t *testing.T, e *servertest.Env, tn string) {
		rc := servertest.NewPostReceiver(t)
		e.ImportOK(tn, "intro", servertest.Scorm12Package(t), "")
		setConfig(e, tn, "", "ApiRollupRegistrationPostBackUrl", rc.URL("/pb"))
		// Default empty: no password, so no signature.
		if g, form := lastReport(t, reportFromSettings(e, rc, tn, "unsigned", "/pb")); form.Get("password") != "" || g.Signature != "" {
			t.Errorf("default: %q %v", g.Signature, form)
		}
		setConfig(e, tn, "", "ApiRollupRegistrationAuthPassword", "s3cret")
		g, form := lastReport(t, reportFromSettings(e, rc, tn, "signed", "/pb"))
		if form.Get("password") != "s3cret" || !postback.Verify([]byte("s3cret"), g.Body, g.Signature) {
			t.Errorf("set: %q %v", g.Signature, form)
		}
	}},
	{"ApiRollupRegistrationFormat", func(t *testing.T, e *servertest.Env, tn string) {
		rc := servertest.NewPostReceiver(t)
		e.ImportOK(tn, "intro", servertest.Scorm12Package(t), "")
		setConfig(e, tn, "", "ApiRollupRegistrationPostBackUrl", rc.URL("/pb"))
		if _, form := lastReport(t, reportFromSettings(e, rc, tn, "summary", "/pb")); !strings.Contains(form.Get("data"), `format="course"`) ||
			strings.Contains(form.Get("data"), "<activity") {
			t.Errorf("default: %s", form.Get("data"))
		}
		setConfig(e, tn, "", "ApiRollupRegistrationFormat", "full")
		if _, form := lastReport(t, reportFromSettings(e, rc, tn, "detail", "/pb")); !strings.Contains(form.Get("data"), `format="full"`) ||
			!strings.Contains(form.Get("data"), "<runtime>") {
			t.Errorf("full: %s", form.Get("data"))
		}
	}},
	{"ApiRollupRegistrationDuringSession", func(t *testing.T, e *servertest.Env, tn string) {
		rc := servertest.NewPostReceiver(t)
		e.ImportOK(tn, "intro", servertest.Scorm12Package(t), "")
		// Default true: a commit that changes the rollup posts while the learner is in the
		// course. The first attempt is inline (ApiRollupRegistrationSynchronous), so the
		// receiver has it, or never will, when the commit answers.
		s := launchNew(e, tn, "during", rc.URL("/during"))
		e.RuntimeCommit(s, "i1", false, sco1Commit)
		if got := rc.At("/during"); len(got) != 1 || !strings.Contains(string(got[0].Body), "incomplete") {
			t.Fatalf("default: %d post-backs during the session, want 1 saying incomplete", len(got))
		}
		setConfig(e, tn, "", "ApiRollupRegistrationDuringSession", "false")
		// false: the same change posts nothing; the terminating commit posts the report.
		s = launchNew(e, tn, "at-exit", rc.URL("/at-exit"))
		e.RuntimeCommit(s, "i1", false, sco1Commit)
		if n := len(rc.At("/at-exit")); n != 0 {
			t.Fatalf("false: %d post-backs before the exit", n)
		}
		e.RuntimeCommit(s, "i2", true, sco2Commit)
		got := rc.At("/at-exit")
		if len(got) != 1 {
			t.Fatalf("false: %d post-backs at exit, want 1", len(got))
		}
		if data, _ := url.ParseQuery(string(got[0].Body)); !strings.Contains(data.Get("data"), "<complete>complete</complete>") {
			t.Errorf("the report at exit: %s", data.Get("data"))
		}
	}},
	{"ApiRollupRegistrationSynchronous", func(t *testing.T, e *servertest.Env, tn string) {
		rc := servertest.NewPostReceiver(t)
		e.ImportOK(tn, "intro", servertest.Scorm12Package(t), "")
		// A receiver that does not answer until released; an attempt would wait 300 s.
		setConfig(e, tn, "", "ApiPostbackTimeoutSeconds", "300")
		// Default true: the commit answers only after its post-back's first attempt.
		release := rc.Holding(t, "/inline")
		done := commitAsync(e, launchNew(e, tn, "inline", rc.URL("/inline")), sco1Commit)
		servertest.Eventually(t, 30*time.Second, "the post-back reaching the receiver", func() bool { return len(rc.At("/inline")) == 1 })
		select {
		case st := <-done:
			t.Fatalf("default: the commit answered (%d) while its post-back was still waiting for the receiver", st)
		default:
		}
		release()
		select {
		case st := <-done:
			if st != 200 {
				t.Fatalf("default: commit %d", st)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("default: the commit did not answer after the receiver did")
		}
		// false: the commit answers while the receiver holds the (queued) post-back.
		setConfig(e, tn, "", "ApiRollupRegistrationSynchronous", "false")
		rc.Holding(t, "/queued")
		done = commitAsync(e, launchNew(e, tn, "queued", rc.URL("/queued")), sco1Commit)
		select {
		case st := <-done:
			if st != 200 {
				t.Fatalf("false: commit %d", st)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("false: the commit waited for the receiver")
		}
		servertest.Eventually(t, 30*time.Second, "the queued post-back reaching the receiver", func() bool { return len(rc.At("/queued")) == 1 })
	}},
	{"ApiPostbackTimeoutSeconds", func(t *testing.T, e *servertest.Env, tn string) {
		rc := servertest.NewPostReceiver(t)
		e.ImportOK(tn, "intro", servertest.Scorm12Package(t), "")
		// Queued attempts, so the commits answer at once; the receiver never answers.
		setConfig(e, tn, "", "ApiRollupRegistrationSynchronous", "false")
		giveUpAfter := func(path string) time.Duration {
			t.Helper()
			release := rc.Holding(t, path)
			e.RuntimeCommit(launchNew(e, tn, strings.TrimPrefix(path, "/"), rc.URL(path)), "i1", false, sco1Commit)
			var first servertest.PostReceived
			servertest.Eventually(t, 60*time.Second, "the sender giving up on "+path, func() bool {
				got := rc.At(path)
				if len(got) == 0 || got[0].Cancelled.IsZero() {
					return false
				}
				first = got[0]
				return true
			})
			release() // the retries are answered
			return first.Cancelled.Sub(first.Arrived)
		}
		// Default 10 s.
		if d := giveUpAfter("/default"); d < 9*time.Second || d > 20*time.Second {
			t.Errorf("default: the request was abandoned after %v, want about 10 s", d)
		}
		setConfig(e, tn, "", "ApiPostbackTimeoutSeconds", "1")
		if d := giveUpAfter("/short"); d < 500*time.Millisecond || d > 5*time.Second {
			t.Errorf("1: the request was abandoned after %v, want about 1 s", d)
		}
	}},
	{"ApiPostbackDataModelVersion", func(t *testing.T, e *servertest.Env, tn string) {
		rc := servertest.NewPostReceiver(t)
		e.ImportOK(tn, "intro", servertest.Scorm12Package(t), "")
		setConfig(e, tn, "", "ApiRollupRegistrationAuthType", "httpbasic")
		setConfig(e, tn, "", "ApiRollupRegistrationPostBackUrl", rc.URL("/model"))
		take := func(regID string) servertest.PostReceived {
			t.Helper()
			e.Register(tn, regID, nil)
			s := e.Launch(e.LaunchPath("/engine/api/v1/" + tn + "/registrations/" + regID + "/launchLink"))
			e.RuntimeCommit(s, "i1", false, sco1Commit)
			got := rc.At("/model")
			return got[len(got)-1]
		}
		// Default v1: the registrationreport XML.
		if g := take("v1"); g.ContentType != "text/xml; charset=utf-8" || !strings.Contains(string(g.Body), `<registrationreport format="course" regid="v1"`) {
			t.Errorf("default: %s %s", g.ContentType, g.Body)
		}
		// v2: the JSON report, progress's fields.
		setConfig(e, tn, "", "ApiPostbackDataModelVersion", "v2")
		g := take("v2")
		var rep struct{ ID, RegistrationCompletion string }
		if g.ContentType != "application/json" || json.Unmarshal(g.Body, &rep) != nil || rep.ID != "v2" || rep.RegistrationCompletion != "INCOMPLETE" {
			t.Errorf("v2: %s %s", g.ContentType, g.Body)
		}
	}},
	{"SimpleQueueMaxTries", func(t *testing.T, e *servertest.Env, tn string) {
		rc := servertest.NewPostReceiver(t)
		e.ImportOK(tn, "intro", servertest.Scorm12Package(t), "")
		attempts := func(regID string) int {
			t.Helper()
			path := "/down-" + regID
			rc.Failing(path)
			e.RuntimeCommit(launchNew(e, tn, regID, rc.URL(path)), "i1", false, sco1Commit)
			// The give-up is logged after the last attempt: the count is final then.
			servertest.Eventually(t, 60*time.Second, "the post-back of "+regID+" given up", func() bool {
				return len(e.Logs.Find("post-back given up", "tenant", tn, "registration", regID)) == 1
			})
			return len(rc.At(path))
		}
		// Default 8: the inline attempt and 7 queued retries.
		if n := attempts("eight"); n != 8 {
			t.Errorf("default: %d attempts, want 8", n)
		}
		setConfig(e, tn, "", "SimpleQueueMaxTries", "2")
		if n := attempts("two"); n != 2 {
			t.Errorf("2: %d attempts, want 2", n)
		}
	}},
}
