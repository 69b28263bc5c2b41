package sequencing

// Termination requests (TB.2.3).
const (
	termExit       = "exit"
	termExitAll    = "exitAll"
	termSuspendAll = "suspendAll"
	termAbandon    = "abandon"
	termAbandonAll = "abandonAll"
	// termExitParent is only ever returned by a post-condition rule (TB.2.2).
	termExitParent = "exitParent"
)

// endAttempt is the End Attempt Process (UP.4). A tracked leaf that was not suspended is
// completed and satisfied by the LMS when the content is not trusted to say so
// (completionSetByContent / objectiveSetByContent false, the defaults) and left it unknown; a
// cluster is suspended when one of its children is. The attempt ends and rolls up.
func (s *State) endAttempt(n *node) {
	st := s.st(n)
	if n.leaf() {
		if n.def.Tracked && !st.IsSuspended {
			if !n.def.CompletionSetByContent && !st.AttemptProgressStatus && !st.ContentSetCompletion {
				st.AttemptProgressStatus, st.Completed = true, true
			}
			if !n.def.ObjectiveSetByContent {
				os := s.objState(n, n.primary())
				if !os.ProgressStatus && !st.ContentSetSuccess {
					os.ProgressStatus, os.Satisfied = true, true
				}
			}
		}
	} else {
		st.IsSuspended = false
		for _, c := range n.children {
			if s.st(c).IsSuspended {
				st.IsSuspended = true
			}
		}
	}
	st.Active = false
	s.overallRollup(n)
}

// terminateDescendentAttempts is the Terminate Descendent Attempts Process (UP.3): the
// attempts on the activities between the current activity and its common ancestor with n
// (both excluded) end.
func (s *State) terminateDescendentAttempts(n *node) {
	cur := s.cur()
	if cur == nil {
		return
	}
	common := commonAncestor(cur, n)
	for a := cur; a != nil && a != common; a = a.parent {
		if a != cur {
			s.endAttempt(a)
		}
	}
}

// exitActionRules is the Sequencing Exit Action Rules Subprocess (TB.2.1): the first
// ancestor of the current activity, from the root down, whose exit rule fires ends every
// attempt below it and becomes the current activity.
func (s *State) exitActionRules() {
	cur := s.cur()
	if cur == nil {
		return
	}
	path := cur.path()
	for _, a := range path[:len(path)-1] {
		if s.rulesCheck(a, a.seq.ExitConditionRules, actExit) != "" {
			s.terminateDescendentAttempts(a)
			s.endAttempt(a)
			s.Current = a.a.ID
			return
		}
	}
}

// postConditionRules is the Sequencing Post Condition Rules Subprocess (TB.2.2): a
// suspended activity has none; otherwise the first post-condition rule that fires yields a
// termination request (exitParent, exitAll) or a sequencing request (retry, continue,
// previous); retryAll is both.
func (s *State) postConditionRules() (term string, seq string) {
	cur := s.cur()
	if cur == nil || s.st(cur).IsSuspended {
		return "", ""
	}
	switch s.rulesCheck(cur, cur.seq.PostConditionRules, actExitParent, actExitAll, actRetry, actRetryAll, actContinue, actPrevious) {
	case actExitParent:
		return termExitParent, ""
	case actExitAll:
		return termExitAll, ""
	case actRetry:
		return "", seqRetry
	case actRetryAll:
		return termExitAll, seqRetry
	case actContinue:
		return "", seqContinue
	case actPrevious:
		return "", seqPrevious
	}
	return "", ""
}

// terminationRequest is the Termination Request Process (TB.2.3). It returns the
// sequencing request that replaces the pending one, if any.
func (s *State) terminationRequest(req string) (string, error) {
	cur := s.cur()
	if cur == nil {
		return "", ErrTermNoCurrent
	}
	st := s.st(cur)
	if (req == termExit || req == termAbandon) && !st.Active {
		return "", ErrTermNotActive
	}
	switch req {
	case termExit:
		s.endAttempt(cur)
		s.exitActionRules()
		for {
			term, seq := s.postConditionRules()
			switch term {
			case termExitAll:
				if _, err := s.exitAll(); err != nil {
					return "", err
				}
				if seq == seqRetry {
					// A retry of the root is a new attempt on the course: its own
					// global objectives start afresh now, before the retry's flow
					// reads them, as ADL's reference clears them with the
					// termination (ADL RU-13d).
					s.clearCourseGlobals()
					return seqRetry, nil
				}
				return seqExit, nil
			case termExitParent:
				c := s.cur()
				if c.parent == nil {
					return "", ErrTermExitParentRoot
				}
				s.Current = c.parent.a.ID
				s.endAttempt(c.parent)
				continue
			}
			if s.cur().parent == nil {
				if seq != seqRetry {
					return seqExit, nil
				}
				s.clearCourseGlobals() // as for retryAll above
			}
			return seq, nil
		}
	case termExitAll:
		return s.exitAll()
	case termSuspendAll:
		if st.Active || st.IsSuspended {
			s.overallRollup(cur)
			s.Suspended = cur.a.ID
		} else {
			if cur.parent == nil {
				return "", ErrTermSuspendRoot
			}
			s.Suspended = cur.parent.a.ID
		}
		for a := s.node(s.Suspended); a != nil; a = a.parent {
			as := s.st(a)
			as.Active, as.IsSuspended = false, true
		}
		s.Current = s.t.root.a.ID
		return seqExit, nil
	case termAbandon:
		st.Active = false
		return "", nil
	case termAbandonAll:
		for a := cur; a != nil; a = a.parent {
			s.st(a).Active = false
		}
		s.Current = s.t.root.a.ID
		return seqExit, nil
	}
	return "", ErrTermUndefined
}

// exitAll ends every attempt in the tree from the current activity up (TB.2.3 exitAll).
func (s *State) exitAll() (string, error) {
	cur := s.cur()
	if s.st(cur).Active {
		s.endAttempt(cur)
	}
	s.terminateDescendentAttempts(s.t.root)
	s.endAttempt(s.t.root)
	s.Current = s.t.root.a.ID
	return seqExit, nil
}
