package sequencing

import (
	"fmt"
	"strconv"
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

// TestADLSeqMaps: the 4th edition adlseq:mapInfo carry raw/min/max score, completion status
// and progress measure from the activity that writes them (a) to the one that reads them
// (b), each only where its map's read*/write* flag says so (reads true, writes false by
// default), and what b's cmi.objectives starts with is what it reads.
func TestADLSeqMaps(t *testing.T) {
	writeAll := course.ADLObjectiveMap{TargetObjectiveID: "g", WriteRawScore: bp(true), WriteMinScore: bp(true), WriteMaxScore: bp(true),
		WriteCompletionStatus: bp(true), WriteProgressMeasure: bp(true)}
	reported := ObjectiveOutcome{ScoreRaw: fp(75.5), ScoreMin: fp(-4), ScoreMax: fp(800), CompletionStatus: "incomplete", ProgressMeasure: fp(0.66)}
	for _, tc := range []struct {
		name        string
		write, read course.ADLObjectiveMap
		aTracked    *bool
		want        ObjectiveOutcome
	}{
		{name: "every value through default reads", write: writeAll, read: course.ADLObjectiveMap{TargetObjectiveID: "g"},
			want: ObjectiveOutcome{ScoreRaw: fp(75.5), ScoreMin: fp(-4), ScoreMax: fp(800), CompletionStatus: "incomplete", ProgressMeasure: fp(0.66)}},
		{name: "reads switched off (ADL SX-11a)", write: writeAll,
			read: course.ADLObjectiveMap{TargetObjectiveID: "g", ReadMaxScore: bp(false), ReadCompletionStatus: bp(false), ReadProgressMeasure: bp(false)},
			want: ObjectiveOutcome{ScoreRaw: fp(75.5), ScoreMin: fp(-4)}},
		{name: "only the writes the map names (ADL SX-11b)",
			write: course.ADLObjectiveMap{TargetObjectiveID: "g", WriteMaxScore: bp(true), WriteProgressMeasure: bp(true)},
			read:  course.ADLObjectiveMap{TargetObjectiveID: "g"},
			want:  ObjectiveOutcome{ScoreMax: fp(800), ProgressMeasure: fp(0.66)}},
		{name: "writes are off by default", write: course.ADLObjectiveMap{TargetObjectiveID: "g"}, read: course.ADLObjectiveMap{TargetObjectiveID: "g"}},
		{name: "an activity not tracked writes nothing (ADL OB-10a)", write: writeAll, read: course.ADLObjectiveMap{TargetObjectiveID: "g"}, aTracked: bp(false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seq := func(m course.ADLObjectiveMap) *course.Sequencing {
				return &course.Sequencing{Objectives: []course.Objective{{ID: "p", Primary: true}, {ID: "o"}},
					ADLObjectives: []course.ADLObjective{{ObjectiveID: "o", Maps: []course.ADLObjectiveMap{m}}}}
			}
			a := seq(tc.write)
			if tc.aTracked != nil {
				a.DeliveryControls = &course.DeliveryControls{Tracked: tc.aTracked}
			}
			s := newState(t, cluster("org", flowSeq(), leaf("a", a), leaf("b", seq(tc.read))))
			step(t, s, start, "a", nil)
			if err := s.Report("a", RuntimeOutcome{Objectives: map[string]ObjectiveOutcome{"o": reported}}); err != nil {
				t.Fatal(err)
			}
			step(t, s, cont, "b", nil)
			if got := s.Objectives("b")["o"]; !sameOutcome(got, tc.want) {
				t.Errorf("b's objective o starts with %s, want %s", outcomeString(got), outcomeString(tc.want))
			}
		})
	}
}

// TestADLSeqPrimaryScores: the primary objective's scores are cmi.score.* or, where the
// content set none, its cmi.objectives entry's (ADL OB-06); its completion and progress
// measure are the activity's attempt's.
func TestADLSeqPrimaryScores(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rt      RuntimeOutcome
		wantRaw *float64
	}{
		{name: "cmi.score.raw", rt: RuntimeOutcome{ScoreRaw: fp(28), Objectives: map[string]ObjectiveOutcome{"p": {ScoreRaw: fp(7)}}}, wantRaw: fp(28)},
		{name: "the primary objective's entry", rt: RuntimeOutcome{Objectives: map[string]ObjectiveOutcome{"p": {ScoreRaw: fp(7)}}}, wantRaw: fp(7)},
		{name: "none", rt: RuntimeOutcome{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &course.Sequencing{Objectives: []course.Objective{{ID: "p", Primary: true}},
				ADLObjectives: []course.ADLObjective{{ObjectiveID: "p", Maps: []course.ADLObjectiveMap{{TargetObjectiveID: "g", WriteRawScore: bp(true)}}}}}
			s := newState(t, cluster("org", flowSeq(), leaf("a", a), leaf("b", nil)))
			step(t, s, start, "a", nil)
			_ = s.Report("a", tc.rt)
			if got := s.Globals["g"].Raw; !sameFloat(got, tc.wantRaw) {
				t.Errorf("global raw score %v, want %v", fstr(got), fstr(tc.wantRaw))
			}
		})
	}
}

// TestUnknownClearsGlobals: a status the content sets to unknown where the activity's
// objective knew one (read or its own) clears the global objectives its maps write (ADL
// OB-17a/b, SX-11b); an unknown that only repeats what was not known writes nothing, so an
// objective the content never touched does not wipe another activity's global.
func TestUnknownClearsGlobals(t *testing.T) {
	for _, tc := range []struct {
		name string
		// global is the global objective before the report; reported the content's entry.
		global     GlobalObjective
		readStatus bool
		reported   ObjectiveOutcome
		want       GlobalObjective
	}{
		{name: "a read success made unknown", global: GlobalObjective{SatisfiedStatus: true, Satisfied: true}, readStatus: true,
			reported: ObjectiveOutcome{SuccessStatus: "unknown"}, want: GlobalObjective{}},
		{name: "a read completion made unknown", global: GlobalObjective{CompletionStatus: true, Completed: true}, readStatus: true,
			reported: ObjectiveOutcome{CompletionStatus: "unknown"}, want: GlobalObjective{}},
		{name: "an unread success stays", global: GlobalObjective{SatisfiedStatus: true, Satisfied: true},
			reported: ObjectiveOutcome{SuccessStatus: "unknown"}, want: GlobalObjective{SatisfiedStatus: true, Satisfied: true}},
		{name: "a known success is written", global: GlobalObjective{SatisfiedStatus: true, Satisfied: true}, readStatus: true,
			reported: ObjectiveOutcome{SuccessStatus: "failed"}, want: GlobalObjective{SatisfiedStatus: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &course.Sequencing{Objectives: []course.Objective{{ID: "p", Primary: true},
				{ID: "o", Maps: []course.ObjectiveMap{{TargetObjectiveID: "g", ReadSatisfiedStatus: tc.readStatus, WriteSatisfiedStatus: true}}}},
				ADLObjectives: []course.ADLObjective{{ObjectiveID: "o", Maps: []course.ADLObjectiveMap{{TargetObjectiveID: "g",
					ReadCompletionStatus: bp(tc.readStatus), WriteCompletionStatus: bp(true)}}}}}
			g := MapGlobals{"g": tc.global}
			s, err := New(pkg(cluster("org", flowSeq(), leaf("a", a))), g)
			if err != nil {
				t.Fatal(err)
			}
			step(t, s, start, "a", nil)
			_ = s.Report("a", RuntimeOutcome{Objectives: map[string]ObjectiveOutcome{"o": tc.reported}})
			if got := g["g"]; got != tc.want {
				t.Errorf("global %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestPrimaryCompletionReadVsMeasure: an activity completed by measure judges its attempt
// (and the rules that ask "completed") by the progress measure it reads (ADL CO-02a), while
// its primary objective's cmi.objectives entry starts with the completion status the global
// holds (ADL CO-10); and another activity's judgement under its own threshold does not
// overwrite what the reporting activity wrote, nor does an activity that is not tracked.
func TestPrimaryCompletionReadVsMeasure(t *testing.T) {
	byMeasure := func(min float64) *course.Activity {
		a := leaf("x", &course.Sequencing{Objectives: []course.Objective{{ID: "p", Primary: true}},
			ADLObjectives: []course.ADLObjective{{ObjectiveID: "p", Maps: []course.ADLObjectiveMap{{TargetObjectiveID: "g",
				WriteCompletionStatus: bp(true), WriteProgressMeasure: bp(true)}}}}})
		a.CompletionThreshold = &course.CompletionThreshold{CompletedByMeasure: true, MinProgressMeasure: min, ProgressWeight: 1}
		return a
	}
	a, b, c := byMeasure(0.4), byMeasure(0.15), byMeasure(0.6)
	a.ID, b.ID, c.ID = "a", "b", "c"
	c.Sequencing.DeliveryControls = &course.DeliveryControls{Tracked: bp(false)}
	s := newState(t, cluster("org", flowSeq(), a, b, c))
	step(t, s, start, "a", nil)
	_ = s.Report("a", RuntimeOutcome{ProgressMeasure: fp(0.2), Exit: "suspend"})
	step(t, s, cont, "b", nil)
	if got := s.Objectives("b")["p"]; got.CompletionStatus != "incomplete" || !sameFloat(got.ProgressMeasure, fp(0.2)) {
		t.Errorf("b's primary objective starts with %s, want a's incomplete and 0.2", outcomeString(got))
	}
	if got := s.completed(s.node("b")); got != yes {
		t.Errorf("b's attempt by its measure 0.2 ≥ 0.15: %v, want completed", got)
	}
	_ = s.Report("b", RuntimeOutcome{ProgressMeasure: fp(0.3)})
	if got := s.Globals["g"]; !got.CompletionStatus || !got.Completed || got.ProgressMeasure != 0.3 {
		t.Errorf("b wrote completed and 0.3, a (0.3 < 0.4) must not write over it: %+v", got)
	}
	step(t, s, cont, "c", nil)
	step(t, s, cont, "", nil)
	if got := s.Globals["g"]; !got.CompletionStatus || !got.Completed {
		t.Errorf("c is not tracked: its judgement (0.3 < 0.6) must not reach the global: %+v", got)
	}
}

func sameFloat(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func sameOutcome(a, b ObjectiveOutcome) bool {
	return a.SuccessStatus == b.SuccessStatus && a.CompletionStatus == b.CompletionStatus && sameFloat(a.ScoreScaled, b.ScoreScaled) &&
		sameFloat(a.ScoreRaw, b.ScoreRaw) && sameFloat(a.ScoreMin, b.ScoreMin) && sameFloat(a.ScoreMax, b.ScoreMax) && sameFloat(a.ProgressMeasure, b.ProgressMeasure)
}

func fstr(f *float64) string {
	if f == nil {
		return "-"
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

func outcomeString(o ObjectiveOutcome) string {
	return fmt.Sprintf("{success %q completion %q scaled %s raw %s min %s max %s progress %s}", o.SuccessStatus, o.CompletionStatus,
		fstr(o.ScoreScaled), fstr(o.ScoreRaw), fstr(o.ScoreMin), fstr(o.ScoreMax), fstr(o.ProgressMeasure))
}

// TestMappedMeasureIsTheGlobals: an objective that reads its normalized measure from a
// global objective has the global's measure, unknown while the global's is, whatever its
// local measure says (ADL's reference reads the shared record); a cluster whose attempt
// belongs to an earlier course attempt is not rolled up again into the globals a new
// course attempt cleared (ADL OB-03b).
func TestMappedMeasureIsTheGlobals(t *testing.T) {
	byMeasure := func() *course.Sequencing {
		return &course.Sequencing{
			ControlMode:       &course.ControlMode{Flow: bp(true)},
			PreConditionRules: []course.SequencingRule{skipIf("satisfied")},
			Objectives: []course.Objective{{ID: "p", Primary: true, SatisfiedByMeasure: true, MinNormalizedMeasure: fp(0.6),
				Maps: []course.ObjectiveMap{{TargetObjectiveID: "g", ReadNormalizedMeasure: true, WriteSatisfiedStatus: true, WriteNormalizedMeasure: true}}}},
		}
	}
	t.Run("read", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			global *GlobalObjective
			want   tri
		}{
			{"global unknown, local 0.9", nil, unknown},
			{"global measure unknown, local 0.9", &GlobalObjective{SatisfiedStatus: true, Satisfied: true}, unknown},
			{"global 0.3, local 0.9", &GlobalObjective{MeasureStatus: true, Measure: 0.3}, no},
			{"global 0.7, local 0.1", &GlobalObjective{MeasureStatus: true, Measure: 0.7}, yes},
		} {
			s := newState(t, cluster("org", flowSeq(), leaf("a", byMeasure())))
			n := s.node("a")
			local := 0.9
			if tc.global != nil && tc.global.MeasureStatus && tc.global.Measure > 0.5 {
				local = 0.1
			}
			os := s.objState(n, n.primary())
			os.MeasureStatus, os.Measure = true, local
			if tc.global != nil {
				s.g.SetObjective("g", *tc.global)
			}
			if got := s.satisfied(n, n.primary()); got != tc.want {
				t.Errorf("%s: satisfied %v, want %v", tc.name, got, tc.want)
			}
		}
	})
	t.Run("new course attempt", func(t *testing.T) {
		c := cluster("c", byMeasure(), leaf("x", nil), leaf("y", nil))
		root := cluster("org", flowSeq(), leaf("first", nil), c, leaf("last", nil))
		root.Extra = &course.ActivityExt{ObjectivesGlobalToSystem: bp(false)}
		s := newState(t, root)
		step(t, s, start, "first", nil)
		step(t, s, cont, "x", nil)
		_ = s.Report("x", RuntimeOutcome{ScoreScaled: fp(1)})
		step(t, s, cont, "y", nil)
		_ = s.Report("y", RuntimeOutcome{ScoreScaled: fp(1)})
		step(t, s, cont, "last", nil)
		if g := s.Globals["g"]; !g.MeasureStatus || g.Measure != 1 || !g.Satisfied {
			t.Fatalf("c's rollup did not reach g: %+v", g)
		}
		step(t, s, exitAll, "", nil)
		// The new attempt on the course starts the course's globals afresh; c's attempt
		// belongs to the last one and does not write its old measure back when first
		// reports, so c is not skipped.
		step(t, s, start, "first", nil)
		_ = s.Report("first", passed())
		if g, ok := s.Globals["g"]; ok && g.MeasureStatus {
			t.Errorf("the old attempt on c wrote g again: %+v", g)
		}
		step(t, s, cont, "x", nil)
	})
}
