package sequencing

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/lectern-lms/lectern/course"
)

func TestChoice(t *testing.T) {
	tree := func(mSeq, bSeq *course.Sequencing) *course.Activity {
		return cluster("org", flowSeq(),
			leaf("a", nil),
			cluster("m", mSeq, leaf("b", bSeq), leaf("c", nil)),
			leaf("d", nil))
	}
	seq := func(f func(*course.Sequencing)) *course.Sequencing {
		s := &course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true)}}
		f(s)
		return s
	}
	for _, tc := range []struct {
		name  string
		root  *course.Activity
		moves []move
	}{
		{"choice starts the session anywhere (SB.2.9 case 3)", tree(nil, nil), []move{
			{req: choose("c"), deliver: "c"}, {req: choose("a"), deliver: "a"}, {req: choose("d"), deliver: "d"},
		}},
		{"choosing a cluster delivers its first leaf", tree(flowSeq(), nil), []move{
			{req: choose("m"), deliver: "b"},
		}},
		{"choosing a cluster without flow delivers nothing (SB.2.9-9)", tree(&course.Sequencing{}, nil), []move{
			{req: choose("m"), err: ErrChoiceNothing},
		}},
		{"unknown target (NB.2.1-11)", tree(nil, nil), []move{
			{req: choose("zz"), err: ErrNoTarget},
		}},
		{"choice=false on the parent (NB.2.1-10)", tree(seq(func(s *course.Sequencing) { s.ControlMode.Choice = bp(false) }), nil), []move{
			{req: start, deliver: "a"}, {req: choose("c"), err: ErrChoiceControl}, {req: choose("m"), deliver: "b"},
		}},
		{"hiddenFromChoice on the target (SB.2.9-3)", tree(nil, &course.Sequencing{PreConditionRules: []course.SequencingRule{rule("hiddenFromChoice", "always")}}), []move{
			{req: start, deliver: "a"}, {req: choose("b"), err: ErrChoiceHidden}, {req: choose("c"), deliver: "c"},
		}},
		{"hiddenFromChoice on an ancestor hides its children (SB.2.9-3)", tree(seq(func(s *course.Sequencing) {
			s.PreConditionRules = []course.SequencingRule{rule("hiddenFromChoice", "always")}
		}), nil), []move{
			{req: start, deliver: "a"}, {req: choose("c"), err: ErrChoiceHidden},
		}},
		{"disabled target cannot be delivered (DB.1.1-3)", tree(nil, &course.Sequencing{PreConditionRules: []course.SequencingRule{rule("disabled", "always")}}), []move{
			{req: start, deliver: "a"}, {req: choose("b"), err: ErrDeliverDisabled},
		}},
		{"stopForwardTraversal blocks choosing past a sibling (SB.2.4-1)", cluster("org", flowSeq(),
			leaf("a", &course.Sequencing{PreConditionRules: []course.SequencingRule{rule("stopForwardTraversal", "always")}}), leaf("b", nil), leaf("c", nil)), []move{
			{req: start, deliver: "a"}, {req: choose("c"), err: ErrChoiceStopForward},
		}},
		{"forwardOnly blocks choosing backward among siblings (SB.2.4-2)", cluster("org", &course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true), ForwardOnly: bp(true)}},
			leaf("a", nil), leaf("b", nil)), []move{
			{req: start, deliver: "a"}, {req: cont, deliver: "b"}, {req: choose("a"), err: ErrChoiceBackForwardOnly},
		}},
		{"choiceExit=false keeps the learner inside an active cluster (NB.2.1-8)", tree(seq(func(s *course.Sequencing) { s.ControlMode.ChoiceExit = bp(false) }), nil), []move{
			{req: start, deliver: "a"}, {req: cont, deliver: "b"}, {req: choose("c"), deliver: "c"}, {req: choose("d"), err: ErrChoiceExit},
		}},
		{"constrainChoice on a leaf does not limit choosing among its siblings (SB.2.9 case 2)", cluster("org", flowSeq(),
			leaf("a", &course.Sequencing{ConstrainChoice: bp(true), Objectives: []course.Objective{{ID: "a", Primary: true}}}), leaf("b", nil), leaf("c", nil)), []move{
			{req: start, deliver: "a"}, {req: choose("c"), deliver: "c"},
		}},
		{"constrainChoice on a cluster: only its neighbours (SB.2.9-8)", cluster("org", flowSeq(),
			cluster("m1", &course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true)}, ConstrainChoice: bp(true)}, leaf("a", nil), leaf("b", nil)),
			cluster("m2", flowSeq(), leaf("c", nil)),
			cluster("m3", flowSeq(), leaf("d", nil))), []move{
			{req: start, deliver: "a"}, {req: choose("d"), err: ErrChoiceConstrained}, {req: choose("c"), deliver: "c"},
		}},
		{"constrainChoice on the current leaf does not limit choosing beyond its cluster (SB.2.9 case 5, ADL CM-07d)", cluster("org", flowSeq(),
			cluster("m1", flowSeq(), leaf("a", &course.Sequencing{ConstrainChoice: bp(true), Objectives: []course.Objective{{ID: "a", Primary: true}}}), leaf("b", nil)),
			cluster("m2", flowSeq(), leaf("c", nil)),
			cluster("m3", flowSeq(), leaf("d", nil))), []move{
			{req: start, deliver: "a"}, {req: choose("d"), deliver: "d"},
		}},
		{"preventActivation forbids entering an inactive cluster by choice (SB.2.9-6)", tree(seq(func(s *course.Sequencing) { s.PreventActivation = bp(true) }), nil), []move{
			{req: start, deliver: "a"}, {req: choose("c"), err: ErrChoicePrevented}, {req: cont, deliver: "b"}, {req: choose("c"), deliver: "c"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc.root, tc.moves) })
	}
}

func TestSuspendAndResume(t *testing.T) {
	root := cluster("org", flowSeq(), leaf("a", nil), cluster("m", flowSeq(), leaf("b", nil), leaf("c", nil)))
	s := newState(t, root)
	step(t, s, start, "a", nil)
	step(t, s, cont, "b", nil)
	_ = s.Report("b", RuntimeOutcome{CompletionStatus: "incomplete", Exit: "suspend"})
	if res := step(t, s, suspendAll, "", nil); !res.SessionEnded {
		t.Fatal("suspendAll must end the session")
	}
	if s.Suspended != "b" || !s.Activity("b").IsSuspended || !s.Activity("m").IsSuspended {
		t.Fatalf("suspended %q, b %+v, m %+v", s.Suspended, s.Activity("b"), s.Activity("m"))
	}
	if s.Current != "" {
		t.Fatalf("the ended session left %q current: the next launch could not resume", s.Current)
	}
	res := step(t, s, resumeAll, "b", nil)
	if !res.Resumed || s.Activity("b").AttemptCount != 1 {
		t.Errorf("resume must continue b's attempt: %+v, attempts %d", res, s.Activity("b").AttemptCount)
	}
	step(t, s, cont, "c", nil)
	step(t, s, prev, "b", nil)
	if n := s.Activity("b").AttemptCount; n != 2 {
		t.Errorf("b delivered again after its attempt ended: %d attempts, want 2", n)
	}
}

func TestNavigationRequestValid(t *testing.T) {
	root := cluster("org", flowSeq(),
		leaf("a", nil),
		leaf("b", &course.Sequencing{PreConditionRules: []course.SequencingRule{rule("disabled", "always")}}),
		leaf("c", &course.Sequencing{PreConditionRules: []course.SequencingRule{rule("hiddenFromChoice", "always")}}),
		leaf("d", nil))
	s := newState(t, root)
	step(t, s, start, "a", nil)
	before, _ := json.Marshal(s)
	for _, tc := range []struct {
		r    Request
		want bool
	}{
		{cont, false}, // b is disabled: flow stops
		{prev, false},
		{choose("a"), true},
		{choose("b"), false},
		{choose("c"), false},
		{choose("d"), true},
		{choose("nope"), false},
		{start, false},
	} {
		if got := s.NavigationRequestValid(tc.r); got != tc.want {
			t.Errorf("valid %s %s = %v, want %v", tc.r.Kind, tc.r.Target, got, tc.want)
		}
	}
	if after, _ := json.Marshal(s); string(after) != string(before) {
		t.Error("NavigationRequestValid changed the state")
	}
	step(t, s, choose("d"), "d", nil)
	if !s.NavigationRequestValid(prev) || !s.NavigationRequestValid(cont) {
		t.Error("from d, previous (to c) and continue (ends the session) are valid")
	}
}

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Request
		ok   bool
		err  bool
	}{
		{"continue", Request{Kind: Continue}, true, false},
		{"suspendAll", Request{Kind: SuspendAll}, true, false},
		{"{target=act_2}choice", Request{Kind: Choice, Target: "act_2"}, true, false},
		{"{target=x}jump", Request{Kind: Jump, Target: "x"}, true, false},
		{"_none_", Request{}, false, false},
		{"", Request{}, false, false},
		{"{target=}choice", Request{}, false, true},
		{"{target=x}continue", Request{}, false, true},
		{"{target=xchoice", Request{}, false, true},
		{"sideways", Request{}, false, true},
	} {
		got, ok, err := ParseRequest(tc.in)
		if got != tc.want || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("ParseRequest(%q) = %+v, %v, %v", tc.in, got, ok, err)
		}
	}
}

func TestTOC(t *testing.T) {
	hidden := leaf("c", &course.Sequencing{PreConditionRules: []course.SequencingRule{rule("hiddenFromChoice", "always")}})
	invisible := leaf("d", nil)
	hiddenCluster := cluster("h", &course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true)},
		PreConditionRules: []course.SequencingRule{rule("hiddenFromChoice", "always")}}, leaf("e", nil))
	root := cluster("org", &course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true)}},
		cluster("m", &course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true), Choice: bp(false)}}, leaf("a", nil), leaf("b", nil)),
		hidden, invisible, hiddenCluster)
	for _, a := range []*course.Activity{root, root.Children[0], root.Children[0].Children[0], root.Children[0].Children[1], hidden, hiddenCluster, hiddenCluster.Children[0]} {
		a.Visible = true
	}
	s := newState(t, root)
	step(t, s, start, "a", nil)
	got := map[string]TOCEntry{}
	var order []string
	for _, e := range s.TOC() {
		got[e.ID] = e
		order = append(order, e.ID)
	}
	if want := []string{"org", "m", "a", "b", "c", "d", "h", "e"}; !slices.Equal(order, want) {
		t.Fatalf("TOC order %v, want %v", order, want)
	}
	for id, want := range map[string][2]bool{ // visible, enabled
		"m":   {true, true},  // choosing the cluster flows to a
		"a":   {true, false}, // m forbids choice among its children
		"b":   {true, false},
		"c":   {false, false}, // hiddenFromChoice
		"d":   {false, false}, // isvisible=false
		"h":   {false, false}, // hiddenFromChoice cluster
		"e":   {false, false}, // in a cluster hidden from choice (SB.2.9 checks the whole path)
		"org": {true, true},   // the root: a choice of it starts its flow over
	} {
		if e := got[id]; e.Visible != want[0] || e.Enabled != want[1] {
			t.Errorf("%s: visible %v enabled %v, want %v %v", id, e.Visible, e.Enabled, want[0], want[1])
		}
	}
	if !got["a"].Current || got["a"].Depth != 2 {
		t.Errorf("a: %+v", got["a"])
	}
}
