package player_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/registration"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/storage/record"
)

// recordCount counts a tenant's records of one kind.
func recordCount(e *servertest.Env, tenant, kind string) int {
	e.T.Helper()
	rs, err := record.All(context.Background(), e.App.Records, record.Query{Tenant: tenant, Kind: kind})
	if err != nil {
		e.T.Fatal(err)
	}
	return len(rs)
}

func expectHTML(t *testing.T, r servertest.Resp, status int, text, what string) {
	t.Helper()
	if r.Status != status || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.Body), text) {
		t.Errorf("%s: %d %s %q, want %d HTML saying %q", what, r.Status, r.Header.Get("Content-Type"), r.Body, status, text)
	}
}

func TestPlayerLaunchAndContent(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "intro", "registrationId": "reg-1",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
		link := regs + "/reg-1/launchLink"

		// Bad launch link requests are 400/404 naming the problem.
		for q, want := range map[string]string{"?redirectOnExitUrl=javascript:alert(1)": "redirectOnExitUrl",
			"?startSco=nope": "startSco", "?expiry=-5": "expiry", "?singleUse=maybe": "singleUse"} {
			r := e.Do("GET", link+q, servertest.Root, nil)
			e.Expect(r, 400, q)
			if !strings.Contains(r.Message(), want) {
				t.Errorf("%s: message %q", q, r.Message())
			}
		}
		e.Expect(e.Do("GET", regs+"/nope/launchLink", servertest.Root, nil), 404, "launch link of an unknown registration")

		// Launch: a redirect to the player session, which serves the page with the table of
		// contents in manifest order and the SCORM 1.2 runtime; first and last access recorded.
		session := e.Launch(e.LaunchPath(link + "?redirectOnExitUrl=message&startSco=i2"))
		page := e.Get("/player/session/" + session)
		expectHTML(t, page, 200, "Intro to Testing", "player page")
		if page.Header.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("player page Referrer-Policy %q", page.Header.Get("Referrer-Policy"))
		}
		body := string(page.Body)
		if i1, i2 := strings.Index(body, `"id":"i1"`), strings.Index(body, `"id":"i2"`); i1 < 0 || i2 < i1 ||
			!strings.Contains(body, `"dialect":"1.2"`) || !strings.Contains(body, `"start":"i2"`) ||
			!strings.Contains(body, "/player/content/"+session+"/two/index.html?page=2") {
			t.Errorf("player page configuration: %s", body)
		}
		if r := e.Get("/player/assets/scorm-again.js"); r.Status != 200 || !strings.Contains(string(r.Body), "Scorm12API") {
			t.Errorf("runtime script: %d (%d bytes)", r.Status, len(r.Body))
		}
		var prog struct{ FirstAccessDate, LastAccessDate string }
		e.Do("GET", regs+"/reg-1/progress", servertest.Root, nil).JSON(t, &prog)
		if prog.FirstAccessDate == "" || prog.LastAccessDate == "" {
			t.Errorf("access dates after launch: %+v", prog)
		}

		// Forged, expired and reused links get a page, not JSON or a trace.
		good := e.LaunchPath(link)
		forged := good[:len(good)-3] + map[bool]string{true: "AAA", false: "BBB"}[!strings.HasSuffix(good, "AAA")]
		expectHTML(t, e.Get(forged), 403, "not valid", "forged link")
		expectHTML(t, e.Get("/player/launch/garbage"), 403, "not valid", "garbage link")
		expiring := e.LaunchPath(link + "?expiry=1")
		servertest.Eventually(t, 5*time.Second, "the link to expire", func() bool { return e.Get(expiring).Status == 410 })
		expectHTML(t, e.Get(expiring), 410, "expired", "expired link")
		once := e.LaunchPath(link + "?singleUse=true")
		e.Launch(once)
		expectHTML(t, e.Get(once), 410, "already used", "reused single-use link")
		e.Launch(good) // a link without singleUse works again
		e.Launch(good)
		expectHTML(t, e.Get("/player/session/"+session+"x"), 403, "ended", "tampered session")

		// Course files: content type, caching, ranges, conditional requests.
		file := "/player/content/" + session + "/one/index.html"
		r := e.Get(file)
		if r.Status != 200 || string(r.Body) != "<html>one</html>" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
			r.Header.Get("ETag") == "" || r.Header.Get("Last-Modified") == "" || r.Header.Get("Cache-Control") == "" || r.Header.Get("Accept-Ranges") != "bytes" || r.Header.Get("Referrer-Policy") != "same-origin" {
			t.Fatalf("file: %d %v %q", r.Status, r.Header, r.Body)
		}
		if r := e.Get("/player/content/" + session + "/imsmanifest.xml"); r.Status != 200 || r.Header.Get("Content-Type") != "application/xml" {
			t.Errorf("manifest: %d %s", r.Status, r.Header.Get("Content-Type"))
		}
		if r := e.Get(file, "Range", "bytes=1-4"); r.Status != 206 || string(r.Body) != "html" || r.Header.Get("Content-Range") != "bytes 1-4/16" {
			t.Errorf("range: %d %q %q", r.Status, r.Body, r.Header.Get("Content-Range"))
		}
		if r := e.Get(file, "Range", "bytes=-5"); r.Status != 206 || string(r.Body) != "html>" {
			t.Errorf("suffix range: %d %q", r.Status, r.Body)
		}
		if r := e.Get(file, "Range", "bytes=100-"); r.Status != 416 || r.Header.Get("Content-Range") != "bytes */16" {
			t.Errorf("unsatisfiable range: %d %q", r.Status, r.Header.Get("Content-Range"))
		}
		if r := e.Get(file, "If-None-Match", r.Header.Get("ETag")); r.Status != 304 || len(r.Body) != 0 {
			t.Errorf("conditional request: %d", r.Status)
		}
		req, _ := http.NewRequest("HEAD", e.URL+file, nil)
		req.Header.Set("Range", "bytes=0-5")
		if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 206 || res.ContentLength != 6 {
			t.Errorf("HEAD with a range: %v %v", res, err)
		} else {
			res.Body.Close()
		}
		if r := e.Get("/player/content/" + session + "/one/missing.html"); r.Status != 404 {
			t.Errorf("missing file: %d", r.Status)
		}
		// No way out of the course's folder: every attempt is refused, none serves a file.
		for _, p := range []string{"..%2F..%2Fother", "one%2Findex.html", "one/%2e%2e/%2e%2e/x", "%2e%2e/imsmanifest.xml",
			"one/..%5cindex.html", "one//index.html", "%2Fetc/passwd", "one/%00.html"} {
			r := e.Get("/player/content/" + session + "/" + p)
			if r.Status != 400 && r.Status != 404 {
				t.Errorf("escape %q: %d %q", p, r.Status, r.Body)
			}
		}
		if r := e.Get("/player/content/not-a-session/one/index.html"); r.Status != 403 {
			t.Errorf("file without a session: %d", r.Status)
		}

		// Preview launches too, and tracks nothing.
		pv := e.Launch(e.LaunchPath("/engine/api/v1/acme/courses/intro/preview"))
		expectHTML(t, e.Get("/player/session/"+pv), 200, "preview", "preview page")
		st := e.Activity(pv, "i1")
		if st.CMI["cmi.core.student_id"] != "preview" || st.CMI["cmi.core.credit"] != "no-credit" {
			t.Errorf("preview initial data: %v", st.CMI)
		}
		if _, a := e.Commit(pv, "i1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"passed"}`); a.Result != "true" {
			t.Errorf("preview commit: %+v", a)
		}
		var detail struct {
			ActivityDetails struct {
				Children []struct {
					Runtime struct{ CompletionStatus string }
				}
			}
		}
		e.Do("GET", regs+"/reg-1/progress/detail", servertest.Root, nil).JSON(t, &detail)
		if c := detail.ActivityDetails.Children[0].Runtime.CompletionStatus; c != "unknown" {
			t.Errorf("preview commit was stored: %s", c)
		}
	})
}

func TestPlayerRuntimeCommits(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "intro", "registrationId": "reg-1",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/reg-1/launchLink"))

		st := e.Activity(session, "i1")
		if st.CMI["cmi.core.entry"] != "ab-initio" || st.CMI["cmi.core.student_id"] != "ann" || st.CMI["cmi.core.student_name"] != "Lee, Ann" ||
			st.CMI["cmi.student_data.mastery_score"] != "80" || st.CMI["cmi.core.credit"] != "credit" {
			t.Errorf("initial data: %v", st.CMI)
		}
		if r := e.Get("/player/runtime/" + session + "/activity?activity=nope"); r.Status != 404 {
			t.Errorf("unknown activity: %d", r.Status)
		}

		// Commits as scorm-again sends them: XHR JSON, and the exit through sendBeacon (text/plain).
		ok := func(r servertest.Resp, a servertest.CommitAnswer, what string) {
			t.Helper()
			if r.Status != 200 || a.Result != "true" || a.ErrorCode != 0 {
				t.Fatalf("%s: %d %s", what, r.Status, r.Body)
			}
		}
		r, a := e.Commit(session, "i1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"incomplete","cmi.core.lesson_location":"page-1"}`,
			"Content-Type", "application/json;charset=UTF-8")
		ok(r, a, "first commit")
		r, a = e.Commit(session, "i1", st.Attempt, `{"commitSequence":2,"cmi.core.lesson_status":"passed","cmi.core.score.raw":"85",
			"cmi.core.score.min":"0","cmi.core.score.max":"100","cmi.suspend_data":"s=1","cmi.core.exit":"suspend",
			"cmi.core.session_time":"00:01:30","cmi.core.total_time":"0000:01:30","cmi.core.student_id":"ann",
			"cmi.interactions.0.id":"q1","cmi.interactions.0.type":"choice","cmi.interactions.0.student_response":"a",
			"cmi.interactions.0.result":"correct","cmi.objectives":{}}`)
		ok(r, a, "sendBeacon-style exit commit")

		// A stale commit (same or lower sequence in the same attempt) is refused and changes nothing.
		r, a = e.Commit(session, "i1", st.Attempt, `{"commitSequence":2,"cmi.core.lesson_status":"failed"}`)
		if r.Status != 409 || a.Result != "false" || !strings.Contains(a.Message, "stale") {
			t.Errorf("stale commit: %d %s", r.Status, r.Body)
		}
		r, a = e.Commit(session, "i1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"failed"}`)
		if r.Status != 409 {
			t.Errorf("older commit: %d %s", r.Status, r.Body)
		}
		// Malformed commits get the SCORM error code, never a 500.
		for body, code := range map[string]int{
			`{"commitSequence":3,"cmi.core.lesson_status":"great"}`: 405,
			`{"commitSequence":3,"cmi.core.score.raw":"150"}`:       405,
			`{"commitSequence":3,"cmi.bogus":"1"}`:                  401,
			`{"commitSequence":3,`:                                  201,
			`{"cmi.core.lesson_status":"passed"}`:                   201,
			``:                                                      201,
		} {
			r, a := e.Commit(session, "i1", st.Attempt, body)
			if r.Status != 400 || a.Result != "false" || a.ErrorCode != code || a.Message == "" {
				t.Errorf("%q: %d %s, want 400 with error code %d", body, r.Status, r.Body, code)
			}
		}
		if r, _ := e.Commit(session, "i1", 0, `{"commitSequence":3}`); r.Status != 400 {
			t.Errorf("commit without attempt: %d", r.Status)
		}
		if r, a := e.Commit("forged", "i1", st.Attempt, `{"commitSequence":3}`); r.Status != 403 || a.Result != "false" {
			t.Errorf("commit with a forged session: %d %s", r.Status, r.Body)
		}

		// The stored data reads back through progress/detail.
		var detail struct {
			ActivityDetails struct {
				Children []struct {
					ID      string
					Runtime struct {
						CompletionStatus, SuccessStatus, ScoreRaw, ScoreScaled, Location, SuspendData, TotalTime, Exit, Entry string
						RuntimeInteractions                                                                                   []struct{ ID, Type, LearnerResponse, Result string }
					}
				}
			}
		}
		e.Do("GET", regs+"/reg-1/progress/detail", servertest.Root, nil).JSON(t, &detail)
		rt := detail.ActivityDetails.Children[0].Runtime
		if rt.CompletionStatus != "completed" || rt.SuccessStatus != "passed" || rt.ScoreRaw != "85" || rt.ScoreScaled != "0.85" ||
			rt.Location != "page-1" || rt.SuspendData != "s=1" || rt.TotalTime != "0000:01:30" || rt.Exit != "Suspend" ||
			len(rt.RuntimeInteractions) != 1 || rt.RuntimeInteractions[0].ID != "q1" || rt.RuntimeInteractions[0].LearnerResponse != "a" {
			t.Errorf("runtime in progress/detail: %+v", rt)
		}
		if c := detail.ActivityDetails.Children[1].Runtime.CompletionStatus; c != "unknown" {
			t.Errorf("the other SCO changed: %s", c)
		}

		// The next load resumes with what was stored, and its commits start a new sequence.
		st2 := e.Activity(session, "i1")
		if st2.Attempt <= st.Attempt || st2.CMI["cmi.core.entry"] != "resume" || st2.CMI["cmi.suspend_data"] != "s=1" ||
			st2.CMI["cmi.core.lesson_location"] != "page-1" || st2.CMI["cmi.core.exit"] != "" {
			t.Errorf("resumed data: attempt %d after %d, %v", st2.Attempt, st.Attempt, st2.CMI)
		}
		r, a = e.Commit(session, "i1", st2.Attempt, `{"commitSequence":1,"cmi.core.lesson_location":"page-2"}`)
		ok(r, a, "first commit of the next attempt")
		// A late commit of the earlier attempt is stale.
		if r, _ := e.Commit(session, "i1", st.Attempt, `{"commitSequence":9,"cmi.core.lesson_location":"page-0"}`); r.Status != 409 {
			t.Errorf("late commit of an older attempt: %d %s", r.Status, r.Body)
		}

		// After a reset, the old session's commits are refused; nothing is carried over.
		e.Expect(e.Do("DELETE", regs+"/reg-1/progress", servertest.Root, nil), 204, "reset")
		if r, _ := e.Commit(session, "i1", st2.Attempt, `{"commitSequence":2,"cmi.core.lesson_location":"page-3"}`); r.Status != 410 {
			t.Errorf("commit after reset: %d %s", r.Status, r.Body)
		}
		e.Do("GET", regs+"/reg-1/progress/detail", servertest.Root, nil).JSON(t, &detail)
		if rt := detail.ActivityDetails.Children[0].Runtime; rt.CompletionStatus != "unknown" || rt.Location != "" {
			t.Errorf("runtime after reset: %+v", rt)
		}
		if n := recordCount(e, "acme", scormrt.KindRuntime); n != 0 {
			t.Errorf("%d runtime records left after the reset", n)
		}

		// Review mode (forceReview) shows the content in review mode and changes nothing.
		review := e.Launch(e.LaunchPath(regs + "/reg-1/launchLink?forceReview=true"))
		rs := e.Activity(review, "i1")
		if rs.CMI["cmi.core.lesson_mode"] != "review" {
			t.Errorf("review launch mode: %q", rs.CMI["cmi.core.lesson_mode"])
		}
		r, a = e.Commit(review, "i1", rs.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"failed"}`)
		ok(r, a, "commit in review mode")
		e.Do("GET", regs+"/reg-1/progress/detail", servertest.Root, nil).JSON(t, &detail)
		if rt := detail.ActivityDetails.Children[0].Runtime; rt.CompletionStatus != "unknown" {
			t.Errorf("a review launch changed the registration: %+v", rt)
		}
	})
}

func TestPlayerAICC(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		files := servertest.FixtureFiles(t, "aicc_single")
		e.ImportOK("acme", "fire", servertest.ZipOf(t, files), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "fire", "registrationId": "r1",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))

		// The page launches the AU with aicc_sid and an absolute aicc_url, as HACP wants.
		page := string(e.Get("/player/session/" + session).Body)
		m := regexp.MustCompile(`"url":"([^"]*)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no AU URL in the page: %s", page)
		}
		au, err := url.Parse(strings.ReplaceAll(m[1], `\u0026`, "&"))
		if err != nil || !strings.HasSuffix(au.Path, "/index.html") || au.Query().Get("aicc_sid") != "A1" ||
			!strings.HasPrefix(au.Query().Get("aicc_url"), "http://") {
			t.Fatalf("AU URL %s", m[1])
		}
		hacp := func(command, data string) string {
			t.Helper()
			form := url.Values{"command": {command}, "version": {"4.0"}, "session_id": {au.Query().Get("aicc_sid")}, "AICC_Data": {data}}
			res, err := http.Post(au.Query().Get("aicc_url"), "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
				t.Fatalf("%s: %d %s", command, res.StatusCode, b)
			}
			return string(b)
		}
		got := hacp("GetParam", "")
		for _, want := range []string{"error=0\r\n", "Student_ID=ann\r\n", "Student_Name=Lee, Ann\r\n", "Lesson_Status=not attempted, ab-initio\r\n",
			"Mastery_Score=80\r\n", "[Core_Vendor]\r\nstart=1\r\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("GetParam lacks %q:\n%s", want, got)
			}
		}
		if got := hacp("PutParam", "[Core]\r\nLesson_Status=p,s\r\nScore=90\r\nTime=00:02:00\r\nLesson_Location=end\r\n[Core_Lesson]\r\ndone=1\r\n"); !strings.HasPrefix(got, "error=0\r\n") {
			t.Errorf("PutParam: %s", got)
		}
		if got := hacp("PutParam", "[Core]\r\nTime=00:01:00\r\n"); !strings.HasPrefix(got, "error=0\r\n") {
			t.Errorf("second PutParam: %s", got)
		}
		if got := hacp("PutParam", "[Core]\r\nLesson_Status=splendid\r\n"); !strings.HasPrefix(got, "error=1\r\n") || !strings.Contains(got, "Lesson_Status") {
			t.Errorf("bad PutParam: %s", got)
		}
		if got := hacp("Dance", ""); !strings.HasPrefix(got, "error=1\r\n") {
			t.Errorf("unknown command: %s", got)
		}
		if got := hacp("ExitAU", ""); !strings.HasPrefix(got, "error=0\r\n") {
			t.Errorf("ExitAU: %s", got)
		}
		var detail struct {
			ActivityDetails struct {
				Children []struct {
					Runtime struct{ CompletionStatus, SuccessStatus, ScoreRaw, Location, SuspendData, TotalTime, Exit string }
				}
			}
		}
		e.Do("GET", regs+"/r1/progress/detail", servertest.Root, nil).JSON(t, &detail)
		if rt := detail.ActivityDetails.Children[0].Runtime; rt.SuccessStatus != "passed" || rt.ScoreRaw != "90" || rt.Location != "end" ||
			rt.SuspendData != "done=1" || rt.TotalTime != "0000:03:00" || rt.Exit != "Suspend" {
			t.Errorf("AICC runtime: %+v", rt)
		}
		if got := hacp("GetParam", ""); !strings.Contains(got, "Lesson_Status=passed, resume\r\n") || !strings.Contains(got, "[Core_Lesson]\r\ndone=1\r\n") {
			t.Errorf("GetParam after PutParam:\n%s", got)
		}
		// A session_id that is no AU of the course is refused.
		form := url.Values{"command": {"GetParam"}, "session_id": {"nope"}}
		res, _ := http.Post(au.Query().Get("aicc_url"), "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.HasPrefix(string(b), "error=3\r\n") {
			t.Errorf("unknown session_id: %s", b)
		}
	})
}

func TestPlayerXAPILaunch(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		files := servertest.FixtureFiles(t, "xapi_single")
		e.ImportOK("acme", "tc", servertest.ZipOf(t, files), "")
		regs := "/engine/api/v1/acme/registrations"
		const xreg = "0c8c0b8a-6a5e-4d3f-9b0e-2f1e3d4c5b6a"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "tc", "registrationId": "r1", "xapiRegistrationId": xreg,
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		page := string(e.Get("/player/session/" + session).Body)
		m := regexp.MustCompile(`"url":"([^"]*)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no activity URL in the page: %s", page)
		}
		u, err := url.Parse(strings.ReplaceAll(m[1], `\u0026`, "&"))
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		var actor map[string]any
		if err := json.Unmarshal([]byte(q.Get("actor")), &actor); err != nil || actor["name"] != "Ann Lee" ||
			q.Get("registration") != xreg || q.Get("activity_id") == "" || !strings.HasSuffix(q.Get("endpoint"), "/lrs/TCAPI/acme/") ||
			!strings.HasPrefix(q.Get("auth"), "Basic ") {
			t.Fatalf("xAPI launch parameters: %v", q)
		}
		// The credential writes the learner's statements to the tenant's record store.
		endpoint, err := url.Parse(q.Get("endpoint"))
		if err != nil {
			t.Fatal(err)
		}
		st := map[string]any{"actor": actor, "verb": map[string]any{"id": "http://adlnet.gov/expapi/verbs/completed"},
			"object": map[string]any{"id": q.Get("activity_id")}, "context": map[string]any{"registration": xreg}}
		r := e.Do("POST", endpoint.Path+"statements", servertest.AuthFromHeader(q.Get("auth")), st, servertest.V103...)
		e.Expect(r, 200, "statement with the launch credential")
		r = e.Do("GET", servertest.LRS+"/acme/statements?registration="+xreg, servertest.Root, nil, servertest.V103...)
		if r.Status != 200 || !strings.Contains(string(r.Body), "verbs/completed") {
			t.Errorf("statement of the launch: %d %s", r.Status, r.Body)
		}
		// That statement completes the course: its progress comes from its statements.
		var p struct{ RegistrationCompletion string }
		e.Do("GET", regs+"/r1/progress", servertest.Root, nil).JSON(t, &p)
		if p.RegistrationCompletion != "COMPLETED" {
			t.Errorf("progress of a completed xAPI activity: %+v", p)
		}
		// The credential belongs to this tenant only.
		e.CreateTenant("other", true)
		if r := e.Do("GET", servertest.LRS+"/other/statements", servertest.AuthFromHeader(q.Get("auth")), nil, servertest.V103...); r.Status != 401 {
			t.Errorf("launch credential on another tenant: %d", r.Status)
		}
	})
}

func TestPlayerCMI5Launch(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		// The time tracked below is what the test advances, not how long a busy machine
		// takes between the launch and the last statement.
		e.Clock.Freeze()
		e.CreateTenant("acme", true)
		files := servertest.FixtureFiles(t, "cmi5_minimal")
		e.ImportOK("acme", "c5", servertest.ZipOf(t, files), "")
		regs := "/engine/api/v1/acme/registrations"
		const xreg = "7d7c0b8a-6a5e-4d3f-9b0e-2f1e3d4c5b6a"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "c5", "registrationId": "r1", "xapiRegistrationId": xreg,
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		page := string(e.Get("/player/session/" + session).Body)
		m := regexp.MustCompile(`"url":"(/player/cmi5/[^"]*)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no AU URL in the page: %s", page)
		}
		r := e.Get(strings.ReplaceAll(m[1], `\u0026`, "&"))
		if r.Status != 302 {
			t.Fatalf("cmi5 launch: %d %s", r.Status, r.Body)
		}
		au, err := url.Parse(r.Header.Get("Location"))
		if err != nil || !strings.HasPrefix(au.Path, "/player/content/"+session+"/") {
			t.Fatalf("AU location %q", r.Header.Get("Location"))
		}
		q := au.Query()
		if q.Get("registration") != xreg || q.Get("activityId") == "" || !strings.HasSuffix(q.Get("endpoint"), "/lrs/TCAPI/acme") || q.Get("fetch") == "" {
			t.Fatalf("cmi5 launch parameters: %v", q)
		}
		fetchURL, _ := url.Parse(q.Get("fetch"))
		var fa struct {
			AuthToken string `json:"auth-token"`
			ErrorCode string `json:"error-code"`
		}
		e.Do("POST", fetchURL.Path, servertest.NoAuth, nil).JSON(t, &fa)
		if fa.AuthToken == "" {
			t.Fatalf("fetch: %+v", fa)
		}
		var again struct {
			ErrorCode string `json:"error-code"`
		}
		e.Do("POST", fetchURL.Path, servertest.NoAuth, nil).JSON(t, &again)
		if again.ErrorCode != "1" {
			t.Errorf("second fetch: %+v", again)
		}
		// The credential reads LMS.LaunchData from the State API and writes statements.
		cred := servertest.Auth{Header: "Basic " + fa.AuthToken}
		state := servertest.LRS + "/acme/activities/state?" + url.Values{"activityId": {q.Get("activityId")}, "agent": {q.Get("actor")},
			"registration": {xreg}, "stateId": {"LMS.LaunchData"}}.Encode()
		r = e.Do("GET", state, cred, nil, servertest.V103...)
		var ld struct {
			LaunchMode, MoveOn string
			ContextTemplate    struct{ Extensions map[string]string }
		}
		r.JSON(t, &ld)
		if r.Status != 200 || ld.LaunchMode != "Normal" || ld.MoveOn == "" || ld.ContextTemplate.Extensions["https://w3id.org/xapi/cmi5/context/extensions/sessionid"] == "" {
			t.Errorf("LMS.LaunchData: %d %s", r.Status, r.Body)
		}
		// The AU's activityId is the LMS's own id for it, never the publisher's (cmi5 8.1.5.0-3).
		if aid := q.Get("activityId"); !strings.HasPrefix(aid, "urn:lectern:cmi5:au:") {
			t.Errorf("activityId %q", aid)
		}
		// The statements of an AU follow the cmi5 rules: this session never initialized (it did
		// not read the learner preferences), so the AU of a second launch sends them.
		bare := map[string]any{"id": uuid.NewString(), "timestamp": time.Now().UTC().Format(time.RFC3339), "actor": json.RawMessage(q.Get("actor")),
			"verb": map[string]any{"id": "http://adlnet.gov/expapi/verbs/initialized"}, "object": map[string]any{"id": q.Get("activityId")},
			"context": map[string]any{"registration": xreg}}
		if r := e.Do("POST", servertest.LRS+"/acme/statements", cred, bare, servertest.V103...); r.Status != 403 || !strings.Contains(string(r.Body), "11.0.0.0-3") {
			t.Errorf("initialized before the learner preferences were read: %d %s", r.Status, r.Body)
		}
		au5 := e.Cmi5Start(t, strings.ReplaceAll(m[1], `\u0026`, "&"))
		e.Expect(au5.Send(au5.Statement("initialized", nil)), 200, "statement with the fetched credential")
		// The LMS recorded its "launched" statement for the AU in the registration.
		r = e.Do("GET", servertest.LRS+"/acme/statements?verb="+url.QueryEscape("http://adlnet.gov/expapi/verbs/launched")+"&registration="+xreg, servertest.Root, nil, servertest.V103...)
		if r.Status != 200 || !strings.Contains(string(r.Body), "context/extensions/launchmode") || !strings.Contains(string(r.Body), q.Get("activityId")) {
			t.Errorf("launched statement: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/player/cmi5/fetch/forged", servertest.NoAuth, nil); !strings.Contains(string(r.Body), `"error-code":"2"`) {
			t.Errorf("forged fetch: %s", r.Body)
		}

		// Progress comes from the registration's statements: the AU completes and passes. The
		// time tracked is the session's, from its launch to its latest statement (20 s later),
		// not the statements' durations.
		e.Clock.Advance(20 * time.Second)
		var p struct {
			RegistrationCompletion, RegistrationSuccess string
			Score                                       *struct{ Scaled float64 }
			TotalSecondsTracked                         float64
		}
		for _, v := range []struct{ verb, result string }{
			{"completed", `{"completion":true,"duration":"PT2M"}`},
			{"passed", `{"success":true,"score":{"scaled":0.9},"duration":"PT2M"}`},
			{"terminated", `{"duration":"PT3M"}`},
		} {
			var res map[string]any
			_ = json.Unmarshal([]byte(v.result), &res)
			e.Expect(au5.Send(au5.Statement(v.verb, res)), 200, v.verb+" statement")
		}
		e.Do("GET", regs+"/r1/progress", servertest.Root, nil).JSON(t, &p)
		if p.RegistrationCompletion != "COMPLETED" || p.RegistrationSuccess != "PASSED" || p.Score == nil || p.Score.Scaled != 90 || !servertest.Near(p.TotalSecondsTracked, 20) {
			t.Errorf("progress from statements: %+v", p)
		}
		var d struct {
			ActivityDetails struct {
				ActivityCompletion string
				Children           []struct{ ActivityCompletion, ActivitySuccess string }
			}
		}
		e.Do("GET", regs+"/r1/progress/detail", servertest.Root, nil).JSON(t, &d)
		if len(d.ActivityDetails.Children) != 1 || d.ActivityDetails.Children[0].ActivitySuccess != "PASSED" {
			t.Errorf("activity results from statements: %+v", d)
		}
	})
}

// TestPlayerRestartsCompletedInstance: by default (WhenToRestartRegistration), a launch starts a
// new instance on the latest course version when the current one is completed and a newer
// version exists, and only then.
func TestPlayerRestartsCompletedInstance(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "intro", "registrationId": "reg-1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		link := regs + "/reg-1/launchLink"
		last := func() string { return string(e.Do("GET", regs+"/reg-1/lastInstance", servertest.Root, nil).Body) }
		e.Launch(e.LaunchPath(link))
		// A newer version alone does not restart an instance that is not completed.
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "&mayCreateNewVersion=true")
		e.Launch(e.LaunchPath(link))
		if l := last(); l != `{"result":0}` {
			t.Fatalf("restarted an incomplete instance: %s", l)
		}
		// Completed (as the rollup records it) and a newer version: the launch starts instance 1.
		if _, err := e.App.Registrations.UpdateProgress(ctx, "acme", "reg-1", -1, func(p *registration.Progress) error {
			p.Completion, p.Success = registration.Completed, registration.Passed
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		session := e.Launch(e.LaunchPath(link))
		if l := last(); l != `{"result":1}` {
			t.Fatalf("no new instance after completion and a new version: %s", l)
		}
		var p struct {
			Instance               int
			RegistrationCompletion string
			Course                 struct{ Version int }
		}
		e.Do("GET", regs+"/reg-1/progress", servertest.Root, nil).JSON(t, &p)
		if p.Instance != 1 || p.Course.Version != 1 || p.RegistrationCompletion != "UNKNOWN" {
			t.Errorf("new instance: %+v", p)
		}
		e.Do("GET", regs+"/reg-1/progress?instance=0", servertest.Root, nil).JSON(t, &p)
		if p.RegistrationCompletion != "COMPLETED" {
			t.Errorf("instance 0 after the restart: %+v", p)
		}
		// The session tracks the new instance; the next launch keeps it.
		st := e.Activity(session, "i1")
		if _, a := e.Commit(session, "i1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_location":"v1"}`); a.Result != "true" {
			t.Errorf("commit in the new instance: %+v", a)
		}
		e.Launch(e.LaunchPath(link))
		if l := last(); l != `{"result":1}` {
			t.Errorf("restarted again: %s", l)
		}

		// WhenToRestartRegistration decides: NEVER keeps a completed instance on an old
		// version; WHEN_EXISTING_REG_IS_COMPLETE restarts a completed one without a new version.
		setting := func(v string) {
			e.Expect(e.Do("PUT", regs+"/reg-1/configuration/WhenToRestartRegistration", servertest.Root, map[string]any{"value": v}), 204, "set "+v)
		}
		complete := func() {
			if _, err := e.App.Registrations.UpdateProgress(ctx, "acme", "reg-1", -1, func(p *registration.Progress) error {
				p.Completion = registration.Completed
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		complete()
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "&mayCreateNewVersion=true")
		setting("NEVER")
		e.Launch(e.LaunchPath(link))
		if l := last(); l != `{"result":1}` {
			t.Errorf("NEVER restarted: %s", l)
		}
		setting("WHEN_EXISTING_REG_IS_COMPLETE")
		e.Launch(e.LaunchPath(link))
		if l := last(); l != `{"result":2}` {
			t.Errorf("WHEN_EXISTING_REG_IS_COMPLETE did not restart a completed instance: %s", l)
		}
		e.Expect(e.Do("PUT", regs+"/reg-1/configuration/WhenToRestartRegistration", servertest.Root, map[string]any{"value": "SOMETIMES"}), 400, "unknown mode")
	})
}

// TestRedirectOnExitSetting: a launch link or preview that names no redirectOnExitUrl takes
// the RedirectOnExitUrl setting of its cascade; one that names it keeps its own.
func TestRedirectOnExitSetting(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "intro", "registrationId": "reg-1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		redirect := func(endpoint string) string {
			t.Helper()
			page := string(e.Get("/player/session/" + e.Launch(e.LaunchPath(endpoint))).Body)
			m := regexp.MustCompile(`"redirect":"([^"]*)"`).FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("no redirect in the player page: %s", page)
			}
			return m[1]
		}
		link := regs + "/reg-1/launchLink"
		if got := redirect(link); got != "" {
			t.Errorf("default redirect %q", got)
		}
		e.Expect(e.Do("PUT", "/engine/api/v1/acme/configuration/RedirectOnExitUrl", servertest.Root, map[string]any{"value": "Closer"}), 204, "tenant setting")
		if got := redirect(link); got != "closer" {
			t.Errorf("tenant setting: redirect %q", got)
		}
		if got := redirect("/engine/api/v1/acme/courses/intro/preview"); got != "closer" {
			t.Errorf("preview with the tenant setting: redirect %q", got)
		}
		e.Expect(e.Do("PUT", regs+"/reg-1/configuration/RedirectOnExitUrl", servertest.Root, map[string]any{"value": "https://lms.example/done"}), 204, "registration setting")
		if got := redirect(link); got != "https://lms.example/done" {
			t.Errorf("registration setting: redirect %q", got)
		}
		if got := redirect(link + "?redirectOnExitUrl=message"); got != "message" {
			t.Errorf("the link's own redirect: %q", got)
		}
		e.Expect(e.Do("PUT", regs+"/reg-1/configuration/RedirectOnExitUrl", servertest.Root, map[string]any{"value": "ftp://x"}), 400, "not a URL or keyword")

		// PlayerCommCommitFrequency (ms) sets how often the page's runtime commits: 10 s by
		// default, a course's value for its launches and previews.
		commitSeconds := func(endpoint string) string {
			t.Helper()
			page := string(e.Get("/player/session/" + e.Launch(e.LaunchPath(endpoint))).Body)
			m := regexp.MustCompile(`"commitSeconds":([0-9.]+)`).FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("no commit interval in the player page: %s", page)
			}
			return m[1]
		}
		if got := commitSeconds(link); got != "10" {
			t.Errorf("default commit interval %s s", got)
		}
		e.Expect(e.Do("PUT", "/engine/api/v1/acme/courses/intro/configuration/PlayerCommCommitFrequency", servertest.Root, map[string]any{"value": "2500"}), 204, "course setting")
		if got := commitSeconds(link); got != "2.5" {
			t.Errorf("course commit interval %s s", got)
		}
		if got := commitSeconds("/engine/api/v1/acme/courses/intro/preview"); got != "2.5" {
			t.Errorf("preview commit interval %s s", got)
		}
		e.Expect(e.Do("PUT", regs+"/reg-1/configuration/PlayerCommCommitFrequency", servertest.Root, map[string]any{"value": "50"}), 400, "below 100 ms")
	})
}
