package rollup

import (
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

// tri is a three-valued truth: rule conditions about an unknown status are unknown.
type tri int8

const (
	triUnknown tri = iota
	triFalse
	triTrue
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

// snNode is the tracking state of one activity during the SCORM 2004 rollup (IMS SS
// activity state and primary objective state).
type snNode struct {
	a        *course.Activity
	seq      course.Sequencing
	children []*snNode
	state    *ActivityState

	attempts      int
	suspended     bool
	progressKnown bool
	completed     bool
	statusKnown   bool
	satisfied     bool
	measureKnown  bool
	measure       float64
	pmKnown       bool
	pm            float64
	seconds       float64
}

// computeSN applies the IMS SS rollup (SN book RB.1.1 measure, RB.1.2 objective, RB.1.3
// progress) bottom-up over the whole tree; the registration takes the root's values.
// Global objectives and sequencing (navigation, limit conditions beyond the attempt
// limit, randomisation) are not part of this rollup.
func computeSN(in Input) Result {
	r := Result{Activities: map[string]*Outcome{}}
	var build func(a *course.Activity) *snNode
	build = func(a *course.Activity) *snNode {
		n := &snNode{a: a, seq: in.Package.EffectiveSequencing(a)}
		for _, c := range a.Children {
			n.children = append(n.children, build(c))
		}
		if len(n.children) == 0 {
			n.state = in.State[a.ID]
			snLeaf(n, in)
		} else {
			snCluster(n, in.Settings)
		}
		r.Activities[a.ID] = n.outcome(in)
		r.TotalSecondsTracked += nodeSecondsOwn(n)
		return n
	}
	root := build(in.Package.Root)
	out := r.Activities[root.a.ID]
	r.Completion, r.Success, r.Score, r.CompletionAmount = out.Completion, out.Success, out.Score, out.CompletionAmount
	if r.CompletionAmount == nil && root.attempts > 0 {
		// Without a progress measure, the share of tracked leaves completed.
		total, done := 0, 0
		var walk func(n *snNode)
		walk = func(n *snNode) {
			if len(n.children) == 0 {
				if tracked(n) && n.a.LaunchURL != "" {
					total++
					if n.progressKnown && n.completed {
						done++
					}
				}
				return
			}
			for _, c := range n.children {
				walk(c)
			}
		}
		walk(root)
		if total > 0 {
			r.CompletionAmount = ptr(round4(float64(done) / float64(total)))
		}
	}
	return r
}

func nodeSecondsOwn(n *snNode) float64 {
	if len(n.children) == 0 {
		return n.seconds
	}
	return 0
}

func tracked(n *snNode) bool {
	dc := n.seq.DeliveryControls
	return dc == nil || dc.Tracked == nil || *dc.Tracked
}

func primaryObjective(a *course.Activity) *course.Objective {
	for i := range a.Objectives {
		if a.Objectives[i].Primary {
			return &a.Objectives[i]
		}
	}
	return nil
}

// satisfiedByMeasure returns the primary objective's minNormalizedMeasure when it is
// satisfied by measure (IMS SS default 1.0).
func satisfiedByMeasure(a *course.Activity) (float64, bool) {
	o := primaryObjective(a)
	if o == nil || !o.SatisfiedByMeasure {
		return 0, false
	}
	if o.MinNormalizedMeasure != nil {
		return *o.MinNormalizedMeasure, true
	}
	return 1, true
}

// snLeaf maps a SCO's run-time data to its activity state (SCORM 2004 RTE → SN mapping):
// completion from progress_measure against the completion threshold when that applies,
// else completion_status; success from the measure when the primary objective is
// satisfied by measure, else success_status; the measure from score.scaled (or raw/min/max
// with PlayerScaleRawScore). completionSetByContent / objectiveSetByContent false complete
// and satisfy the activity when the content terminated without saying (UP.4).
func snLeaf(n *snNode, in Input) {
	st := n.state
	n.attempts = st.attempts()
	if st == nil {
		return
	}
	n.suspended = st.Suspended
	n.seconds = st.SecondsTracked
	if st.ProgressMeasure != nil {
		n.pmKnown, n.pm = true, *st.ProgressMeasure
	}
	if st.ScoreScaled != nil {
		n.measureKnown, n.measure = true, *st.ScoreScaled
	} else if in.Settings.ScaleRawScore && st.ScoreRaw != nil && st.ScoreMin != nil && st.ScoreMax != nil && *st.ScoreMax > *st.ScoreMin {
		n.measureKnown, n.measure = true, (*st.ScoreRaw-*st.ScoreMin)/(*st.ScoreMax-*st.ScoreMin)
	}
	ct := n.a.CompletionThreshold
	byMeasure := ct != nil && (ct.CompletedByMeasure || in.Package.Standard != course.SCORM2004v4)
	switch {
	case byMeasure && n.pmKnown:
		n.progressKnown, n.completed = true, n.pm >= ct.MinProgressMeasure
	default:
		switch norm(st.CompletionStatus) {
		case "completed":
			n.progressKnown, n.completed = true, true
		case "incomplete", "not attempted":
			n.progressKnown = true
		}
	}
	dc := n.seq.DeliveryControls
	if !n.progressKnown && st.Terminated && dc != nil && dc.CompletionSetByContent != nil && !*dc.CompletionSetByContent {
		n.progressKnown, n.completed = true, true
	}
	if min, ok := satisfiedByMeasure(n.a); ok {
		if n.measureKnown {
			n.statusKnown, n.satisfied = true, n.measure >= min
		}
	} else {
		switch norm(st.SuccessStatus) {
		case "passed":
			n.statusKnown, n.satisfied = true, true
		case "failed":
			n.statusKnown = true
		}
	}
	if !n.statusKnown && st.Terminated && dc != nil && dc.ObjectiveSetByContent != nil && !*dc.ObjectiveSetByContent {
		n.statusKnown, n.satisfied = true, true
	}
	satisfiedCompletes(n, in.Settings)
}

// satisfiedCompletes applies PlayerSatisfiedCausesCompletion: a satisfied activity is
// completed, as Engine sets the attempt's completion when the objective becomes satisfied.
func satisfiedCompletes(n *snNode, s Settings) {
	if s.SatisfiedCausesCompletion && n.statusKnown && n.satisfied {
		n.progressKnown, n.completed = true, true
	}
}

// snCluster rolls a cluster up in Engine's order: measure, objective (a satisfied cluster
// may complete, PlayerSatisfiedCausesCompletion), then progress, which may still decide.
func snCluster(n *snNode, s Settings) {
	for _, c := range n.children {
		n.seconds += c.seconds
		if c.attempts > 0 {
			n.attempts = 1
		}
	}
	measureRollup(n)
	objectiveRollup(n, s)
	satisfiedCompletes(n, s)
	progressRollup(n, s)
}

// emptyDefaultSet reports whether a cluster rolls the two actions up by the default rules
// (it has no rule for either) and no child contributes to them: the empty set that
// PlayerRollupEmptySetToUnknown decides.
func emptyDefaultSet(n *snNode, action, opposite string) bool {
	if len(rulesFor(n, action)) > 0 || len(rulesFor(n, opposite)) > 0 {
		return false
	}
	for _, c := range n.children {
		if contributes(n, c, action) || contributes(n, c, opposite) {
			return false
		}
	}
	return true
}

// measureRollup is RB.1.1: the weighted average of the tracked children's measures, the
// weights of children with an unknown measure counting in the divisor.
func measureRollup(n *snNode) {
	total, counted, valid := 0.0, 0.0, false
	for _, c := range n.children {
		if !tracked(c) {
			continue
		}
		w := 1.0
		if rr := c.seq.RollupRules; rr != nil && rr.ObjectiveMeasureWeight != nil {
			w = *rr.ObjectiveMeasureWeight
		}
		counted += w
		if c.measureKnown {
			total += c.measure * w
			valid = true
		}
	}
	if valid && counted > 0 {
		n.measureKnown, n.measure = true, total/counted
	}
}

// objectiveRollup is RB.1.2: by measure when the primary objective is satisfied by measure,
// else by the rollup rules, with the default rules (all satisfied → satisfied; all status
// known → not satisfied) for the actions the activity has no rule for.
func objectiveRollup(n *snNode, s Settings) {
	if min, ok := satisfiedByMeasure(n.a); ok {
		if n.measureKnown {
			n.statusKnown, n.satisfied = true, n.measure >= min
		}
		return
	}
	if !s.EmptySetToUnknown && emptyDefaultSet(n, "satisfied", "notSatisfied") {
		n.statusKnown, n.satisfied = true, true
		return
	}
	sat, notSat := rulesFor(n, "satisfied"), rulesFor(n, "notSatisfied")
	if len(notSat) == 0 {
		notSat = []course.RollupRule{{ChildActivitySet: "all", Conditions: []course.RuleCondition{{Condition: "objectiveStatusKnown"}}, Action: "notSatisfied"}}
	}
	if len(sat) == 0 {
		sat = []course.RollupRule{{ChildActivitySet: "all", Conditions: []course.RuleCondition{{Condition: "satisfied"}}, Action: "satisfied"}}
	}
	if anyRule(n, notSat) {
		n.statusKnown, n.satisfied = true, false
	}
	if anyRule(n, sat) {
		n.statusKnown, n.satisfied = true, true
	}
}

// progressRollup is RB.1.3: by the weighted progress measure when the cluster's completion
// threshold says completedByMeasure, else by the rules with the defaults (all completed →
// completed; all progress known → incomplete).
func progressRollup(n *snNode, s Settings) {
	if ct := n.a.CompletionThreshold; ct != nil && ct.CompletedByMeasure {
		total, counted, valid := 0.0, 0.0, false
		for _, c := range n.children {
			if !tracked(c) {
				continue
			}
			w := 1.0
			if c.a.CompletionThreshold != nil {
				w = c.a.CompletionThreshold.ProgressWeight
			}
			counted += w
			switch {
			case c.pmKnown:
				total += c.pm * w
				valid = true
			case c.progressKnown && c.completed:
				total += w
				valid = true
			}
		}
		if valid && counted > 0 {
			n.pmKnown, n.pm = true, total/counted
			n.progressKnown, n.completed = true, n.pm >= ct.MinProgressMeasure
		}
		return
	}
	if !s.EmptySetToUnknown && emptyDefaultSet(n, "completed", "incomplete") {
		n.progressKnown, n.completed = true, true
		return
	}
	done, inc := rulesFor(n, "completed"), rulesFor(n, "incomplete")
	if len(inc) == 0 {
		inc = []course.RollupRule{{ChildActivitySet: "all", Conditions: []course.RuleCondition{{Condition: "activityProgressKnown"}}, Action: "incomplete"}}
	}
	if len(done) == 0 {
		done = []course.RollupRule{{ChildActivitySet: "all", Conditions: []course.RuleCondition{{Condition: "completed"}}, Action: "completed"}}
	}
	if anyRule(n, inc) {
		n.progressKnown, n.completed = true, false
	}
	if anyRule(n, done) {
		n.progressKnown, n.completed = true, true
	}
}

func rulesFor(n *snNode, action string) []course.RollupRule {
	var out []course.RollupRule
	if n.seq.RollupRules == nil {
		return nil
	}
	for _, r := range n.seq.RollupRules.Rules {
		if r.Action == action {
			out = append(out, r)
		}
	}
	return out
}

func anyRule(n *snNode, rules []course.RollupRule) bool {
	for _, r := range rules {
		if ruleFires(n, r) {
			return true
		}
	}
	return false
}

// ruleFires is the Rollup Rule Check Subprocess (RB.1.4): evaluate the conditions for each
// contributing child, then the child activity set. An empty set of contributors fires no
// rule.
func ruleFires(n *snNode, r course.RollupRule) bool {
	var results []tri
	for _, c := range n.children {
		if !contributes(n, c, r.Action) {
			continue
		}
		results = append(results, conditions(c, r))
	}
	if len(results) == 0 {
		return false
	}
	trues, falses := 0, 0
	for _, t := range results {
		switch t {
		case triTrue:
			trues++
		case triFalse:
			falses++
		}
	}
	switch r.ChildActivitySet {
	case "any":
		return trues > 0
	case "none":
		return falses == len(results)
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
		return float64(trues)/float64(len(results)) >= min
	default: // "all", the IMS SS default
		return trues == len(results)
	}
}

// contributes is the Check Child for Rollup Subprocess (RB.1.4.2): tracked children whose
// rollupObjectiveSatisfied / rollupProgressCompletion allow it, filtered by the parent's
// adlseq rollup considerations. ifNotSkipped includes every child: nothing is skipped
// without the sequencer.
func contributes(parent, c *snNode, action string) bool {
	if !tracked(c) {
		return false
	}
	rr := c.seq.RollupRules
	var required string
	switch action {
	case "satisfied", "notSatisfied":
		if rr != nil && rr.RollupObjectiveSatisfied != nil && !*rr.RollupObjectiveSatisfied {
			return false
		}
		required = c.seq.RequiredForSatisfied
		if action == "notSatisfied" {
			required = c.seq.RequiredForNotSatisfied
		}
	default:
		if rr != nil && rr.RollupProgressCompletion != nil && !*rr.RollupProgressCompletion {
			return false
		}
		required = c.seq.RequiredForCompleted
		if action == "incomplete" {
			required = c.seq.RequiredForIncomplete
		}
	}
	switch required {
	case "ifAttempted":
		return c.attempts > 0
	case "ifNotSuspended":
		return c.attempts == 0 || !c.suspended
	}
	return true
}

// conditions evaluates a rule's conditions for one child; the combination defaults to
// "any" (imsss:rollupConditions).
func conditions(c *snNode, r course.RollupRule) tri {
	all := r.ConditionCombination == "all"
	out := triFalse
	if all {
		out = triTrue
	}
	unknown := false
	for _, rc := range r.Conditions {
		v := condition(c, rc.Condition)
		if rc.Operator == "not" {
			switch v {
			case triTrue:
				v = triFalse
			case triFalse:
				v = triTrue
			}
		}
		switch {
		case v == triUnknown:
			unknown = true
		case all && v == triFalse:
			return triFalse
		case !all && v == triTrue:
			return triTrue
		}
	}
	if unknown {
		return triUnknown
	}
	return out
}

func condition(c *snNode, name string) tri {
	switch name {
	case "satisfied":
		if !c.statusKnown {
			return triUnknown
		}
		return triOf(c.satisfied)
	case "objectiveStatusKnown":
		return triOf(c.statusKnown)
	case "objectiveMeasureKnown":
		return triOf(c.measureKnown)
	case "completed":
		if !c.progressKnown {
			return triUnknown
		}
		return triOf(c.completed)
	case "activityProgressKnown":
		return triOf(c.progressKnown)
	case "attempted":
		return triOf(c.attempts > 0)
	case "attemptLimitExceeded":
		lc := c.seq.LimitConditions
		return triOf(lc != nil && lc.AttemptLimit != nil && *lc.AttemptLimit > 0 && c.attempts >= *lc.AttemptLimit)
	case "timeLimitExceeded", "outsideAvailableTimeRange":
		return triFalse // no time limits are tracked without the sequencer
	}
	return triUnknown
}

func (n *snNode) outcome(in Input) *Outcome {
	out := &Outcome{Completion: registration.Unknown, Success: registration.Unknown, Attempts: n.attempts, Seconds: n.seconds}
	if n.progressKnown {
		out.Completion = registration.Incomplete
		if n.completed {
			out.Completion = registration.Completed
		}
	} else if n.attempts > 0 {
		// An attempt began and nothing decides its completion yet: Engine shows such an
		// activity (and a started registration) as INCOMPLETE. Rollup rules still see
		// the progress as unknown.
		out.Completion = registration.Incomplete
	}
	if n.statusKnown {
		out.Success = registration.Failed
		if n.satisfied {
			out.Success = registration.Passed
		}
	}
	if n.measureKnown {
		out.Score = ptr(round4(n.measure * 100))
	}
	if n.pmKnown {
		out.CompletionAmount = ptr(round4(n.pm))
	}
	if n.state != nil {
		out.Objectives = map[string]ObjectiveOutcome{}
		for _, o := range n.state.Objectives {
			oo := ObjectiveOutcome{Completion: registration.Unknown, Success: registration.Unknown}
			switch norm(o.SuccessStatus) {
			case "passed":
				oo.Success = registration.Passed
			case "failed":
				oo.Success = registration.Failed
			}
			switch norm(o.CompletionStatus) {
			case "completed":
				oo.Completion = registration.Completed
			case "incomplete", "not attempted":
				oo.Completion = registration.Incomplete
			}
			if o.ScoreScaled != nil {
				oo.Score = ptr(round4(*o.ScoreScaled * 100))
			}
			out.Objectives[o.ID] = oo
		}
	}
	return out
}
