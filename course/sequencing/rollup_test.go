package sequencing

import (
	"math"
	"testing"

	"github.com/lectern-lms/lectern/course"
)

// rollupRoot reports each child's outcome and returns the state, for checking the root.
func rollupRoot(t *testing.T, rootSeq *course.Sequencing, children []*course.Activity, outcomes map[string]RuntimeOutcome) *State {
	t.Helper()
	s := newState(t, cluster("org", rootSeq, children...))
	for _, c := range children {
		if rt, ok := outcomes[c.ID]; ok {
			s.Activities[c.ID].AttemptCount, s.Activities[c.ID].ProgressStatus = 1, true
			if err := s.Report(c.ID, rt); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

func rootStatus(s *State) (completion, success string) {
	st := s.Activity("org")
	completion, success = "unknown", "unknown"
	if st.AttemptProgressStatus {
		completion = map[bool]string{true: "completed", false: "incomplete"}[st.Completed]
	}
	if o := st.Objectives[""]; o.ProgressStatus {
		success = map[bool]string{true: "passed", false: "failed"}[o.Satisfied]
	}
	return
}

func rr(set string, action string, conds ...string) course.RollupRule {
	r := course.RollupRule{ChildActivitySet: set, Action: action}
	for _, c := range conds {
		r.Conditions = append(r.Conditions, course.RuleCondition{Condition: c})
	}
	return r
}

func TestObjectiveAndProgressRollup(t *testing.T) {
	three := func(seqs ...*course.Sequencing) []*course.Activity {
		out := []*course.Activity{}
		for i, id := range []string{"a", "b", "c"} {
			var s *course.Sequencing
			if i < len(seqs) {
				s = seqs[i]
			}
			out = append(out, leaf(id, s))
		}
		return out
	}
	pass, fail := passed(), RuntimeOutcome{CompletionStatus: "completed", SuccessStatus: "failed"}
	inc := RuntimeOutcome{CompletionStatus: "incomplete"}
	withRules := func(rules ...course.RollupRule) *course.Sequencing {
		return &course.Sequencing{RollupRules: &course.RollupRules{Rules: rules}}
	}
	for _, tc := range []struct {
		name                string
		rootSeq             *course.Sequencing
		children            []*course.Activity
		outcomes            map[string]RuntimeOutcome
		completion, success string
	}{
		{"default: all satisfied and completed (RB.1.2.c, RB.1.3.c)", nil, three(), map[string]RuntimeOutcome{"a": pass, "b": pass, "c": pass}, "completed", "passed"},
		{"default: one failed, all known", nil, three(), map[string]RuntimeOutcome{"a": pass, "b": fail, "c": pass}, "completed", "failed"},
		{"default: one unknown leaves the root unknown", nil, three(), map[string]RuntimeOutcome{"a": pass, "b": pass}, "unknown", "unknown"},
		{"default: one incomplete", nil, three(), map[string]RuntimeOutcome{"a": pass, "b": inc, "c": pass}, "incomplete", "unknown"},
		{"any satisfied", withRules(rr("any", "satisfied", "satisfied")), three(), map[string]RuntimeOutcome{"a": fail, "b": pass}, "unknown", "passed"},
		{"none satisfied → not satisfied", withRules(rr("none", "notSatisfied", "satisfied")), three(), map[string]RuntimeOutcome{"a": fail, "b": fail, "c": fail}, "completed", "failed"},
		{"atLeastCount 2 satisfied", withRules(course.RollupRule{ChildActivitySet: "atLeastCount", MinimumCount: ip(2), Action: "satisfied", Conditions: []course.RuleCondition{{Condition: "satisfied"}}}), three(), map[string]RuntimeOutcome{"a": pass, "b": pass, "c": fail}, "completed", "passed"},
		{"atLeastCount 3 satisfied, 2 is not enough", withRules(course.RollupRule{ChildActivitySet: "atLeastCount", MinimumCount: ip(3), Action: "satisfied", Conditions: []course.RuleCondition{{Condition: "satisfied"}}}), three(), map[string]RuntimeOutcome{"a": pass, "b": pass, "c": fail}, "completed", "unknown"},
		{"atLeastPercent 0.75 satisfied, 2 of 3 is not enough", withRules(course.RollupRule{ChildActivitySet: "atLeastPercent", MinimumPercent: fp(0.75), Action: "satisfied", Conditions: []course.RuleCondition{{Condition: "satisfied"}}}), three(), map[string]RuntimeOutcome{"a": pass, "b": pass, "c": fail}, "completed", "unknown"},
		{"completed if any attempted", withRules(rr("any", "completed", "attempted")), three(), map[string]RuntimeOutcome{"a": inc}, "completed", "unknown"},
		{"rollupObjectiveSatisfied=false takes a child out",
			nil, three(nil, &course.Sequencing{RollupRules: &course.RollupRules{RollupObjectiveSatisfied: bp(false)}}),
			map[string]RuntimeOutcome{"a": pass, "b": fail, "c": pass}, "completed", "passed"},
		{"untracked child does not count",
			nil, three(nil, &course.Sequencing{DeliveryControls: &course.DeliveryControls{Tracked: bp(false)}}),
			map[string]RuntimeOutcome{"a": pass, "b": fail, "c": pass}, "completed", "passed"},
		{"requiredForSatisfied ifAttempted ignores the unattempted child",
			nil, three(nil, nil, &course.Sequencing{RequiredForSatisfied: "ifAttempted", RequiredForNotSatisfied: "ifAttempted", RequiredForCompleted: "ifAttempted", RequiredForIncomplete: "ifAttempted"}),
			map[string]RuntimeOutcome{"a": pass, "b": pass}, "completed", "passed"},
		{"requiredForCompleted ifNotSkipped ignores a skipped child",
			nil, three(nil, nil, &course.Sequencing{RequiredForCompleted: "ifNotSkipped", RequiredForIncomplete: "ifNotSkipped", RequiredForSatisfied: "ifNotSkipped", RequiredForNotSatisfied: "ifNotSkipped", PreConditionRules: []course.SequencingRule{rule("skip", "always")}}),
			map[string]RuntimeOutcome{"a": pass, "b": pass}, "completed", "passed"},
		{"condition combination all with not",
			withRules(course.RollupRule{ChildActivitySet: "all", ConditionCombination: "all", Action: "satisfied", Conditions: []course.RuleCondition{{Condition: "completed"}, {Condition: "satisfied", Operator: "not"}}}),
			three(), map[string]RuntimeOutcome{"a": fail, "b": fail, "c": fail}, "completed", "passed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := rollupRoot(t, tc.rootSeq, tc.children, tc.outcomes)
			if c, sc := rootStatus(s); c != tc.completion || sc != tc.success {
				t.Errorf("root %s/%s, want %s/%s", c, sc, tc.completion, tc.success)
			}
		})
	}
}

func TestMeasureRollup(t *testing.T) {
	b := leaf("b", &course.Sequencing{RollupRules: &course.RollupRules{ObjectiveMeasureWeight: fp(3)}, Objectives: []course.Objective{{ID: "b", Primary: true}}})
	c := leaf("c", &course.Sequencing{DeliveryControls: &course.DeliveryControls{Tracked: bp(false)}, Objectives: []course.Objective{{ID: "c", Primary: true}}})
	rootSeq := &course.Sequencing{Objectives: []course.Objective{{ID: "root", Primary: true, SatisfiedByMeasure: true, MinNormalizedMeasure: fp(0.6)}}}
	s := newState(t, cluster("org", rootSeq, leaf("a", nil), b, c, leaf("d", nil)))
	for id, m := range map[string]float64{"a": 0.5, "b": 0.9, "c": 0} {
		if err := s.Report(id, RuntimeOutcome{ScoreScaled: fp(m)}); err != nil {
			t.Fatal(err)
		}
	}
	// (0.5·1 + 0.9·3) / (1 + 3 + 1): c is untracked, d has no measure but counts (RB.1.1).
	o := s.Activity("org").Objectives["root"]
	if !o.MeasureStatus || math.Abs(o.Measure-0.64) > 1e-9 {
		t.Fatalf("root measure %v (known %v), want 0.64", o.Measure, o.MeasureStatus)
	}
	if !o.ProgressStatus || !o.Satisfied {
		t.Errorf("satisfied by measure 0.64 ≥ 0.6: got %+v", o)
	}
}

func TestCompletionMeasureRollup(t *testing.T) {
	a, b := leaf("a", nil), leaf("b", nil)
	a.CompletionThreshold = &course.CompletionThreshold{ProgressWeight: 1}
	b.CompletionThreshold = &course.CompletionThreshold{ProgressWeight: 3}
	root := cluster("org", nil, a, b)
	root.CompletionThreshold = &course.CompletionThreshold{CompletedByMeasure: true, MinProgressMeasure: 0.5}
	s := newState(t, root)
	_ = s.Report("a", RuntimeOutcome{ProgressMeasure: fp(1)})
	if st := s.Activity("org"); !st.AmountStatus || st.Amount != 0.25 || !st.AttemptProgressStatus || st.Completed {
		t.Fatalf("after a: %+v, want amount 0.25, incomplete", st)
	}
	_ = s.Report("b", RuntimeOutcome{ProgressMeasure: fp(0.4)})
	if st := s.Activity("org"); st.Amount != 0.55 || !st.Completed {
		t.Fatalf("after b: %+v, want amount 0.55, completed", st)
	}
}

func TestEndAttemptCompletesUntoldContent(t *testing.T) {
	root := cluster("org", flowSeq(), leaf("a", nil),
		leaf("b", &course.Sequencing{DeliveryControls: &course.DeliveryControls{CompletionSetByContent: bp(true), ObjectiveSetByContent: bp(true)}, Objectives: []course.Objective{{ID: "b", Primary: true}}}))
	s := newState(t, root)
	step(t, s, start, "a", nil)
	step(t, s, cont, "b", nil)
	if st := s.Activity("a"); !st.Completed || !st.Objectives["a-obj"].Satisfied {
		t.Errorf("a said nothing and does not set by content: End Attempt (UP.4) completes and satisfies it: %+v", st)
	}
	step(t, s, exitAll, "", nil)
	if st := s.Activity("b"); st.AttemptProgressStatus || st.Objectives["b"].ProgressStatus {
		t.Errorf("b sets by content: End Attempt leaves it unknown: %+v", st)
	}
}

func TestGlobalObjectives(t *testing.T) {
	write := &course.Sequencing{Objectives: []course.Objective{{ID: "p1", Primary: true, Maps: []course.ObjectiveMap{{TargetObjectiveID: "g", WriteSatisfiedStatus: true, WriteNormalizedMeasure: true}}}}}
	read := &course.Sequencing{
		Objectives:        []course.Objective{{ID: "p2", Primary: true, Maps: []course.ObjectiveMap{{TargetObjectiveID: "g", ReadSatisfiedStatus: true, ReadNormalizedMeasure: true}}}},
		PreConditionRules: []course.SequencingRule{skipIf("satisfied")},
	}
	root := cluster("org", flowSeq(), leaf("a", write), leaf("b", read), leaf("c", nil))
	g := MapGlobals{}
	s, err := New(pkg(root), g)
	if err != nil {
		t.Fatal(err)
	}
	step(t, s, start, "a", nil)
	_ = s.Report("a", RuntimeOutcome{SuccessStatus: "passed", ScoreScaled: fp(0.9)})
	if got := g["g"]; !got.SatisfiedStatus || !got.Satisfied || !got.MeasureStatus || got.Measure != 0.9 {
		t.Fatalf("the caller's Globals got %+v", got)
	}
	if s.Globals != nil {
		t.Error("the state keeps its own globals although the caller supplied some")
	}
	step(t, s, cont, "c", nil) // b reads g as satisfied and is skipped
}
