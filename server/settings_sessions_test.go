package server_test

import (
	"strings"
	"testing"
	"time"
)

// sessionsSettingEffects show the player-session settings through HTTP: two launches of one
// registration, and a session's commits hours after its launch (the test clock moves).
var sessionsSettingEffects = []settingEffect{
	{"ConcurrentLaunchDetectionEnabled", func(t *testing.T, e *env, tn string) {
		regs := sessionsRegistration(t, e, tn)
		// Default: the first window's commit after a second launch is refused.
		first, second := e.launch(e.launchPath(regs+"/r1/launchLink")), e.launch(e.launchPath(regs+"/r1/launchLink"))
		if a := sessionCommit(t, e, first, "first"); a.status != 409 || a.Reason != "concurrent-launch" {
			t.Errorf("default: first window's commit %d %+v", a.status, a.sessionAnswer)
		}
		if a := sessionCommit(t, e, second, "second"); a.status != 200 {
			t.Errorf("default: second window's commit %d %+v", a.status, a.sessionAnswer)
		}
		e.expect(e.do("PUT", "/engine/api/v1/"+tn+"/configuration/ConcurrentLaunchDetectionEnabled", root, map[string]any{"value": "false"}), 204, "disable")
		// Disabled: both windows save, the last write wins.
		first, second = e.launch(e.launchPath(regs+"/r1/launchLink")), e.launch(e.launchPath(regs+"/r1/launchLink"))
		if a := sessionCommit(t, e, second, "second"); a.status != 200 {
			t.Errorf("disabled: second window's commit %d %+v", a.status, a.sessionAnswer)
		}
		if a := sessionCommit(t, e, first, "first"); a.status != 200 {
			t.Errorf("disabled: first window's commit %d %+v", a.status, a.sessionAnswer)
		}
		if loc := e.activity(second, "i1").CMI["cmi.core.lesson_location"]; loc != "first" {
			t.Errorf("disabled: stored location %q, want the last write's", loc)
		}
	}},
	{"ForceExitConcurrentLaunches", func(t *testing.T, e *env, tn string) {
		regs := sessionsRegistration(t, e, tn)
		first := e.launch(e.launchPath(regs + "/r1/launchLink"))
		if a := sessionCommit(t, e, first, "kept"); a.status != 200 {
			t.Fatalf("first commit %d %+v", a.status, a.sessionAnswer)
		}
		e.launch(e.launchPath(regs + "/r1/launchLink"))
		if r, a := e.heartbeat(first, "i1", ""); r.Status != 409 || a.Reason != "concurrent-launch" {
			t.Errorf("default: the earlier window is warned: %d %s", r.Status, r.Body)
		}
		e.expect(e.do("PUT", regs+"/r1/configuration/ForceExitConcurrentLaunches", root, map[string]any{"value": "true"}), 204, "force exit")
		earlier := e.launch(e.launchPath(regs + "/r1/launchLink"))
		later := e.launch(e.launchPath(regs + "/r1/launchLink"))
		r, a := e.heartbeat(earlier, "i1", "")
		if r.Status != 409 || a.Reason != "concurrent-launch-exit" || !strings.Contains(a.Message, "closed here") {
			t.Errorf("force exit: the earlier window is exited: %d %s", r.Status, r.Body)
		}
		if a := sessionCommit(t, e, earlier, "lost"); a.status != 409 || a.Reason != "concurrent-launch-exit" {
			t.Errorf("force exit: the earlier window's commit %d %+v", a.status, a.sessionAnswer)
		}
		// What the earlier windows saved before is kept.
		if loc := e.activity(later, "i1").CMI["cmi.core.lesson_location"]; loc != "kept" {
			t.Errorf("location after a forced exit %q, want what was saved before", loc)
		}
	}},
	{"ApiTokenPostbackValidHours", func(t *testing.T, e *env, tn string) {
		regs := sessionsRegistration(t, e, tn)
		// Default 24 hours: a session still saves two hours after its launch.
		session := e.launch(e.launchPath(regs + "/r1/launchLink"))
		e.clock.advance(2 * time.Hour)
		if a := sessionCommit(t, e, session, "late"); a.status != 200 {
			t.Errorf("default: commit two hours in: %d %+v", a.status, a.sessionAnswer)
		}
		e.expect(e.do("PUT", "/engine/api/v1/"+tn+"/configuration/ApiTokenPostbackValidHours", root, map[string]any{"value": "1"}), 204, "one hour")
		session = e.launch(e.launchPath(regs + "/r1/launchLink"))
		e.clock.advance(30 * time.Minute)
		if a := sessionCommit(t, e, session, "in time"); a.status != 200 {
			t.Errorf("1 hour: commit half an hour in: %d %+v", a.status, a.sessionAnswer)
		}
		e.clock.advance(2 * time.Hour)
		a := sessionCommit(t, e, session, "too late")
		if a.status != 403 || a.Reason != "session-expired" || !strings.Contains(a.Message, "ApiTokenPostbackValidHours") {
			t.Errorf("1 hour: commit two hours in: %d %+v", a.status, a.sessionAnswer)
		}
		if r, a := e.heartbeat(session, "i1", ""); r.Status != 403 || a.Reason != "session-expired" {
			t.Errorf("1 hour: heartbeat two hours in: %d %s", r.Status, r.Body)
		}
		e.expect(e.do("PUT", "/engine/api/v1/"+tn+"/configuration/ApiTokenPostbackValidHours", root, map[string]any{"value": "0"}), 400, "zero hours")
	}},
}

// sessionsRegistration imports the two-SCO SCORM 1.2 course into tenant tn with registration
// r1 and returns the registrations path.
func sessionsRegistration(t *testing.T, e *env, tn string) string {
	t.Helper()
	e.importOK(tn, "intro", scorm12Package(t), "")
	regs := "/engine/api/v1/" + tn + "/registrations"
	e.expect(e.do("POST", regs, root, map[string]any{"courseId": "intro", "registrationId": "r1",
		"learner": map[string]any{"id": "ann"}}), 204, "create registration")
	return regs
}

type sessionCommitAnswer struct {
	status int
	sessionAnswer
}

// sessionCommit loads SCO i1 in a session and commits location as its lesson_location.
func sessionCommit(t *testing.T, e *env, session, location string) sessionCommitAnswer {
	t.Helper()
	st := e.activity(session, "i1")
	r, _ := e.commit(session, "i1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_location":"`+location+`"}`)
	var a sessionCommitAnswer
	r.json(t, &a.sessionAnswer)
	a.status = r.Status
	return a
}
