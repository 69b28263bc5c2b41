package sequencing

import "github.com/lectern-lms/lectern/course"

// tri is the book's three-valued truth: a rule condition about an unknown status is
// unknown, and negating unknown leaves it unknown.
type tri int8

const (
	unknown tri = iota
	no
	yes
)

func triOf(b bool) tri {
	if b {
		return yes
	}
	return no
}

func (t tri) not() tri {
	switch t {
	case yes:
		return no
	case no:
		return yes
	}
	return unknown
}

func (n *node) primary() course.Objective { return n.objs[0] }

// objective finds an activity's objective by id ("" or an unknown id: the primary one, as a
// rule condition without referencedObjective means the rolled-up objective).
func (n *node) objective(id string) course.Objective {
	if id != "" {
		for _, o := range n.objs {
			if o.ID == id {
				return o
			}
		}
	}
	return n.primary()
}

func (s *State) objState(n *node, o course.Objective) *ObjectiveState {
	st := s.st(n)
	os := st.Objectives[o.ID]
	if os == nil {
		os = &ObjectiveState{}
		st.Objectives[o.ID] = os
	}
	return os
}

// satisfied is an objective's satisfaction as sequencing sees it: through its
// readSatisfiedStatus maps when it has any (SN book, objective map reads), else the local
// value.
func (s *State) satisfied(n *node, o course.Objective) tri {
	if o.SatisfiedByMeasure {
		// The measure decides (RB.1.2.a), read through the maps like any measure.
		m, ok := s.measure(n, o)
		if !ok || (s.st(n).Active && !n.measureSatisfactionIfActive()) {
			return unknown
		}
		min := 1.0
		if o.MinNormalizedMeasure != nil {
			min = *o.MinNormalizedMeasure
		}
		return triOf(m >= min)
	}
	reads := false
	for _, m := range o.Maps {
		if !m.ReadSatisfiedStatus || m.TargetObjectiveID == "" {
			continue
		}
		reads = true
		if g, ok := s.g.Objective(m.TargetObjectiveID); ok && g.SatisfiedStatus {
			return triOf(g.Satisfied)
		}
	}
	os := s.objState(n, o)
	if reads {
		// A mapped objective is the global one: until someone writes it, its status is
		// unknown, whatever the local attempt says (ADL CM-13: an automatically
		// satisfied attempt does not hide the activity from choice).
		return unknown
	}
	if !os.ProgressStatus {
		return unknown
	}
	return triOf(os.Satisfied)
}

// measure is an objective's normalized measure, read through readNormalizedMeasure maps.
func (s *State) measure(n *node, o course.Objective) (float64, bool) {
	for _, m := range o.Maps {
		if !m.ReadNormalizedMeasure || m.TargetObjectiveID == "" {
			continue
		}
		if g, ok := s.g.Objective(m.TargetObjectiveID); ok && g.MeasureStatus {
			return g.Measure, true
		}
	}
	os := s.objState(n, o)
	return os.Measure, os.MeasureStatus
}

// adlMaps returns the 4th edition adlseq:mapInfo of the activity's primary objective: they
// carry completion status and progress measure to and from global objectives.
func (n *node) adlMaps() []course.ADLObjectiveMap { return n.adlMapsOf(n.primary().ID) }

// adlMapsOf returns the adlseq:mapInfo of the activity's objective id.
func (n *node) adlMapsOf(id string) []course.ADLObjectiveMap {
	if id == "" {
		return nil
	}
	for _, ao := range n.seq.ADLObjectives {
		if ao.ObjectiveID == id {
			return ao.Maps
		}
	}
	return nil
}

// completedOf is the completion a rule condition naming an objective sees: the activity's
// own for its primary objective, else what the objective's adlseq maps read (the 4th
// edition tracks completion per objective only through them).
func (s *State) completedOf(n *node, o course.Objective) tri {
	if o.Primary {
		return s.completed(n)
	}
	for _, m := range n.adlMapsOf(o.ID) {
		if !boolOr(m.ReadCompletionStatus, true) {
			continue
		}
		if g, ok := s.g.Objective(m.TargetObjectiveID); ok && g.CompletionStatus {
			return triOf(g.Completed)
		}
	}
	if os := s.objState(n, o); os.CompletionStatus {
		return triOf(os.Completed)
	}
	return unknown
}

// completed is the activity's attempt completion as sequencing sees it, read through
// adlseq readCompletionStatus maps (true by default) of its primary objective.
func (s *State) completed(n *node) tri {
	if ct := n.a.CompletionThreshold; ct != nil && ct.CompletedByMeasure {
		// The completion amount decides (RB.1.3.a), read through the maps.
		a, ok := s.amount(n)
		if !ok {
			return unknown
		}
		return triOf(a >= ct.MinProgressMeasure)
	}
	for _, m := range n.adlMaps() {
		if !boolOr(m.ReadCompletionStatus, true) {
			continue
		}
		if g, ok := s.g.Objective(m.TargetObjectiveID); ok && g.CompletionStatus {
			return triOf(g.Completed)
		}
	}
	st := s.st(n)
	if !st.AttemptProgressStatus {
		return unknown
	}
	return triOf(st.Completed)
}

// amount is the attempt completion amount, read through adlseq readProgressMeasure maps.
func (s *State) amount(n *node) (float64, bool) {
	for _, m := range n.adlMaps() {
		if !boolOr(m.ReadProgressMeasure, true) {
			continue
		}
		if g, ok := s.g.Objective(m.TargetObjectiveID); ok && g.ProgressMeasureKnown {
			return g.ProgressMeasure, true
		}
	}
	st := s.st(n)
	return st.Amount, st.AmountStatus
}

// writeObjectives copies an activity's known local values to the global objectives its
// write maps name. Called whenever sequencing has set them (rollup, end of attempt, report).
func (s *State) writeObjectives(n *node) {
	for _, o := range n.objs {
		os := s.objState(n, o)
		for _, m := range o.Maps {
			if m.TargetObjectiveID == "" || (!m.WriteSatisfiedStatus && !m.WriteNormalizedMeasure) {
				continue
			}
			g, _ := s.g.Objective(m.TargetObjectiveID)
			changed := false
			if m.WriteSatisfiedStatus && os.ProgressStatus {
				g.SatisfiedStatus, g.Satisfied, changed = true, os.Satisfied, true
			}
			if m.WriteNormalizedMeasure && os.MeasureStatus {
				g.MeasureStatus, g.Measure, changed = true, os.Measure, true
			}
			if changed {
				s.g.SetObjective(m.TargetObjectiveID, g)
			}
		}
	}
	for _, o := range n.objs[1:] {
		os := s.objState(n, o)
		for _, m := range n.adlMapsOf(o.ID) {
			if boolOr(m.WriteCompletionStatus, false) && os.CompletionStatus {
				g, _ := s.g.Objective(m.TargetObjectiveID)
				g.CompletionStatus, g.Completed = true, os.Completed
				s.g.SetObjective(m.TargetObjectiveID, g)
			}
		}
	}
	st := s.st(n)
	for _, m := range n.adlMaps() {
		wc, wp := boolOr(m.WriteCompletionStatus, false), boolOr(m.WriteProgressMeasure, false)
		if !wc && !wp {
			continue
		}
		g, _ := s.g.Objective(m.TargetObjectiveID)
		changed := false
		if wc && st.AttemptProgressStatus {
			g.CompletionStatus, g.Completed, changed = true, st.Completed, true
		}
		if wp && st.AmountStatus {
			g.ProgressMeasureKnown, g.ProgressMeasure, changed = true, st.Amount, true
		}
		if changed {
			s.g.SetObjective(m.TargetObjectiveID, g)
		}
	}
}

// readsGlobals reports whether any objective of the activity reads a global objective.
func (n *node) readsGlobals() bool {
	for _, o := range n.objs {
		for _, m := range o.Maps {
			if m.TargetObjectiveID != "" && (m.ReadSatisfiedStatus || m.ReadNormalizedMeasure) {
				return true
			}
		}
	}
	for _, m := range n.adlMaps() {
		if boolOr(m.ReadCompletionStatus, true) || boolOr(m.ReadProgressMeasure, true) {
			return true
		}
	}
	return false
}

// refreshReaders rolls up again every activity that reads global objectives, so what one
// activity wrote reaches the clusters of activities that were never attempted (their
// rollup would otherwise only run when something under them reports).
func (s *State) refreshReaders() {
	for _, n := range s.t.nodes {
		if n.readsGlobals() {
			s.rollupFrom(n, false)
		}
	}
}
