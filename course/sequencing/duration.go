package sequencing

import "github.com/lectern-lms/lectern/course"

// attemptSeconds is the activity's attempt experienced duration: the sessions of the attempt
// closed so far and the open one; a cluster's is the sum of its children's (duration
// rollup by the learner's time in the content).
func (s *State) attemptSeconds(n *node) float64 {
	if n.leaf() {
		st := s.st(n)
		return st.AttemptSeconds + st.SessionSeconds
	}
	total := 0.0
	for _, c := range s.avail(n) {
		total += s.attemptSeconds(c)
	}
	return total
}

// timeLimitExceeded reports whether the attempt's duration reached its
// attemptAbsoluteDurationLimit.
func (s *State) timeLimitExceeded(n *node) bool {
	lc := n.seq.LimitConditions
	if lc == nil {
		return false
	}
	limit, ok := course.DurationSeconds(lc.AttemptAbsoluteDurationLimit)
	return ok && s.attemptSeconds(n) >= limit
}
