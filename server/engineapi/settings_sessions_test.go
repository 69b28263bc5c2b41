package engineapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// sessionsSettingEffects show the player-session settings through HTTP: two launches of one
// registration, and a session's commits hours after its launch (the test clock moves).
var sessionsSettingEffects = []settingEffect{
	{"ConcurrentLaunchDetectionEnabled", func(t *testing.T, e *servertest.Env, tn string) {
		regs := sessionsRegistration(t, e, tn)
		// Default: the first window's commit after a second launch is refused.
		first, second := e.Launch(e.LaunchPath(regs+"/r1/launchLink")), e.Launch(e.LaunchPath(regs+"/r1/launchLink"))
		if a := sessionCommit(t, e, first, "first"); a.status != 409 || a.Reason != "concurrent-launch" {
			t.Errorf("default: first window's commit %d %+v", a.status, a.SessionAnswer)
		}
		if a := sessionCommit(t, e, second, "second"); a.status != 200 {
			t.Errorf("default: second window's commit %d %+v", a.status, a.SessionAnswer)
		}
		e.Expect(e.Do("PUT", "/engine/api/v1/"+tn+"/configuration/ConcurrentLaunchDetectionEnabled", servertest.Root, map[string]any{"value": "false"}), 204, "disable")
		// Disabled: both windows save, the last write wins.
		first, second = e.Launch(e.LaunchPath(regs+"/r1/launchLink")), e.Launch(e.LaunchPath(regs+"/r1/launchLink"))
		if a := sessionCommit(t, e, second, "second"); a.status != 200 {
			t.Errorf("disabled: second window's commit %d %+v", a.status, a.SessionAnswer)
		}
		if a := sessionCommit(t, e, first, "first"); a.status != 200 {
			t.Errorf("disabled: first window's commit %d %+v", a.status, a.SessionAnswer)
		}
		if loc := e.Activity(second, "i1").CMI["cmi.core.lesson_location"]; loc != "first" {
			t.Errorf("disabled: stored location %q, want the last write's", loc)
		}
	}},
	{"ForceExitConcurrentLaunches", func(t *testing.T, e *servertest.Env, tn string) {
		regs := sessionsRegistration(t, e, tn)
		first := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		if a := sessionCommit(t, e, first, "kept"); a.status != 200 {
			t.Fatalf("first commit %d %+v", a.status, a.SessionAnswer)
		}
		e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		if r, a := e.Heartbeat(first, "i1", ""); r.Status != 409 || a.Reason != "concurrent-launch" {
			t.Errorf("default: the earlier window is warned: %d %s", r.Status, r.Body)
		}
		e.Expect(e.Do("PUT", regs+"/r1/configuration/ForceExitConcurrentLaunches", servertest.Root, map[string]any{"value": "true"}), 204, "force exit")
		earlier := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		later := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		r, a := e.Heartbeat(earlier, "i1", "")
		if r.Status != 409 || a.Reason != "concurrent-launch-exit" || !strings.Contains(a.Message, "closed here") {
			t.Errorf("force exit: the earlier window is exited: %d %s", r.Status, r.Body)
		}
		if a := sessionCommit(t, e, earlier, "lost"); a.status != 409 || a.Reason != "concurrent-launch-exit" {
			t.Errorf("force exit: the earlier window's commit %d %+v", a.status, a.SessionAnswer)
		}
		// What the earlier windows saved before is kept.
		if loc := e.Activity(later, "i1").CMI["cmi.core.lesson_location"]; loc != "kept" {
			t.Errorf("location after a forced exit %q, want what was saved before", loc)
		}
	}},
	{"ApiTokenPostbackValidHours", func(t *testing.T, e *servertest.Env, tn string) {
		regs := sessionsRegistration(t, e, tn)
		// Default 24 hours: a session still saves two hours after its launch.
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		e.Clock.Advance(2 * time.Hour)
		if a := sessionCommit(t, e, session, "late"); a.status != 200 {
			t.Errorf("default: commit two hours in: %d %+v", a.status, a.SessionAnswer)
		}
		e.Expect(e.Do("PUT", "/engine/api/v1/"+tn+"/configuration/ApiTokenPostbackValidHours", servertest.Root, map[string]any{"value": "1"}), 204, "one hour")
		session = e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		e.Clock.Advance(30 * time.Minute)
		if a := sessionCommit(t, e, session, "in time"); a.status != 200 {
			t.Errorf("1 hour: commit half an hour in: %d %+v", a.status, a.SessionAnswer)
		}
		e.Clock.Advance(2 * time.Hour)
		a := sessionCommit(t, e, session, "too late")
		if a.status != 403 || a.Reason != "session-expired" || !strings.Contains(a.Message, "ApiTokenPostbackValidHours") {
			t.Errorf("1 hour: commit two hours in: %d %+v", a.status, a.SessionAnswer)
		}
		if r, a := e.Heartbeat(session, "i1", ""); r.Status != 403 || a.Reason != "session-expired" {
			t.Errorf("1 hour: heartbeat two hours in: %d %s", r.Status, r.Body)
		}
		e.Expect(e.Do("PUT", "/engine/api/v1/"+tn+"/configuration/ApiTokenPostbackValidHours", servertest.Root, map[string]any{"value": "0"}), 400, "zero hours")
	}},
}

// sessionsRegistration imports the two-SCO SCORM 1.2 course into tenant tn with registration
// r1 and returns the registrations path.
func sessionsRegistration(t *testing.T, e *servertest.Env, tn string) string {
	t.Helper()
	e.ImportOK(tn, "intro", servertest.Scorm12Package(t), "")
	regs := "/engine/api/v1/" + tn + "/registrations"
	e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "intro", "registrationId": "r1",
		"learner": map[string]any{"id": "ann"}}), 204, "create registration")
	return regs
}

type sessionCommitAnswer struct {
	status int
	servertest.SessionAnswer
}

// sessionCommit loads SCO i1 in a session and commits location as its lesson_location.
func sessionCommit(t *testing.T, e *servertest.Env, session, location string) sessionCommitAnswer {
	t.Helper()
	st := e.Activity(session, "i1")
	r, _ := e.Commit(session, "i1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_location":"`+location+`"}`)
	var a sessionCommitAnswer
	r.JSON(t, &a.SessionAnswer)
	a.status = r.Status
	return a
}
