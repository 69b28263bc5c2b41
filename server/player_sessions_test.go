package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course/coursetest"
)

// sessionAnswer is a commit's or heartbeat's answer with the refusal's reason.
type sessionAnswer struct {
	Result  string
	Message string
	Reason  string
}

// heartbeat posts the player page's sign of life (state "", hidden or exit) for activity.
func (e *env) heartbeat(session, activity, state string) (resp, sessionAnswer) {
	e.t.Helper()
	q := url.Values{"activity": {activity}}
	if state != "" {
		q.Set("state", state)
	}
	r := e.do("POST", "/player/runtime/"+session+"/heartbeat?"+q.Encode(), noAuth, nil)
	var a sessionAnswer
	r.json(e.t, &a)
	return r, a
}

// beatOK posts a heartbeat that must be accepted.
func (e *env) beatOK(session, activity, state string) {
	e.t.Helper()
	if r, a := e.heartbeat(session, activity, state); r.Status != 200 || a.Result != "true" {
		e.t.Fatalf("heartbeat %s %s: %d %s", activity, state, r.Status, r.Body)
	}
}

// pageActivities returns the launchable activity ids of a session's player page.
func (e *env) pageActivities(session string) []string {
	e.t.Helper()
	page := string(e.get("/player/session/" + session).Body)
	m := regexp.MustCompile(`(?s)<script id="cfg" type="application/json">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		e.t.Fatalf("no configuration in the player page: %s", page)
	}
	var cfg struct{ Activities []struct{ ID, URL string } }
	if err := json.Unmarshal([]byte(m[1]), &cfg); err != nil {
		e.t.Fatalf("player configuration: %v", err)
	}
	var ids []string
	for _, a := range cfg.Activities {
		if a.URL != "" {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// tracked returns a registration's totalSecondsTracked.
func (e *env) tracked(regs, id string) float64 {
	e.t.Helper()
	var p struct{ TotalSecondsTracked float64 }
	e.do("GET", regs+"/"+id+"/progress", root, nil).json(e.t, &p)
	return p.TotalSecondsTracked
}

// near: the clock moves by whole steps, the requests in between add real milliseconds.
func near(got, want float64) bool { return got >= want && got < want+2 }

// TestPlayerSessionTimeTracked: totalSecondsTracked (and each activity's timeTracked) is the
// time the server measured each launch in the content, from the launch to its last sign of
// life, for every standard; silences longer than the gap count as the gap, a hidden or left
// page counts nothing until it comes back, and the content's own total_time stays in the
// run-time totalTime.
func TestPlayerSessionTimeTracked(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		regs := "/engine/api/v1/acme/registrations"
		e.importOK("acme", "intro", scorm12Package(t), "")
		e.expect(e.do("POST", regs, root, map[string]any{"courseId": "intro", "registrationId": "r12",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		session := e.launch(e.launchPath(regs + "/r12/launchLink"))
		st := e.activity(session, "i1")

		e.clock.advance(20 * time.Second)
		// The content says it spent five minutes: that is its total_time, not time tracked.
		r, a := e.commit(session, "i1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"incomplete","cmi.core.session_time":"00:05:00","cmi.core.total_time":"0000:05:00"}`)
		if r.Status != 200 || a.Result != "true" {
			t.Fatalf("commit: %d %s", r.Status, r.Body)
		}
		if got := e.tracked(regs, "r12"); !near(got, 20) {
			t.Errorf("after a commit 20 s into the launch: %v s tracked", got)
		}
		e.clock.advance(25 * time.Second)
		e.beatOK(session, "i1", "")
		if got := e.tracked(regs, "r12"); !near(got, 45) {
			t.Errorf("after a heartbeat 25 s later: %v s tracked", got)
		}
		// Ten minutes without a sign of life (the window was abandoned, the machine slept):
		// only the gap (two heartbeat intervals, at least 30 s) counts.
		e.clock.advance(10 * time.Minute)
		e.beatOK(session, "i2", "")
		if got := e.tracked(regs, "r12"); !near(got, 75) {
			t.Errorf("after a 10-minute silence: %v s tracked, want 45 + 30", got)
		}
		// Hidden for an hour: the time up to hiding counts, the hour does not.
		e.clock.advance(5 * time.Second)
		e.beatOK(session, "i2", "hidden")
		e.clock.advance(time.Hour)
		e.beatOK(session, "i2", "")
		e.clock.advance(10 * time.Second)
		e.beatOK(session, "i2", "exit")
		if got := e.tracked(regs, "r12"); !near(got, 90) {
			t.Errorf("after hidden and exit: %v s tracked, want 75 + 5 + 10", got)
		}
		// A second launch adds its own time.
		session2 := e.launch(e.launchPath(regs + "/r12/launchLink"))
		e.clock.advance(12 * time.Second)
		e.beatOK(session2, "i1", "")
		got := e.tracked(regs, "r12")
		if !near(got, 102) {
			t.Errorf("after a second launch: %v s tracked, want 90 + 12", got)
		}
		// progress/detail splits it by activity; the run-time keeps the content's total_time.
		var d struct {
			TotalSecondsTracked float64
			ActivityDetails     struct {
				TimeTracked string
				Children    []struct {
					ID, TimeTracked string
					Runtime         *struct{ TotalTime, TimeTracked string }
				}
			}
		}
		e.do("GET", regs+"/r12/progress/detail", root, nil).json(t, &d)
		kids := d.ActivityDetails.Children
		if d.TotalSecondsTracked != got || len(kids) != 2 || kids[0].Runtime == nil {
			t.Fatalf("detail: %+v", d)
		}
		// i1: 20 + 25 + 12 s; i2: 30 + 5 + 10 s.
		if !strings.HasPrefix(kids[0].TimeTracked, "0000:00:57") || !strings.HasPrefix(kids[0].Runtime.TimeTracked, "0000:00:57") ||
			!strings.HasPrefix(kids[1].TimeTracked, "0000:00:45") || !strings.HasPrefix(d.ActivityDetails.TimeTracked, "0000:01:42") {
			t.Errorf("time tracked by activity: root %s, %s %s (runtime %s), %s %s", d.ActivityDetails.TimeTracked,
				kids[0].ID, kids[0].TimeTracked, kids[0].Runtime.TimeTracked, kids[1].ID, kids[1].TimeTracked)
		}
		if !strings.HasPrefix(kids[0].Runtime.TotalTime, "0000:05:00") {
			t.Errorf("runtime totalTime %q, want the content's 0000:05:00", kids[0].Runtime.TotalTime)
		}
		if r, _ := e.heartbeat(session2, "nope", ""); r.Status != 404 {
			t.Errorf("heartbeat naming no activity of the course: %d %s", r.Status, r.Body)
		}
		if r, _ := e.heartbeat(session2, "i1", "asleep"); r.Status != 400 {
			t.Errorf("heartbeat with an unknown state: %d %s", r.Status, r.Body)
		}
		if r, _ := e.heartbeat("forged", "i1", ""); r.Status != 403 {
			t.Errorf("heartbeat of a forged session: %d %s", r.Status, r.Body)
		}

		// The other standards: heartbeats (and HACP calls) measure them the same way.
		for _, fx := range []string{"scorm2004_4th", "aicc_single", "xapi_single", "cmi5_minimal"} {
			t.Run(fx, func(t *testing.T) {
				course, reg := strings.ReplaceAll(fx, "_", "-"), "r-"+fx
				e.importOK("acme", course, zipOf(t, coursetest.Lookup(fx).Files), "")
				e.expect(e.do("POST", regs, root, map[string]any{"courseId": course, "registrationId": reg,
					"learner": map[string]any{"id": "ann"}}), 204, "create registration")
				session := e.launch(e.launchPath(regs + "/" + reg + "/launchLink"))
				ids := e.pageActivities(session)
				if len(ids) == 0 {
					t.Fatal("nothing to launch")
				}
				e.clock.advance(15 * time.Second)
				if fx == "aicc_single" {
					hacp := func(command, data string) string {
						form := url.Values{"command": {command}, "version": {"4.0"}, "session_id": {ids[0]}, "AICC_Data": {data}}
						res, err := http.Post(e.url+"/player/hacp/"+session, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
						if err != nil {
							t.Fatal(err)
						}
						defer res.Body.Close()
						b, _ := io.ReadAll(res.Body)
						return string(b)
					}
					if got := hacp("GetParam", ""); !strings.HasPrefix(got, "error=0") {
						t.Fatalf("GetParam: %s", got)
					}
					e.clock.advance(10 * time.Second)
					if got := hacp("PutParam", "[Core]\r\nLesson_Status=i\r\nTime=00:09:00\r\n"); !strings.HasPrefix(got, "error=0") {
						t.Fatalf("PutParam: %s", got)
					}
				} else {
					e.beatOK(session, ids[0], "")
					e.clock.advance(10 * time.Second)
					e.beatOK(session, ids[0], "")
				}
				if got := e.tracked(regs, reg); !near(got, 25) {
					t.Errorf("%s: %v s tracked, want 25", fx, got)
				}
			})
		}
	})
}

// TestConcurrentLaunches: a registration launched again while an earlier session is open.
// By default the earlier session's posts are refused with the concurrent-launch reason (its
// page warns) and nothing it sends is stored; with ForceExitConcurrentLaunches the reason
// tells its page to exit; with ConcurrentLaunchDetectionEnabled false both sessions save.
// (The settings' rows in settings_sessions_test.go show the same through the settings only.)
func TestConcurrentLaunches(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		regs := "/engine/api/v1/acme/registrations"
		e.importOK("acme", "intro", scorm12Package(t), "")
		e.expect(e.do("POST", regs, root, map[string]any{"courseId": "intro", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		link := e.launchPath(regs + "/r1/launchLink")
		first := e.launch(link)
		st1 := e.activity(first, "i1")
		if r, a := e.commit(first, "i1", st1.Attempt, `{"commitSequence":1,"cmi.core.lesson_location":"first-1"}`); r.Status != 200 || a.Result != "true" {
			t.Fatalf("first window's commit: %d %s", r.Status, r.Body)
		}
		second := e.launch(link)
		st2 := e.activity(second, "i1")
		if st2.CMI["cmi.core.lesson_location"] != "first-1" {
			t.Errorf("second window starts from %q", st2.CMI["cmi.core.lesson_location"])
		}
		r, _ := e.commit(first, "i1", st1.Attempt, `{"commitSequence":2,"cmi.core.lesson_location":"first-2"}`)
		var a sessionAnswer
		r.json(t, &a)
		if r.Status != 409 || a.Result != "false" || a.Reason != "concurrent-launch" || !strings.Contains(a.Message, "opened in another window") {
			t.Errorf("first window's commit after a second launch: %d %s", r.Status, r.Body)
		}
		if r, a := e.heartbeat(first, "i1", ""); r.Status != 409 || a.Reason != "concurrent-launch" {
			t.Errorf("first window's heartbeat: %d %s", r.Status, r.Body)
		}
		if r, a := e.commit(second, "i1", st2.Attempt, `{"commitSequence":1,"cmi.core.lesson_location":"second-1"}`); r.Status != 200 || a.Result != "true" {
			t.Fatalf("second window's commit: %d %s", r.Status, r.Body)
		}
		if loc := e.activity(second, "i1").CMI["cmi.core.lesson_location"]; loc != "second-1" {
			t.Errorf("stored location %q, want the second window's", loc)
		}

		// AICC: the earlier window's HACP calls get the HACP error line with the message, and
		// its PutParam stores nothing.
		e.importOK("acme", "fire", zipOf(t, coursetest.Lookup("aicc_single").Files), "")
		e.expect(e.do("POST", regs, root, map[string]any{"courseId": "fire", "registrationId": "r2",
			"learner": map[string]any{"id": "ann"}}), 204, "create AICC registration")
		hacp := func(session, command, data string) string {
			t.Helper()
			form := url.Values{"command": {command}, "version": {"4.0"}, "session_id": {"A1"}, "AICC_Data": {data}}
			res, err := http.Post(e.url+"/player/hacp/"+session, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return string(b)
		}
		aiccLink := e.launchPath(regs + "/r2/launchLink")
		early := e.launch(aiccLink)
		if got := hacp(early, "PutParam", "[Core]\r\nLesson_Location=early-1\r\n"); !strings.HasPrefix(got, "error=0") {
			t.Fatalf("PutParam of the only window: %s", got)
		}
		late := e.launch(aiccLink)
		if got := hacp(early, "PutParam", "[Core]\r\nLesson_Location=early-2\r\n"); !strings.HasPrefix(got, "error=3") || !strings.Contains(got, "opened in another window") {
			t.Errorf("PutParam of the earlier window: %s", got)
		}
		if got := hacp(early, "GetParam", ""); !strings.HasPrefix(got, "error=3") {
			t.Errorf("GetParam of the earlier window: %s", got)
		}
		if got := hacp(late, "GetParam", ""); !strings.HasPrefix(got, "error=0") || !strings.Contains(got, "Lesson_Location=early-1") {
			t.Errorf("GetParam of the later window: %s", got)
		}
	})
}
