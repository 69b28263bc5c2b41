package sequencing

import (
	"slices"
	"testing"

	"github.com/lectern-lms/lectern/course"
)

// TestSystemObjectives: the global objectives a course shares with the learner's other
// courses are every target its imsss and adlseq maps name (the sequencing collection's
// too), unless the organization says objectivesGlobalToSystem="false".
func TestSystemObjectives(t *testing.T) {
	build := func(toSystem *bool) *course.Package {
		a := leaf("a", &course.Sequencing{Objectives: []course.Objective{{ID: "p", Primary: true, Maps: []course.ObjectiveMap{{TargetObjectiveID: "g2"}}}},
			ADLObjectives: []course.ADLObjective{{ObjectiveID: "p", Maps: []course.ADLObjectiveMap{{TargetObjectiveID: "g1"}, {TargetObjectiveID: "g2"}}}}})
		root := cluster("org", flowSeq(), a, leaf("b", nil))
		root.Extra = &course.ActivityExt{ObjectivesGlobalToSystem: toSystem}
		p := pkg(root)
		p.SequencingCollection = map[string]*course.Sequencing{"c": {Objectives: []course.Objective{{ID: "x", Maps: []course.ObjectiveMap{{TargetObjectiveID: "g0"}}}}}}
		return p
	}
	for _, tc := range []struct {
		name     string
		toSystem *bool
		want     []string
	}{
		{"by default", nil, []string{"g0", "g1", "g2"}},
		{"objectivesGlobalToSystem true", bp(true), []string{"g0", "g1", "g2"}},
		{"objectivesGlobalToSystem false", bp(false), nil},
	} {
		if got := build(tc.toSystem).SystemObjectives(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := pkg(cluster("org", flowSeq(), leaf("a", nil))).SystemObjectives(); got != nil {
		t.Errorf("a course without maps shares %q", got)
	}
}

// TestShareGlobals: the learner's global objectives reach the State's own for the ids the
// course shares (an id the learner lacks keeps the State's value), and what the State then
// holds differently is what goes back.
func TestShareGlobals(t *testing.T) {
	raw := func(f float64) GlobalObjective { return GlobalObjective{Raw: &f} }
	s := newState(t, cluster("org", flowSeq(), leaf("a", nil)))
	s.Globals["mine"] = raw(1)
	s.Globals["other"] = raw(9)
	learner := MapGlobals{"shared": raw(7), "elsewhere": raw(3)}
	ids := []string{"mine", "shared"}
	if !s.ShareGlobals(learner, ids) {
		t.Error("the learner's shared objective changed nothing")
	}
	if s.ShareGlobals(learner, ids) {
		t.Error("sharing again changed something")
	}
	if _, ok := s.Globals["elsewhere"]; ok {
		t.Error("an objective the course does not name came in")
	}
	if got := s.Globals["shared"].Raw; got == nil || *got != 7 {
		t.Errorf("shared: %v", got)
	}
	changes := s.SharedChanges(learner, ids)
	if len(changes) != 1 || changes["mine"].Raw == nil || *changes["mine"].Raw != 1 {
		t.Errorf("what goes back: %+v, want only mine", changes)
	}
	s.Globals["shared"] = raw(8)
	if got := s.SharedChanges(learner, ids); len(got) != 2 {
		t.Errorf("after a change of shared: %+v", got)
	}
}
