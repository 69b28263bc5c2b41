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
		if !ok || (s.st(n).Active && !n.def.MeasureSatisfactionIfActive) {
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

// measure is an objective's normalized measure, read through readNormalizedMeasure maps:
// an objective that reads its measure from a global objective has the global's.
func (s *State) measure(n *node, o course.Objective) (float64, bool) {
	reads := false
	for _, m := range o.Maps {
		if !m.ReadNormalizedMeasure || m.TargetObjectiveID == "" {
			continue
		}
		reads = true
		if g, ok := s.g.Objective(m.TargetObjectiveID); ok && g.MeasureStatus {
			return g.Measure, true
		}
	}
	if reads {
		// As for satisfaction: a mapped measure is the global one, unknown until someone
		// writes it, whatever the local objective kept from an earlier attempt (ADL's
		// reference reads the shared record, "unknown" included; OB-03b: a cluster whose
		// course attempt ended without suspension reads the cleared global, not its old
		// rollup).
		return 0, false
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
	if c, ok := s.readCompletion(n, o); ok {
		return c
	}
	if os := s.objState(n, o); os.CompletionStatus {
		return triOf(os.Completed)
	}
	return unknown
}

// objectiveCompleted is an objective's completion as the run-time's
// cmi.objectives.n.completion_status starts with it: what its adlseq readCompletionStatus
// maps read first, even for a primary objective completed by measure, whose attempt
// completion rules judge by the measure (ADL CO-02a) while its objective entry shows the
// global's status (ADL CO-10).
func (s *State) objectiveCompleted(n *node, o course.Objective) tri {
	if c, ok := s.readCompletion(n, o); ok {
		return c
	}
	return s.completedOf(n, o)
}

// readCompletion is the completion an objective's adlseq readCompletionStatus maps (true by
// default) read from a global objective; false when none holds one.
func (s *State) readCompletion(n *node, o course.Objective) (tri, bool) {
	for _, m := range n.adlMapsOf(o.ID) {
		if !boolOr(m.ReadCompletionStatus, true) {
			continue
		}
		if g, ok := s.g.Objective(m.TargetObjectiveID); ok && g.CompletionStatus {
			return triOf(g.Completed), true
		}
	}
	return unknown, false
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

// amountOf is an objective's progress measure (cmi.objectives.n.progress_measure): the
// activity's attempt completion amount for the primary objective, else what the objective's
// adlseq readProgressMeasure maps read, else its local value.
func (s *State) amountOf(n *node, o course.Objective) (float64, bool) {
	if o.Primary {
		return s.amount(n)
	}
	for _, m := range n.adlMapsOf(o.ID) {
		if !boolOr(m.ReadProgressMeasure, true) {
			continue
		}
		if g, ok := s.g.Objective(m.TargetObjectiveID); ok && g.ProgressMeasureKnown {
			return g.ProgressMeasure, true
		}
	}
	os := s.objState(n, o)
	return os.Amount, os.AmountStatus
}

// scoreKind names one of the three scores (raw, min, max) the 4th edition's adlseq maps
// share, so reading and writing them is one piece of code with the map flag and the fields
// that belong to each.
type scoreKind int8

const (
	scoreRaw scoreKind = iota
	scoreMin
	scoreMax
)

// scoreKinds are the scores adlseq maps share, in the order cmi.objectives.n.score names them.
var scoreKinds = [...]scoreKind{scoreRaw, scoreMin, scoreMax}

// reads reports whether an adlseq map reads the score (readRawScore, readMinScore,
// readMaxScore: true by default).
func (k scoreKind) reads(m course.ADLObjectiveMap) bool {
	return boolOr([...]*bool{m.ReadRawScore, m.ReadMinScore, m.ReadMaxScore}[k], true)
}

// writes reports whether an adlseq map writes the score (writeRawScore, writeMinScore,
// writeMaxScore: false by default).
func (k scoreKind) writes(m course.ADLObjectiveMap) bool {
	return boolOr([...]*bool{m.WriteRawScore, m.WriteMinScore, m.WriteMaxScore}[k], false)
}

// global is the score's field of a global objective.
func (k scoreKind) global(g *GlobalObjective) **float64 {
	return [...]**float64{&g.Raw, &g.Min, &g.Max}[k]
}

// local is the score's field of an objective's tracking data.
func (k scoreKind) local(os *ObjectiveState) **float64 {
	return [...]**float64{&os.Raw, &os.Min, &os.Max}[k]
}

// score is an objective's raw, min or max score as the run-time's cmi.objectives.n.score
// starts with it: what its adlseq maps that read the score find in a global objective, else
// the objective's local value; nil when neither knows it.
func (s *State) score(n *node, o course.Objective, k scoreKind) *float64 {
	for _, m := range n.adlMapsOf(o.ID) {
		if !k.reads(m) {
			continue
		}
		if g, ok := s.g.Objective(m.TargetObjectiveID); ok && *k.global(&g) != nil {
			return *k.global(&g)
		}
	}
	return *k.local(s.objState(n, o))
}

// writeObjectives copies an activity's known local values to the global objectives its
// write maps name: satisfaction and measure through imsss maps, completion, progress measure
// and raw/min/max score through adlseq maps (the primary objective's completion and progress
// are the activity's attempt's). Called whenever sequencing has set them (rollup, end of
// attempt, report). Unknown values write nothing here: an objective the content made unknown
// is cleared by Report (clearGlobals). An activity that is not tracked writes nothing: it
// records no tracking data (ADL CO-10: its by-measure judgement of a read progress measure
// under its own threshold must not reach the global).
func (s *State) writeObjectives(n *node) {
	if !n.def.Tracked {
		return
	}
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
	st := s.st(n)
	for _, o := range n.objs {
		os := s.objState(n, o)
		completionKnown, completed := os.CompletionStatus, os.Completed
		amountKnown, amount := os.AmountStatus, os.Amount
		if o.Primary {
			completionKnown, completed = st.AttemptProgressStatus, st.Completed
			amountKnown, amount = st.AmountStatus, st.Amount
		}
		for _, m := range n.adlMapsOf(o.ID) {
			g, _ := s.g.Objective(m.TargetObjectiveID)
			changed := false
			if boolOr(m.WriteCompletionStatus, false) && completionKnown {
				g.CompletionStatus, g.Completed, changed = true, completed, true
			}
			if boolOr(m.WriteProgressMeasure, false) && amountKnown {
				g.ProgressMeasureKnown, g.ProgressMeasure, changed = true, amount, true
			}
			for _, k := range scoreKinds {
				if v := *k.local(os); v != nil && k.writes(m) {
					*k.global(&g), changed = v, true
				}
			}
			if changed {
				s.g.SetObjective(m.TargetObjectiveID, g)
			}
		}
	}
}

// clearGlobals makes an objective's satisfaction (satisfied) or completion (!satisfied)
// unknown in the global objectives its write maps name: the content set the status to
// unknown, and the global objective the activity shares says so too (ADL OB-17a, SX-11b).
func (s *State) clearGlobals(n *node, o course.Objective, satisfied bool) {
	if satisfied {
		for _, m := range o.Maps {
			if m.TargetObjectiveID == "" || !m.WriteSatisfiedStatus {
				continue
			}
			if g, ok := s.g.Objective(m.TargetObjectiveID); ok && g.SatisfiedStatus {
				g.SatisfiedStatus, g.Satisfied = false, false
				s.g.SetObjective(m.TargetObjectiveID, g)
			}
		}
		return
	}
	for _, m := range n.adlMapsOf(o.ID) {
		if !boolOr(m.WriteCompletionStatus, false) {
			continue
		}
		if g, ok := s.g.Objective(m.TargetObjectiveID); ok && g.CompletionStatus {
			g.CompletionStatus, g.Completed = false, false
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
// rollup would otherwise only run when something under them reports). A leaf that reads is
// not rolled up itself, only from its parent: what it reads is seen when read (completed,
// satisfied), and rolling it up would write its own judgement of what another activity
// just wrote back over it (ADL CO-10: a by-measure completion under another threshold).
// A leaf rolls up when it reports or its attempt ends, as the book's Overall Rollup does.
// An activity whose attempt belongs to an earlier attempt of an ancestor (stale) is left
// as that attempt ended. Each activity rolls up once, in the order its first reader comes:
// the readers of one cluster (every SCO of a course whose objectives map to globals) share
// its rollup, which a second time would only repeat (the rollup of a, up to the root, is a
// function of what is below it; the look-ahead of every entry of the table of contents runs
// this, so thirty readers under one cluster made the player's view cubic in the course).
func (s *State) refreshReaders() {
	var done map[*node]bool
	for _, n := range s.t.nodes {
		if !n.readsGlobals() {
			continue
		}
		a := n
		if n.leaf() {
			a = n.parent
		}
		if a == nil || done[a] {
			continue
		}
		if done == nil {
			done = map[*node]bool{}
		}
		done[a] = true
		if s.stale(a) {
			// Nothing of the current attempt on its ancestors rolls up into an
			// attempt that belongs to an earlier one: rolling it up again would write
			// that old judgement back over the global objectives (ADL OB-03b: a new
			// attempt on the course cleared them).
			continue
		}
		s.overallRollup(a)
	}
}

// stale reports whether the activity's attempt belongs to an earlier attempt of one of its
// ancestors than their current one: it, or an activity above it, has not begun an attempt
// since its parent's began (the parent-to-child test of earlier, applied up to the root).
func (s *State) stale(n *node) bool {
	for c := n; c.parent != nil; c = c.parent {
		st := s.st(c)
		if st.AttemptCount > 0 && st.ParentAttempt != 0 && st.ParentAttempt != s.st(c.parent).AttemptCount {
			return true
		}
	}
	return false
}
