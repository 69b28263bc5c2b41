package engineapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/workers/convertjob"
	"github.com/lectern-lms/lectern/workers/queue"
)

// convStatement is the part of a converted statement the tests look at.
type convStatement struct {
	ID    string
	Actor struct {
		Account struct{ HomePage, Name string }
	}
	Verb   struct{ ID string }
	Object struct{ ID string }
	Result *struct {
		Success    *bool
		Completion *bool
		Response   string
		Score      *struct{ Scaled, Raw float64 }
	}
	Context struct {
		Registration      string
		ContextActivities struct {
			Grouping []struct{ ID string }
			Category []struct{ ID string }
		}
	}
}

// xregOf is a registration's xAPI registration id.
func (r *rtEnv) xregOf(regID string) string {
	r.t.Helper()
	var b struct{ ID string }
	r.e.Do("GET", r.api+"/registrations/"+regID+"/xapiRegistrationId", servertest.Root, nil).JSON(r.t, &b)
	if b.ID == "" {
		r.t.Fatalf("registration %s has no xAPI registration id", regID)
	}
	return b.ID
}

// statementsOf reads every statement of the tenant's record store for a registration's xAPI
// registration, oldest first.
func (r *rtEnv) statementsOf(regID string) []convStatement {
	r.t.Helper()
	tn := strings.TrimPrefix(r.api, "/engine/api/v1/")
	res := r.e.Do("GET", "/lrs/TCAPI/"+tn+"/statements?ascending=true&limit=500&registration="+r.xregOf(regID), servertest.Root, nil, "X-Experience-API-Version", "1.0.3")
	r.e.Expect(res, 200, "statements of "+regID)
	var page struct {
		Statements []convStatement
		More       string
	}
	res.JSON(r.t, &page)
	if page.More != "" {
		r.t.Fatalf("more than one page of statements for %s", regID)
	}
	return page.Statements
}

// verbs are the statements' verbs without their ADL prefix, in order.
func verbs(sts []convStatement) string {
	var out []string
	for _, s := range sts {
		out = append(out, strings.TrimPrefix(s.Verb.ID, "http://adlnet.gov/expapi/verbs/"))
	}
	return strings.Join(out, ",")
}

// commitEnd posts the terminating commit (Terminate / LMSFinish).
func (r *rtEnv) commitEnd(session, activity string, attempt int64, body string) {
	r.t.Helper()
	res := r.e.Do("POST", fmt.Sprintf("/player/runtime/%s/commit?activity=%s&attempt=%d&terminate=true", session, activity, attempt), servertest.NoAuth, body,
		"Content-Type", "text/plain;charset=UTF-8")
	r.e.Expect(res, 200, "terminating commit")
}

func (r *rtEnv) set(id, value string) {
	r.t.Helper()
	r.e.Expect(r.e.Do("PUT", r.api+"/configuration/"+id, servertest.Root, map[string]any{"value": value}), 204, "set "+id)
}

func (r *rtEnv) courseIRI(courseID string) string {
	r.t.Helper()
	var b struct{ ID string }
	r.e.Do("GET", r.api+"/courses/"+courseID+"/xapiActivityId", servertest.Root, nil).JSON(r.t, &b)
	return b.ID
}

// TestScormToXAPIRealtime takes a SCORM 1.2 and a SCORM 2004 course through the runtime
// endpoint with ConvertTinCanFromScormRealtime on and reads the statements the tenant's
// record store got: ADL SCORM Profile verbs, the learner's account on SystemHomepageUrl, the
// registration's xAPI registration id, the course and attempt groupings, and no duplicate
// when a commit repeats what an earlier one said.
func TestScormToXAPIRealtime(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("conv", true)
		r := newRT(t, e, "conv")
		r.set("ConvertTinCanFromScormRealtime", "true")
		r.set("SystemHomepageUrl", "https://lms.example.com")

		r.course("c12", "12")
		r.register("c12", "r12")
		s, st := r.launch("r12", "sco1")
		r.commitOK(s, "sco1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"incomplete",`+
			`"cmi.interactions.0.id":"q1","cmi.interactions.0.type":"choice","cmi.interactions.0.student_response":"b","cmi.interactions.0.result":"correct"}`)
		if got := verbs(r.statementsOf("r12")); got != "initialized,responded" {
			t.Fatalf("after the first commit: verbs %s, want initialized,responded", got)
		}
		r.commitEnd(s, "sco1", st.Attempt, `{"commitSequence":2,"cmi.core.lesson_status":"passed","cmi.core.score.raw":"90",`+
			`"cmi.core.session_time":"0000:01:30","cmi.interactions.0.id":"q1","cmi.interactions.0.type":"choice",`+
			`"cmi.interactions.0.student_response":"b","cmi.interactions.0.result":"correct"}`)
		sts := r.statementsOf("r12")
		if got := verbs(sts); got != "initialized,responded,scored,passed,terminated" {
			t.Fatalf("SCORM 1.2 verbs %s", got)
		}
		iri, xreg := r.courseIRI("c12"), r.xregOf("r12")
		ids := map[string]bool{}
		for _, s := range sts {
			if ids[s.ID] {
				t.Fatalf("statement %s stored twice", s.ID)
			}
			ids[s.ID] = true
			if s.Actor.Account.HomePage != "https://lms.example.com" || s.Actor.Account.Name != "ann" {
				t.Errorf("actor %+v, want the account ann on SystemHomepageUrl", s.Actor.Account)
			}
			if s.Context.Registration != xreg {
				t.Errorf("context.registration %s, want %s", s.Context.Registration, xreg)
			}
			ca := s.Context.ContextActivities
			if len(ca.Grouping) != 2 || ca.Grouping[0].ID != iri || !strings.HasPrefix(ca.Grouping[1].ID, iri+"/sco1?attemptId=") ||
				len(ca.Category) != 1 || ca.Category[0].ID != "https://w3id.org/xapi/scorm" {
				t.Errorf("context activities %+v (course %s)", ca, iri)
			}
		}
		if sts[1].Object.ID != iri+"/sco1/interactions/q1" || sts[1].Result.Response != "b" || !*sts[1].Result.Success {
			t.Errorf("responded statement %+v", sts[1])
		}
		if sts[0].Object.ID != iri+"/sco1" || sts[3].Result.Score == nil || sts[3].Result.Score.Raw != 90 || sts[3].Result.Score.Scaled != 0.9 {
			t.Errorf("passed statement %+v", sts[3])
		}

		r.course("c04", "2004")
		r.register("c04", "r04")
		s, st = r.launch("r04", "one")
		r.commitEnd(s, "one", st.Attempt, `{"commitSequence":1,"cmi.completion_status":"completed","cmi.success_status":"failed",`+
			`"cmi.score.scaled":"0.5","cmi.exit":"suspend","cmi.session_time":"PT2M"}`)
		if got := verbs(r.statementsOf("r04")); got != "initialized,scored,completed,failed,suspended,terminated" {
			t.Fatalf("SCORM 2004 verbs %s", got)
		}
		// The next load continues the suspended attempt: resumed, and a new attempt activity.
		s, st = r.launch("r04", "one")
		r.commitOK(s, "one", st.Attempt, `{"commitSequence":1,"cmi.exit":"","cmi.success_status":"passed","cmi.score.scaled":"0.9"}`)
		r.commitOK(s, "one", st.Attempt, `{"commitSequence":2,"cmi.exit":"","cmi.success_status":"passed","cmi.score.scaled":"0.9"}`)
		sts = r.statementsOf("r04")
		if got := verbs(sts[6:]); got != "initialized,resumed,scored,completed,passed" {
			t.Fatalf("SCORM 2004 verbs of the resumed load %s", got)
		}
		if sts[6].Context.ContextActivities.Grouping[1].ID == sts[0].Context.ContextActivities.Grouping[1].ID {
			t.Error("the second load has the first load's attempt activity")
		}
		// The setting cascades: a course that switches it off gets no statements.
		r.e.Expect(r.e.Do("PUT", r.api+"/courses/c04/configuration/ConvertTinCanFromScormRealtime", servertest.Root, map[string]any{"value": "false"}), 204, "course off")
		r.register("c04", "quiet")
		s, st = r.launch("quiet", "one")
		r.commitEnd(s, "one", st.Attempt, `{"commitSequence":1,"cmi.completion_status":"completed"}`)
		if n := len(r.statementsOf("quiet")); n != 0 {
			t.Fatalf("%d statements for a course with the conversion off", n)
		}
	})
}

// TestScormToXAPIHistorical converts stored run-time data with the job
// ConvertTinCanFromScormHistorical queues, and shows that it is idempotent: a rerun, or a
// run over loads the realtime path converted, adds nothing.
func TestScormToXAPIHistorical(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("hist", true)
		r := newRT(t, e, "hist")
		r.course("c12", "12")
		r.register("c12", "old")
		s, st := r.launch("old", "sco1")
		r.commitEnd(s, "sco1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"completed","cmi.core.score.raw":"70"}`)
		r.course("c04", "2004")
		r.register("c04", "live")
		if n := len(r.statementsOf("old")); n != 0 {
			t.Fatalf("%d statements before any conversion", n)
		}
		// A registration converted in real time.
		r.set("ConvertTinCanFromScormRealtime", "true")
		s, st = r.launch("live", "two")
		r.commitEnd(s, "two", st.Attempt, `{"commitSequence":1,"cmi.completion_status":"completed"}`)
		live := r.statementsOf("live")
		if verbs(live) != "initialized,completed,terminated" {
			t.Fatalf("realtime verbs %s", verbs(live))
		}

		r.set("ConvertTinCanFromScormHistorical", "true")
		servertest.Eventually(t, 20*time.Second, "the historical job's statements", func() bool { return len(r.statementsOf("old")) == 4 })
		if got := verbs(r.statementsOf("old")); got != "initialized,scored,completed,terminated" {
			t.Fatalf("historical verbs %s", got)
		}
		// Run the job again, to its end, through the handler the queue runs.
		h := convertjob.Handler(e.App.Learner)
		for i := 0; i < 2; i++ {
			if err := h.ProcessTask(context.Background(), queue.NewTask(convertjob.TypeConvertHistorical, mustJSON(t, convertjob.Payload{Tenant: "hist"}))); err != nil {
				t.Fatal(err)
			}
		}
		if got := verbs(r.statementsOf("old")); got != "initialized,scored,completed,terminated" {
			t.Fatalf("after reruns: verbs %s", got)
		}
		if got := r.statementsOf("live"); !slices.EqualFunc(got, live, func(a, b convStatement) bool { return a.ID == b.ID }) {
			t.Fatalf("the job changed the realtime statements: %s, was %s", verbs(got), verbs(live))
		}
		// A bad payload is dropped for good.
		if err := h.ProcessTask(context.Background(), queue.NewTask(convertjob.TypeConvertHistorical, []byte("{}"))); err == nil {
			t.Fatal("a payload without tenant was accepted")
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
