package player_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/coursetest"
)

// beatOK posts a heartbeat that must be accepted.
func beatOK(e *servertest.Env, session, activity, state string) {
	e.T.Helper()
	if r, a := e.Heartbeat(session, activity, state); r.Status != 200 || a.Result != "true" {
		e.T.Fatalf("heartbeat %s %s: %d %s", activity, state, r.Status, r.Body)
	}
}

// pageActivities returns the launchable activity ids of a session's player page.
func pageActivities(e *servertest.Env, session string) []string {
	e.T.Helper()
	page := string(e.Get("/player/session/" + session).Body)
	m := regexp.MustCompile(`(?s)<script id="cfg" type="application/json">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		e.T.Fatalf("no configuration in the player page: %s", page)
	}
	var cfg struct{ Activities []struct{ ID, URL string } }
	if err := json.Unmarshal([]byte(m[1]), &cfg); err != nil {
		e.T.Fatalf("player configuration: %v", err)
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
func tracked(e *servertest.Env, regs, id string) float64 {
	e.T.Helper()
	var p struct{ TotalSecondsTracked float64 }
	e.Do("GET", regs+"/"+id+"/progress", servertest.Root, nil).JSON(e.T, &p)
	return p.TotalSecondsTracked
}

// TestPlayerSessionTimeTracked: totalSecondsTracked (and each activity's timeTracked) is the
// time the server measured each launch in the content, from the launch to its last sign of
// life, for every standard; silences longer than the gap count as the gap, a hidden or left
// page counts nothing until it comes back, and the content's own total_time stays in the
// run-time totalTime.
func TestPlayerSessionTimeTracked(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.Clock.Freeze() // spans are what the test advances, however busy the machine
		e.CreateTenant("acme", true)
		regs := "/engine/api/v1/acme/registrations"
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "intro", "registrationId": "r12",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r12/launchLink"))
		st := e.Activity(session, "i1")

		e.Clock.Advance(20 * time.Second)
		// The content says it spent five minutes: that is its total_time, not time tracked.
		r, a := e.Commit(session, "i1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"incomplete","cmi.core.session_time":"00:05:00","cmi.core.total_time":"0000:05:00"}`)
		if r.Status != 200 || a.Result != "true" {
			t.Fatalf("commit: %d %s", r.Status, r.Body)
		}
		if got := tracked(e, regs, "r12"); !servertest.Near(got, 20) {
			t.Errorf("after a commit 20 s into the launch: %v s tracked", got)
		}
		e.Clock.Advance(25 * time.Second)
		beatOK(e, session, "i1", "")
		if got := tracked(e, regs, "r12"); !servertest.Near(got, 45) {
			t.Errorf("after a heartbeat 25 s later: %v s tracked", got)
		}
		// Ten minutes without a sign of life (the window was abandoned, the machine slept):
		// only the gap (two heartbeat intervals, at least 30 s) counts.
		e.Clock.Advance(10 * time.Minute)
		beatOK(e, session, "i2", "")
		if got := tracked(e, regs, "r12"); !servertest.Near(got, 75) {
			t.Errorf("after a 10-minute silence: %v s tracked, want 45 + 30", got)
		}
		// Hidden for an hour: the time up to hiding counts, the hour does not.
		e.Clock.Advance(5 * time.Second)
		beatOK(e, session, "i2", "hidden")
		e.Clock.Advance(time.Hour)
		beatOK(e, session, "i2", "")
		e.Clock.Advance(10 * time.Second)
		beatOK(e, session, "i2", "exit")
		if got := tracked(e, regs, "r12"); !servertest.Near(got, 90) {
			t.Errorf("after hidden and exit: %v s tracked, want 75 + 5 + 10", got)
		}
		// A second launch adds its own time.
		session2 := e.Launch(e.LaunchPath(regs + "/r12/launchLink"))
		e.Clock.Advance(12 * time.Second)
		beatOK(e, session2, "i1", "")
		got := tracked(e, regs, "r12")
		if !servertest.Near(got, 102) {
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
		e.Do("GET", regs+"/r12/progress/detail", servertest.Root, nil).JSON(t, &d)
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
		if r, _ := e.Heartbeat(session2, "nope", ""); r.Status != 404 {
			t.Errorf("heartbeat naming no activity of the course: %d %s", r.Status, r.Body)
		}
		if r, _ := e.Heartbeat(session2, "i1", "asleep"); r.Status != 400 {
			t.Errorf("heartbeat with an unknown state: %d %s", r.Status, r.Body)
		}
		if r, _ := e.Heartbeat("forged", "i1", ""); r.Status != 403 {
			t.Errorf("heartbeat of a forged session: %d %s", r.Status, r.Body)
		}

		// The other standards: heartbeats (and HACP calls) measure them the same way.
		for _, fx := range []string{"scorm2004_4th", "aicc_single", "xapi_single", "cmi5_minimal"} {
			t.Run(fx, func(t *testing.T) {
				course, reg := strings.ReplaceAll(fx, "_", "-"), "r-"+fx
				e.ImportOK("acme", course, servertest.ZipOf(t, coursetest.Lookup(fx).Files), "")
				e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": course, "registrationId": reg,
					"learner": map[string]any{"id": "ann"}}), 204, "create registration")
				session := e.Launch(e.LaunchPath(regs + "/" + reg + "/launchLink"))
				ids := pageActivities(e, session)
				if len(ids) == 0 {
					t.Fatal("nothing to launch")
				}
				e.Clock.Advance(15 * time.Second)
				if fx == "aicc_single" {
					hacp := func(command, data string) string {
						form := url.Values{"command": {command}, "version": {"4.0"}, "session_id": {ids[0]}, "AICC_Data": {data}}
						res, err := http.Post(e.URL+"/player/hacp/"+session, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
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
					e.Clock.Advance(10 * time.Second)
					if got := hacp("PutParam", "[Core]\r\nLesson_Status=i\r\nTime=00:09:00\r\n"); !strings.HasPrefix(got, "error=0") {
						t.Fatalf("PutParam: %s", got)
					}
				} else {
					beatOK(e, session, ids[0], "")
					e.Clock.Advance(10 * time.Second)
					beatOK(e, session, ids[0], "")
				}
				if got := tracked(e, regs, reg); !servertest.Near(got, 25) {
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
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		regs := "/engine/api/v1/acme/registrations"
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "intro", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		link := e.LaunchPath(regs + "/r1/launchLink")
		first := e.Launch(link)
		st1 := e.Activity(first, "i1")
		if r, a := e.Commit(first, "i1", st1.Attempt, `{"commitSequence":1,"cmi.core.lesson_location":"first-1"}`); r.Status != 200 || a.Result != "true" {
			t.Fatalf("first window's commit: %d %s", r.Status, r.Body)
		}
		second := e.Launch(link)
		st2 := e.Activity(second, "i1")
		if st2.CMI["cmi.core.lesson_location"] != "first-1" {
			t.Errorf("second window starts from %q", st2.CMI["cmi.core.lesson_location"])
		}
		r, _ := e.Commit(first, "i1", st1.Attempt, `{"commitSequence":2,"cmi.core.lesson_location":"first-2"}`)
		var a servertest.SessionAnswer
		r.JSON(t, &a)
		if r.Status != 409 || a.Result != "false" || a.Reason != "concurrent-launch" || !strings.Contains(a.Message, "opened in another window") {
			t.Errorf("first window's commit after a second launch: %d %s", r.Status, r.Body)
		}
		if r, a := e.Heartbeat(first, "i1", ""); r.Status != 409 || a.Reason != "concurrent-launch" {
			t.Errorf("first window's heartbeat: %d %s", r.Status, r.Body)
		}
		if r, a := e.Commit(second, "i1", st2.Attempt, `{"commitSequence":1,"cmi.core.lesson_location":"second-1"}`); r.Status != 200 || a.Result != "true" {
			t.Fatalf("second window's commit: %d %s", r.Status, r.Body)
		}
		if loc := e.Activity(second, "i1").CMI["cmi.core.lesson_location"]; loc != "second-1" {
			t.Errorf("stored location %q, want the second window's", loc)
		}

		// AICC: the earlier window's HACP calls get the HACP error line with the message, and
		// its PutParam stores nothing.
		e.ImportOK("acme", "fire", servertest.ZipOf(t, coursetest.Lookup("aicc_single").Files), "")
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "fire", "registrationId": "r2",
			"learner": map[string]any{"id": "ann"}}), 204, "create AICC registration")
		hacp := func(session, command, data string) string {
			t.Helper()
			form := url.Values{"command": {command}, "version": {"4.0"}, "session_id": {"A1"}, "AICC_Data": {data}}
			res, err := http.Post(e.URL+"/player/hacp/"+session, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return string(b)
		}
		aiccLink := e.LaunchPath(regs + "/r2/launchLink")
		early := e.Launch(aiccLink)
		if got := hacp(early, "PutParam", "[Core]\r\nLesson_Location=early-1\r\n"); !strings.HasPrefix(got, "error=0") {
			t.Fatalf("PutParam of the only window: %s", got)
		}
		late := e.Launch(aiccLink)
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
