package learner

import (
	"fmt"
	"testing"
	"time"

	scormrt "github.com/lectern-lms/lectern/course/runtime"
)

// What a SCO's SCORM 2004 data tells the sequencer: statuses, measures, the session's time,
// exit and its objectives by id (an objective without an id is not one the sequencer knows).
func TestOutcome(t *testing.T) {
	o := Outcome(scormrt.Values{"cmi.completion_status": "completed", "cmi.success_status": "failed", "cmi.score.scaled": "0.25",
		"cmi.progress_measure": "1", "cmi.session_time": "PT1M30S", "cmi.exit": "suspend",
		"cmi.objectives.0.id": "obj1", "cmi.objectives.0.success_status": "passed", "cmi.objectives.0.score.scaled": "0.9",
		"cmi.objectives.1.id": "", "cmi.objectives.1.success_status": "failed",
		"cmi.objectives.2.id": "obj3", "cmi.objectives.2.completion_status": "incomplete", "cmi.objectives.2.progress_measure": "0.5"})
	if o.CompletionStatus != "completed" || o.SuccessStatus != "failed" || *o.ScoreScaled != 0.25 || *o.ProgressMeasure != 1 ||
		*o.SessionSeconds != 90 || o.Exit != "suspend" || len(o.Objectives) != 2 {
		t.Fatalf("outcome %+v", o)
	}
	if ob := o.Objectives["obj1"]; ob.SuccessStatus != "passed" || *ob.ScoreScaled != 0.9 {
		t.Errorf("obj1 %+v", ob)
	}
	if ob := o.Objectives["obj3"]; ob.CompletionStatus != "incomplete" || *ob.ProgressMeasure != 0.5 || ob.ScoreScaled != nil {
		t.Errorf("obj3 %+v", ob)
	}
	if o := Outcome(scormrt.Values{}); o.ScoreScaled != nil || o.SessionSeconds != nil || o.Objectives != nil {
		t.Errorf("empty data: %+v", o)
	}
}

// Previews' States are bounded: expired ones go first, then the one closest to expiry.
func TestMemStatesBounded(t *testing.T) {
	var m memStates
	now := time.Now()
	for i := 0; i < maxMemStates; i++ {
		m.put(fmt.Sprint(i), []byte("x"), now.Add(time.Hour+time.Duration(i)*time.Second))
	}
	m.put("new", []byte("y"), now.Add(2*time.Hour))
	if m.get("0") != nil || string(m.get("new")) != "y" || m.get("1") == nil || len(m.m) != maxMemStates {
		t.Errorf("after one over the bound: %d kept", len(m.m))
	}
	m.put("expired", []byte("z"), now.Add(-time.Second))
	m.put("later", []byte("w"), now.Add(time.Hour))
	if m.get("expired") != nil || m.get("later") == nil {
		t.Error("an expired preview was kept over a live one")
	}
}
