package rollup

import (
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

// UseMeasuredTime replaces the tracked time of a rollup with the time the server measured the
// learner in the content (registration.TrackedTime, summed over the instance's player
// sessions): each leaf activity gets the time measured in it, a parent the sum of its
// children, the registration the total, and each launched activity's run-time timeTracked
// its own time. The content's own total_time stays in the run-time totalTime.
func (r *Result) UseMeasuredTime(pkg *course.Package, state State, t registration.TrackedTime) {
	var walk func(a *course.Activity) float64
	walk = func(a *course.Activity) float64 {
		sec := t.Activities[a.ID]
		if len(a.Children) > 0 {
			sec = 0
			for _, c := range a.Children {
				sec += walk(c)
			}
			sec = roundSeconds(sec)
		}
		if out := r.Activities[a.ID]; out != nil {
			out.Seconds = sec
		}
		if st := state[a.ID]; st != nil {
			st.SecondsTracked = t.Activities[a.ID]
		}
		return sec
	}
	if pkg != nil && pkg.Root != nil {
		walk(pkg.Root)
	}
	r.TotalSecondsTracked = t.Seconds
}
