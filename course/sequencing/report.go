package sequencing

// ActivityReport is what the sequencer holds of one activity, in the terms reports use
// (progress/detail's activityDetails and the FULL post-back): the SN book's tracking model as
// sequencing sees it, with objective map reads applied, so a report shows the statuses the
// sequencer decides with rather than only what the activity's content said.
type ActivityReport struct {
	// Attempts is Activity Attempt Count.
	Attempts int
	// Active and Suspended are Activity is Active and Activity is Suspended.
	Active, Suspended bool
	// Completed and Satisfied are the attempt's completion and the primary objective's
	// satisfaction; nil when unknown.
	Completed, Satisfied *bool
	// Amount is the attempt completion amount (0-1); nil when unknown.
	Amount *float64
	// Objectives are the activity's objectives, primary first; the primary objective of an
	// activity whose manifest names none has the empty ID.
	Objectives []ObjectiveReport
}

// ObjectiveReport is one objective of an ActivityReport.
type ObjectiveReport struct {
	ID      string
	Primary bool
	// Satisfied and Completed are nil when unknown; Measure (normalized, -1..1) nil when
	// unknown.
	Satisfied, Completed *bool
	Measure              *float64
	// Amount is the objective's progress measure (the activity's completion amount for the
	// primary objective); nil when unknown.
	Amount *float64
	// Raw, Min and Max are the objective's scores as its adlseq maps read them; nil when
	// unknown.
	Raw, Min, Max *float64
}

// Tracking reports the sequencer's view of activity id; false when the course has no such
// activity. It changes nothing the State stores.
func (s *State) Tracking(id string) (ActivityReport, bool) {
	n := s.t.byID[id]
	if n == nil {
		return ActivityReport{}, false
	}
	st := s.st(n)
	r := ActivityReport{Attempts: st.AttemptCount, Active: st.Active, Suspended: st.IsSuspended,
		Completed: s.completed(n).ptr(), Satisfied: s.satisfied(n, n.primary()).ptr()}
	if a, ok := s.amount(n); ok {
		r.Amount = &a
	}
	for _, o := range n.objs {
		or := ObjectiveReport{ID: o.ID, Primary: o.Primary, Satisfied: s.satisfied(n, o).ptr(), Completed: s.objectiveCompleted(n, o).ptr()}
		if m, ok := s.measure(n, o); ok {
			or.Measure = &m
		}
		if a, ok := s.amountOf(n, o); ok {
			or.Amount = &a
		}
		or.Raw, or.Min, or.Max = s.score(n, o, scoreRaw), s.score(n, o, scoreMin), s.score(n, o, scoreMax)
		r.Objectives = append(r.Objectives, or)
	}
	return r, true
}

// ptr is t as a report writes it: nil when unknown.
func (t tri) ptr() *bool {
	if t == unknown {
		return nil
	}
	b := t == yes
	return &b
}
