package sequencing

import "slices"

// choiceRequest is the Choice Sequencing Request Process (SB.2.9): the target must be
// visible to choice along its whole path, its parent must allow choice, and the way from the
// current activity to it must respect stopForwardTraversal, forwardOnly, choiceExit,
// constrainChoice and preventActivation. A cluster target flows to its first deliverable
// leaf.
func (s *State) choiceRequest(target *node) (*node, bool, error) {
	if target == nil {
		return nil, false, ErrChoiceNoTarget
	}
	path := target.path()
	for _, a := range path[1:] {
		if !slices.Contains(s.avail(a.parent), a) {
			return nil, false, ErrChoiceNotAvailable
		}
	}
	for _, a := range path {
		if s.preCondition(a, actHiddenFromChoice) != "" {
			return nil, false, ErrChoiceHidden
		}
	}
	if target.parent != nil && !target.parent.def.Choice {
		return nil, false, ErrChoiceNotAllowed
	}
	cur := s.cur()
	common := s.t.root
	if cur != nil {
		common = commonAncestor(cur, target)
	}
	switch {
	case cur == target:
		// Case 1: the current activity itself.
	case cur != nil && cur.parent == target.parent:
		// Case 2: a sibling; every activity between them must allow the traversal.
		dir := forward
		if target.order < cur.order {
			dir = backward
		}
		for _, a := range s.between(cur, target) {
			if a == target && dir == forward {
				break // stopForwardTraversal stops moving past an activity, not onto it
			}
			if err := s.choiceActivityTraversal(a, dir); err != nil {
				return nil, false, err
			}
		}
	case cur == nil || common == cur:
		// Case 3: a descendant of the current activity (or any activity before the
		// session begins).
		for _, a := range path {
			if a == common || !common.isAncestorOf(a) {
				continue
			}
			if a != target {
				if err := s.choiceActivityTraversal(a, forward); err != nil {
					return nil, false, err
				}
			}
			if s.prevented(a) {
				return nil, false, ErrChoicePrevented
			}
		}
	case target == common:
		// Case 4: an ancestor of the current activity.
		for a := cur; a != target; a = a.parent {
			if s.st(a).Active && !a.def.ChoiceExit {
				return nil, false, ErrChoiceExitNotAllowed
			}
		}
	default:
		// Case 5: elsewhere in the tree, through the common ancestor.
		var constrained *node
		for a := cur; a != common; a = a.parent {
			if s.st(a).Active && !a.def.ChoiceExit {
				return nil, false, ErrChoiceExitNotAllowed
			}
			// constrainChoice is looked for from the current activity's parent up, as
			// ADL's reference does: it constrains leaving a cluster, and a leaf's own
			// (a sequencing collection shared with clusters gives one) says nothing
			// about choosing away from it (ADL CM-07d).
			if constrained == nil && a != cur && a.def.ConstrainChoice {
				constrained = a
			}
		}
		if constrained != nil {
			dir := forward
			if target.order < constrained.order {
				dir = backward
			}
			consider := s.choiceFlow(constrained, dir)
			if !consider.isAncestorOf(target) && target != consider && target != constrained {
				return nil, false, ErrChoiceConstrained
			}
		}
		for _, a := range path {
			if a == common || !common.isAncestorOf(a) {
				continue
			}
			if target.order > cur.order && a != target {
				if err := s.choiceActivityTraversal(a, forward); err != nil {
					return nil, false, err
				}
			}
			if s.prevented(a) {
				return nil, false, ErrChoicePrevented
			}
		}
	}
	if target.leaf() {
		return target, false, nil
	}
	n, end, err := s.flowSubprocess(target, forward, true)
	if n == nil {
		if end || err != nil {
			s.terminateDescendentAttempts(common)
			s.endAttempt(common)
			s.Current = target.a.ID
		}
		return nil, false, ErrChoiceNothing
	}
	return n, false, nil
}

// between lists the available siblings from a to b, inclusive, in the order one passes them.
func (s *State) between(a, b *node) []*node {
	sibs := s.avail(a.parent)
	i, j := -1, -1
	for k, c := range sibs {
		if c == a {
			i = k
		}
		if c == b {
			j = k
		}
	}
	if i < 0 || j < 0 {
		return nil
	}
	var out []*node
	if i <= j {
		for k := i; k <= j; k++ {
			out = append(out, sibs[k])
		}
		return out
	}
	for k := i; k >= j; k-- {
		out = append(out, sibs[k])
	}
	return out
}

// choiceActivityTraversal is the Choice Activity Traversal Subprocess (SB.2.4).
func (s *State) choiceActivityTraversal(n *node, dir direction) error {
	if dir == forward {
		if s.preCondition(n, actStopForwardTraversal) != "" {
			return ErrChoiceStopForward
		}
		return nil
	}
	if n.parent == nil {
		return ErrChoiceBackRoot
	}
	if n.parent.def.ForwardOnly {
		return ErrChoiceBackForwardOnly
	}
	return nil
}

// choiceFlow is the Choice Flow Subprocess (SB.2.9.1) with its Choice Flow Tree Traversal
// (SB.2.9.2): the activity next to n in the given direction, or n itself at the edge of the
// tree. constrainChoice allows only what lies within that activity.
func (s *State) choiceFlow(n *node, dir direction) *node {
	if next := s.choiceFlowTree(n, dir); next != nil {
		return next
	}
	return n
}

func (s *State) choiceFlowTree(n *node, dir direction) *node {
	if n.parent == nil {
		return nil
	}
	if dir == forward {
		if n == s.lastInTree() {
			return nil
		}
		if s.lastChild(n.parent) == n {
			return s.choiceFlowTree(n.parent, forward)
		}
		return s.sibling(n, 1)
	}
	if s.firstChild(n.parent) == n {
		return s.choiceFlowTree(n.parent, backward)
	}
	return s.sibling(n, -1)
}

// prevented is the preventActivation check of SB.2.9 (SB.2.9-6): a cluster that prevents
// activation lets choice start attempts on its children only while it is itself active,
// that is while the learner is already inside it (ADL CM-17b: its children are selectable
// once the cluster was entered by flow, a grandchild behind an inactive cluster is not).
func (s *State) prevented(a *node) bool {
	p := a.parent
	return !s.st(a).Active && p != nil && p.def.PreventActivation && !s.st(p).Active
}
