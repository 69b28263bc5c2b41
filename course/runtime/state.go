package runtime

import (
	"context"

	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
)

// State reads the run-time records of one registration instance as the rollup's state;
// detail adds each activity's interactions and comments (progress/detail, reports), which
// the rollup itself never reads. Known records are List's.
func (s *Store) State(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, detail bool, known ...*Record) (rollup.State, error) {
	recs, err := s.List(ctx, tenant, reg.ID, in.Key, known...)
	if err != nil {
		return nil, err
	}
	return StateOf(recs, detail), nil
}

// StateOf turns run-time records (activity id → record) into the rollup's state (with
// interactions and comments when detail says so). The values
// were validated when they were committed, so every number parses; the tracked seconds are
// the activity's total_time, the running total the LMS side of the API keeps.
func StateOf(recs map[string]*Record, detail bool) rollup.State {
	read := rollup.StatusFromCMI
	if detail {
		read = rollup.FromCMI
	}
	st := make(rollup.State, len(recs))
	for id, rec := range recs {
		a, _ := read(rec.Values)
		a.Updated = rec.Updated
		a.SecondsTracked = rec.TotalSeconds()
		exit := rec.Values["cmi.exit"]
		if rec.Dialect != SCORM2004 {
			exit = rec.Values["cmi.core.exit"]
		}
		a.Suspended = exit == "suspend"
		if rec.Completed && !rec.completedNow() {
			// A completed SCO re-entered in a new attempt stays completed (Record.Completed):
			// neither the new attempt's status nor its progress measure lowers it.
			if rec.Dialect == SCORM2004 {
				a.CompletionStatus, a.ProgressMeasure = "completed", nil
			} else if a.LessonStatus != "failed" {
				a.LessonStatus = "completed"
			}
		}
		st[id] = a
	}
	return st
}
