package engineapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestPostBackAgreesWithProgressDetail takes one registration of every standard through the
// player and checks that the FULL post-back report (JSON data model) and progress/detail say
// the same: the same activity tree with the same run-time data, interactions and time, and
// the same registration progress. Each registration's last action changes its progress, so
// the last report was made after everything the learner did. Both are the learner's path's one rollup; a second copy of
// the rollup (as the post-back job once had) shows up here as a difference.
func TestPostBackAgreesWithProgressDetail(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		rc := servertest.NewPostReceiver(t)
		e.CreateTenant("acme", true)
		setConfig(e, "acme", "", "ApiPostbackDataModelVersion", "v2")
		setConfig(e, "acme", "", "TinCanInteractionsEnabled", "true")
		regs := "/engine/api/v1/acme/registrations"
		// send posts xAPI statements as launched content does, with the launch's credential.
		send := func(t *testing.T, endpoint string, cred servertest.Auth, sts ...map[string]any) {
			t.Helper()
			ep, err := url.Parse(endpoint)
			if err != nil {
				t.Fatal(err)
			}
			e.Expect(e.Do("POST", strings.TrimSuffix(ep.Path, "/")+"/statements", cred, sts, servertest.V103...), 200, "statements")
		}
		statement := func(actor any, verb, object, xreg string, result map[string]any) map[string]any {
			st := map[string]any{"actor": actor, "verb": map[string]any{"id": "http://adlnet.gov/expapi/verbs/" + verb},
				"object": map[string]any{"id": object}, "context": map[string]any{"registration": xreg}}
			if result != nil {
				st["result"] = result
			}
			return st
		}
		cases := []struct {
			name, fixture, xreg string
			take                func(t *testing.T, session, xreg string)
		}{
			{name: "scorm12", take: func(t *testing.T, session, _ string) {
				// The last commit completes the registration, so the last report follows it.
				e.RuntimeCommit(session, "i1", false, `{"commitSequence":1,"cmi.core.lesson_status":"incomplete","cmi.core.lesson_location":"p2",
					"cmi.core.session_time":"0000:01:30","cmi.interactions.0.id":"q1","cmi.interactions.0.type":"choice",
					"cmi.interactions.0.student_response":"a","cmi.interactions.0.result":"correct"}`)
				e.RuntimeCommit(session, "i2", true, `{"commitSequence":1,"cmi.core.lesson_status":"passed","cmi.core.score.raw":"85"}`)
			}},
			{name: "scorm2004", fixture: "scorm2004_4th", take: func(t *testing.T, session, _ string) {
				e.RuntimeCommit(session, "u1_sco", true, `{"commitSequence":1,"cmi.completion_status":"completed","cmi.success_status":"passed",
					"cmi.score.scaled":"0.9","cmi.progress_measure":"1","cmi.session_time":"PT1M","cmi.objectives.0.id":"hazards",
					"cmi.objectives.0.success_status":"passed","cmi.objectives.0.score.scaled":"0.9"}`)
			}},
			{name: "aicc", fixture: "aicc_single", take: func(t *testing.T, session, _ string) {
				au := firstActivityURL(e, t, session)
				for _, step := range [][2]string{{"PutParam", "[Core]\r\nLesson_Status=p\r\nScore=90\r\nTime=00:02:00\r\n"}, {"ExitAU", ""}} {
					form := url.Values{"command": {step[0]}, "version": {"4.0"}, "session_id": {au.Query().Get("aicc_sid")}, "AICC_Data": {step[1]}}
					res, err := http.Post(au.Query().Get("aicc_url"), "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
					if err != nil {
						t.Fatal(err)
					}
					res.Body.Close()
				}
			}},
			{name: "xapi", fixture: "xapi_single", xreg: "5f0c7d1e-2b3a-4c5d-8e9f-0a1b2c3d4e50", take: func(t *testing.T, session, xreg string) {
				q := firstActivityURL(e, t, session).Query()
				var actor map[string]any
				if err := json.Unmarshal([]byte(q.Get("actor")), &actor); err != nil {
					t.Fatal(err)
				}
				question := statement(actor, "answered", "urn:example:question:7", xreg, map[string]any{"response": "true", "success": true})
				question["object"] = map[string]any{"id": "urn:example:question:7", "definition": map[string]any{"interactionType": "true-false"}}
				send(t, q.Get("endpoint"), servertest.AuthFromHeader(q.Get("auth")), question,
					statement(actor, "completed", q.Get("activity_id"), xreg, map[string]any{"score": map[string]any{"scaled": 0.75}}),
					statement(actor, "terminated", q.Get("activity_id"), xreg, nil))
			}},
			{name: "cmi5", fixture: "cmi5_minimal", xreg: "7d7c0b8a-6a5e-4d3f-9b0e-2f1e3d4c5b60", take: func(t *testing.T, session, xreg string) {
				au := e.Cmi5Start(t, firstActivityURL(e, t, session).String())
				e.Expect(au.Send(au.Statement("initialized", nil),
					au.Statement("completed", map[string]any{"completion": true, "duration": "PT1M"}),
					au.Statement("passed", map[string]any{"score": map[string]any{"scaled": 0.8}, "success": true, "duration": "PT1M"}),
					au.Statement("terminated", map[string]any{"duration": "PT1M"})), 200, "cmi5 statements")
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				pkg := servertest.Scorm12Package(t) // two SCOs, i1 and i2
				if c.fixture != "" {
					pkg = servertest.ZipOf(t, servertest.FixtureFiles(t, c.fixture))
				}
				e.ImportOK("acme", c.name, pkg, "")
				reg := map[string]any{"courseId": c.name, "registrationId": "r-" + c.name,
					"learner":  map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"},
					"postBack": map[string]any{"url": rc.URL("/" + c.name), "authType": "HTTPBASIC", "userName": "lms", "password": "pw", "resultsFormat": "FULL"}}
				if c.xreg != "" {
					reg["xapiRegistrationId"] = c.xreg
				}
				e.Expect(e.Do("POST", regs, servertest.Root, reg), 204, "create registration")
				// A frozen clock: the time the server measures cannot move between the report
				// and the read.
				e.Clock.Freeze()
				session := e.Launch(e.LaunchPath(regs + "/r-" + c.name + "/launchLink"))
				// 20 s in the content before it reports: measured time the report must carry.
				e.Clock.Advance(20 * time.Second)
				c.take(t, session, c.xreg)
				// The learner leaves the page 5 s after the content's last word: that time is
				// measured too, and the last report must carry it (it once stopped at the
				// terminating commit's report).
				var root struct{ ActivityDetails struct{ ID string } }
				e.Do("GET", regs+"/r-"+c.name+"/progress/detail", servertest.Root, nil).JSON(t, &root)
				e.Clock.Advance(5 * time.Second)
				if r, a := e.Heartbeat(session, root.ActivityDetails.ID, "exit"); r.Status != 200 || a.Result != "true" {
					t.Fatalf("the page's exit heartbeat: %d %s", r.Status, r.Body)
				}
				got := rc.At("/" + c.name)
				if len(got) == 0 {
					t.Fatal("no report reached the receiver")
				}
				last := got[len(got)-1].Body
				r := e.Do("GET", regs+"/r-"+c.name+"/progress/detail", servertest.Root, nil)
				e.Expect(r, 200, "progress/detail")
				diffs, err := servertest.ReportDiff(last, r.Body)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range diffs {
					t.Error(d)
				}
				var report map[string]any
				if err := json.Unmarshal(last, &report); err != nil {
					t.Fatal(err)
				}
				if secs, _ := report["totalSecondsTracked"].(float64); secs < 25 {
					t.Errorf("the report's time tracked is %v s, want the 25 s measured", report["totalSecondsTracked"])
				}
				if report["registrationCompletion"] == "UNKNOWN" {
					t.Errorf("the learner's work did not reach the rollup: %s", last)
				}
			})
		}
	})
}
