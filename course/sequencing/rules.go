package sequencing

import "github.com/lectern-lms/lectern/course"

// Rule actions the sequencing processes ask for.
const (
	actSkip                 = "skip"
	actDisabled             = "disabled"
	actHiddenFromChoice     = "hiddenFromChoice"
	actStopForwardTraversal = "stopForwardTraversal"
	actExit                 = "exit"
	actExitParent           = "exitParent"
	actExitAll              = "exitAll"
	actRetry                = "retry"
	actRetryAll             = "retryAll"
	actContinue             = "continue"
	actPrevious             = "previous"
)

// preCondition is the Sequencing Rules Check Process (UP.2) over an activity's
// pre-condition rules for the given actions: the action of the first rule that fires, or "".
func (s *State) preCondition(n *node, actions ...string) string {
	return s.rulesCheck(n, n.seq.PreConditionRules, actions...)
}

// rulesCheck is UP.2: rules are evaluated in document order and the first one whose
// conditions are true decides.
func (s *State) rulesCheck(n *node, rules []course.SequencingRule, actions ...string) string {
	for _, r := range rules {
		match := false
		for _, a := range actions {
			if r.Action == a {
				match = true
			}
		}
		if match && s.ruleCheck(n, r) == yes {
			return r.Action
		}
	}
	return ""
}

// ruleCheck is the Sequencing Rule Check Subprocess (UP.2.1): each condition evaluated
// (negated by operator not), combined by conditionCombination (all by default); an unknown
// condition makes an undecided combination unknown, so the rule does not fire.
func (s *State) ruleCheck(n *node, r course.SequencingRule) tri {
	any := r.ConditionCombination == "any"
	if len(r.Conditions) == 0 {
		return no
	}
	sawUnknown := false
	for _, c := range r.Conditions {
		v := s.condition(n, c)
		if c.Operator == "not" {
			v = v.not()
		}
		switch {
		case v == unknown:
			sawUnknown = true
		case any && v == yes:
			return yes
		case !any && v == no:
			return no
		}
	}
	if sawUnknown {
		return unknown
	}
	if any {
		return no
	}
	return yes
}

// condition evaluates one sequencing or rollup rule condition on an activity (SN book
// rule condition table). outsideAvailableTimeRange is false: SCORM 2004 packages cannot
// state a time range.
func (s *State) condition(n *node, c course.RuleCondition) tri {
	st := s.st(n)
	o := n.objective(c.ReferencedObjective)
	if !n.def.Tracked {
		// An untracked activity has no tracking information, read or not (ADL CO-05a).
		switch c.Condition {
		case "always":
			return yes
		case "objectiveStatusKnown", "objectiveMeasureKnown", "activityProgressKnown", "attempted", "attemptLimitExceeded":
			return no
		}
		return unknown
	}
	switch c.Condition {
	case "satisfied":
		return s.satisfied(n, o)
	case "objectiveStatusKnown":
		return triOf(s.satisfied(n, o) != unknown)
	case "objectiveMeasureKnown":
		_, ok := s.measure(n, o)
		return triOf(ok)
	case "objectiveMeasureGreaterThan", "objectiveMeasureLessThan":
		m, ok := s.measure(n, o)
		if !ok {
			return unknown
		}
		th := 0.0
		if c.MeasureThreshold != nil {
			th = *c.MeasureThreshold
		}
		if c.Condition == "objectiveMeasureGreaterThan" {
			return triOf(m > th)
		}
		return triOf(m < th)
	case "completed":
		return s.completedOf(n, o)
	case "activityProgressKnown":
		// Known through a global objective too, before any attempt (ADL CO-06).
		return triOf(s.completedOf(n, o) != unknown)
	case "attempted":
		return triOf(st.ProgressStatus && st.AttemptCount > 0)
	case "attemptLimitExceeded":
		return triOf(s.limitExceeded(n))
	case "always":
		return yes
	case "timeLimitExceeded":
		return triOf(s.timeLimitExceeded(n))
	case "outsideAvailableTimeRange":
		return no
	}
	return unknown
}

// limitConditions is the Limit Conditions Check Process (UP.1): an activity whose attempt
// count reached its attemptLimit, or whose attempt lasted its attemptAbsoluteDurationLimit,
// may not start another attempt. Active or suspended activities are not checked, as their
// attempt is already under way.
func (s *State) limitConditions(n *node) bool {
	st := s.st(n)
	if !n.def.Tracked || st.Active || st.IsSuspended {
		return false
	}
	return s.limitExceeded(n) || s.timeLimitExceeded(n)
}

// limitExceeded reports whether the activity's attempts reached its attemptLimit.
func (s *State) limitExceeded(n *node) bool {
	st := s.st(n)
	l := n.def.AttemptLimit
	return l > 0 && st.ProgressStatus && st.AttemptCount >= l
}

// checkActivity is the Check Activity Process (UP.5): true when the activity may not be
// delivered (a disabled pre-condition fires or a limit condition is violated).
func (s *State) checkActivity(n *node) bool {
	if s.preCondition(n, actDisabled) != "" {
		return true
	}
	return s.limitConditions(n)
}
