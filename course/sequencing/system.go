package sequencing

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
