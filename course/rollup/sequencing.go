package rollup

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/sequencing"
)

// UseSequencing makes the SCORM 2004 sequencer the one rollup of a registration instance that
// has sequencing state: each activity's completion, success, score (its primary objective's
// measure) and completion amount become what st holds (sequencing.State.Tracking, objective
// map reads applied), and the registration's the root's, so progress, progress/detail and the
// post-backs report the statuses the learner's own sequencing decides with instead of a
// second SN rollup of the CMI data (sn.go), which can disagree with it (rollup rules over
// skipped or untracked children, measure-weighted rollup, objective maps, End Attempt; see
// TestADLRollupAgreement). An activity whose attempt began and whose completion the
// sequencer does not know yet reports INCOMPLETE, as the CMI rollup does.
//
// Of the settings, two apply to the sequencer's figures as a report rule, since they only
// say how an activity's own figures are shown: SatisfiedCausesCompletion (a PASSED activity
// reports COMPLETED) and ScaleRawScore (a leaf without a measure reports the score scaled
// from its raw/min/max). Neither feeds the sequencer's rollup of the parents.
// EmptySetToUnknown does not apply: the sequencer rolls an empty contributing set up
// satisfied and completed, as ADL's RU-11 requires of it (docs/decisions.md). state is the
// stored run-time data (for ScaleRawScore); a nil st changes nothing.
func (r *Result) UseSequencing(pkg *course.Package, st *sequencing.State, state State, s Settings) {
	if st == nil || pkg == nil || pkg.Root == nil || r.Activities == nil {
		return
	}
	// What the tree shows of the sequencer beyond the outcomes (ApplySequencing), for Digest.
	type shown struct {
		ID         string
		Suspended  bool
		Objectives []sequencing.ObjectiveReport
	}
	var seen []shown
	pkg.Root.Walk(func(a *course.Activity) {
		out := r.Activities[a.ID]
		rep, ok := st.Tracking(a.ID)
		if out == nil || !ok {
			return
		}
		seen = append(seen, shown{a.ID, rep.Suspended, rep.Objectives})
		out.Attempts = rep.Attempts
		out.Completion, out.Success, out.Score, out.CompletionAmount = registration.Unknown, registration.Unknown, nil, nil
		switch {
		case rep.Completed != nil:
			out.Completion = completionWord(*rep.Completed)
		case rep.Attempts > 0:
			out.Completion = registration.Incomplete
		}
		if rep.Satisfied != nil {
			out.Success = successWord(*rep.Satisfied)
		}
		for _, o := range rep.Objectives {
			if o.Primary && o.Measure != nil {
				out.Score = ptr(round4(*o.Measure * 100))
			}
		}
		if out.Score == nil && s.ScaleRawScore && len(a.Children) == 0 {
			if c := state[a.ID]; c != nil && c.ScoreScaled == nil && c.ScoreRaw != nil && c.ScoreMin != nil && c.ScoreMax != nil && *c.ScoreMax > *c.ScoreMin {
				out.Score = ptr(round4((*c.ScoreRaw - *c.ScoreMin) / (*c.ScoreMax - *c.ScoreMin) * 100))
			}
		}
		if rep.Amount != nil {
			out.CompletionAmount = ptr(round4(*rep.Amount))
		}
		if s.SatisfiedCausesCompletion && out.Success == registration.Passed {
			out.Completion = registration.Completed
		}
	})
	// Marshalling plain values and a map (whose keys json sorts) cannot fail.
	r.sequenced, _ = json.Marshal([]any{seen, st.Globals})
	root := r.Activities[pkg.Root.ID]
	if root == nil {
		return
	}
	r.Completion, r.Success, r.Score, r.CompletionAmount = root.Completion, root.Success, root.Score, root.CompletionAmount
	if r.CompletionAmount == nil && root.Attempts > 0 {
		// Without a progress measure, the share of tracked launchable leaves the sequencer
		// holds completed, as the CMI rollup reports it.
		total, done := 0, 0
		pkg.Root.Walk(func(a *course.Activity) {
			dc := pkg.EffectiveSequencing(a).DeliveryControls
			if len(a.Children) > 0 || a.LaunchURL == "" || (dc != nil && dc.Tracked != nil && !*dc.Tracked) {
				return
			}
			total++
			if rep, ok := st.Tracking(a.ID); ok && rep.Completed != nil && *rep.Completed {
				done++
			}
		})
		if total > 0 {
			r.CompletionAmount = ptr(round4(float64(done) / float64(total)))
		}
	}
}

// ApplySequencing writes what a SCORM 2004 registration's sequencer holds into its activity
// tree (Details' result): each activity's attempt count and suspension, and each objective's
// satisfaction, measure and completion as sequencing sees them (objective map reads applied,
// so an objective satisfied through a global objective reads satisfied, as in Rustici
// Engine's report). Activity completion, success and score come from the rollup, which
// UseSequencing already took from the same State, so the tree's root and the registration's
// summary agree. A nil st changes nothing.
func ApplySequencing(tree *registration.ActivityResult, st *sequencing.State) {
	if tree == nil || st == nil {
		return
	}
	var walk func(d *registration.ActivityResult)
	walk = func(d *registration.ActivityResult) {
		if r, ok := st.Tracking(d.ID); ok {
			d.Attempts, d.Suspended = r.Attempts, r.Suspended
			for _, o := range r.Objectives {
				applyObjective(d, o)
			}
		}
		for _, c := range d.Children {
			walk(c)
		}
	}
	walk(tree)
}

// applyObjective writes one objective the sequencer tracks over the tree's entry for it (the
// primary objective an activity's manifest leaves unnamed is the tree's PRIMARYOBJ), adding it
// when the tree has none (an objective the sequencing collection declares). The sequencer's
// word is the report's, unknown included: the content's cmi.objectives of an untracked
// activity, or of an attempt a retry has since replaced, stay in the run-time data and are
// not the objective's status (ADL OB-11a, RU-13a). A primary objective whose completion the
// sequencer does not know keeps the activity's (INCOMPLETE once its attempt began).
func applyObjective(d *registration.ActivityResult, o sequencing.ObjectiveReport) {
	i := -1
	for k, t := range d.Objectives {
		if (o.Primary && t.Primary) || (!o.Primary && !t.Primary && t.ID == o.ID) {
			i = k
			break
		}
	}
	if i < 0 {
		id := o.ID
		if id == "" {
			id = registration.ImplicitPrimaryObjective
		}
		d.Objectives = append(d.Objectives, registration.ObjectiveResult{ID: id, Primary: o.Primary,
			ObjectiveCompletion: registration.Unknown, ObjectiveSuccess: registration.Unknown})
		i = len(d.Objectives) - 1
	}
	t := &d.Objectives[i]
	t.ObjectiveSuccess, t.Score = registration.Unknown, nil
	if o.Satisfied != nil {
		t.ObjectiveSuccess = successWord(*o.Satisfied)
	}
	switch {
	case o.Completed != nil:
		t.ObjectiveCompletion = completionWord(*o.Completed)
	case !o.Primary:
		t.ObjectiveCompletion = registration.Unknown
	}
	if o.Measure != nil {
		t.Score = &registration.Scaled{Scaled: round4(*o.Measure * 100)}
	}
}

// GlobalObjectives lists a registration's global objectives (the objectives its activities
// share through objective maps) as the progress summary's globalObjectives reports them, in
// id order. g is what the registration's sequencing state keeps (sequencing.State.Globals).
func GlobalObjectives(g sequencing.MapGlobals) []registration.ObjectiveResult {
	out := []registration.ObjectiveResult{}
	for _, id := range slices.Sorted(maps.Keys(g)) {
		g := g[id]
		o := registration.ObjectiveResult{ID: id, ObjectiveCompletion: registration.Unknown, ObjectiveSuccess: registration.Unknown}
		if g.SatisfiedStatus {
			o.ObjectiveSuccess = successWord(g.Satisfied)
		}
		if g.CompletionStatus {
			o.ObjectiveCompletion = completionWord(g.Completed)
		}
		if g.MeasureStatus {
			o.Score = &registration.Scaled{Scaled: round4(g.Measure * 100)}
		}
		out = append(out, o)
	}
	return out
}

func successWord(satisfied bool) string {
	if satisfied {
		return registration.Passed
	}
	return registration.Failed
}

func completionWord(completed bool) string {
	if completed {
		return registration.Completed
	}
	return registration.Incomplete
}
