package rollup

import (
	"maps"
	"slices"

	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/sequencing"
)

// ApplySequencing writes what a SCORM 2004 registration's sequencer holds into its activity
// tree (Details' result): each activity's attempt count and suspension, and each objective's
// satisfaction, measure and completion as sequencing sees them (objective map reads applied,
// so an objective satisfied through a global objective reads satisfied, as in Rustici
// Engine's report). Activity completion and success stay the rollup's, so the tree's root
// and the registration's summary always agree. A nil st changes nothing.
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
// when the tree has none (an objective the sequencing collection declares). Only what the
// sequencer knows replaces what the content reported.
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
	if o.Satisfied != nil {
		t.ObjectiveSuccess = successWord(*o.Satisfied)
	}
	if o.Completed != nil {
		t.ObjectiveCompletion = completionWord(*o.Completed)
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
