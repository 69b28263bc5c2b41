package course

import "slices"

// The SCORM 2004 sequencing definition of an activity as the sequencer reads it: merged with
// the sequencingCollection entry it names, and with the defaults of the elements the manifest
// leaves out (IMS SS / SCORM 2004 CAM tables) resolved once.

// EffectiveSequencing returns activity a's sequencing merged with the sequencingCollection
// entry its IDRef names: each element the item states replaces the collection's (IMS SS
// merges per element).
func (pkg *Package) EffectiveSequencing(a *Activity) Sequencing {
	var s Sequencing
	if a.Sequencing != nil {
		s = *a.Sequencing
	}
	if s.IDRef == "" || pkg.SequencingCollection == nil {
		return s
	}
	ref := pkg.SequencingCollection[s.IDRef]
	if ref == nil {
		return s
	}
	if s.ControlMode == nil {
		s.ControlMode = ref.ControlMode
	}
	if len(s.PreConditionRules)+len(s.ExitConditionRules)+len(s.PostConditionRules) == 0 {
		s.PreConditionRules, s.ExitConditionRules, s.PostConditionRules = ref.PreConditionRules, ref.ExitConditionRules, ref.PostConditionRules
	}
	if s.LimitConditions == nil {
		s.LimitConditions = ref.LimitConditions
	}
	if s.RollupRules == nil {
		s.RollupRules = ref.RollupRules
	}
	if len(s.Objectives) == 0 {
		s.Objectives = ref.Objectives
	}
	if len(s.ADLObjectives) == 0 {
		s.ADLObjectives = ref.ADLObjectives
	}
	if s.RandomizationControls == nil {
		s.RandomizationControls = ref.RandomizationControls
	}
	if s.DeliveryControls == nil {
		s.DeliveryControls = ref.DeliveryControls
	}
	if s.ConstrainChoice == nil && s.PreventActivation == nil {
		s.ConstrainChoice, s.PreventActivation = ref.ConstrainChoice, ref.PreventActivation
	}
	if s.RequiredForSatisfied == "" && s.RequiredForNotSatisfied == "" && s.RequiredForCompleted == "" &&
		s.RequiredForIncomplete == "" && s.MeasureSatisfactionIfActive == nil {
		s.RequiredForSatisfied, s.RequiredForNotSatisfied = ref.RequiredForSatisfied, ref.RequiredForNotSatisfied
		s.RequiredForCompleted, s.RequiredForIncomplete = ref.RequiredForCompleted, ref.RequiredForIncomplete
		s.MeasureSatisfactionIfActive = ref.MeasureSatisfactionIfActive
	}
	return s
}

// PrimaryFirst returns the sequencing's objectives, primary first. An activity whose manifest
// declares no primary objective still has one for rollup (it contributes its satisfaction
// and measure to its parent), stored under the empty id.
func (seq Sequencing) PrimaryFirst() []Objective {
	var out []Objective
	for _, o := range seq.Objectives {
		if o.Primary {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		out = append(out, Objective{Primary: true})
	}
	for _, o := range seq.Objectives {
		if !o.Primary {
			out = append(out, o)
		}
	}
	return out
}

// Resolved is a sequencing definition's controls with the SCORM defaults of absent elements
// applied (IMS SS / SCORM 2004 CAM tables).
type Resolved struct {
	Choice, ChoiceExit, Flow, ForwardOnly                  bool
	UseCurrentAttemptProgressInfo                          bool
	UseCurrentAttemptObjectiveInfo                         bool
	Tracked, CompletionSetByContent, ObjectiveSetByContent bool
	ConstrainChoice, PreventActivation                     bool
	MeasureSatisfactionIfActive                            bool
	RollupObjectiveSatisfied, RollupProgressCompletion     bool
	// MeasureWeight is objectiveMeasureWeight (default 1).
	MeasureWeight float64
	// AttemptLimit is limitConditions attemptLimit; 0 is no limit.
	AttemptLimit int
}

// Resolved applies the defaults to seq's controls.
func (seq Sequencing) Resolved() Resolved {
	or := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	var cm ControlMode
	if seq.ControlMode != nil {
		cm = *seq.ControlMode
	}
	var dc DeliveryControls
	if seq.DeliveryControls != nil {
		dc = *seq.DeliveryControls
	}
	var rr RollupRules
	if seq.RollupRules != nil {
		rr = *seq.RollupRules
	}
	r := Resolved{
		Choice: or(cm.Choice, true), ChoiceExit: or(cm.ChoiceExit, true), Flow: or(cm.Flow, false), ForwardOnly: or(cm.ForwardOnly, false),
		UseCurrentAttemptProgressInfo: or(cm.UseCurrentAttemptProgressInfo, true), UseCurrentAttemptObjectiveInfo: or(cm.UseCurrentAttemptObjectiveInfo, true),
		Tracked: or(dc.Tracked, true), CompletionSetByContent: or(dc.CompletionSetByContent, false), ObjectiveSetByContent: or(dc.ObjectiveSetByContent, false),
		ConstrainChoice: or(seq.ConstrainChoice, false), PreventActivation: or(seq.PreventActivation, false),
		MeasureSatisfactionIfActive: or(seq.MeasureSatisfactionIfActive, true),
		RollupObjectiveSatisfied:    or(rr.RollupObjectiveSatisfied, true), RollupProgressCompletion: or(rr.RollupProgressCompletion, true),
		MeasureWeight: 1,
	}
	if rr.ObjectiveMeasureWeight != nil {
		r.MeasureWeight = *rr.ObjectiveMeasureWeight
	}
	if lc := seq.LimitConditions; lc != nil && lc.AttemptLimit != nil {
		r.AttemptLimit = *lc.AttemptLimit
	}
	return r
}

// SystemObjectives lists the SCORM 2004 global objectives of pkg that belong to the learner rather
// than to one attempt on the course: every target its objective maps (imsss and adlseq)
// name, sorted, when the organization's objectivesGlobalToSystem is true (the SCORM
// default); nil when it is false or no map names one. The learner's path shares these across the
// learner's courses by loading them into the sequencing State's Globals before a request and
// storing what the request changed after it (ADL SX-11c reads what SX-11a wrote).
func (pkg *Package) SystemObjectives() []string {
	if pkg == nil || pkg.Root == nil {
		return nil
	}
	if x := pkg.Root.Extra; x != nil && x.ObjectivesGlobalToSystem != nil && !*x.ObjectivesGlobalToSystem {
		return nil
	}
	var ids []string
	add := func(seq *Sequencing) {
		if seq == nil {
			return
		}
		for _, o := range seq.Objectives {
			for _, m := range o.Maps {
				ids = append(ids, m.TargetObjectiveID)
			}
		}
		for _, ao := range seq.ADLObjectives {
			for _, m := range ao.Maps {
				ids = append(ids, m.TargetObjectiveID)
			}
		}
	}
	pkg.Root.Walk(func(a *Activity) { add(a.Sequencing) })
	for _, seq := range pkg.SequencingCollection {
		add(seq)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) > 0 && ids[0] == "" {
		ids = ids[1:]
	}
	if len(ids) == 0 {
		return nil
	}
	return ids
}
