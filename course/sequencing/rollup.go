package sequencing

import "github.com/lectern-lms/lectern/course"

// Rollup actions.
const (
	rollSatisfied    = "satisfied"
	rollNotSatisfied = "notSatisfied"
	rollCompleted    = "completed"
	rollIncomplete   = "incomplete"
)

// overallRollup is the Overall Rollup Process (RB.1.5): from the activity up to the root,
// clusters roll up their children's measure and completion amount, then every activity its
// objective and progress, and the results are written to global objectives.
func (s *State) overallRollup(n *node) {
	for a := n; a != nil; a = a.parent {
		if !a.leaf() {
			s.measureRollup(a)
			s.completionMeasureRollup(a)
		}
		s.objectiveRollup(a)
		s.progressRollup(a)
		s.writeObjectives(a)
	}
}

// measureRollup is the Measure Rollup Process (RB.1.1): the weighted average of the tracked
// children's rolled-up measures; children with an unknown measure still count in the
// divisor, and a cluster none of whose children has a measure has none either.
func (s *State) measureRollup(n *node) {
	total, counted, valid := 0.0, 0.0, false
	for _, c := range s.avail(n) {
		if !c.def.Tracked {
			continue
		}
		w := c.def.MeasureWeight
		counted += w
		if m, ok := s.measure(c, c.primary()); ok && !s.earlier(c, true) {
			total += m * w
			valid = true
		}
	}
	os := s.objState(n, n.primary())
	if !valid || counted <= 0 {
		os.MeasureStatus, os.Measure = false, 0
		return
	}
	os.MeasureStatus, os.Measure = true, total/counted
}

// completionMeasureRollup is the 4th edition Completion Measure Rollup Process (RB.1.1.b):
// the children's completion amounts averaged by their completionThreshold progressWeight.
func (s *State) completionMeasureRollup(n *node) {
	total, counted, valid := 0.0, 0.0, false
	for _, c := range s.avail(n) {
		if !c.def.Tracked {
			continue
		}
		w := 1.0
		if ct := c.a.CompletionThreshold; ct != nil {
			w = ct.ProgressWeight
		}
		counted += w
		if a, ok := s.amount(c); ok && !s.earlier(c, false) {
			total += a * w
			valid = true
		}
	}
	st := s.st(n)
	if !valid || counted <= 0 {
		st.AmountStatus, st.Amount = false, 0
		return
	}
	st.AmountStatus, st.Amount = true, total/counted
}

// objectiveRollup is the Objective Rollup Process (RB.1.2): by measure when the primary
// objective is satisfied by measure (RB.1.2.a), else by the activity's satisfied /
// notSatisfied rollup rules (RB.1.2.b), else by the default rules (RB.1.2.c): not satisfied
// when every contributing child's status is known, satisfied when every one is satisfied.
func (s *State) objectiveRollup(n *node) {
	p := n.primary()
	os := s.objState(n, p)
	if p.SatisfiedByMeasure {
		min := 1.0
		if p.MinNormalizedMeasure != nil {
			min = *p.MinNormalizedMeasure
		}
		m, ok := s.measure(n, p)
		switch {
		case !ok:
			os.ProgressStatus = false
		case !s.st(n).Active || n.def.MeasureSatisfactionIfActive:
			os.ProgressStatus, os.Satisfied = true, m >= min
		default:
			os.ProgressStatus = false
		}
		return
	}
	if n.leaf() {
		return
	}
	sat, notSat := n.rollupRules(rollSatisfied), n.rollupRules(rollNotSatisfied)
	if len(sat) == 0 && len(notSat) == 0 {
		notSat = []course.RollupRule{{Conditions: []course.RuleCondition{{Condition: "objectiveStatusKnown"}}, Action: rollNotSatisfied}}
		sat = []course.RollupRule{{Conditions: []course.RuleCondition{{Condition: "satisfied"}}, Action: rollSatisfied}}
	}
	if s.anyRollupRule(n, notSat) {
		os.ProgressStatus, os.Satisfied = true, false
	}
	if s.anyRollupRule(n, sat) {
		os.ProgressStatus, os.Satisfied = true, true
	}
}

// progressRollup is the Activity Progress Rollup Process (RB.1.3): by the completion amount
// when the completion threshold says completedByMeasure (RB.1.3.a), else by the completed /
// incomplete rollup rules or their defaults (RB.1.3.b/c).
func (s *State) progressRollup(n *node) {
	st := s.st(n)
	if ct := n.a.CompletionThreshold; ct != nil && ct.CompletedByMeasure {
		a, ok := s.amount(n)
		if !ok {
			st.AttemptProgressStatus = false
			return
		}
		st.AttemptProgressStatus, st.Completed = true, a >= ct.MinProgressMeasure
		return
	}
	if n.leaf() {
		return
	}
	done, inc := n.rollupRules(rollCompleted), n.rollupRules(rollIncomplete)
	if len(done) == 0 && len(inc) == 0 {
		inc = []course.RollupRule{{Conditions: []course.RuleCondition{{Condition: "activityProgressKnown"}}, Action: rollIncomplete}}
		done = []course.RollupRule{{Conditions: []course.RuleCondition{{Condition: "completed"}}, Action: rollCompleted}}
	}
	if s.anyRollupRule(n, inc) {
		st.AttemptProgressStatus, st.Completed = true, false
	}
	if s.anyRollupRule(n, done) {
		st.AttemptProgressStatus, st.Completed = true, true
	}
}

func (n *node) rollupRules(action string) []course.RollupRule {
	if n.seq.RollupRules == nil {
		return nil
	}
	var out []course.RollupRule
	for _, r := range n.seq.RollupRules.Rules {
		if r.Action == action {
			out = append(out, r)
		}
	}
	return out
}

func (s *State) anyRollupRule(n *node, rules []course.RollupRule) bool {
	for _, r := range rules {
		if s.rollupRuleCheck(n, r) {
			return true
		}
	}
	return false
}

// rollupRuleCheck is the Rollup Rule Check Subprocess (RB.1.4): the rule's conditions are
// evaluated for each tracked child that contributes (RB.1.4.2), then the child activity set
// decides.
func (s *State) rollupRuleCheck(n *node, r course.RollupRule) bool {
	var bag []tri
	for _, c := range s.avail(n) {
		if !c.def.Tracked || !s.checkChildForRollup(c, r.Action) {
			continue
		}
		bag = append(bag, s.rollupConditions(c, r))
	}
	if len(bag) == 0 {
		// No contributing child: "all" and "none" hold vacuously (ADL RU-11, a cluster of
		// untracked children completes by its all-rule), counts and "any" do not.
		return r.ChildActivitySet == "" || r.ChildActivitySet == "all" || r.ChildActivitySet == "none"
	}
	trues, falses := 0, 0
	for _, t := range bag {
		switch t {
		case yes:
			trues++
		case no:
			falses++
		}
	}
	switch r.ChildActivitySet {
	case "any":
		return trues > 0
	case "none":
		return falses == len(bag)
	case "atLeastCount":
		min := 0
		if r.MinimumCount != nil {
			min = *r.MinimumCount
		}
		return trues >= min
	case "atLeastPercent":
		min := 0.0
		if r.MinimumPercent != nil {
			min = *r.MinimumPercent
		}
		return float64(trues)/float64(len(bag)) >= min
	default: // "all", the IMS SS default
		return trues == len(bag)
	}
}

// rollupConditions is the Evaluate Rollup Conditions Subprocess (RB.1.4.1); rollup
// conditions combine with "any" unless the rule says "all".
func (s *State) rollupConditions(c *node, r course.RollupRule) tri {
	all := r.ConditionCombination == "all"
	sawUnknown := false
	for _, rc := range r.Conditions {
		v := s.condition(c, rc)
		if known, ok := earlierCondition[rc.Condition]; ok && s.earlier(c, known == "objective") {
			// The child's information belongs to an earlier attempt of its parent, which
			// judges this attempt by its children's current ones: not known yet.
			v = unknown
			if rc.Condition == "objectiveStatusKnown" || rc.Condition == "objectiveMeasureKnown" || rc.Condition == "activityProgressKnown" {
				v = no
			}
		}
		if rc.Operator == "not" {
			v = v.not()
		}
		switch {
		case v == unknown:
			sawUnknown = true
		case all && v == no:
			return no
		case !all && v == yes:
			return yes
		}
	}
	if sawUnknown || len(r.Conditions) == 0 {
		return unknown
	}
	if all {
		return yes
	}
	return no
}

// earlierCondition are the rollup conditions that read a child's objective or progress
// information, by kind.
var earlierCondition = map[string]string{
	"satisfied": "objective", "objectiveStatusKnown": "objective", "objectiveMeasureKnown": "objective",
	"objectiveMeasureGreaterThan": "objective", "objectiveMeasureLessThan": "objective",
	"completed": "progress", "activityProgressKnown": "progress",
}

// earlier reports whether child c's objective (or progress) information belongs to an
// earlier attempt of its parent than the current one, which its parent's
// useCurrentAttemptObjectiveInfo (useCurrentAttemptProgressInfo), true by default, leaves out
// of the parent's rollup (SN book, RB.1.4.2 and the control's definition). The child keeps
// it for its own rules: a skip precondition still reads it (ADL SX-07d), a parent entered
// again by a choice rolls up only what its new attempt did (ADL OB-03b, RU-04bc).
func (s *State) earlier(c *node, objective bool) bool {
	p := c.parent
	if p == nil {
		return false
	}
	st := s.st(c)
	if st.AttemptCount == 0 || st.ParentAttempt == 0 || st.ParentAttempt == s.st(p).AttemptCount {
		return false
	}
	if objective {
		return p.def.UseCurrentAttemptObjectiveInfo
	}
	return p.def.UseCurrentAttemptProgressInfo
}

// checkChildForRollup is the Check Child for Rollup Subprocess (RB.1.4.2): rollupObjective
// Satisfied / rollupProgressCompletion and the adlseq requiredFor* considerations decide
// whether a child takes part in its parent's rollup for an action.
func (s *State) checkChildForRollup(c *node, action string) bool {
	var required string
	switch action {
	case rollSatisfied, rollNotSatisfied:
		if !c.def.RollupObjectiveSatisfied {
			return false
		}
		required = c.seq.RequiredForSatisfied
		if action == rollNotSatisfied {
			required = c.seq.RequiredForNotSatisfied
		}
	default:
		if !c.def.RollupProgressCompletion {
			return false
		}
		required = c.seq.RequiredForCompleted
		if action == rollIncomplete {
			required = c.seq.RequiredForIncomplete
		}
	}
	st := s.st(c)
	switch required {
	case "ifNotSuspended":
		return st.ProgressStatus && !(st.AttemptCount > 0 && st.IsSuspended)
	case "ifAttempted":
		return st.ProgressStatus && st.AttemptCount > 0
	case "ifNotSkipped":
		return s.preCondition(c, actSkip) == ""
	}
	return true
}
