package sequencing

import (
	"testing"

	"github.com/lectern-lms/lectern/course"
)

func TestSecondaryObjectives(t *testing.T) {
	writer := &course.Sequencing{
		Objectives: []course.Objective{
			{ID: "p", Primary: true},
			{ID: "o1", SatisfiedByMeasure: true, MinNormalizedMeasure: fp(0.25), Maps: []course.ObjectiveMap{{TargetObjectiveID: "g1", WriteSatisfiedStatus: true}}},
			{ID: "o2"},
		},
		ADLObjectives: []course.ADLObjective{{ObjectiveID: "o2", Maps: []course.ADLObjectiveMap{{TargetObjectiveID: "g2", WriteCompletionStatus: bp(true)}}}},
	}
	g := MapGlobals{}
	s, err := New(pkg(cluster("org", flowSeq(), leaf("a", writer))), g)
	if err != nil {
		t.Fatal(err)
	}
	step(t, s, start, "a", nil)
	_ = s.Report("a", RuntimeOutcome{Objectives: map[string]ObjectiveOutcome{
		"o1": {ScoreScaled: fp(0.4)},
		"o2": {CompletionStatus: "incomplete"},
	}})
	if got := g["g1"]; !got.SatisfiedStatus || !got.Satisfied {
		t.Errorf("o1 is satisfied by its measure 0.4 ≥ 0.25 and writes it: %+v", got)
	}
	if got := g["g2"]; !got.CompletionStatus || got.Completed {
		t.Errorf("o2's completion goes through its adlseq map: %+v", got)
	}
	if st := s.Activity("a"); st.AttemptProgressStatus {
		t.Errorf("a secondary objective's completion is not the activity's: %+v", st)
	}
}

// TestStateGlobalsLastOneCourseAttempt: the global objectives a State keeps itself outlive a
// new attempt on the course by default (objectivesGlobalToSystem true: they are the
// learner's, ADL RU-13a) and start afresh with it when the organization says false (ADL
// OB-03b).
func TestStateGlobalsLastOneCourseAttempt(t *testing.T) {
	for _, toSystem := range []*bool{nil, bp(false)} {
		write := &course.Sequencing{Objectives: []course.Objective{{ID: "p", Primary: true, Maps: []course.ObjectiveMap{{TargetObjectiveID: "g", WriteSatisfiedStatus: true}}}}}
		root := cluster("org", flowSeq(), leaf("a", write), leaf("b", nil))
		root.Extra = &course.ActivityExt{ObjectivesGlobalToSystem: toSystem}
		s := newState(t, root)
		step(t, s, start, "a", nil)
		_ = s.Report("a", RuntimeOutcome{SuccessStatus: "passed"})
		step(t, s, exitAll, "", nil)
		if _, ok := s.Globals["g"]; !ok {
			t.Fatal("the write did not reach the state's globals")
		}
		step(t, s, start, "a", nil)
		if _, ok := s.Globals["g"]; ok != (toSystem == nil) {
			t.Errorf("objectivesGlobalToSystem %v: after a new attempt on the course the global objective is there: %v", toSystem, ok)
		}
	}
}
