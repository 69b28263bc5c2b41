package rollup

import (
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

// Verbs is what the statements of one registration say about one AU (cmi5) or launchable
// activity (xAPI): which of the verbs completed, passed, failed and waived were seen, and
// the latest result score.
type Verbs struct {
	Completed bool
	Passed    bool
	// Failed is true when a failed statement is not followed by a passed one.
	Failed bool
	// Waived is the LMS's waived statement (cmi5 §9.3.9): the AU counts as satisfied.
	Waived bool
	// CompletionResult: a statement about the activity said result.completion true.
	CompletionResult bool
	// Scaled is result.score.scaled of the latest passed/failed/completed statement.
	Scaled  *float64
	Seconds float64
}

// Statements rolls up a cmi5 or xAPI course from the verbs seen per activity, keyed by the
// activity's id in the tree, its cmi5.xml id or its xAPI activity IRI (any of them).
//
// cmi5 (spec §10 "moveOn"): an AU is satisfied when its moveOn criterion is met — Passed,
// Completed, CompletedAndPassed, CompletedOrPassed, or NotApplicable (always) — or it was
// waived; a block is satisfied when all its children are, and the course when all its
// children are. The registration is COMPLETED when the course is satisfied. For xAPI
// (Tin Can) courses, whose activities have no moveOn, each launchable activity is treated
// as CompletedOrPassed and is completed by completed, passed or result.completion true
// (xapiDone), and verbs about the root activity itself decide when present.
func Statements(pkg *course.Package, seen map[string]Verbs) Result {
	r := Result{Activities: map[string]*Outcome{}}
	lookup := func(a *course.Activity) (Verbs, bool) {
		for _, k := range activityKeys(pkg, a) {
			if v, ok := seen[k]; ok {
				return v, true
			}
		}
		return Verbs{}, false
	}
	var visit func(a *course.Activity) (satisfied bool, launched bool, scores []float64)
	visit = func(a *course.Activity) (bool, bool, []float64) {
		out := &Outcome{Completion: registration.Unknown, Success: registration.Unknown}
		r.Activities[a.ID] = out
		isAU := a.LaunchURL != "" && len(a.Children) == 0 && (a.CMI5 == nil || !a.CMI5.Block)
		if isAU {
			v, ok := lookup(a)
			sat := moveOnMet(moveOn(pkg, a), v) || (pkg.Standard == course.XAPI && xapiDone(v))
			if ok {
				out.Attempts, out.Seconds = 1, v.Seconds
				r.TotalSecondsTracked += v.Seconds
				out.Completion = registration.Incomplete
				if v.Completed || v.Waived || (pkg.Standard == course.XAPI && xapiDone(v)) {
					out.Completion = registration.Completed
				}
				if v.Passed {
					out.Success = registration.Passed
				} else if v.Failed {
					out.Success = registration.Failed
				}
				if v.Scaled != nil {
					out.Score = ptr(round4(*v.Scaled * 100))
				}
			}
			var scores []float64
			if out.Score != nil {
				scores = append(scores, *out.Score)
			}
			return sat, ok, scores
		}
		all, launched, failed, needPass, passed := true, false, false, true, 0
		var scores []float64
		for _, c := range a.Children {
			sat, l, sc := visit(c)
			all = all && sat
			launched = launched || l
			scores = append(scores, sc...)
			co := r.Activities[c.ID]
			switch co.Success {
			case registration.Failed:
				failed = true
			case registration.Passed:
				passed++
			}
			if needsPass(pkg, c) && co.Success != registration.Passed {
				needPass = false
			}
		}
		if launched {
			out.Attempts = 1
		}
		if v, ok := lookup(a); ok && pkg.Standard == course.XAPI && a == pkg.Root {
			// An xAPI course that reports on its own activity decides for itself.
			launched = true
			all = xapiDone(v)
			if v.Passed {
				passed, failed = 1, false
			} else if v.Failed {
				failed = true
			}
			if v.Scaled != nil {
				scores = []float64{*v.Scaled * 100}
			}
		}
		switch {
		case all && len(a.Children) > 0:
			out.Completion = registration.Completed
			if a.CMI5 != nil || (pkg.Standard == course.CMI5 && a == pkg.Root) {
				r.Satisfied = append(r.Satisfied, cmi5ID(pkg, a))
			}
		case launched:
			out.Completion = registration.Incomplete
		}
		switch {
		case failed:
			out.Success = registration.Failed
		case needPass && passed > 0:
			out.Success = registration.Passed
		}
		if len(scores) > 0 {
			sum := 0.0
			for _, s := range scores {
				sum += s
			}
			out.Score = ptr(round4(sum / float64(len(scores))))
		}
		return all && len(a.Children) > 0, launched, scores
	}
	visit(pkg.Root)
	r.TotalSecondsTracked = roundSeconds(r.TotalSecondsTracked)
	root := r.Activities[pkg.Root.ID]
	r.Completion, r.Success, r.Score = root.Completion, root.Success, root.Score
	if aus := countAUs(pkg); aus > 0 && root.Attempts > 0 {
		done := 0
		pkg.Root.Walk(func(a *course.Activity) {
			if a.LaunchURL != "" && len(a.Children) == 0 && r.Activities[a.ID].Completion == registration.Completed {
				done++
			}
		})
		if root.Completion == registration.Completed {
			done = aus
		}
		r.CompletionAmount = ptr(round4(float64(done) / float64(aus)))
	}
	return r
}

// xapiDone reports whether the statements about an xAPI (Tin Can) activity complete it: a
// completed or passed verb, or any statement with result.completion true (Tin Can Golf
// sends passed with completion true on its course activity). xAPI activities have no moveOn;
// they are CompletedOrPassed, so a pass completes them.
func xapiDone(v Verbs) bool { return v.Completed || v.Passed || v.CompletionResult }

// MoveOnMet evaluates one cmi5 moveOn criterion against the verbs seen for the AU.
func MoveOnMet(moveOn string, v Verbs) bool { return moveOnMet(moveOn, v) }

func moveOnMet(moveOn string, v Verbs) bool {
	if v.Waived {
		return true
	}
	switch moveOn {
	case "Passed":
		return v.Passed
	case "Completed":
		return v.Completed
	case "CompletedAndPassed":
		return v.Completed && v.Passed
	case "CompletedOrPassed":
		return v.Completed || v.Passed
	default: // NotApplicable
		return true
	}
}

func moveOn(pkg *course.Package, a *course.Activity) string {
	if a.CMI5 != nil && a.CMI5.MoveOn != "" {
		return a.CMI5.MoveOn
	}
	if pkg.Standard == course.CMI5 {
		return "NotApplicable"
	}
	return "CompletedOrPassed"
}

// needsPass reports whether an AU's moveOn requires a pass (blocks never do themselves).
func needsPass(pkg *course.Package, a *course.Activity) bool {
	if a.LaunchURL == "" || len(a.Children) > 0 {
		return false
	}
	m := moveOn(pkg, a)
	return m == "Passed" || m == "CompletedAndPassed"
}

// activityKeys are the ids statements may name an activity by: its id in the tree, its
// cmi5.xml id, the LMS's own cmi5 id (the activityId AUs are launched with) and its xAPI IRI.
func activityKeys(pkg *course.Package, a *course.Activity) []string {
	keys := []string{a.ID}
	if id := pkg.CMI5LMSActivityID(a); id != "" {
		keys = append(keys, id)
	}
	if a.CMI5 != nil && a.CMI5.ID != "" {
		keys = append(keys, a.CMI5.ID)
	}
	if a.Extra != nil && a.Extra.XAPIActivityID != "" {
		keys = append(keys, a.Extra.XAPIActivityID)
	}
	return keys
}

func cmi5ID(pkg *course.Package, a *course.Activity) string {
	if a == pkg.Root && pkg.XAPIActivityID != "" {
		return pkg.XAPIActivityID
	}
	if a.CMI5 != nil && a.CMI5.ID != "" {
		return a.CMI5.ID
	}
	return a.ID
}

func countAUs(pkg *course.Package) int {
	n := 0
	pkg.Root.Walk(func(a *course.Activity) {
		if a.LaunchURL != "" && len(a.Children) == 0 {
			n++
		}
	})
	return n
}
