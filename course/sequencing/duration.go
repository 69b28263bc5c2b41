package sequencing

import (
	"regexp"
	"strconv"
)

// isoDuration matches the xs:duration forms SCORM uses (PnYnMnDTnHnMnS).
var isoDuration = regexp.MustCompile(`^P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// durationSeconds reads an ISO 8601 duration such as attemptAbsoluteDurationLimit; years
// and months count as 365 and 30 days, as the value is a limit, not a calendar date. ok is
// false for an empty or malformed value (no limit).
func durationSeconds(d string) (float64, bool) {
	m := isoDuration.FindStringSubmatch(d)
	if m == nil || d == "P" || d == "PT" {
		return 0, false
	}
	total := 0.0
	for i, unit := range []float64{365 * 86400, 30 * 86400, 86400, 3600, 60, 1} {
		if m[i+1] != "" {
			v, err := strconv.ParseFloat(m[i+1], 64)
			if err != nil {
				return 0, false
			}
			total += v * unit
		}
	}
	return total, true
}

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
	limit, ok := durationSeconds(lc.AttemptAbsoluteDurationLimit)
	return ok && s.attemptSeconds(n) >= limit
}
