package player_test

import (
	"encoding/xml"
	"net/url"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/coursetest"
)

// manifestSkipped is a course whose rollup the CMI data cannot decide: s2 is always skipped
// (a pre-condition rule) and counts for its parent's rollup only when it is not skipped
// (adlseq rollupConsiderations ifNotSkipped), so once s1 is completed and passed the
// sequencer rolls the organization up COMPLETED and PASSED, while a rollup of the CMI data
// (which knows nothing of skipping) waited for s2 and said INCOMPLETE and UNKNOWN.
const manifestSkipped = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="skipped" version="1" ` + coursetest.NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Skipped</title>
    <item identifier="s1" identifierref="r1" parameters="?s1"><title>One</title></item>
    <item identifier="s2" identifierref="r1" parameters="?s2"><title>Two</title>
      <imsss:sequencing>
        <imsss:sequencingRules><imsss:preConditionRule><imsss:ruleConditions>
          <imsss:ruleCondition condition="always"/></imsss:ruleConditions><imsss:ruleAction action="skip"/>
        </imsss:preConditionRule></imsss:sequencingRules>
        <adlseq:rollupConsiderations requiredForSatisfied="ifNotSkipped" requiredForNotSatisfied="ifNotSkipped"
          requiredForCompleted="ifNotSkipped" requiredForIncomplete="ifNotSkipped"/>
      </imsss:sequencing>
    </item>
    <imsss:sequencing><imsss:controlMode choice="true" flow="true"/></imsss:sequencing>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`

// TestReportsFollowSequencer: where the sequencer's rollup and a rollup of the CMI data
// disagree (a skipped child excluded by ifNotSkipped), the registration's progress, the root
// of progress/detail's activity tree and the ACTIVITY post-back all report the sequencer's
// COMPLETED and PASSED (issue 24, one SN rollup).
func TestReportsFollowSequencer(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		rc := servertest.NewPostReceiver(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "skipped", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestSkipped, "sco.html": "<html>sco</html>"}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "skipped", "registrationId": "r1",
			"learner":  map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"},
			"postBack": map[string]any{"url": rc.URL("/pb"), "userName": "lms", "password": "pw", "resultsFormat": "ACTIVITY"}}), 204, "create r1")

		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		if n := playerNav(e, session); n.Deliver != "s1" {
			t.Fatalf("launch delivers %q", n.Deliver)
		}
		// continue skips s2 and flows past the end of the course: the session ends.
		if n := seqCommit(e, session, "s1", `{"commitSequence":1,"cmi.completion_status":"completed","cmi.success_status":"passed","cmi.score.scaled":"0.9","adl.nav.request":"continue"}`); !n.SessionEnded {
			t.Fatalf("continue after s1: %+v", n)
		}

		var p struct {
			RegistrationCompletion string
			RegistrationSuccess    string
			Score                  *struct{ Scaled float64 }
		}
		e.Do("GET", regs+"/r1/progress", servertest.Root, nil).JSON(t, &p)
		if p.RegistrationCompletion != "COMPLETED" || p.RegistrationSuccess != "PASSED" {
			t.Errorf("progress: %s/%s, want COMPLETED/PASSED (the sequencer's)", p.RegistrationCompletion, p.RegistrationSuccess)
		}
		if p.Score == nil || p.Score.Scaled != 45 {
			// RB.1.1: s2 is tracked, so its weight counts though its measure is unknown.
			t.Errorf("progress score: %+v, want 45 (the root's measure rolled up from s1 and s2)", p.Score)
		}
		var d struct {
			ActivityDetails struct {
				ActivityCompletion, ActivitySuccess string
				Children                            []struct {
					ID                                  string
					ActivityCompletion, ActivitySuccess string
				}
			}
		}
		r := e.Do("GET", regs+"/r1/progress/detail", servertest.Root, nil)
		e.Expect(r, 200, "progress/detail")
		r.JSON(t, &d)
		root := d.ActivityDetails
		if root.ActivityCompletion != "COMPLETED" || root.ActivitySuccess != "PASSED" {
			t.Errorf("progress/detail root: %s/%s, want COMPLETED/PASSED", root.ActivityCompletion, root.ActivitySuccess)
		}
		for _, c := range root.Children {
			want := map[string]string{"s1": "COMPLETED/PASSED", "s2": "UNKNOWN/UNKNOWN"}[c.ID]
			if got := c.ActivityCompletion + "/" + c.ActivitySuccess; got != want {
				t.Errorf("progress/detail %s: %s, want %s", c.ID, got, want)
			}
		}
		got := rc.At("/pb")
		if len(got) == 0 {
			t.Fatal("no post-back")
		}
		form, _ := url.ParseQuery(string(got[len(got)-1].Body))
		report := form.Get("data")
		root1, _, _ := strings.Cut(report, "<children>")
		if !strings.Contains(root1, "<complete>complete</complete>") || !strings.Contains(root1, "<success>passed</success>") {
			t.Errorf("the last post-back's root is not complete and passed:\n%s", report)
		}
	})
}

// TestFullPostBackShowsSuspend: a suspendAll changes nothing of the registration's summary
// (the course stays INCOMPLETE) but the FULL report's tree (the delivered SCO and its
// ancestors are suspended): the report is posted again, so the LMS's last FULL report shows
// the suspension the sequencer holds, as progress/detail does (issue 24).
func TestFullPostBackShowsSuspend(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		rc := servertest.NewPostReceiver(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "seq", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestSeq, "sco.html": "<html>sco</html>"}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "seq", "registrationId": "r1",
			"learner":  map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"},
			"postBack": map[string]any{"url": rc.URL("/pb"), "authType": "HTTPBASIC", "resultsFormat": "FULL"}}), 204, "create r1")
		// A frozen clock: measured time, which grows with every request and is a change to
		// post of its own, cannot carry the suspension's report.
		e.Clock.Freeze()
		session := e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		if n := playerNav(e, session); n.Deliver != "a" {
			t.Fatalf("launch delivers %q", n.Deliver)
		}
		seqCommit(e, session, "a", `{"commitSequence":1,"cmi.completion_status":"incomplete","cmi.location":"p3"}`)
		progress := func() string {
			var p struct{ RegistrationCompletion, RegistrationSuccess string }
			e.Do("GET", regs+"/r1/progress", servertest.Root, nil).JSON(t, &p)
			return p.RegistrationCompletion + "/" + p.RegistrationSuccess
		}
		before := progress()
		if n := seqCommit(e, session, "a", `{"commitSequence":2,"cmi.exit":"suspend","adl.nav.request":"suspendAll"}`); !n.SessionEnded {
			t.Fatalf("suspendAll: %+v", n)
		}
		if after := progress(); after != before {
			t.Fatalf("the summary moved (%s → %s): the test needs a change below the root only", before, after)
		}
		got := rc.At("/pb")
		if len(got) == 0 {
			t.Fatal("no post-back")
		}
		var rep struct {
			Activity struct {
				ID        string `xml:"id,attr"`
				Suspended bool   `xml:"suspended"`
				Children  []struct {
					ID        string `xml:"id,attr"`
					Suspended bool   `xml:"suspended"`
				} `xml:"children>activity"`
			} `xml:"activity"`
		}
		last := got[len(got)-1].Body
		if err := xml.Unmarshal(last, &rep); err != nil {
			t.Fatalf("post-back: %v\n%s", err, last)
		}
		suspended := map[string]bool{rep.Activity.ID: rep.Activity.Suspended}
		for _, c := range rep.Activity.Children {
			suspended[c.ID] = c.Suspended
		}
		if !suspended["o"] || !suspended["a"] || suspended["m"] {
			t.Errorf("the last FULL post-back's suspension: %v, want o and a suspended, m not\n%s", suspended, last)
		}
	})
}
