package runtime

import (
	"context"

	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/storage/record"
)

// State reads the run-time records of one registration instance as the rollup's state;
// detail adds each activity's interactions and comments (progress/detail, reports), which
// the rollup itself never reads. Known records are List's.
func (s *Store) State(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, detail bool, known ...*Record) (rollup.State, error) {
	if !detail {
		recs, err := s.List(ctx, tenant, reg.ID, in.Key, known...)
		if err != nil {
			return nil, err
		}
		return StateOf(recs, false), nil
	}
	rs, err := record.All(ctx, s.records, record.Query{Tenant: tenant, Kind: KindRuntime, Key: in.Key,
		Parent: &record.Ref{Kind: kindRegistration, ID: reg.ID}})
	if err != nil {
		return nil, err
	}
	st := make(rollup.State, len(rs))
	for _, r := range rs {
		if k := knownRecord(known, r, reg.ID, in.Key); k != nil {
			st[k.Activity] = activityState(k, true)
			continue
		}
		// The interactions are read as the stored values are met, and only the other
		// elements go into the record's values: a map of 100,000 elements, built to be read
		// once, cost more than the rest of progress/detail.
		var ins rollup.InteractionReader
		others := Values{}
		rt, err := decodeWith(r, func(k, v string) {
			if !ins.Add(k, v) {
				others[k] = v
			}
		}, func() { ins, others = rollup.InteractionReader{}, Values{} })
		if err != nil {
			return nil, err
		}
		rt.Values = others
		a := activityState(rt, true)
		a.Interactions = ins.Interactions()
		st[rt.Activity] = a
	}
	return st, nil
}

// StateOf turns run-time records (activity id → record) into the rollup's state (with
// interactions and comments when detail says so). The values
// were validated when they were committed, so every number parses; the tracked seconds are
// the activity's total_time, the running total the LMS side of the API keeps.
func StateOf(recs map[string]*Record, detail bool) rollup.State {
	st := make(rollup.State, len(recs))
	for id, rec := range recs {
		st[id] = activityState(rec, detail)
	}
	return st
}

// activityState is StateOf of one record.
func activityState(rec *Record, detail bool) *rollup.ActivityState {
	read := rollup.StatusFromCMI
	if detail {
		read = rollup.FromCMI
	}
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
	return a
}
