package sequencing

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/lectern-lms/lectern/course"
)

func TestNewRejectsBadTrees(t *testing.T) {
	if _, err := New(&course.Package{}, nil); err == nil {
		t.Error("a package without a tree was accepted")
	}
	dup := cluster("org", nil, leaf("a", nil), leaf("a", nil))
	if _, err := New(pkg(dup), nil); err == nil {
		t.Error("duplicate identifiers were accepted")
	}
}

func TestDefaultsAndCollection(t *testing.T) {
	p := pkg(cluster("org", nil,
		leaf("a", &course.Sequencing{IDRef: "shared", Objectives: []course.Objective{{ID: "own", Primary: true}}}),
		leaf("b", &course.Sequencing{IDRef: "shared", DeliveryControls: &course.DeliveryControls{Tracked: bp(true)}}),
	))
	p.SequencingCollection = map[string]*course.Sequencing{"shared": {
		ControlMode:      &course.ControlMode{Choice: bp(false)},
		DeliveryControls: &course.DeliveryControls{Tracked: bp(false)},
		Objectives:       []course.Objective{{ID: "coll", Primary: true}},
	}}
	s, err := New(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b, org := s.t.byID["a"], s.t.byID["b"], s.t.root
	if a.def.Choice || b.def.Choice {
		t.Error("the collection's controlMode choice=false was not merged")
	}
	if a.def.Tracked || !b.def.Tracked {
		t.Errorf("tracked a=%v b=%v: the item's own deliveryControls must win", a.def.Tracked, b.def.Tracked)
	}
	if a.primary().ID != "own" {
		t.Errorf("a's primary objective = %q, want its own", a.primary().ID)
	}
	// SCORM defaults of an activity without sequencing.
	if !org.def.Choice || !org.def.ChoiceExit || org.def.Flow || org.def.ForwardOnly || !org.def.Tracked ||
		org.def.CompletionSetByContent || org.def.ObjectiveSetByContent || org.def.MeasureWeight != 1 ||
		!org.def.RollupObjectiveSatisfied || !org.def.RollupProgressCompletion || !org.def.MeasureSatisfactionIfActive {
		t.Error("the SCORM defaults are not applied to an activity without sequencing")
	}
	if _, ok := s.Activities["org"].Objectives[""]; !ok {
		t.Error("an activity without a primary objective needs one for rollup")
	}
}

func TestStateJSONRoundTrip(t *testing.T) {
	root := cluster("org", flowSeq(), leaf("a", nil), leaf("b", nil), leaf("c", nil))
	s := newState(t, root)
	step(t, s, start, "a", nil)
	if err := s.Report("a", RuntimeOutcome{CompletionStatus: "completed", SuccessStatus: "failed", ScoreScaled: fp(0.4)}); err != nil {
		t.Fatal(err)
	}
	step(t, s, cont, "b", nil)
	step(t, s, suspendAll, "", nil)
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(s)
	if !bytes.Equal(data, again) {
		t.Fatal("marshalling the same state twice gave different bytes")
	}
	loaded, err := Load(pkg(root), data, nil)
	if err != nil {
		t.Fatal(err)
	}
	re, _ := json.Marshal(loaded)
	if !bytes.Equal(data, re) {
		t.Fatalf("state changed through JSON:\n%s\n%s", data, re)
	}
	// The loaded state goes on where the saved one stopped.
	step(t, loaded, resumeAll, "b", nil)
	if st := loaded.Activity("a"); st.AttemptCount != 1 || !st.Completed || st.Objectives["a-obj"].Satisfied || st.Objectives["a-obj"].Measure != 0.4 {
		t.Errorf("a's tracking data after the round trip: %+v %+v", st, st.Objectives["a-obj"])
	}
	if _, err := Load(pkg(root), []byte("{"), nil); err == nil {
		t.Error("a malformed saved state was accepted")
	}
}

func TestLoadDropsUnknownActivities(t *testing.T) {
	s := newState(t, cluster("org", flowSeq(), leaf("a", nil), leaf("gone", nil)))
	step(t, s, start, "a", nil)
	step(t, s, cont, "gone", nil)
	data, _ := json.Marshal(s)
	loaded, err := Load(pkg(cluster("org", flowSeq(), leaf("a", nil), leaf("new", nil))), data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Activity("gone") != nil || loaded.Activity("new") == nil || loaded.Current != "" {
		t.Errorf("reloading against a changed package: current %q, activities %v", loaded.Current, loaded.Activities)
	}
}
