package rollup

import (
	"testing"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

func bp(b bool) *bool { return &b }
func ip(i int) *int   { return &i }

func sco04(id string) *course.Activity {
	return &course.Activity{ID: id, Title: "SCO " + id, LaunchURL: id + ".html", ScormType: "sco",
		Objectives: []course.Objective{{ID: id + "-primary", Primary: true}}}
}

func pkg04(std course.Standard, root *course.Activity) *course.Package {
	return &course.Package{Standard: std, Root: root}
}

func cluster(id string, seq *course.Sequencing, children ...*course.Activity) *course.Activity {
	return &course.Activity{ID: id, Title: id, Sequencing: seq, Children: children}
}

func rule(set string, action string, conds ...course.RuleCondition) course.RollupRule {
	return course.RollupRule{ChildActivitySet: set, Conditions: conds, Action: action}
}

func cond(c string) course.RuleCondition { return course.RuleCondition{Condition: c} }
func notCond(c string) course.RuleCondition {
	return course.RuleCondition{Condition: c, Operator: "not"}
}

func done(success string, scaled *float64) *ActivityState {
	return &ActivityState{CompletionStatus: "completed", SuccessStatus: success, ScoreScaled: scaled}
}

func compute04(root *course.Activity, st State) Result {
	return Compute(Input{Package: pkg04(course.SCORM2004v4, root), State: st, Settings: DefaultSettings(), ForCredit: true})
}

func TestSNDefaultRollup(t *testing.T) {
	for _, tc := range []struct {
		name                string
		a, b                *ActivityState
		completion, success string
	}{
		{"both completed and passed", done("passed", nil), done("passed", nil), registration.Completed, registration.Passed},
		{"one failed", done("passed", nil), done("failed", nil), registration.Completed, registration.Failed},
		{"one not launched", done("passed", nil), nil, registration.Incomplete, registration.Unknown},
		{"one incomplete", done("passed", nil), &ActivityState{CompletionStatus: "incomplete"}, registration.Incomplete, registration.Unknown},
		{"one success unknown", done("passed", nil), done("unknown", nil), registration.Completed, registration.Unknown},
		{"nothing launched", nil, nil, registration.Unknown, registration.Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := State{}
			if tc.a != nil {
				st["a"] = tc.a
			}
			if tc.b != nil {
				st["b"] = tc.b
			}
			r := compute04(cluster("org", nil, sco04("a"), sco04("b")), st)
			if r.Completion != tc.completion || r.Success != tc.success {
				t.Fatalf("got %s/%s, want %s/%s", r.Completion, r.Success, tc.completion, tc.success)
			}
		})
	}
}

func TestSNMeasureRollupIsWeighted(t *testing.T) {
	b := sco04("b")
	b.Sequencing = &course.Sequencing{RollupRules: &course.RollupRules{ObjectiveMeasureWeight: f(3)}}
	c := sco04("c")
	c.Sequencing = &course.Sequencing{DeliveryControls: &course.DeliveryControls{Tracked: bp(false)}}
	root := cluster("org", nil, sco04("a"), b, c, sco04("d"))
	// a 0.5 (weight 1), b 0.9 (weight 3), c untracked, d unknown measure (weight 1):
	// (0.5 + 2.7) / 5 = 0.64.
	r := compute04(root, State{"a": done("passed", f(0.5)), "b": done("passed", f(0.9)), "c": done("failed", f(0)), "d": done("passed", nil)})
	if fmtScore(r.Score) != "64" {
		t.Fatalf("score %s, want 64", fmtScore(r.Score))
	}
	if r.Success != registration.Passed {
		t.Fatalf("untracked c failed but must not count: %s", r.Success)
	}
	if r := compute04(root, State{"a": done("passed", nil)}); r.Score != nil {
		t.Fatalf("no measure known: score %s", fmtScore(r.Score))
	}
}

func TestSNSatisfiedByMeasure(t *testing.T) {
	root := cluster("org", nil, sco04("a"), sco04("b"))
	root.Objectives = []course.Objective{{ID: "root", Primary: true, SatisfiedByMeasure: true, MinNormalizedMeasure: f(0.7)}}
	for _, tc := range []struct {
		a, b float64
		want string
	}{{0.8, 0.7, registration.Passed}, {0.8, 0.5, registration.Failed}} {
		// Children's own success says the opposite: the measure decides.
		r := compute04(root, State{"a": done("failed", f(tc.a)), "b": done("failed", f(tc.b))})
		if r.Success != tc.want {
			t.Errorf("measures %v,%v: %s, want %s", tc.a, tc.b, r.Success, tc.want)
		}
	}
	// A leaf satisfied by measure ignores success_status.
	leaf := sco04("x")
	leaf.Objectives[0].SatisfiedByMeasure, leaf.Objectives[0].MinNormalizedMeasure = true, f(0.6)
	r := compute04(cluster("org", nil, leaf), State{"x": done("failed", f(0.65))})
	if r.Activities["x"].Success != registration.Passed {
		t.Fatalf("leaf by measure: %s", r.Activities["x"].Success)
	}
	if r := compute04(cluster("org", nil, leaf), State{"x": done("passed", nil)}); r.Activities["x"].Success != registration.Unknown {
		t.Fatalf("leaf by measure without a measure: %s, want UNKNOWN", r.Activities["x"].Success)
	}
}

func TestSNRollupRules(t *testing.T) {
	three := func(seq *course.Sequencing) *course.Activity {
		return cluster("org", seq, sco04("a"), sco04("b"), sco04("c"))
	}
	rules := func(rr ...course.RollupRule) *course.Sequencing {
		return &course.Sequencing{RollupRules: &course.RollupRules{Rules: rr}}
	}
	passedA := State{"a": done("passed", nil), "b": &ActivityState{CompletionStatus: "incomplete"}, "c": done("failed", nil)}
	for _, tc := range []struct {
		name                string
		seq                 *course.Sequencing
		st                  State
		completion, success string
	}{
		{"any satisfied satisfies", rules(rule("any", "satisfied", cond("satisfied"))), passedA, registration.Incomplete, registration.Passed},
		{"atLeastCount 2 completed", withCount(rules(rule("atLeastCount", "completed", cond("completed")), rule("all", "satisfied", cond("attempted"))), 2), passedA, registration.Completed, registration.Passed},
		{"atLeastCount 3 completed not met", withCount(rules(rule("atLeastCount", "completed", cond("completed"))), 3), passedA, registration.Incomplete, registration.Unknown},
		{"atLeastPercent 0.6 completed", withPercent(rules(rule("atLeastPercent", "completed", cond("completed"))), 0.6), passedA, registration.Completed, registration.Unknown},
		// b's success is unknown, so neither default objective rule fires (all satisfied; all
		// status known → not satisfied): c's failure alone does not fail the course.
		{"none failed-and-known: not met", rules(rule("none", "satisfied", notCond("satisfied"))), passedA, registration.Incomplete, registration.Unknown},
		{"none not-satisfied with all passed", rules(rule("none", "satisfied", notCond("satisfied"))),
			State{"a": done("passed", nil), "b": done("passed", nil), "c": done("passed", nil)}, registration.Completed, registration.Passed},
		{"any not attempted → notSatisfied", rules(rule("any", "notSatisfied", notCond("attempted"))),
			State{"a": done("passed", nil), "b": done("passed", nil)}, registration.Incomplete, registration.Failed},
		{"all (completed and satisfied) with combination all", rules(course.RollupRule{ChildActivitySet: "all", ConditionCombination: "all",
			Conditions: []course.RuleCondition{cond("completed"), cond("satisfied")}, Action: "satisfied"}),
			State{"a": done("passed", nil), "b": done("passed", nil), "c": done("passed", nil)}, registration.Completed, registration.Passed},
		{"objectiveMeasureKnown", rules(rule("all", "satisfied", cond("objectiveMeasureKnown"))),
			State{"a": done("failed", f(0.1)), "b": done("failed", f(0.2)), "c": done("failed", f(0.3))}, registration.Completed, registration.Passed},
		{"activityProgressKnown → incomplete beats default", rules(rule("any", "incomplete", cond("activityProgressKnown"))),
			State{"a": done("passed", nil)}, registration.Incomplete, registration.Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := compute04(three(tc.seq), tc.st)
			if r.Completion != tc.completion || r.Success != tc.success {
				t.Fatalf("got %s/%s, want %s/%s", r.Completion, r.Success, tc.completion, tc.success)
			}
		})
	}
}

func withCount(s *course.Sequencing, n int) *course.Sequencing {
	for i := range s.RollupRules.Rules {
		s.RollupRules.Rules[i].MinimumCount = ip(n)
	}
	return s
}

func withPercent(s *course.Sequencing, p float64) *course.Sequencing {
	for i := range s.RollupRules.Rules {
		s.RollupRules.Rules[i].MinimumPercent = f(p)
	}
	return s
}

func TestSNRollupControlsAndConsiderations(t *testing.T) {
	b := sco04("b")
	b.Sequencing = &course.Sequencing{RollupRules: &course.RollupRules{RollupObjectiveSatisfied: bp(false), RollupProgressCompletion: bp(false)}}
	r := compute04(cluster("org", nil, sco04("a"), b), State{"a": done("passed", nil), "b": &ActivityState{CompletionStatus: "incomplete", SuccessStatus: "failed"}})
	if r.Completion != registration.Completed || r.Success != registration.Passed {
		t.Fatalf("b does not contribute: got %s/%s, want COMPLETED/PASSED", r.Completion, r.Success)
	}
	c := sco04("c")
	c.Sequencing = &course.Sequencing{RequiredForSatisfied: "ifAttempted", RequiredForNotSatisfied: "ifAttempted",
		RequiredForCompleted: "ifAttempted", RequiredForIncomplete: "ifAttempted"}
	r = compute04(cluster("org", nil, sco04("a"), c), State{"a": done("passed", nil)})
	if r.Completion != registration.Completed || r.Success != registration.Passed {
		t.Fatalf("unattempted c required only if attempted: got %s/%s", r.Completion, r.Success)
	}
	r = compute04(cluster("org", nil, sco04("a"), c), State{"a": done("passed", nil), "c": {CompletionStatus: "incomplete"}})
	if r.Completion != registration.Incomplete {
		t.Fatalf("attempted c counts: %s", r.Completion)
	}
	s := sco04("s")
	s.Sequencing = &course.Sequencing{RequiredForCompleted: "ifNotSuspended", RequiredForIncomplete: "ifNotSuspended"}
	r = compute04(cluster("org", nil, sco04("a"), s), State{"a": done("passed", nil), "s": {CompletionStatus: "incomplete", Suspended: true}})
	if r.Completion != registration.Completed {
		t.Fatalf("suspended s excluded: %s", r.Completion)
	}
	// A sequencingCollection entry supplies the rules an item refers to.
	p := pkg04(course.SCORM2004v4, cluster("org", &course.Sequencing{IDRef: "anyPass"}, sco04("a"), sco04("b")))
	p.SequencingCollection = map[string]*course.Sequencing{"anyPass": {RollupRules: &course.RollupRules{Rules: []course.RollupRule{rule("any", "satisfied", cond("satisfied"))}}}}
	r = Compute(Input{Package: p, State: State{"a": done("passed", nil)}, Settings: DefaultSettings()})
	if r.Success != registration.Passed {
		t.Fatalf("collection rule: %s, want PASSED", r.Success)
	}
	// An item that states rollupConsiderations takes the element whole, as the sequencer does
	// (IMS SS merges per element): the collection's requiredForCompleted does not fill in the
	// attribute the item left at its default (always).
	rc := sco04("c")
	rc.Sequencing = &course.Sequencing{IDRef: "considered", RequiredForSatisfied: "ifAttempted"}
	p = pkg04(course.SCORM2004v4, cluster("org", nil, sco04("a"), rc))
	p.SequencingCollection = map[string]*course.Sequencing{"considered": {RequiredForCompleted: "ifAttempted", RequiredForIncomplete: "ifAttempted"}}
	r = Compute(Input{Package: p, State: State{"a": done("passed", nil)}, Settings: DefaultSettings()})
	if r.Completion == registration.Completed {
		t.Fatalf("unattempted c is required for completion (always): got %s", r.Completion)
	}
	rc.Sequencing = &course.Sequencing{IDRef: "considered"}
	r = Compute(Input{Package: p, State: State{"a": done("passed", nil)}, Settings: DefaultSettings()})
	if r.Completion != registration.Completed {
		t.Fatalf("the collection's considerations apply to an item without its own: got %s", r.Completion)
	}
	lim := sco04("l")
	lim.Sequencing = &course.Sequencing{LimitConditions: &course.LimitConditions{AttemptLimit: ip(2)}}
	root := cluster("org", &course.Sequencing{RollupRules: &course.RollupRules{Rules: []course.RollupRule{rule("any", "notSatisfied", cond("attemptLimitExceeded"))}}}, lim)
	if r := compute04(root, State{"l": {Attempts: 2, CompletionStatus: "incomplete"}}); r.Success != registration.Failed {
		t.Fatalf("attempt limit reached: %s, want FAILED", r.Success)
	}
	if r := compute04(root, State{"l": {Attempts: 1, CompletionStatus: "incomplete"}}); r.Success != registration.Unknown {
		t.Fatalf("attempt limit not reached: %s, want UNKNOWN", r.Success)
	}
}

func TestSNCompletionThresholdAndProgress(t *testing.T) {
	leaf := sco04("a")
	leaf.CompletionThreshold = &course.CompletionThreshold{CompletedByMeasure: true, MinProgressMeasure: 0.5, ProgressWeight: 1}
	for _, tc := range []struct {
		pm     float64
		status string
		want   string
	}{{0.6, "incomplete", registration.Completed}, {0.4, "completed", registration.Incomplete}} {
		r := compute04(cluster("org", nil, leaf), State{"a": {ProgressMeasure: f(tc.pm), CompletionStatus: tc.status}})
		if r.Completion != tc.want {
			t.Errorf("pm %v: %s, want %s", tc.pm, r.Completion, tc.want)
		}
	}
	// 4th edition without completedByMeasure: the status decides.
	plain := sco04("a")
	plain.CompletionThreshold = &course.CompletionThreshold{MinProgressMeasure: 0.5, ProgressWeight: 1}
	if r := compute04(cluster("org", nil, plain), State{"a": {ProgressMeasure: f(0.9), CompletionStatus: "incomplete"}}); r.Completion != registration.Incomplete {
		t.Fatalf("4th ed. completedByMeasure false: %s", r.Completion)
	}
	// 3rd edition's plain threshold compares.
	r := Compute(Input{Package: pkg04(course.SCORM2004v3, cluster("org", nil, plain)), State: State{"a": {ProgressMeasure: f(0.9), CompletionStatus: "incomplete"}}, Settings: DefaultSettings()})
	if r.Completion != registration.Completed {
		t.Fatalf("3rd ed. threshold: %s", r.Completion)
	}
	// A cluster completed by measure: weighted progress of its children.
	a, b := sco04("a"), sco04("b")
	b.CompletionThreshold = &course.CompletionThreshold{ProgressWeight: 3}
	root := cluster("org", nil, a, b)
	root.CompletionThreshold = &course.CompletionThreshold{CompletedByMeasure: true, MinProgressMeasure: 0.7, ProgressWeight: 1}
	// a completed (1.0 × 1), b 0.6 × 3 → 2.8 / 4 = 0.7.
	r = compute04(root, State{"a": done("passed", nil), "b": {ProgressMeasure: f(0.6), CompletionStatus: "incomplete"}})
	if r.Completion != registration.Completed || fmtScore(r.CompletionAmount) != "0.7" {
		t.Fatalf("cluster by measure: %s amount %s, want COMPLETED 0.7", r.Completion, fmtScore(r.CompletionAmount))
	}
	// Without progress measures, the completion amount is the share of completed SCOs.
	r = compute04(cluster("org", nil, sco04("a"), sco04("b"), sco04("c"), sco04("d")), State{"a": done("passed", nil), "b": {CompletionStatus: "incomplete"}})
	if fmtScore(r.CompletionAmount) != "0.25" {
		t.Fatalf("completion amount %s, want 0.25", fmtScore(r.CompletionAmount))
	}
}

func TestSNSetByContentAndRawScore(t *testing.T) {
	a := sco04("a")
	a.Sequencing = &course.Sequencing{DeliveryControls: &course.DeliveryControls{CompletionSetByContent: bp(false), ObjectiveSetByContent: bp(false)}}
	root := cluster("org", nil, a)
	if r := compute04(root, State{"a": {Terminated: true}}); r.Completion != registration.Completed || r.Success != registration.Passed {
		t.Fatalf("terminated, content sets nothing: %s/%s, want COMPLETED/PASSED", r.Completion, r.Success)
	}
	if r := compute04(root, State{"a": {}}); r.Completion != registration.Incomplete || r.Success != registration.Unknown {
		t.Fatalf("still running: %s/%s, want INCOMPLETE/UNKNOWN", r.Completion, r.Success)
	}
	if r := compute04(root, State{"a": {Terminated: true, SuccessStatus: "failed"}}); r.Success != registration.Failed {
		t.Fatalf("content's own failed wins: %s", r.Success)
	}
	raw := State{"a": {CompletionStatus: "completed", ScoreRaw: f(30), ScoreMin: f(0), ScoreMax: f(40)}}
	if r := compute04(cluster("org", nil, sco04("a")), raw); r.Score != nil {
		t.Fatalf("raw only, PlayerScaleRawScore false: score %s", fmtScore(r.Score))
	}
	s := DefaultSettings()
	s.ScaleRawScore = true
	r := Compute(Input{Package: pkg04(course.SCORM2004v4, cluster("org", nil, sco04("a"))), State: raw, Settings: s})
	if fmtScore(r.Score) != "75" {
		t.Fatalf("raw 30 of 0-40 scaled: %s, want 75", fmtScore(r.Score))
	}
}

func TestSNNestedTreeAndTime(t *testing.T) {
	m1 := cluster("m1", nil, sco04("a"), sco04("b"))
	m2 := cluster("m2", nil, sco04("c"))
	root := cluster("org", nil, m1, m2)
	st := State{"a": {CompletionStatus: "completed", SuccessStatus: "passed", ScoreScaled: f(1), SecondsTracked: 60},
		"b": {CompletionStatus: "completed", SuccessStatus: "passed", ScoreScaled: f(0.5), SecondsTracked: 30},
		"c": {CompletionStatus: "completed", SuccessStatus: "passed", ScoreScaled: f(0.25), SecondsTracked: 10}}
	r := compute04(root, st)
	if r.Completion != registration.Completed || r.Success != registration.Passed {
		t.Fatalf("got %s/%s", r.Completion, r.Success)
	}
	// m1 = 0.75, m2 = 0.25 → root 0.5.
	if fmtScore(r.Activities["m1"].Score) != "75" || fmtScore(r.Score) != "50" {
		t.Fatalf("m1 %s root %s, want 75 and 50", fmtScore(r.Activities["m1"].Score), fmtScore(r.Score))
	}
	if r.TotalSecondsTracked != 100 || r.Activities["m1"].Seconds != 90 {
		t.Fatalf("time: total %v, m1 %v", r.TotalSecondsTracked, r.Activities["m1"].Seconds)
	}
}
