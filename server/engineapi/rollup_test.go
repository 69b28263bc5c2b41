package engineapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestRollupAndPostBack takes a two-SCO SCORM 1.2 course through the runtime endpoint and
// checks what an LMS sees: the rolled-up progress, the activity tree, and the post-back its
// receiver gets each time the rollup changes.
func TestRollupAndPostBack(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.Clock.Freeze() // spans are what the test advances, however busy the machine
		var mu sync.Mutex
		var reports []url.Values
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			form, _ := url.ParseQuery(string(body))
			mu.Lock()
			reports = append(reports, form)
			mu.Unlock()
		}))
		defer receiver.Close()
		got := func() []url.Values {
			mu.Lock()
			defer mu.Unlock()
			return append([]url.Values(nil), reports...)
		}

		e.CreateTenant("acme", true)
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "intro", "registrationId": "reg-1",
			"learner":  map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"},
			"postBack": map[string]any{"url": receiver.URL + "/pb", "userName": "lms", "password": "pw", "resultsFormat": "ACTIVITY"}}), 204, "create")
		session := e.Launch(e.LaunchPath(regs + "/reg-1/launchLink"))
		commit := func(activity, body string) {
			t.Helper()
			st := e.Activity(session, activity)
			r, a := e.Commit(session, activity, st.Attempt, body)
			if r.Status != 200 || a.Result != "true" {
				t.Fatalf("commit %s: %d %s", activity, r.Status, r.Body)
			}
		}
		var p struct {
			RegistrationCompletion, RegistrationSuccess string
			Score                                       *struct{ Scaled float64 }
			TotalSecondsTracked                         float64
			CompletedDate                               string
		}
		progress := func() {
			t.Helper()
			p.Score = nil
			e.Do("GET", regs+"/reg-1/progress", servertest.Root, nil).JSON(t, &p)
		}

		// SCO 1 passed by its own score (85 against a mastery score of 80): the course is
		// not complete while SCO 2 is not. Time tracked is the session's as the server
		// measured it (the clock moves 20 s, then 25 s), not the content's total_time.
		e.Clock.Advance(20 * time.Second)
		commit("i1", `{"commitSequence":1,"cmi.core.lesson_status":"incomplete","cmi.core.score.raw":"85","cmi.core.score.min":"0",
			"cmi.core.score.max":"100","cmi.core.total_time":"0000:01:30","cmi.core.exit":""}`)
		progress()
		if p.RegistrationCompletion != "INCOMPLETE" || p.Score == nil || p.Score.Scaled != 85 || !servertest.Near(p.TotalSecondsTracked, 20) || p.CompletedDate != "" {
			t.Errorf("after SCO 1: %+v", p)
		}
		// SCO 2 passed with 70 (it has no mastery score): every unit complete and none failed
		// (the default status rollup), every unit passed, the score the average of the units
		// with scores.
		e.Clock.Advance(25 * time.Second)
		commit("i2", `{"commitSequence":1,"cmi.core.lesson_status":"passed","cmi.core.score.raw":"70","cmi.core.total_time":"0000:02:00"}`)
		progress()
		if p.RegistrationCompletion != "COMPLETED" || p.Score == nil || p.Score.Scaled != 77.5 || !servertest.Near(p.TotalSecondsTracked, 45) || p.CompletedDate == "" {
			t.Errorf("after SCO 2: %+v", p)
		}
		if p.RegistrationSuccess != "PASSED" {
			t.Errorf("success after two passed SCOs: %+v", p)
		}

		// The activity tree carries each SCO's own result.
		var d struct {
			ActivityDetails struct {
				Children []struct {
					ID, ActivityCompletion, ActivitySuccess string
					Score                                   *struct{ Scaled float64 }
				}
			}
		}
		e.Do("GET", regs+"/reg-1/progress/detail", servertest.Root, nil).JSON(t, &d)
		kids := d.ActivityDetails.Children
		if len(kids) != 2 || kids[0].ActivitySuccess != "PASSED" || kids[0].Score == nil || kids[0].Score.Scaled != 85 ||
			kids[1].ActivityCompletion != "COMPLETED" {
			t.Errorf("activity results: %+v", kids)
		}

		// The receiver gets the ACTIVITY report (FORM: username, password, data) after the
		// changes, the last one saying complete.
		deadline := time.Now().Add(30 * time.Second)
		for {
			rs := got()
			if n := len(rs); n > 0 && strings.Contains(rs[n-1].Get("data"), `<complete>complete</complete>`) {
				last := rs[n-1]
				if last.Get("username") != "lms" || last.Get("password") != "pw" || !strings.Contains(last.Get("data"), `<activity id="i2">`) {
					t.Errorf("post-back: %v", last)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no post-back saying complete reached the receiver: %v", rs)
			}
			time.Sleep(20 * time.Millisecond)
		}

		// (That a commit changing nothing a post-back reports queues none is rollup.Changed's
		// table test: absence cannot be waited for here without sleeping.)

		// Reset clears the progress.
		e.Expect(e.Do("DELETE", regs+"/reg-1/progress", servertest.Root, nil), 204, "reset")
		progress()
		if p.RegistrationCompletion != "UNKNOWN" || p.Score != nil || p.TotalSecondsTracked != 0 {
			t.Errorf("after reset: %+v", p)
		}
	})
}
