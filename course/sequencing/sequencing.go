package sequencing

// Sequencing requests (SB.2.12).
const (
	seqStart     = "start"
	seqResumeAll = "resumeAll"
	seqContinue  = "continue"
	seqPrevious  = "previous"
	seqChoice    = "choice"
	seqJump      = "jump"
	seqRetry     = "retry"
	seqExit      = "exit"
)

// direction is a traversal direction; zero is the book's n/a.
type direction int8

const (
	forward direction = iota + 1
	backward
)

// sequencingRequest is the Sequencing Request Process (SB.2.12): it identifies the
// activity to deliver, or says that the sequencing session ends.
func (s *State) sequencingRequest(req, target string) (deliver *node, endSession bool, err error) {
	switch req {
	case seqStart:
		return s.startRequest()
	case seqResumeAll:
		return s.resumeAllRequest()
	case seqContinue:
		return s.continueRequest()
	case seqPrevious:
		return s.previousRequest()
	case seqChoice:
		return s.choiceRequest(s.node(target))
	case seqJump:
		return s.jumpRequest(s.node(target))
	case seqRetry:
		return s.retryRequest()
	case seqExit:
		return s.exitRequest()
	}
	return nil, false, ErrSeqUndefined
}

// startRequest is the Start Sequencing Request Process (SB.2.5).
func (s *State) startRequest() (*node, bool, error) {
	if s.cur() != nil {
		return nil, false, ErrStartBegun
	}
	if s.t.root.leaf() {
		return s.t.root, false, nil
	}
	return s.flowSubprocess(s.t.root, forward, true)
}

// resumeAllRequest is the Resume All Sequencing Request Process (SB.2.6).
func (s *State) resumeAllRequest() (*node, bool, error) {
	if s.cur() != nil {
		return nil, false, ErrResumeBegun
	}
	n := s.node(s.Suspended)
	if n == nil {
		return nil, false, ErrResumeNone
	}
	return n, false, nil
}

// continueRequest is the Continue Sequencing Request Process (SB.2.7); flowing past the
// last activity ends the session.
func (s *State) continueRequest() (*node, bool, error) {
	cur := s.cur()
	if cur == nil {
		return nil, false, ErrContinueNoCurrent
	}
	if cur.parent != nil && !cur.parent.def.Flow {
		return nil, false, ErrContinueNoFlow
	}
	return s.flowSubprocess(cur, forward, false)
}

// previousRequest is the Previous Sequencing Request Process (SB.2.8).
func (s *State) previousRequest() (*node, bool, error) {
	cur := s.cur()
	if cur == nil {
		return nil, false, ErrPreviousNoCurrent
	}
	if cur.parent != nil && !cur.parent.def.Flow {
		return nil, false, ErrPreviousNoFlow
	}
	return s.flowSubprocess(cur, backward, false)
}

// exitRequest is the Exit Sequencing Request Process (SB.2.11): leaving the root ends
// the session; leaving anything else waits for the next navigation request.
func (s *State) exitRequest() (*node, bool, error) {
	cur := s.cur()
	if cur == nil {
		return nil, false, ErrExitNoCurrent
	}
	if s.st(cur).Active {
		return nil, false, ErrExitActive
	}
	return nil, cur.parent == nil, nil
}

// retryRequest is the Retry Sequencing Request Process (SB.2.10).
func (s *State) retryRequest() (*node, bool, error) {
	cur := s.cur()
	if cur == nil {
		return nil, false, ErrRetryNoCurrent
	}
	if st := s.st(cur); st.Active || st.IsSuspended {
		return nil, false, ErrRetryActive
	}
	if cur.leaf() {
		return cur, false, nil
	}
	n, _, _ := s.flowSubprocess(cur, forward, true)
	if n == nil {
		return nil, false, ErrRetryNothing
	}
	return n, false, nil
}

// jumpRequest is the Jump Sequencing Request Process (SB.2.13): the target is delivered
// without the choice checks; the delivery request process still applies.
func (s *State) jumpRequest(target *node) (*node, bool, error) {
	if s.cur() == nil {
		return nil, false, ErrJumpNoCurrent
	}
	return target, false, nil
}

// flowSubprocess is the Flow Subprocess (SB.2.3).
func (s *State) flowSubprocess(n *node, dir direction, considerChildren bool) (*node, bool, error) {
	next, _, end, err := s.flowTreeTraversal(n, dir, considerChildren, 0)
	if next == nil {
		return nil, end, err
	}
	return s.flowActivityTraversal(next, dir, 0)
}

// lastInTree is the last activity of a forward preorder traversal of the available tree.
func (s *State) lastInTree() *node {
	n := s.t.root
	for {
		av := s.avail(n)
		if len(av) == 0 {
			return n
		}
		n = av[len(av)-1]
	}
}

func (s *State) firstChild(n *node) *node {
	if av := s.avail(n); len(av) > 0 {
		return av[0]
	}
	return nil
}

func (s *State) lastChild(n *node) *node {
	if av := s.avail(n); len(av) > 0 {
		return av[len(av)-1]
	}
	return nil
}

// sibling returns the available sibling delta places from n (nil at either end, or when n
// is not available).
func (s *State) sibling(n *node, delta int) *node {
	av := s.avail(n.parent)
	for i, c := range av {
		if c == n {
			if j := i + delta; j >= 0 && j < len(av) {
				return av[j]
			}
			return nil
		}
	}
	return nil
}

// flowTreeTraversal is the Flow Tree Traversal Subprocess (SB.2.1): the next activity in
// preorder (forward) or its reverse (backward), descending into clusters when asked. Going
// past the last activity ends the session (SB.2.1-1, not an error).
func (s *State) flowTreeTraversal(n *node, dir direction, considerChildren bool, prev direction) (*node, direction, bool, error) {
	reversed := false
	if prev == backward && n.parent != nil && s.lastChild(n.parent) == n {
		dir = backward
		n = s.firstChild(n.parent)
		reversed = true
	}
	if dir == forward {
		if n == s.lastInTree() || (n.parent == nil && !considerChildren) {
			return nil, dir, true, nil
		}
		if n.leaf() || !considerChildren {
			if s.lastChild(n.parent) == n {
				return s.flowTreeTraversal(n.parent, forward, false, 0)
			}
			return s.sibling(n, 1), forward, false, nil
		}
		if c := s.firstChild(n); c != nil {
			return c, forward, false, nil
		}
		return nil, dir, false, ErrFlowTreeNoChildren
	}
	if n.parent == nil {
		return nil, dir, false, ErrFlowTreeBackRoot
	}
	if n.leaf() || !considerChildren {
		if !reversed && n.parent.def.ForwardOnly {
			return nil, dir, false, ErrFlowTreeForwardOnly
		}
		if s.firstChild(n.parent) == n {
			return s.flowTreeTraversal(n.parent, backward, false, 0)
		}
		return s.sibling(n, -1), backward, false, nil
	}
	if s.firstChild(n) == nil {
		return nil, dir, false, ErrFlowTreeNoChildren
	}
	if n.def.ForwardOnly {
		return s.firstChild(n), forward, false, nil
	}
	return s.lastChild(n), backward, false, nil
}

// flowActivityTraversal is the Flow Activity Traversal Subprocess (SB.2.2): skipped
// activities are passed over, disabled or limit-exceeded ones stop the flow, and clusters
// are entered until a leaf is found.
func (s *State) flowActivityTraversal(n *node, dir direction, prev direction) (*node, bool, error) {
	if n.parent != nil && !n.parent.def.Flow {
		return nil, false, ErrFlowActivityNoFlow
	}
	if s.preCondition(n, actSkip) != "" {
		next, ndir, end, err := s.flowTreeTraversal(n, dir, false, prev)
		if next == nil {
			return nil, end, err
		}
		if prev == backward && ndir == backward {
			return s.flowActivityTraversal(next, ndir, 0)
		}
		return s.flowActivityTraversal(next, dir, prev)
	}
	if s.checkActivity(n) {
		return nil, false, ErrFlowActivityDisabled
	}
	if !n.leaf() {
		next, ndir, end, err := s.flowTreeTraversal(n, dir, true, 0)
		if next == nil {
			return nil, end, err
		}
		if dir == backward && ndir == forward {
			return s.flowActivityTraversal(next, forward, backward)
		}
		return s.flowActivityTraversal(next, dir, 0)
	}
	return n, false, nil
}
