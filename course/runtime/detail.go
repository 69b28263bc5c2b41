package runtime

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/course"
)

// Status is the runtime's view of an activity in the 2004 vocabulary: SCORM 1.2's one
// lesson_status split into completion and success.
type Status struct {
	Completion string // completed, incomplete, not attempted, unknown
	Success    string // passed, failed, unknown
}

// Status returns the activity's completion and success as the content reported them.
// lesson_status passed and failed imply completed; browsed counts as incomplete.
func (r *Record) Status() Status {
	v := r.Values
	if r.Dialect == SCORM2004 {
		st := Status{Completion: v["cmi.completion_status"], Success: v["cmi.success_status"]}
		if st.Completion == "" {
			st.Completion = "unknown"
		}
		if st.Success == "" {
			st.Success = "unknown"
		}
		return st
	}
	switch v["cmi.core.lesson_status"] {
	case "passed":
		return Status{"completed", "passed"}
	case "failed":
		return Status{"completed", "failed"}
	case "completed":
		return Status{"completed", "unknown"}
	case "incomplete", "browsed":
		return Status{"incomplete", "unknown"}
	case "not attempted":
		return Status{"not attempted", "unknown"}
	}
	return Status{"unknown", "unknown"}
}

// Get returns the value of one element under either dialect's name: the 2004 name, or the
// 1.2 name when the record is SCORM 1.2 (element12 may be "").
func (r *Record) get(element2004, element12 string) string {
	if r.Dialect == SCORM2004 {
		return r.Values[element2004]
	}
	if element12 == "" {
		return ""
	}
	return r.Values[element12]
}

// ScoreScaled returns the scaled score (-1..1): cmi.score.scaled for 2004; for 1.2 the raw
// score within min..max (0..100 when unset). ok is false when no score was reported.
func (r *Record) ScoreScaled() (float64, bool) {
	if r.Dialect == SCORM2004 {
		f, err := strconv.ParseFloat(r.Values["cmi.score.scaled"], 64)
		return f, err == nil
	}
	raw, err := strconv.ParseFloat(r.Values["cmi.core.score.raw"], 64)
	if err != nil {
		return 0, false
	}
	lo, hi := 0.0, 100.0
	if f, err := strconv.ParseFloat(r.Values["cmi.core.score.min"], 64); err == nil {
		lo = f
	}
	if f, err := strconv.ParseFloat(r.Values["cmi.core.score.max"], 64); err == nil {
		hi = f
	}
	if hi <= lo {
		return 0, false
	}
	return math.Max(0, math.Min(1, (raw-lo)/(hi-lo))), true
}

// TotalSeconds is the learner's total time in the activity as the content's API computed it
// (total_time of the last terminating commit), in seconds.
func (r *Record) TotalSeconds() float64 {
	if r.Dialect == SCORM2004 {
		s, _ := course.DurationSeconds(r.Values["cmi.total_time"])
		return s
	}
	return TimespanSeconds(r.Values["cmi.core.total_time"])
}

// TimespanSeconds converts a SCORM 1.2 CMITimespan (HHHH:MM:SS.SS) to seconds; 0 when unparsable.
func TimespanSeconds(t string) float64 {
	if !isTimespan12(t) {
		return 0
	}
	p := strings.Split(t, ":")
	h, _ := strconv.ParseFloat(p[0], 64)
	m, _ := strconv.ParseFloat(p[1], 64)
	s, _ := strconv.ParseFloat(p[2], 64)
	return h*3600 + m*60 + s
}

// FormatDuration writes seconds as the engine API writes durations: HHHH:MM:SS.
func FormatDuration(sec float64) string {
	n := int64(sec)
	return fmt.Sprintf("%04d:%02d:%02d", n/3600, n/60%60, n%60)
}

// Launch is what the LMS tells a SCO at launch.
type Launch struct {
	LearnerID, LearnerName string
	Credit                 bool
	// Review launches in review mode (forceReview): the content may show but not change.
	Review          bool
	LaunchData      string
	MaxTimeAllowed  string
	TimeLimitAction string
	// MasteryScore is SCORM 1.2's (0-100); ScaledPassingScore SCORM 2004's (0-1); "" unset.
	MasteryScore, ScaledPassingScore string
	CompletionThreshold              string
}

// Modes of PlayerResetRunTimeData: when a relaunched SCO starts a new attempt with fresh
// run-time data.
const (
	ResetNever                = "NEVER"
	ResetWhenExitIsNotSuspend = "WHEN_EXIT_IS_NOT_SUSPEND"
	// ResetOnNewSequencingAttempt resets when a new sequencing attempt on the SCO begins.
	// Without a sequencer, that is every launch that does not resume a suspended attempt:
	// the same as ResetWhenExitIsNotSuspend.
	ResetOnNewSequencingAttempt = "ON_EACH_NEW_SEQUENCING_ATTEMPT"
)

// completedNow reports whether the stored data says the activity is completed: 2004
// completion_status completed, 1.2 lesson_status completed or passed.
func (r *Record) completedNow() bool {
	if r.Dialect == SCORM2004 {
		return r.Values["cmi.completion_status"] == "completed"
	}
	st := r.Values["cmi.core.lesson_status"]
	return st == "completed" || st == "passed"
}

// Suspended reports whether the activity's last exit was a suspend (cmi.exit,
// cmi.core.exit).
func (r *Record) Suspended() bool { return r.get("cmi.exit", "cmi.core.exit") == "suspend" }

// StartsAfresh reports whether a new load of an activity whose stored record is rec begins a
// new attempt with fresh run-time data under reset mode (PlayerResetRunTimeData). An empty
// mode is the standard's: SCORM 2004 ends an attempt on any exit but suspend (RTE 4.2.8,
// cmi.entry), so the next launch is ab-initio; SCORM 1.2 keeps the data (NEVER).
func StartsAfresh(mode string, d Dialect, rec *Record) bool {
	if rec == nil {
		return false
	}
	if mode == "" {
		mode = ResetNever
		if d == SCORM2004 {
			mode = ResetWhenExitIsNotSuspend
		}
	}
	switch mode {
	case ResetWhenExitIsNotSuspend, ResetOnNewSequencingAttempt:
		return rec.get("cmi.exit", "cmi.core.exit") != "suspend"
	}
	return false
}

// resultElements are the elements that carry an activity's status and score: a no-credit
// session's commits keep the recorded ones (WithoutResults).
var resultElements = map[string]bool{
	"cmi.core.lesson_status": true, "cmi.core.score.raw": true, "cmi.core.score.min": true, "cmi.core.score.max": true,
	"cmi.completion_status": true, "cmi.success_status": true, "cmi.progress_measure": true,
	"cmi.score.scaled": true, "cmi.score.raw": true, "cmi.score.min": true, "cmi.score.max": true,
}

// WithoutResults returns v without the status and score elements, for a commit of a
// no-credit session (PlayerLaunchCompletedRegsAsNoCredit): location, suspend data, time
// and interactions are still kept, but the result the learner earned is not changed.
func (v Values) WithoutResults() Values {
	out := make(Values, len(v))
	for k, val := range v {
		if !resultElements[k] {
			out[k] = val
		}
	}
	return out
}

// InitialValues is the data model the player loads into the SCORM API before the SCO
// initialises: the LMS-owned elements of l, and what earlier sessions stored (rec may be nil),
// with entry "resume" after a suspended exit and "ab-initio" on the first launch. A launch
// that starts afresh (StartsAfresh) passes a nil rec.
func InitialValues(d Dialect, l Launch, rec *Record) Values {
	v := Values{}
	if rec != nil {
		for k, val := range rec.Values {
			// Per-session elements: a new session starts them afresh.
			if strings.HasSuffix(k, ".session_time") || k == "cmi.exit" || k == "cmi.core.exit" {
				continue
			}
			v[k] = val
		}
	}
	credit, mode := "credit", "normal"
	if !l.Credit {
		credit = "no-credit"
	}
	if l.Review {
		mode = "review"
	}
	entry := ""
	switch {
	case rec == nil:
		entry = "ab-initio"
	case rec.get("cmi.exit", "cmi.core.exit") == "suspend":
		entry = "resume"
	}
	if d == SCORM2004 {
		v["cmi.learner_id"], v["cmi.learner_name"], v["cmi.credit"], v["cmi.mode"], v["cmi.entry"] = l.LearnerID, l.LearnerName, credit, mode, entry
		v["cmi.launch_data"], v["cmi.max_time_allowed"] = l.LaunchData, l.MaxTimeAllowed
		if l.TimeLimitAction != "" {
			v["cmi.time_limit_action"] = l.TimeLimitAction
		}
		if l.ScaledPassingScore != "" {
			v["cmi.scaled_passing_score"] = l.ScaledPassingScore
		}
		if l.CompletionThreshold != "" {
			v["cmi.completion_threshold"] = l.CompletionThreshold
		}
		return v
	}
	v["cmi.core.student_id"], v["cmi.core.student_name"], v["cmi.core.credit"], v["cmi.core.lesson_mode"], v["cmi.core.entry"] = l.LearnerID, l.LearnerName, credit, mode, entry
	v["cmi.launch_data"], v["cmi.student_data.mastery_score"] = l.LaunchData, l.MasteryScore
	v["cmi.student_data.max_time_allowed"], v["cmi.student_data.time_limit_action"] = l.MaxTimeAllowed, l.TimeLimitAction
	return v
}
