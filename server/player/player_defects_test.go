package player_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// Defects found with third-party packages in Chromium (issue 23); the browser side of these
// runs in player_defects_browser_test.go.

// hacpClient launches registration regID of an AICC course and returns a HACP caller for
// its (first) AU, as the AU would post to the aicc_url it was launched with.
func hacpClient(e *servertest.Env, regs, regID string) func(command, data string) string {
	e.T.Helper()
	t := e.T
	session := e.Launch(e.LaunchPath(regs + "/" + regID + "/launchLink"))
	page := string(e.Get("/player/session/" + session).Body)
	m := regexp.MustCompile(`"url":"([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no AU URL in the page: %s", page)
	}
	au, err := url.Parse(strings.ReplaceAll(m[1], `\u0026`, "&"))
	if err != nil {
		t.Fatal(err)
	}
	return func(command, data string) string {
		t.Helper()
		form := url.Values{"command": {command}, "version": {"4.0"}, "session_id": {au.Query().Get("aicc_sid")}, "AICC_Data": {data}}
		res, err := http.Post(au.Query().Get("aicc_url"), "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || !strings.HasPrefix(string(b), "error=0\r\n") {
			t.Fatalf("%s: %d %s", command, res.StatusCode, b)
		}
		return string(b)
	}
}

// Defect 2: every HACP PutParam carries the AU session's running time; the total is the
// earlier sessions' total plus the latest, not the sum of every PutParam.
func TestPlayerAICCRunningTime(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "fire", servertest.ZipOf(t, servertest.FixtureFiles(t, "aicc_single")), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "fire", "registrationId": "r1",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
		timeOf := func(hacp func(string, string) string) string {
			t.Helper()
			m := regexp.MustCompile(`Time=([^\r]*)\r\n`).FindStringSubmatch(hacp("GetParam", ""))
			if m == nil {
				t.Fatal("GetParam without Time")
			}
			return m[1]
		}
		detailTime := func() string {
			var d struct {
				ActivityDetails struct {
					Children []struct{ Runtime struct{ TotalTime string } }
				}
			}
			e.Do("GET", regs+"/r1/progress/detail", servertest.Root, nil).JSON(t, &d)
			return d.ActivityDetails.Children[0].Runtime.TotalTime
		}

		hacp := hacpClient(e, regs, "r1")
		hacp("GetParam", "")
		for _, tm := range []string{"00:00:20", "00:01:00", "00:01:30"} {
			hacp("PutParam", "[Core]\r\nLesson_Status=i\r\nTime="+tm+"\r\n")
		}
		if got := timeOf(hacp); got != "0000:01:30" {
			t.Errorf("GetParam Time after three PutParams of one session = %s, want 0000:01:30", got)
		}
		if got := detailTime(); got != "0000:01:30" {
			t.Errorf("run-time totalTime = %s, want 0000:01:30", got)
		}
		hacp("ExitAU", "")

		// A second launch: its session's running time adds to the first session's total.
		hacp = hacpClient(e, regs, "r1")
		hacp("GetParam", "")
		hacp("PutParam", "[Core]\r\nLesson_Status=i\r\nTime=00:00:10\r\n")
		hacp("PutParam", "[Core]\r\nLesson_Status=p\r\nTime=00:00:45.5\r\n")
		if got := timeOf(hacp); got != "0000:02:15.50" {
			t.Errorf("GetParam Time after the second session = %s, want 0000:02:15.50", got)
		}
		hacp("ExitAU", "")
		if got := detailTime(); got != "0000:02:15" {
			t.Errorf("run-time totalTime = %s, want 0000:02:15 (the run-time view writes whole seconds)", got)
		}
	})
}

// manifestTwo12 is a SCORM 1.2 course of two SCOs without mastery scores.
const manifestTwo12 = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="two12" version="1" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Two 1.2</title>
    <item identifier="s1" identifierref="r1" parameters="?s1"><title>One</title></item>
    <item identifier="s2" identifierref="r1" parameters="?s2"><title>Two</title></item>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`

// Defect 4: a SCORM 1.2 SCO that finishes (LMSFinish) without having set lesson_status is
// completed (SCORM 1.2 RTE); one that set a status keeps it.
func TestSCORM12FinishWithoutStatusCompletes(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "two", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestTwo12, "sco.html": "<p>sco</p>"}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "two", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		send := func(sco, body string, terminate bool) {
			t.Helper()
			st := e.Activity(session, sco)
			path := "/player/runtime/" + session + "/commit?activity=" + sco + "&attempt=" + strconv.FormatInt(st.Attempt, 10)
			if terminate {
				path += "&terminate=true"
			}
			r := e.Do("POST", path, servertest.NoAuth, body, "Content-Type", "text/plain;charset=UTF-8")
			e.Expect(r, 200, "commit "+sco)
		}
		// s1 only initialises and finishes; s2 says incomplete, then finishes.
		send("s1", `{"commitSequence":1,"cmi.core.session_time":"00:00:05"}`, true)
		send("s2", `{"commitSequence":1,"cmi.core.lesson_status":"incomplete"}`, false)
		send("s2", `{"commitSequence":2,"cmi.core.session_time":"00:00:05"}`, true)
		var d struct {
			ActivityDetails struct {
				Children []struct {
					ID                 string
					ActivityCompletion string
					Runtime            struct{ CompletionStatus string }
				}
			}
		}
		e.Do("GET", regs+"/r1/progress/detail", servertest.Root, nil).JSON(t, &d)
		got := []string{}
		for _, c := range d.ActivityDetails.Children {
			got = append(got, c.ID+":"+c.ActivityCompletion+":"+c.Runtime.CompletionStatus)
		}
		if strings.Join(got, ",") != "s1:COMPLETED:completed,s2:INCOMPLETE:incomplete" {
			t.Errorf("after LMSFinish: %v", got)
		}
	})
}

// Defect 7: a 404 names the missing thing once ("registration 'x' not found", the house style
// of tenants and subscriptions), and a body that is not JSON is called that, truncated or cut
// at the front, instead of being judged by its first value.
func TestNotFoundAndInvalidJSONMessages(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		msg := func(r servertest.Resp) string {
			var m struct{ Message string }
			r.JSON(t, &m)
			return m.Message
		}
		for path, want := range map[string]string{
			"/engine/api/v1/acme/registrations/x":          "registration 'x' not found",
			"/engine/api/v1/acme/registrations/x/progress": "registration 'x' not found",
			"/engine/api/v1/acme/courses/nope/title":       "course 'nope' not found",
		} {
			if r := e.Do("GET", path, servertest.Root, nil); r.Status != 404 || msg(r) != want {
				t.Errorf("GET %s: %d %q, want 404 %q", path, r.Status, msg(r), want)
			}
		}
		regs := "/engine/api/v1/acme/registrations"
		full := `{"courseId":"c","registrationId":"r1","learner":{"id":"ann"}}`
		for body, want := range map[string]string{
			full[:30]:          "request body is not valid JSON: it is truncated (its 30 bytes end before the JSON value is complete)",
			full[1:]:           "request body is not valid JSON: it goes on after the JSON value that ends at byte 10",
			full + "}":         "request body is not valid JSON: it goes on after the JSON value that ends at byte 61",
			`{"courseId" "c"}`: "request body is not valid JSON (at byte 13): invalid character '\"' after object key",
			`"a string"`:       "request body must be a JSON object, not string",
		} {
			if r := e.Do("POST", regs, servertest.Root, body); r.Status != 400 || msg(r) != want {
				t.Errorf("POST %s: %d %q, want 400 %q", body, r.Status, msg(r), want)
			}
		}
	})
}

// Defect 6: relaunching a suspended multi-SCO registration goes on at the suspended SCO with
// entry resume and its suspend data, touching no other SCO; a completed SCO the learner
// re-enters starts a new attempt (SCORM 2004), whose completion the reports take from the
// sequencer: the new attempt's own (docs/decisions.md, "One SN rollup").
func TestMultiSCORelaunchResumes(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "b2004", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest2004, "sco.html": servertest.Sco2004}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "b2004", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		commit := func(session, sco string, attempt int64, seq int, body string, terminate bool) {
			t.Helper()
			path := fmt.Sprintf("/player/runtime/%s/commit?activity=%s&attempt=%d", session, sco, attempt)
			if terminate {
				path += "&terminate=true"
			}
			e.Expect(e.Do("POST", path, servertest.NoAuth, fmt.Sprintf(`{"commitSequence":%d,%s}`, seq, body), "Content-Type", "text/plain"), 200, "commit "+sco)
		}
		startOf := func(session string) string {
			m := regexp.MustCompile(`"start":"([^"]*)"`).FindStringSubmatch(string(e.Get("/player/session/" + session).Body))
			if m == nil {
				t.Fatal("no start in the player page")
			}
			return m[1]
		}
		amount := func() float64 {
			return pollProgress(e, t, regs+"/r1", func(progressRead) bool { return true }).RegistrationCompletionAmount
		}

		s1 := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		if got := startOf(s1); got != "one" {
			t.Errorf("first launch starts at %q, want the first SCO", got)
		}
		one := e.Activity(s1, "one")
		commit(s1, "one", one.Attempt, 1, `"cmi.completion_status":"completed","cmi.success_status":"passed","cmi.score.scaled":"0.9","cmi.exit":"normal"`, true)
		// The learner goes on to two (Next): the sequencer delivers it, so a relaunch finds it.
		if r, n := navigate(e, s1, "request=continue"); r.Status != 200 || n.Deliver != "two" {
			t.Fatalf("continue to two: %d %s", r.Status, r.Body)
		}
		two := e.Activity(s1, "two")
		commit(s1, "two", two.Attempt, 1, `"cmi.completion_status":"incomplete","cmi.location":"p3","cmi.suspend_data":"page=3","cmi.exit":"suspend"`, true)
		if a := amount(); a != 0.5 {
			t.Fatalf("completion amount after the first session: %v", a)
		}

		// The relaunch starts at the suspended SCO, which resumes.
		s2 := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		if got := startOf(s2); got != "two" {
			t.Errorf("relaunch starts at %q, want the suspended SCO two", got)
		}
		two = e.Activity(s2, "two")
		if two.CMI["cmi.entry"] != "resume" || two.CMI["cmi.suspend_data"] != "page=3" || two.CMI["cmi.location"] != "p3" {
			t.Errorf("the suspended SCO's data on relaunch: entry %q suspend_data %q location %q", two.CMI["cmi.entry"], two.CMI["cmi.suspend_data"], two.CMI["cmi.location"])
		}
		if a := amount(); a != 0.5 {
			t.Errorf("completion amount after the relaunch: %v, want 0.5", a)
		}
		// The learner goes back to the completed SCO (the table of contents: a choice): a new
		// attempt (exit was normal), whose content says incomplete. The sequencer tracks the
		// new attempt (SN book: attempt progress is per attempt), and the reports are its: one
		// is INCOMPLETE, and the course's completion amount is the rollup of the attempts'
		// progress measures (one's 0.1, two's unknown, RB.1.1 b), 0.05.
		if r, n := navigate(e, s2, "request=choice&target=one"); r.Status != 200 || n.Deliver != "one" {
			t.Fatalf("choice of one: %d %s", r.Status, r.Body)
		}
		one = e.Activity(s2, "one")
		if one.CMI["cmi.entry"] != "ab-initio" {
			t.Errorf("re-entered completed SCO: entry %q, want ab-initio (a new attempt)", one.CMI["cmi.entry"])
		}
		commit(s2, "one", one.Attempt, 1, `"cmi.completion_status":"incomplete","cmi.progress_measure":"0.1"`, false)
		if a := amount(); a != 0.05 {
			t.Errorf("completion amount after re-entering the completed SCO: %v, want 0.05", a)
		}
		var d struct {
			ActivityDetails struct {
				Children []struct{ ID, ActivityCompletion, ActivitySuccess string }
			}
		}
		e.Do("GET", regs+"/r1/progress/detail", servertest.Root, nil).JSON(t, &d)
		if c := d.ActivityDetails.Children[0]; c.ID != "one" || c.ActivityCompletion != "INCOMPLETE" {
			t.Errorf("re-entered completed SCO: %+v", c)
		}
		// A later relaunch goes on where the learner was: choosing one ended two's suspension
		// (SN book, DB.2: delivery clears the Suspended Activity) and one is still current.
		s3 := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		if got := startOf(s3); got != "one" {
			t.Errorf("third launch starts at %q, want one, where the learner was", got)
		}
	})
}

// manifestPrereq12 is a SCORM 1.2 course whose second SCO needs the third, and the third
// the first: adlcp:prerequisites in the AICC script syntax.
const manifestPrereq12 = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="pre12" version="1" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Prerequisites</title>
    <item identifier="s1" identifierref="r1" parameters="?s1"><title>One</title></item>
    <item identifier="s2" identifierref="r1" parameters="?s2"><title>Two</title><adlcp:prerequisites type="aicc_script">s3 &amp; ~s2 = failed</adlcp:prerequisites></item>
    <item identifier="s3" identifierref="r1" parameters="?s3"><title>Three</title><adlcp:prerequisites type="aicc_script">s1</adlcp:prerequisites></item>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`

// Defect 5: SCOs whose prerequisites are not met are locked: the page gets them, and the
// server refuses their load with 403 and a message; meeting the prerequisites unlocks them.
func TestSCORM12PrerequisitesLock(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "pre", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestPrereq12, "sco.html": "<p>sco</p>"}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "pre", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		page := string(e.Get("/player/session/" + session).Body)
		if !strings.Contains(page, `"locked":{"s2":"s3 \u0026 ~s2 = failed","s3":"s1"},"prerequisites":true`) {
			t.Errorf("the page's locked activities: %s", regexp.MustCompile(`"locked":\{[^}]*\}`).FindString(page))
		}
		locks := func() string {
			t.Helper()
			r := e.Get("/player/runtime/" + session + "/locked")
			e.Expect(r, 200, "locked")
			return string(r.Body)
		}
		if got := locks(); got != `{"locked":{"s2":"s3 \u0026 ~s2 = failed","s3":"s1"}}` {
			t.Errorf("locked before anything: %s", got)
		}
		r := e.Get("/player/runtime/" + session + "/activity?activity=s3")
		var m struct{ Message string }
		r.JSON(t, &m)
		if r.Status != 403 || m.Message != "activity 's3' is locked: its prerequisites (s1) are not met yet" {
			t.Errorf("load of a locked SCO: %d %s", r.Status, r.Body)
		}
		st := e.Activity(session, "s1")
		e.Expect(e.Do("POST", fmt.Sprintf("/player/runtime/%s/commit?activity=s1&attempt=%d&terminate=true", session, st.Attempt), servertest.NoAuth,
			`{"commitSequence":1,"cmi.core.lesson_status":"completed"}`, "Content-Type", "text/plain"), 200, "commit s1")
		if got := locks(); got != `{"locked":{"s2":"s3 \u0026 ~s2 = failed"}}` {
			t.Errorf("locked after s1: %s", got)
		}
		st = e.Activity(session, "s3")
		e.Expect(e.Do("POST", fmt.Sprintf("/player/runtime/%s/commit?activity=s3&attempt=%d&terminate=true", session, st.Attempt), servertest.NoAuth,
			`{"commitSequence":1,"cmi.core.lesson_status":"passed"}`, "Content-Type", "text/plain"), 200, "commit s3")
		if got := locks(); got != `{"locked":{}}` {
			t.Errorf("locked after s1 and s3: %s", got)
		}
		// A preview tracks nothing and locks nothing.
		preview := e.Launch(e.LaunchPath("/engine/api/v1/acme/courses/pre/preview"))
		if strings.Contains(string(e.Get("/player/session/"+preview).Body), `"locked"`) {
			t.Error("a preview locks activities")
		}
	})
}

// adlPackage builds ADL's LMS test package name (SCORM 2004 4th edition test suite,
// shared/conformance): its manifest, and the files it names from the suite's SCODepot (an
// empty stand-in for the few the suite builds, such as LMSTest.jar).
func adlPackage(t *testing.T, name string) []byte {
	t.Helper()
	courses := testenv.SharedConformance(t, "scorm2004-4ed-test-suite/software_development/TestSuite/LMSRTE/Courses")
	manifest, err := os.ReadFile(filepath.Join(courses, name, "imsmanifest.xml"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"imsmanifest.xml": string(manifest)}
	for _, m := range regexp.MustCompile(`href\s*=\s*"([^"]+)"`).FindAllStringSubmatch(string(manifest), -1) {
		b, _ := os.ReadFile(filepath.Join(courses, "SCODepot", filepath.FromSlash(m[1])))
		files[m[1]] = string(b)
	}
	return servertest.ZipOf(t, files)
}

// Defect 7 with ADL's package CT-01, whose SCOs declare no objectives: the FULL post-back of
// a scored, satisfied SCO carries its primary objective (PRIMARYOBJ) with the measure, and
// its total_time is HHHH:MM:SS like every other time of the report.
func TestFullPostBackADLPrimaryObjective(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		rc := servertest.NewPostReceiver(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "ct01", adlPackage(t, "LMSTestPackage_CT-01"), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "ct01", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}, "postBack": map[string]any{"url": rc.URL("/full"), "resultsFormat": "FULL"}}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		e.RuntimeCommit(session, "activity_1", true, `{"commitSequence":1,"cmi.completion_status":"completed","cmi.success_status":"passed",
			"cmi.score.scaled":"0.85","cmi.score.raw":"85","cmi.session_time":"PT14.46S","cmi.total_time":"PT14.46S","cmi.exit":"normal"}`)
		got := rc.At("/full")
		if len(got) == 0 {
			t.Fatal("no FULL report reached the receiver")
		}
		form, err := url.ParseQuery(string(got[len(got)-1].Body))
		if err != nil {
			t.Fatal(err)
		}
		report := regexp.MustCompile(`>\s+<`).ReplaceAllString(form.Get("data"), "><")
		i := strings.Index(report, `<activity id="activity_1">`)
		if i < 0 {
			t.Fatalf("no activity_1 in the report: %s", report)
		}
		sco := report[i:]
		for _, want := range []string{
			`<objectives><objective id="PRIMARYOBJ" primary="true"><measurestatus>true</measurestatus><normalizedmeasure>0.85</normalizedmeasure>` +
				`<progressstatus>true</progressstatus><satisfiedstatus>true</satisfiedstatus></objective></objectives>`,
			`<total_time>0000:00:14</total_time><timetracked>`,
		} {
			if !strings.Contains(sco, want) {
				t.Errorf("activity_1's FULL report lacks %s:\n%s", want, form.Get("data"))
			}
		}
	})
}

// Prerequisites of an aggregation lock every SCO under it; an identifier naming no item and
// an expression that does not parse lock nothing.
func TestSCORM12PrerequisitesOfAnAggregation(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		manifest := `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="agg12" version="1" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Aggregation</title>
    <item identifier="s1" identifierref="r1"><title>One</title></item>
    <item identifier="m2"><title>Module two</title><adlcp:prerequisites type="aicc_script">2*{s1,s4,typo}</adlcp:prerequisites>
      <item identifier="s2" identifierref="r1"><title>Two</title></item>
      <item identifier="s3" identifierref="r1"><title>Three</title><adlcp:prerequisites type="aicc_script">s1 &amp;&amp;</adlcp:prerequisites></item>
    </item>
    <item identifier="s4" identifierref="r1"><title>Four</title><adlcp:prerequisites type="aicc_script">nosuch</adlcp:prerequisites></item>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`
		e.ImportOK("acme", "agg", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifest, "sco.html": "<p>sco</p>"}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "agg", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		// 2*{s1,s4,typo}: the unknown typo counts as met, so one more is needed.
		if r := e.Get("/player/runtime/" + session + "/locked"); string(r.Body) != `{"locked":{"s2":"2*{s1,s4,typo}","s3":"2*{s1,s4,typo}"}}` {
			t.Errorf("locked: %s", r.Body)
		}
		st := e.Activity(session, "s4")
		e.Expect(e.Do("POST", fmt.Sprintf("/player/runtime/%s/commit?activity=s4&attempt=%d", session, st.Attempt), servertest.NoAuth,
			`{"commitSequence":1,"cmi.core.lesson_status":"passed"}`, "Content-Type", "text/plain"), 200, "commit s4")
		if r := e.Get("/player/runtime/" + session + "/locked"); string(r.Body) != `{"locked":{}}` {
			t.Errorf("locked after s4 passed: %s", r.Body)
		}
	})
}

// aiccTwoAUs is an AICC course of two AUs, the second with the first as its prerequisite
// (.pre).
func aiccTwoAUs() map[string]string {
	return map[string]string{
		"course.crs": "[Course]\nCourse_Creator=Lectern Tests\nCourse_ID=CRS-2\nCourse_System=HTML\nCourse_Title=Two Units\n" +
			"Level=1\nMax_Fields_CST=3\nTotal_AUs=2\nTotal_Blocks=0\nVersion=4.0\n[Course_Behavior]\nMax_Normal=1\n[Course_Description]\nTwo units.\n",
		"course.au": `"System_ID","Type","Command_Line","File_Name","Max_Score","Mastery_Score","Max_Time_Allowed","Time_Limit_Action","System_Vendor","Core_Vendor","Web_Launch","AU_Password"` + "\n" +
			`"A1","lesson","","one.html","","","","","","","",""` + "\n" + `"A2","lesson","","two.html","","","","","","","",""` + "\n",
		"course.des": `"System_ID","Developer_ID","Title","Description"` + "\n" + `"A1","U1","Unit one",""` + "\n" + `"A2","U2","Unit two",""` + "\n",
		"course.cst": `"block","member","member"` + "\n" + `"ROOT","A1","A2"` + "\n",
		"course.pre": `"structure_element","prerequisite"` + "\n" + `"A2","A1"` + "\n",
		"one.html":   "<html></html>",
		"two.html":   "<html></html>",
	}
}

// AICC prerequisites on the server: the page disables a locked AU, and an AU whose URL is
// opened anyway gets no data (GetParam) and stores none (PutParam) until its prerequisites
// are met.
func TestAICCPrerequisitesOnTheServer(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "two", servertest.ZipOf(t, aiccTwoAUs()), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "two", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		hacp := func(sid, command, data string) string {
			t.Helper()
			form := url.Values{"command": {command}, "version": {"4.0"}, "session_id": {sid}, "AICC_Data": {data}}
			r := e.Do("POST", "/player/hacp/"+session, servertest.NoAuth, form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
			if r.Status != 200 {
				t.Fatalf("%s %s: %d %s", sid, command, r.Status, r.Body)
			}
			return string(r.Body)
		}
		for _, cmd := range []string{"GetParam", "PutParam"} {
			if got := hacp("A2", cmd, "[Core]\r\nLesson_Status=passed\r\n"); !strings.HasPrefix(got, "error=3\r\n") || !strings.Contains(got, "AU 'A2' is locked") {
				t.Errorf("%s of the locked AU: %q, want error 3 naming the lock", cmd, got)
			}
		}
		if got := hacp("A1", "PutParam", "[Core]\r\nLesson_Status=passed\r\n"); !strings.HasPrefix(got, "error=0\r\n") {
			t.Fatalf("PutParam of A1: %q", got)
		}
		if got := hacp("A2", "GetParam", ""); !strings.HasPrefix(got, "error=0\r\n") || !strings.Contains(strings.ToLower(got), "lesson_status=") {
			t.Errorf("GetParam of A2 once A1 passed: %q", got)
		}
	})
}
