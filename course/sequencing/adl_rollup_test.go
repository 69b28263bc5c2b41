package sequencing_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/course/sequencing"
)

// TestADLRollupAgreement measures where course/rollup's own SN rollup of the CMI data
// (rollup.Compute, sn.go) and the sequencer's rollup (sequencing.State, which the reports
// take through rollup.UseSequencing) disagree on the same history: it replays each ADL
// sequencing, rollup and objectives case, keeps the run-time data as the run-time store
// would (a new attempt starts afresh, a resumed one keeps its data, every SCO terminates),
// and after each report and each delivery compares every activity's completion and success.
// It logs each case's disagreements (a survey: the reports follow the sequencer, so a
// disagreement is what the CMI rollup would have reported wrongly, not a failure) and
// fails only when a replay itself breaks.
func TestADLRollupAgreement(t *testing.T) {
	learner := sequencing.MapGlobals{}
	cases, rootCases, anyCases := 0, 0, 0
	kinds := map[string][]string{}
	for _, name := range sequencing.ADLCaseNames(t) {
		cases++
		var pkg *course.Package
		cmi := rollup.State{}
		seen := map[string]bool{}
		var found []string
		root := false
		compare := func(s *sequencing.State, when string) {
			in := rollup.Input{Package: pkg, State: cmi, Settings: rollup.DefaultSettings(), ForCredit: true}
			own := rollup.Compute(in)
			seq := rollup.Compute(in)
			seq.UseSequencing(pkg, s, cmi, in.Settings)
			pkg.Root.Walk(func(a *course.Activity) {
				o, q := own.Activities[a.ID], seq.Activities[a.ID]
				for _, f := range []struct{ field, own, seq string }{
					{"completion", o.Completion, q.Completion}, {"success", o.Success, q.Success},
				} {
					if f.own == f.seq {
						continue
					}
					k := fmt.Sprintf("%s %s: rollup %s, sequencer %s", a.ID, f.field, f.own, f.seq)
					if a == pkg.Root {
						root = true
					}
					if !seen[k] {
						seen[k] = true
						found = append(found, k+" ("+when+")")
						kind := "leaf"
						if len(a.Children) > 0 {
							kind = "cluster"
						}
						if a == pkg.Root {
							kind = "root"
						}
						kk := fmt.Sprintf("%s %s: rollup %s, sequencer %s", kind, f.field, f.own, f.seq)
						if !slices.Contains(kinds[kk], name) {
							kinds[kk] = append(kinds[kk], name)
						}
					}
				}
			})
		}
		step := 0
		problems := sequencing.ADLReplay(t, name, learner, sequencing.ADLObserver{
			Begin: func(p *course.Package) { pkg = p },
			Delivered: func(s *sequencing.State, res sequencing.Result) {
				step++
				if res.Deliver != "" {
					old := cmi[res.Deliver]
					if old == nil || !res.Resumed {
						n := 1
						if old != nil {
							n = old.Attempts + 1
						}
						cmi[res.Deliver] = &rollup.ActivityState{Attempts: n}
					} else {
						old.Terminated, old.Suspended = false, false
					}
				}
				compare(s, fmt.Sprintf("step %d, after delivering %q", step, res.Deliver))
			},
			Reported: func(s *sequencing.State, act string, rt sequencing.RuntimeOutcome) {
				step++
				a := cmi[act]
				if a == nil {
					a = &rollup.ActivityState{Attempts: 1}
					cmi[act] = a
				}
				if rt.CompletionStatus != "" {
					a.CompletionStatus = rt.CompletionStatus
				}
				if rt.SuccessStatus != "" {
					a.SuccessStatus = rt.SuccessStatus
				}
				if rt.ScoreScaled != nil {
					a.ScoreScaled = rt.ScoreScaled
				}
				if rt.ProgressMeasure != nil {
					a.ProgressMeasure = rt.ProgressMeasure
				}
				for id, o := range rt.Objectives {
					i := slices.IndexFunc(a.Objectives, func(x rollup.ObjectiveState) bool { return x.ID == id })
					if i < 0 {
						a.Objectives = append(a.Objectives, rollup.ObjectiveState{ID: id})
						i = len(a.Objectives) - 1
					}
					x := &a.Objectives[i]
					if o.SuccessStatus != "" {
						x.SuccessStatus = o.SuccessStatus
					}
					if o.CompletionStatus != "" {
						x.CompletionStatus = o.CompletionStatus
					}
					if o.ScoreScaled != nil {
						x.ScoreScaled = o.ScoreScaled
					}
				}
				a.Terminated, a.Suspended = true, rt.Exit == "suspend"
				compare(s, fmt.Sprintf("step %d, %s reported", step, act))
			},
		})
		if len(problems) > 0 {
			t.Logf("%s: replay problems: %s", name, strings.Join(problems, "; "))
		}
		if len(found) > 0 {
			anyCases++
			if root {
				rootCases++
			}
			t.Logf("%s: %d disagreements:\n\t%s", name, len(found), strings.Join(found, "\n\t"))
		}
	}
	t.Logf("ADL cases: %d; with a disagreement on some activity: %d; on the root (the registration's status): %d", cases, anyCases, rootCases)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range kinds {
			if !yield(k) {
				return
			}
		}
	}) {
		t.Logf("%s: %d cases %v", k, len(kinds[k]), kinds[k])
	}
}
