package rollup_test

import (
	"testing"

	"github.com/lectern-lms/lectern/course/cmi5"
	"github.com/lectern-lms/lectern/course/coursetest"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/course/scorm"
)

func fp(v float64) *float64 { return &v }

// rulesManifest is a SCORM 2004 4th edition course whose organization satisfies when any
// tracked child is satisfied and completes when at least two children are completed; the
// survey does not count towards satisfaction, and the quiz is satisfied by measure.
const rulesManifest = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="com.example.rules" version="1" ` + coursetest.NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="org">
    <organization identifier="org">
      <title>Rules</title>
      <item identifier="lesson" identifierref="r1"><title>Lesson</title></item>
      <item identifier="quiz" identifierref="r2"><title>Quiz</title>
        <imsss:sequencing>
          <imsss:objectives>
            <imsss:primaryObjective objectiveID="quiz-obj" satisfiedByMeasure="true">
              <imsss:minNormalizedMeasure>0.6</imsss:minNormalizedMeasure>
            </imsss:primaryObjective>
          </imsss:objectives>
        </imsss:sequencing>
      </item>
      <item identifier="survey" identifierref="r3"><title>Survey</title>
        <imsss:sequencing>
          <imsss:rollupRules rollupObjectiveSatisfied="false"/>
        </imsss:sequencing>
      </item>
      <imsss:sequencing>
        <imsss:rollupRules>
          <imsss:rollupRule childActivitySet="any">
            <imsss:rollupConditions><imsss:rollupCondition condition="satisfied"/></imsss:rollupConditions>
            <imsss:rollupAction action="satisfied"/>
          </imsss:rollupRule>
          <imsss:rollupRule childActivitySet="atLeastCount" minimumCount="2">
            <imsss:rollupConditions><imsss:rollupCondition condition="completed"/></imsss:rollupConditions>
            <imsss:rollupAction action="completed"/>
          </imsss:rollupRule>
        </imsss:rollupRules>
      </imsss:sequencing>
    </organization>
  </organizations>
  <resources>
    <resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="lesson.html"><file href="lesson.html"/></resource>
    <resource identifier="r2" type="webcontent" adlcp:scormType="sco" href="quiz.html"><file href="quiz.html"/></resource>
    <resource identifier="r3" type="webcontent" adlcp:scormType="sco" href="survey.html"><file href="survey.html"/></resource>
  </resources>
</manifest>`

// TestRollupOfParsedManifest runs the rollup on what the SCORM parser makes of a manifest,
// so the rule vocabulary the parser records is the one the rollup evaluates.
func TestRollupOfParsedManifest(t *testing.T) {
	pkg, err := scorm.Parse(coursetest.SCORMFS(rulesManifest, "lesson.html", "quiz.html", "survey.html"))
	if err != nil {
		t.Fatal(err)
	}
	in := func(st rollup.State) rollup.Result {
		return rollup.Compute(rollup.Input{Package: pkg, State: st, Settings: rollup.DefaultSettings(), ForCredit: true})
	}
	// Only the survey passed: it does not count, so nothing is satisfied yet.
	r := in(rollup.State{"survey": {CompletionStatus: "completed", SuccessStatus: "passed"}})
	if r.Success != registration.Unknown || r.Completion != registration.Incomplete {
		t.Fatalf("survey only: %s/%s", r.Completion, r.Success)
	}
	// The quiz scores 0.65 ≥ 0.6 although the content says failed: satisfied by measure,
	// and "any satisfied" satisfies the course; two completed children complete it.
	r = in(rollup.State{"survey": {CompletionStatus: "completed"}, "quiz": {CompletionStatus: "completed", SuccessStatus: "failed", ScoreScaled: fp(0.65)}})
	if r.Success != registration.Passed || r.Completion != registration.Completed {
		t.Fatalf("quiz passed by measure: %s/%s", r.Completion, r.Success)
	}
	if r.Activities["quiz"].Success != registration.Passed {
		t.Fatalf("quiz %s", r.Activities["quiz"].Success)
	}
}

// TestStatementsOfParsedCMI5 evaluates moveOn over the cmi5 parser's tree of nested blocks.
func TestStatementsOfParsedCMI5(t *testing.T) {
	pkg, err := cmi5.Parse(coursetest.FS("cmi5_nested"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]rollup.Verbs{
		"https://example.com/au/m1-lesson": {Completed: true},
		"https://example.com/au/m1-quiz":   {Completed: true, Passed: true, Scaled: fp(0.9)},
		"https://example.com/au/hosted":    {Passed: true},
	}
	r := rollup.Statements(pkg, seen)
	if r.Completion != registration.Incomplete {
		t.Fatalf("exam (moveOn Passed) not passed yet: %s", r.Completion)
	}
	seen["https://example.com/au/m1-exam"] = rollup.Verbs{Passed: true, Scaled: fp(1)}
	r = rollup.Statements(pkg, seen)
	if r.Completion != registration.Completed || r.Success != registration.Passed || len(r.Satisfied) != 3 {
		t.Fatalf("all moved on: %s/%s satisfied %v", r.Completion, r.Success, r.Satisfied)
	}
	want := []string{"https://example.com/block/module-1/quizzes", "https://example.com/block/module-1", "https://example.com/courses/safety"}
	for i, id := range want {
		if r.Satisfied[i] != id {
			t.Fatalf("satisfied %v, want %v", r.Satisfied, want)
		}
	}
}
