package player_test

import (
	"regexp"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/coursetest"
)

// manifestReader is a SCORM 2004 course whose one SCO reads global objective g; toSystem
// is its organization's adlseq:objectivesGlobalToSystem attribute ("" leaves the default).
func manifestReader(toSystem string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="reader" version="1" ` + coursetest.NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="o"><organization identifier="o" ` + toSystem + `><title>Reader</title>
    <item identifier="s" identifierref="r1"><title>S</title>
      <imsss:sequencing><imsss:objectives><imsss:primaryObjective objectiveID="obj">
        <imsss:mapInfo targetObjectiveID="g"/>
      </imsss:primaryObjective></imsss:objectives></imsss:sequencing>
    </item>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`
}

// TestGlobalObjectivesAcrossCourses: a global objective one course writes is the learner's
// (objectivesGlobalToSystem, true by default): another course of the same learner that maps
// the same id reads it, while a course that says objectivesGlobalToSystem="false" and
// another learner's registration do not (ADL SX-11c reads what SX-11a wrote).
func TestGlobalObjectivesAcrossCourses(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		sco := "<html>sco</html>"
		e.ImportOK("acme", "shared", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestShared, "sco.html": sco}), "")
		e.ImportOK("acme", "reader", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestReader(""), "sco.html": sco}), "")
		e.ImportOK("acme", "private", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestReader(`adlseq:objectivesGlobalToSystem="false"`), "sco.html": sco}), "")
		regs := "/engine/api/v1/acme/registrations"
		register := func(id, courseID, learner string) string {
			e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": courseID, "registrationId": id,
				"learner": map[string]any{"id": learner, "firstName": "A", "lastName": "B"}}), 204, "create "+id)
			return e.Launch(e.LaunchPath(regs + "/" + id + "/launchLink"))
		}
		globals := regexp.MustCompile(`"globalObjectives":\[[^\]]*\]`)
		progress := func(id string) string {
			r := e.Do("GET", regs+"/"+id+"/progress", servertest.Root, nil)
			e.Expect(r, 200, id+" progress")
			return string(globals.Find(r.Body))
		}

		session := register("w", "shared", "ann")
		if n := playerNav(e, session); n.Deliver != "s1" {
			t.Fatalf("the writer delivers %q", n.Deliver)
		}
		seqCommit(e, session, "s1", `{"commitSequence":1,"cmi.completion_status":"completed","cmi.success_status":"passed","cmi.score.scaled":"0.8","adl.nav.request":"exitAll"}`)

		shared := `"globalObjectives":[{"id":"g","primary":false,"score":{"scaled":80},"objectiveCompletion":"UNKNOWN","objectiveSuccess":"PASSED"}]`
		for _, tc := range []struct{ reg, course, learner, want string }{
			{"r-ann", "reader", "ann", shared},
			{"p-ann", "private", "ann", `"globalObjectives":[]`},
			{"r-bob", "reader", "bob", `"globalObjectives":[]`},
		} {
			if n := playerNav(e, register(tc.reg, tc.course, tc.learner)); n.Deliver != "s" {
				t.Fatalf("%s delivers %q", tc.reg, n.Deliver)
			}
			if got := progress(tc.reg); got != tc.want {
				t.Errorf("%s (%s, %s):\n got %s\nwant %s", tc.reg, tc.course, tc.learner, got, tc.want)
			}
		}
	})
}
