package lrsapi_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

type xapiProgress struct {
	Instance               int
	RegistrationCompletion string
	RegistrationSuccess    string
	Score                  *struct{ Scaled float64 }
	TotalSecondsTracked    float64
	CompletedDate          string
	ActivityDetails        *struct {
		ActivityCompletion string
		Children           []struct {
			ID, ActivityCompletion, ActivitySuccess, TimeTracked string
			Runtime                                              *struct {
				RuntimeInteractions []map[string]any
			}
		}
	}
}

func readXAPIProgress(e *servertest.Env, t *testing.T, reg string, instance int, detail bool) xapiProgress {
	t.Helper()
	p := "/engine/api/v1/acme/registrations/" + reg + "/progress"
	if detail {
		p += "/detail"
	}
	if instance >= 0 {
		p += fmt.Sprintf("?instance=%d", instance)
	}
	var out xapiProgress
	r := e.Do("GET", p, servertest.Root, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", p, r.Status, r.Body)
	}
	r.JSON(t, &out)
	return out
}

func postStatements(e *servertest.Env, t *testing.T, sts ...map[string]any) {
	t.Helper()
	e.Expect(e.Do("POST", servertest.LRS+"/acme/statements", servertest.Root, sts, servertest.V103...), 200, "statements")
}

func xapiRegistrationID(e *servertest.Env, t *testing.T, reg, query string) string {
	t.Helper()
	var id struct{ ID string }
	r := e.Do("GET", "/engine/api/v1/acme/registrations/"+reg+"/xapiRegistrationId"+query, servertest.Root, nil)
	if r.Status != 200 {
		t.Fatalf("xapiRegistrationId%s: %d %s", query, r.Status, r.Body)
	}
	r.JSON(t, &id)
	return id.ID
}

// cmi5Completed is a one-AU cmi5 course whose AU moves on when completed.
const cmi5Completed = `<courseStructure xmlns="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd">
  <course id="urn:example:course:done"><title><langstring>Done</langstring></title><description><langstring/></description></course>
  <au id="urn:example:au:done" moveOn="Completed"><title><langstring>The AU</langstring></title><description><langstring/></description><url>index.html</url></au>
</courseStructure>`

// TestXAPIInstancesStartFresh: every instance of an xAPI or cmi5 registration has its own xAPI
// registration id (instance 0 the one given at creation), so the statements of an earlier
// instance, or of before a reset, never count for a new one; content of an old instance still
// reports to that instance.
func TestXAPIInstancesStartFresh(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		regs := "/engine/api/v1/acme/registrations"
		const golf = "http://example.com/courses/golf"

		// xAPI: a restart (completed, newer version: WhenToRestartRegistration's default).
		e.ImportOK("acme", "tc", servertest.ZipOf(t, servertest.FixtureFiles(t, "xapi_single")), "")
		const x0 = "0c8c0b8a-6a5e-4d3f-9b0e-2f1e3d4c5b6a"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "tc", "registrationId": "r1", "xapiRegistrationId": x0,
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		postStatements(e, t, servertest.XapiStatement(x0, "completed", golf, nil))
		if p := readXAPIProgress(e, t, "r1", -1, false); p.RegistrationCompletion != "COMPLETED" {
			t.Fatalf("instance 0 after completed: %+v", p)
		}
		e.ImportOK("acme", "tc", servertest.ZipOf(t, servertest.FixtureFiles(t, "xapi_single")), "&mayCreateNewVersion=true")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		x1 := xapiRegistrationID(e, t, "r1", "")
		if x1 == x0 || x1 == "" || xapiRegistrationID(e, t, "r1", "?instance=1") != x1 || xapiRegistrationID(e, t, "r1", "?instance=0") != x0 {
			t.Fatalf("xAPI registration ids of instances 0 and 1: %s %s", x0, x1)
		}
		page := string(e.Get("/player/session/" + session).Body)
		if m := regexp.MustCompile(`registration=([0-9a-f-]{36})`).FindStringSubmatch(page); m == nil || m[1] != x1 {
			t.Errorf("the new instance launches with registration %v, want %s", m, x1)
		}
		// Only the LMS's launched statement of the new instance counts: attempted, not completed.
		if p := readXAPIProgress(e, t, "r1", -1, true); p.Instance != 1 || p.RegistrationCompletion != "INCOMPLETE" ||
			p.ActivityDetails == nil || p.ActivityDetails.ActivityCompletion != "INCOMPLETE" {
			t.Errorf("new instance before any statement of its content: %+v", p)
		}
		postStatements(e, t, servertest.XapiStatement(x1, "experienced", golf, nil))
		if p := readXAPIProgress(e, t, "r1", -1, true); p.RegistrationCompletion != "INCOMPLETE" || p.ActivityDetails.ActivityCompletion != "INCOMPLETE" {
			t.Errorf("new instance after an experienced statement: %+v", p)
		}
		// Content still open on instance 0 reports to instance 0 only.
		postStatements(e, t, servertest.XapiStatement(x0, "passed", golf, map[string]any{"score": map[string]any{"scaled": 0.5}}))
		if p := readXAPIProgress(e, t, "r1", -1, false); p.RegistrationCompletion != "INCOMPLETE" || p.RegistrationSuccess != "UNKNOWN" {
			t.Errorf("instance 1 after a statement of instance 0: %+v", p)
		}
		if p := readXAPIProgress(e, t, "r1", 0, false); p.RegistrationSuccess != "PASSED" || p.Score == nil || p.Score.Scaled != 50 {
			t.Errorf("instance 0 after its own statement: %+v", p)
		}
		postStatements(e, t, servertest.XapiStatement(x1, "completed", golf, nil))
		if p := readXAPIProgress(e, t, "r1", -1, false); p.RegistrationCompletion != "COMPLETED" {
			t.Errorf("instance 1 after completed: %+v", p)
		}

		// A reset: a fresh instance 0 with a new id; no earlier statement counts.
		e.Expect(e.Do("DELETE", regs+"/r1/progress", servertest.Root, nil), 204, "reset")
		x2 := xapiRegistrationID(e, t, "r1", "")
		if x2 == x0 || x2 == x1 {
			t.Fatalf("xAPI registration id after a reset: %s (before %s, %s)", x2, x0, x1)
		}
		if p := readXAPIProgress(e, t, "r1", -1, true); p.RegistrationCompletion != "UNKNOWN" || p.ActivityDetails.ActivityCompletion != "UNKNOWN" {
			t.Errorf("after a reset: %+v", p)
		}
		postStatements(e, t, servertest.XapiStatement(x0, "completed", golf, nil), servertest.XapiStatement(x1, "completed", golf, nil))
		if p := readXAPIProgress(e, t, "r1", -1, false); p.RegistrationCompletion != "UNKNOWN" {
			t.Errorf("statements of removed instances counted after a reset: %+v", p)
		}
		postStatements(e, t, servertest.XapiStatement(x2, "experienced", golf, nil))
		if p := readXAPIProgress(e, t, "r1", -1, false); p.RegistrationCompletion != "INCOMPLETE" {
			t.Errorf("after a reset and a statement: %+v", p)
		}
		// The given id stays the registration's: no other registration takes it.
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "tc", "registrationId": "r2", "xapiRegistrationId": x0,
			"learner": map[string]any{"id": "bob"}}), 400, "another registration with a reset registration's xAPI id")

		// cmi5: a restart when complete (WHEN_EXISTING_REG_IS_COMPLETE), through the cmi5 launch.
		e.ImportOK("acme", "c5", servertest.ZipOf(t, map[string]string{"cmi5.xml": cmi5Completed, "index.html": ""}), "")
		const c0 = "7d7c0b8a-6a5e-4d3f-9b0e-2f1e3d4c5b6a"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "c5", "registrationId": "c1", "xapiRegistrationId": c0,
			"learner": map[string]any{"id": "ann"}}), 204, "create cmi5 registration")
		e.Expect(e.Do("PUT", regs+"/c1/configuration/WhenToRestartRegistration", servertest.Root, map[string]any{"value": "WHEN_EXISTING_REG_IS_COMPLETE"}), 204, "restart mode")
		cmi5Reg := func() string {
			session := e.Launch(e.LaunchPath(regs + "/c1/launchLink"))
			page := string(e.Get("/player/session/" + session).Body)
			m := regexp.MustCompile(`"url":"(/player/cmi5/[^"]*)"`).FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("no AU URL in the page: %s", page)
			}
			r := e.Get(strings.ReplaceAll(m[1], `\u0026`, "&"))
			u, err := url.Parse(r.Header.Get("Location"))
			if r.Status != 302 || err != nil {
				t.Fatalf("cmi5 launch: %d %s", r.Status, r.Body)
			}
			return u.Query().Get("registration")
		}
		if got := cmi5Reg(); got != c0 {
			t.Fatalf("cmi5 instance 0 launches with registration %s, want %s", got, c0)
		}
		postStatements(e, t, servertest.XapiStatement(c0, "completed", "urn:example:au:done", nil))
		if p := readXAPIProgress(e, t, "c1", -1, false); p.RegistrationCompletion != "COMPLETED" {
			t.Fatalf("cmi5 instance 0 after completed: %+v", p)
		}
		c1 := cmi5Reg()
		if c1 == c0 || c1 != xapiRegistrationID(e, t, "c1", "?instance=1") {
			t.Fatalf("cmi5 instance 1 launches with registration %s (instance 0: %s)", c1, c0)
		}
		if p := readXAPIProgress(e, t, "c1", -1, true); p.Instance != 1 || p.RegistrationCompletion != "INCOMPLETE" {
			t.Errorf("cmi5 instance 1 launched, before its AU's statements: %+v", p)
		}
		postStatements(e, t, servertest.XapiStatement(c1, "initialized", "urn:example:au:done", nil))
		if p := readXAPIProgress(e, t, "c1", -1, true); p.RegistrationCompletion != "INCOMPLETE" || len(p.ActivityDetails.Children) != 1 ||
			p.ActivityDetails.Children[0].ActivityCompletion != "INCOMPLETE" {
			t.Errorf("cmi5 instance 1 after initialized: %+v", p)
		}
	})
}

// TestXAPILongSession: a long cmi5 session stored in many batches rolls up to what its
// statements say in total (each batch is folded into the instance's fold, never re-read),
// and voiding a statement takes it back out.
func TestXAPILongSession(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		regs := "/engine/api/v1/acme/registrations"
		e.ImportOK("acme", "c5", servertest.ZipOf(t, map[string]string{"cmi5.xml": cmi5Completed, "index.html": ""}), "")
		const xreg = "5b1c0b8a-6a5e-4d3f-9b0e-2f1e3d4c5b6a"
		const au = "urn:example:au:done"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "c5", "registrationId": "long", "xapiRegistrationId": xreg,
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		const batches = 120
		for i := 0; i < batches; i++ {
			sts := []map[string]any{
				servertest.XapiStatement(xreg, "progressed", au, map[string]any{"duration": fmt.Sprintf("PT%dS", i)}),
				servertest.XapiStatement(xreg, "experienced", au, nil),
				servertest.XapiStatement(xreg, "answered", "urn:example:q:"+fmt.Sprint(i%7), map[string]any{"response": fmt.Sprint(i), "success": i%2 == 0}),
			}
			if i%10 == 9 {
				sts = append(sts, servertest.XapiStatement(xreg, "terminated", au, map[string]any{"duration": "PT1M"}))
			}
			switch i {
			case 40:
				sts = append(sts, servertest.XapiStatement(xreg, "failed", au, map[string]any{"score": map[string]any{"scaled": 0.3}}))
			case 100:
				passed := servertest.XapiStatement(xreg, "passed", au, map[string]any{"score": map[string]any{"scaled": 0.85}})
				passed["id"] = "9a0e1d2c-3b4a-4f5e-8d7c-6b5a4f3e2d1c"
				sts = append(sts, passed)
			}
			if i > 0 && i%50 == 0 {
				p := readXAPIProgress(e, t, "long", -1, false)
				// No player session measured any time: statement durations do not count
				// (docs/decisions.md, "Player sessions").
				if p.RegistrationCompletion != "INCOMPLETE" || p.TotalSecondsTracked != 0 {
					t.Fatalf("after %d batches: %+v", i, p)
				}
			}
			postStatements(e, t, sts...)
		}
		postStatements(e, t, servertest.XapiStatement(xreg, "completed", au, nil))
		want := func(what, success string, score float64) {
			t.Helper()
			for _, detail := range []bool{false, true} {
				p := readXAPIProgress(e, t, "long", -1, detail)
				if p.RegistrationCompletion != "COMPLETED" || p.RegistrationSuccess != success || p.Score == nil || p.Score.Scaled != score ||
					p.TotalSecondsTracked != 0 { // measured time only (no player session here)
					t.Errorf("%s (detail %v): %+v", what, detail, p)
				}
				if detail && (len(p.ActivityDetails.Children) != 1 || p.ActivityDetails.Children[0].ActivitySuccess != success ||
					p.ActivityDetails.Children[0].TimeTracked != "0000:00:00") {
					t.Errorf("%s: activity details %+v", what, p.ActivityDetails)
				}
			}
		}
		want("after the session", "PASSED", 85)
		// Voiding the pass (a voiding statement names no registration) rebuilds the fold
		// from the statements that still count: the earlier failure stands.
		postStatements(e, t, map[string]any{
			"actor":  map[string]any{"objectType": "Agent", "account": map[string]any{"homePage": "https://lms.example.com", "name": "ann"}},
			"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/voided"},
			"object": map[string]any{"objectType": "StatementRef", "id": "9a0e1d2c-3b4a-4f5e-8d7c-6b5a4f3e2d1c"}})
		want("after voiding the pass", "FAILED", 30)
	})
}
