package sequencing

// deliveryRequest is the Delivery Request Process (DB.1.1): only a leaf is delivered, and
// neither it nor any ancestor may be disabled or past its limit conditions.
func (s *State) deliveryRequest(n *node) error {
	if !n.leaf() {
		return ErrDeliverCluster
	}
	for _, a := range n.path() {
		if s.checkActivity(a) {
			return ErrDeliverDisabled
		}
	}
	return nil
}

// contentDelivery is the Content Delivery Environment Process (DB.2): attempts begin on
// every activity of the path that is not active (resuming a suspended one instead of
// counting a new attempt), and the activity becomes the Current Activity. It reports
// whether the leaf's attempt resumes a suspended one, so the runtime keeps its data.
func (s *State) contentDelivery(n *node, retry bool) (resumed bool, err error) {
	if cur := s.cur(); cur != nil && s.st(cur).Active {
		return false, ErrDeliverActive
	}
	if n.a.ID != s.Suspended {
		s.clearSuspended(n)
	}
	s.terminateDescendentAttempts(n)
	// Each delivery opens a new session of the leaf: the last one's time joins its attempt.
	if st := s.st(n); st.SessionSeconds > 0 {
		st.AttemptSeconds += st.SessionSeconds
		st.ActivitySeconds += st.SessionSeconds
		st.SessionSeconds = 0
	}
	for _, a := range n.path() {
		st := s.st(a)
		if st.Active {
			continue
		}
		if a.def.Tracked {
			if st.IsSuspended {
				st.IsSuspended = false
				if a == n {
					resumed = true
				}
			} else {
				st.AttemptCount++
				if st.AttemptCount == 1 {
					st.ProgressStatus = true
				}
				if a.parent != nil {
					st.ParentAttempt = s.st(a.parent).AttemptCount
				}
				s.beginAttempt(a, retry)
			}
		}
		st.Active = true
	}
	s.Current = n.a.ID
	s.Suspended = ""
	return resumed, nil
}

// beginAttempt initializes the objective and attempt progress information for a new
// attempt (DB.2): a new attempt starts with nothing known, as its run-time data does;
// global objectives keep what earlier attempts wrote and are read through the maps.
func (s *State) beginAttempt(n *node, retry bool) {
	st := s.st(n)
	st.AttemptProgressStatus, st.Completed = false, false
	st.AmountStatus, st.Amount = false, 0
	st.ContentSetCompletion, st.ContentSetSuccess = false, false
	st.AttemptSeconds = 0
	for _, os := range st.Objectives {
		*os = ObjectiveState{}
	}
	if n.parent == nil && st.AttemptCount > 1 {
		// Global objectives the State keeps belong to the attempt on the course when
		// objectivesGlobalToSystem is false: a new attempt starts them afresh (ADL OB-03b).
		// By default (true) they are the learner's and outlive the attempt (ADL RU-13a).
		s.clearCourseGlobals()
	}
	if n.leaf() || !retry {
		return
	}
	// A cluster retried judges its new attempt by its children's new attempts when
	// useCurrentAttemptProgressInfo / useCurrentAttemptObjectiveInfo say so (true by
	// default): what the descendants did before the retry no longer rolls up (ADL OB-09a).
	// Flowing back into a cluster keeps its children's information (ADL SX-07d). Global
	// objectives keep what was written.
	progress := n.def.UseCurrentAttemptProgressInfo
	objective := n.def.UseCurrentAttemptObjectiveInfo
	for _, d := range s.t.nodes {
		if !n.isAncestorOf(d) {
			continue
		}
		ds := s.st(d)
		if progress {
			ds.AttemptProgressStatus, ds.Completed = false, false
			ds.AmountStatus, ds.Amount = false, 0
			ds.ContentSetCompletion = false
		}
		if objective {
			for _, os := range ds.Objectives {
				*os = ObjectiveState{}
			}
			ds.ContentSetSuccess = false
		}
	}
}

// courseScopedGlobals reports whether the global objectives the State keeps belong to the
// attempt on the course (objectivesGlobalToSystem false) rather than to the learner.
func (s *State) courseScopedGlobals() bool {
	if s.base != nil {
		return s.base.courseScopedGlobals()
	}
	x := s.t.root.a.Extra
	return s.Globals != nil && x != nil && x.ObjectivesGlobalToSystem != nil && !*x.ObjectivesGlobalToSystem
}

// clearCourseGlobals starts the course's own global objectives afresh for a new attempt on
// the course (see courseScopedGlobals); a look-ahead copy only hides them from itself.
func (s *State) clearCourseGlobals() {
	if !s.courseScopedGlobals() {
		return
	}
	if o, ok := s.g.(*overlay); ok {
		o.own, o.cleared = MapGlobals{}, true
		return
	}
	clear(s.Globals)
}

// clearSuspended is the Clear Suspended Activity Subprocess (DB.2.1): delivering something
// other than the suspended activity clears the suspension on its path up to the common
// ancestor.
func (s *State) clearSuspended(n *node) {
	sus := s.node(s.Suspended)
	if sus == nil {
		return
	}
	common := commonAncestor(n, sus)
	for a := sus; a != nil; a = a.parent {
		st := s.st(a)
		if a.leaf() {
			st.IsSuspended = false
		} else {
			any := false
			for _, c := range a.children {
				if s.st(c).IsSuspended {
					any = true
				}
			}
			if !any {
				st.IsSuspended = false
			}
		}
		if a == common {
			break
		}
	}
	s.Suspended = ""
}
