package player_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/coursetest"
)

// manifestSeq is a SCORM 2004 course the sequencer drives: a (a SCO the organization's
// choice and flow reach), cluster m of b and c (flow, forwardOnly, no choice), and d, which
// a pre-condition rule always disables.
const manifestSeq = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="seq" version="1" ` + coursetest.NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Sequenced</title>
    <item identifier="a" identifierref="r1" parameters="?a"><title>A</title></item>
    <item identifier="m"><title>Module</title>
      <item identifier="b" identifierref="r1" parameters="?b"><title>B</title></item>
      <item identifier="c" identifierref="r1" parameters="?c"><title>C</title></item>
      <imsss:sequencing><imsss:controlMode choice="false" flow="true" forwardOnly="true"/></imsss:sequencing>
    </item>
    <item identifier="d" identifierref="r1" parameters="?d"><title>D</title>
      <imsss:sequencing><imsss:sequencingRules><imsss:preConditionRule><imsss:ruleConditions>
        <imsss:ruleCondition condition="always"/></imsss:ruleConditions><imsss:ruleAction action="disabled"/>
      </imsss:preConditionRule></imsss:sequencingRules></imsss:sequencing>
    </item>
    <imsss:sequencing><imsss:controlMode choice="true" flow="true"/></imsss:sequencing>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`

// navAnswer is the navigate endpoint's answer (learner.NavState).
type navAnswer struct {
	Deliver      string
	SessionEnded bool
	Current      string
	Exception    string
	Message      string
	TOC          []struct {
		ID               string
		Visible, Enabled bool
	}
	Valid struct {
		Continue, Previous bool
		Choice, Jump       map[string]bool
	}
}

// enabled lists the table of contents' enabled entries.
func (n navAnswer) enabled() string {
	var out []string
	for _, e := range n.TOC {
		if e.Enabled {
			out = append(out, e.ID)
		}
	}
	return strings.Join(out, ",")
}

var cfgRE = regexp.MustCompile(`(?s)<script id="cfg" type="application/json">(.*?)</script>`)

// playerNav opens the player page of a session and returns the sequencer's view it carries.
func playerNav(e *servertest.Env, session string) navAnswer {
	e.T.Helper()
	r := e.Get("/player/session/" + session)
	e.Expect(r, 200, "player page")
	m := cfgRE.FindSubmatch(r.Body)
	if m == nil {
		e.T.Fatalf("player page without its configuration: %s", r.Body)
	}
	var cfg struct {
		Start string
		Nav   *navAnswer
	}
	if err := json.Unmarshal(m[1], &cfg); err != nil || cfg.Nav == nil {
		e.T.Fatalf("player configuration %s: %v", m[1], err)
	}
	if cfg.Start != cfg.Nav.Deliver {
		e.T.Errorf("start %q, the sequencer delivers %q", cfg.Start, cfg.Nav.Deliver)
	}
	return *cfg.Nav
}

func navigate(e *servertest.Env, session, query string) (servertest.Resp, navAnswer) {
	e.T.Helper()
	r := e.Do("POST", "/player/runtime/"+session+"/navigate?"+query, servertest.NoAuth, nil)
	var n navAnswer
	if r.Status == 200 {
		r.JSON(e.T, &n)
	}
	return r, n
}

// seqCommit posts a SCO's terminating commit and returns the sequencer's answer (empty when
// the commit changed nothing the sequencer tracks).
func seqCommit(e *servertest.Env, session, activity, body string) navAnswer {
	e.T.Helper()
	st := e.Activity(session, activity)
	r := e.Do("POST", fmt.Sprintf("/player/runtime/%s/commit?activity=%s&attempt=%d&terminate=true", session, activity, st.Attempt),
		servertest.NoAuth, body, "Content-Type", "text/plain;charset=UTF-8")
	var a struct {
		Result string
		Nav    *navAnswer
	}
	r.JSON(e.T, &a)
	if r.Status != 200 || a.Result != "true" {
		e.T.Fatalf("commit %s: %d %s", activity, r.Status, r.Body)
	}
	if a.Nav == nil {
		// The commit changed nothing the sequencer tracks: the player's view stands.
		return navAnswer{}
	}
	return *a.Nav
}

func TestSequencingNavigate(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "seq", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestSeq, "sco.html": "<html>sco</html>"}), "")
		e.ImportOK("acme", "b12", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest12, "sco/index.html": servertest.Sco12}), "")
		regs := "/engine/api/v1/acme/registrations"
		for id, c := range map[string]string{"r1": "seq", "r12": "b12"} {
			e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": c, "registrationId": id,
				"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create "+id)
		}
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))

		// The launch starts the course: a is delivered; b and c cannot be chosen (their
		// cluster has choice=false), d is disabled; previous goes nowhere from the first SCO.
		n := playerNav(e, session)
		if n.Deliver != "a" || n.Current != "a" || n.enabled() != "o,a,m" || !n.Valid.Continue || n.Valid.Previous ||
			n.Valid.Choice["b"] || n.Valid.Choice["d"] || !n.Valid.Choice["m"] {
			t.Fatalf("launch: %+v", n)
		}
		// The activity load carries the same view, for adl.nav.request_valid.
		var st struct{ Nav *navAnswer }
		e.Get("/player/runtime/"+session+"/activity?activity=a").JSON(t, &st)
		if st.Nav == nil || !st.Nav.Valid.Continue || st.Nav.Current != "a" {
			t.Fatalf("activity load: %+v", st.Nav)
		}

		// The SCO's pending adl.nav.request=continue is processed at Terminate: b.
		n = seqCommit(e, session, "a", `{"commitSequence":1,"cmi.completion_status":"completed","cmi.success_status":"passed","cmi.score.scaled":"0.8","adl.nav.request":"continue"}`)
		if n.Deliver != "b" || n.Current != "b" || n.Exception != "" {
			t.Fatalf("continue from a's Terminate: %+v", n)
		}
		// m is forwardOnly: no previous from b; nothing changes.
		r, n := navigate(e, session, "request=previous")
		if r.Status != 200 || n.Deliver != "" || n.Exception == "" || n.Message == "" || n.Current != "b" {
			t.Fatalf("previous inside a forwardOnly cluster: %d %s", r.Status, r.Body)
		}
		// Next (continue) from b flows to c.
		if r, n = navigate(e, session, "request=continue"); r.Status != 200 || n.Deliver != "c" || n.Valid.Previous {
			t.Fatalf("continue from b: %d %s", r.Status, r.Body)
		}
		// Choosing b (choice=false in m) or d (disabled) is refused by the sequencer.
		for _, target := range []string{"b", "d"} {
			if r, n = navigate(e, session, "request=choice&target="+target); r.Status != 200 || n.Deliver != "" || n.Exception == "" {
				t.Fatalf("choice %s: %d %s", target, r.Status, r.Body)
			}
		}
		// Choosing a is allowed: the organization allows choice.
		if r, n = navigate(e, session, "request=choice&target=a"); r.Status != 200 || n.Deliver != "a" {
			t.Fatalf("choice a: %d %s", r.Status, r.Body)
		}

		// The state is the registration's: a new launch goes on with the current activity.
		again := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		if n = playerNav(e, again); n.Deliver != "a" {
			t.Fatalf("relaunch: %+v", n)
		}
		// suspendAll ends the session; the next launch resumes the suspended activity.
		if r, n = navigate(e, again, "request=suspendAll"); r.Status != 200 || !n.SessionEnded {
			t.Fatalf("suspendAll: %d %s", r.Status, r.Body)
		}
		third := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		if n = playerNav(e, third); n.Deliver != "a" {
			t.Fatalf("launch after suspendAll: %+v", n)
		}

		// Bad input is a 400 naming the problem.
		for q, want := range map[string]string{
			"request=next":                  "request must be one of",
			"":                              "request must be one of",
			"request=choice":                "needs query parameter target",
			"request=choice&target=nowhere": "'nowhere' is not an activity",
			"request=jump&target=nowhere":   "'nowhere' is not an activity",
			"request=continue&target=b":     "only for choice and jump",
		} {
			r, _ := navigate(e, third, q)
			e.Expect(r, 400, "navigate "+q)
			if !strings.Contains(r.Message(), want) {
				t.Errorf("navigate %q: %q, want it to say %q", q, r.Message(), want)
			}
		}
		r, _ = navigate(e, "not-a-session", "request=continue")
		e.Expect(r, 403, "navigate without a session")
		// SCORM 1.2 is not sequenced.
		r, _ = navigate(e, e.Launch(e.LaunchPath(regs+"/r12/launchLink")), "request=continue")
		e.Expect(r, 400, "navigate a SCORM 1.2 course")

		// A preview is sequenced too, in memory: it starts afresh and tracks nothing.
		pv := e.Launch(e.LaunchPath("/engine/api/v1/acme/courses/seq/preview"))
		if n = playerNav(e, pv); n.Deliver != "a" {
			t.Fatalf("preview launch: %+v", n)
		}
		if r, n = navigate(e, pv, "request=continue"); r.Status != 200 || n.Deliver != "b" {
			t.Fatalf("preview continue: %d %s", r.Status, r.Body)
		}
	})
}

// ADL's SX-02 (choice off, flow, exit and post-condition rules, a rollup rule, completion
// thresholds) taken through the player's HTTP endpoints as its script says: each SCO is
// delivered in turn, sees the request_valid answers the script checks, commits what the script
// sets and terminates; the tester's Continue is the navigate endpoint, and Exit at the end
// (exitAll) ends the session.
func TestSequencingADLSX02(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "sx02", adlPackage(t, "LMSTestPackage_SX-02"), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "sx02", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		steps := []struct {
			act string
			// valid are the request_valid answers the script checks: continue, previous,
			// and choice of target (when set).
			cont, prev    bool
			target        string
			choice        bool
			commit, after string
		}{
			{act: "activity_1", cont: true, prev: false, target: "activity_3", choice: false,
				commit: `"cmi.exit":"normal"`, after: "continue"},
			{act: "activity_3", cont: true, prev: true, target: "activity_5", choice: false,
				commit: `"cmi.completion_status":"incomplete","cmi.progress_measure":"0.5","cmi.exit":"normal"`, after: "continue"},
			{act: "activity_4", cont: true, prev: true, commit: `"cmi.success_status":"failed","cmi.exit":"normal"`, after: "continue"},
			{act: "activity_5", cont: true, prev: true, commit: `"cmi.progress_measure":"0.9","cmi.exit":"normal"`, after: "continue"},
			{act: "activity_1", cont: true, prev: false, commit: `"cmi.exit":"normal"`, after: "exitAll"},
		}
		n := playerNav(e, session)
		for i, s := range steps {
			if n.Deliver != s.act {
				t.Fatalf("step %d: delivered %q (%s %s), want %s", i, n.Deliver, n.Exception, n.Message, s.act)
			}
			var st struct{ Nav *navAnswer }
			e.Get("/player/runtime/"+session+"/activity?activity="+s.act).JSON(t, &st)
			if v := st.Nav.Valid; v.Continue != s.cont || v.Previous != s.prev || (s.target != "" && v.Choice[s.target] != s.choice) {
				t.Errorf("step %d (%s): request_valid %+v, want continue %v previous %v choice %s %v", i, s.act, v, s.cont, s.prev, s.target, s.choice)
			}
			seqCommit(e, session, s.act, `{"commitSequence":1,`+s.commit+`}`)
			var r servertest.Resp
			if r, n = navigate(e, session, "request="+s.after); r.Status != 200 {
				t.Fatalf("step %d: %s: %d %s", i, s.after, r.Status, r.Body)
			}
		}
		if !n.SessionEnded {
			t.Errorf("exitAll at the end: %+v", n)
		}
	})
}

// manifestShared is a SCORM 2004 course whose two SCOs share global objective g: s1 writes
// its primary objective's satisfaction and measure to it, s2's primary objective reads them.
const manifestShared = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="shared" version="1" ` + coursetest.NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Shared</title>
    <item identifier="s1" identifierref="r1" parameters="?s1"><title>One</title>
      <imsss:sequencing><imsss:objectives><imsss:primaryObjective objectiveID="obj1">
        <imsss:mapInfo targetObjectiveID="g" readSatisfiedStatus="false" writeSatisfiedStatus="true" writeNormalizedMeasure="true"/>
      </imsss:primaryObjective></imsss:objectives></imsss:sequencing>
    </item>
    <item identifier="s2" identifierref="r1" parameters="?s2"><title>Two</title>
      <imsss:sequencing><imsss:objectives><imsss:primaryObjective objectiveID="obj2">
        <imsss:mapInfo targetObjectiveID="g" readSatisfiedStatus="true" readNormalizedMeasure="true"/>
      </imsss:primaryObjective></imsss:objectives></imsss:sequencing>
    </item>
    <imsss:sequencing><imsss:controlMode choice="true" flow="true"/></imsss:sequencing>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`

// TestSequencingStateReported: progress, the registration list and progress/detail (the tree
// the ACTIVITY and FULL post-backs write) show what the sequencer holds: the global objective
// s1 wrote, the attempts it counted, and s2's objective satisfied through the global one
// before s2's content said anything.
func TestSequencingStateReported(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "shared", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestShared, "sco.html": "<html>sco</html>"}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "shared", "registrationId": "r1",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create r1")
		globals := regexp.MustCompile(`"globalObjectives":\[[^\]]*\]`)
		progress := func(path string) string {
			r := e.Do("GET", regs+path, servertest.Root, nil)
			e.Expect(r, 200, path)
			return string(globals.Find(r.Body))
		}
		if got := progress("/r1/progress"); got != `"globalObjectives":[]` {
			t.Fatalf("before a launch: %s", got)
		}

		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		if n := playerNav(e, session); n.Deliver != "s1" {
			t.Fatalf("launch delivers %q", n.Deliver)
		}
		if n := seqCommit(e, session, "s1", `{"commitSequence":1,"cmi.completion_status":"completed","cmi.success_status":"passed","cmi.score.scaled":"0.8","adl.nav.request":"continue"}`); n.Deliver != "s2" {
			t.Fatalf("continue delivers %+v", n)
		}

		want := `"globalObjectives":[{"id":"g","primary":false,"score":{"scaled":80},"objectiveCompletion":"UNKNOWN","objectiveSuccess":"PASSED"}]`
		if got := progress("/r1/progress"); got != want {
			t.Errorf("progress:\n got %s\nwant %s", got, want)
		}
		if got := progress("?courseId=shared"); got != want {
			t.Errorf("registration list:\n got %s\nwant %s", got, want)
		}
		r := e.Do("GET", regs+"/r1/progress/detail", servertest.Root, nil)
		e.Expect(r, 200, "progress/detail")
		var d struct{ ActivityDetails registrationActivity }
		r.JSON(t, &d)
		o, s1, s2 := d.ActivityDetails, d.ActivityDetails.child("s1"), d.ActivityDetails.child("s2")
		if o.Attempts != 1 || s1.Attempts != 1 || s2.Attempts != 1 {
			t.Errorf("attempts: organization %d, s1 %d, s2 %d; want 1 each", o.Attempts, s1.Attempts, s2.Attempts)
		}
		if got := s2.objective("obj2"); got != "obj2 PASSED 80" {
			t.Errorf("s2's objective, read through g: %s", got)
		}
		if got := s1.objective("obj1"); got != "obj1 PASSED 80" {
			t.Errorf("s1's objective: %s", got)
		}
	})
}

// registrationActivity is the part of progress/detail's activity tree the sequencing test
// reads.
type registrationActivity struct {
	ID         string
	Attempts   int
	Suspended  bool
	Children   []registrationActivity
	Objectives []struct {
		ID               string
		Primary          bool
		ObjectiveSuccess string
		Score            *struct{ Scaled float64 }
	}
}

func (a registrationActivity) child(id string) registrationActivity {
	for _, c := range a.Children {
		if c.ID == id {
			return c
		}
	}
	return registrationActivity{}
}

// objective writes an objective as "id success score" ("-" without a score), "missing" when
// the activity has no objective id.
func (a registrationActivity) objective(id string) string {
	for _, o := range a.Objectives {
		if o.ID == id {
			score := "-"
			if o.Score != nil {
				score = fmt.Sprint(o.Score.Scaled)
			}
			return fmt.Sprintf("%s %s %s", o.ID, o.ObjectiveSuccess, score)
		}
	}
	return "missing"
}
