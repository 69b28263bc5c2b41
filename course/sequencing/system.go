package sequencing

import (
	"slices"

	"github.com/lectern-lms/lectern/course"
)

// SystemObjectives lists the global objectives of pkg that belong to the learner rather
// than to one attempt on the course: every target its objective maps (imsss and adlseq)
// name, sorted, when the organization's objectivesGlobalToSystem is true (the SCORM
// default); nil when it is false or no map names one. The caller shares these across the
// learner's courses by loading them into the State's Globals before a request and storing
// what the request changed after it (ADL SX-11c reads what SX-11a wrote).
func SystemObjectives(pkg *course.Package) []string {
	if pkg == nil || pkg.Root == nil {
		return nil
	}
	if x := pkg.Root.Extra; x != nil && x.ObjectivesGlobalToSystem != nil && !*x.ObjectivesGlobalToSystem {
		return nil
	}
	var ids []string
	add := func(seq *course.Sequencing) {
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
	pkg.Root.Walk(func(a *course.Activity) { add(a.Sequencing) })
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

// ShareGlobals copies into the State's own Globals what learner (the learner's global
// objectives across courses) holds for ids, so the State reads what another course wrote;
// it reports whether that changed anything. An id learner does not hold keeps the State's
// value.
func (s *State) ShareGlobals(learner MapGlobals, ids []string) bool {
	if s.Globals == nil {
		s.Globals = MapGlobals{}
	}
	changed := false
	for _, id := range ids {
		g, ok := learner[id]
		if !ok {
			continue
		}
		if old, had := s.Globals[id]; !had || !sameGlobal(old, g) {
			s.Globals[id], changed = g, true
		}
	}
	return changed
}

// SharedChanges returns the State's global objectives among ids whose value differs from
// learner's: what the caller stores back into the learner's global objectives.
func (s *State) SharedChanges(learner MapGlobals, ids []string) MapGlobals {
	var out MapGlobals
	for _, id := range ids {
		g, ok := s.Globals[id]
		if !ok {
			continue
		}
		if old, had := learner[id]; had && sameGlobal(old, g) {
			continue
		}
		if out == nil {
			out = MapGlobals{}
		}
		out[id] = g
	}
	return out
}

// sameGlobal compares two global objectives by value (their scores are pointers).
func sameGlobal(a, b GlobalObjective) bool {
	eq := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	if !eq(a.Raw, b.Raw) || !eq(a.Min, b.Min) || !eq(a.Max, b.Max) {
		return false
	}
	a.Raw, a.Min, a.Max, b.Raw, b.Min, b.Max = nil, nil, nil, nil, nil, nil
	return a == b
}
