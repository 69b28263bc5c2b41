// Package rollup computes what a registration instance has achieved from what its content
// reported: per-activity completion, success, score and time, and the registration's
// progress (the root's values). It is pure: the caller loads the course version's activity
// tree, the stored run-time state of each launchable activity and the effective settings,
// and stores or posts what Compute returns. SCORM 1.2, SCORM 1.1 and AICC use the SCORM 1.2
// rules with the "rudimentary rollup" settings (scorm12.go); SCORM 2004 uses the IMS SS
// rollup of the activity tree (sn.go) for an instance without sequencing state, and the
// sequencer's own rollup where there is one (UseSequencing: one SN rollup, issue 24); cmi5
// and xAPI courses are evaluated from the verbs of their statements (statements.go).
package rollup

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

// State is the run-time state of an instance: one entry per launchable activity that has
// been launched, keyed by course.Activity.ID. Activities without an entry were never
// launched.
type State map[string]*ActivityState

// ActivityState is what the content (CMI data model) and the server recorded for one
// launchable activity. Pointers are nil while the content has not set the value. Status
// strings are the data model's vocabulary, as the content wrote them (case is ignored).
type ActivityState struct {
	// Attempts counts launches; 0 with other data present counts as 1.
	Attempts int
	// LessonStatus is SCORM 1.2 cmi.core.lesson_status (AICC lesson_status, also in its
	// one-letter form): passed, completed, failed, incomplete, browsed, not attempted.
	LessonStatus string
	// CompletionStatus and SuccessStatus are SCORM 2004 cmi.completion_status (completed,
	// incomplete, not attempted, unknown) and cmi.success_status (passed, failed, unknown).
	CompletionStatus string
	SuccessStatus    string
	// ScoreScaled is SCORM 2004 cmi.score.scaled (-1..1); ScoreRaw/Min/Max are
	// cmi.score.raw/min/max (cmi.core.score.* in SCORM 1.2).
	ScoreScaled *float64
	ScoreRaw    *float64
	ScoreMin    *float64
	ScoreMax    *float64
	// ProgressMeasure is SCORM 2004 cmi.progress_measure (0..1).
	ProgressMeasure *float64
	// Credit is "credit" or "no-credit" (empty: the registration's forCredit decides).
	Credit string
	// Mode is normal, browse or review (empty: normal).
	Mode        string
	Entry       string
	Exit        string
	Location    string
	SuspendData string
	// TotalTime is the content's cmi.total_time / cmi.core.total_time as it reads it (shown
	// in the run-time detail, never used for totalSecondsTracked).
	TotalTime string
	// SecondsTracked is the time the server measured the activity to be open.
	SecondsTracked float64
	// Terminated is true once the content called Terminate / LMSFinish in the latest
	// attempt; SCORM 2004 uses it for completionSetByContent / objectiveSetByContent false.
	Terminated bool
	// Suspended is true when the latest attempt exited with suspend.
	Suspended bool
	// Updated is when the content last committed; the SCORM 1.2 "course provides status"
	// and "last SCO score" modes use the most recently updated SCO.
	Updated           time.Time
	LearnerPreference *registration.LearnerPreference
	LearnerComments   []registration.Comment
	LMSComments       []registration.Comment
	Interactions      []Interaction
	Objectives        []ObjectiveState
}

// ObjectiveState is one run-time objective (cmi.objectives.n).
type ObjectiveState struct {
	ID string
	// SuccessStatus is passed/failed/unknown; SCORM 1.2 objectives have a single status
	// (passed, failed, completed, incomplete, browsed, not attempted) given here too.
	SuccessStatus    string
	CompletionStatus string
	ScoreScaled      *float64
	ScoreRaw         *float64
	ScoreMin         *float64
	ScoreMax         *float64
	ProgressMeasure  *float64
	Description      string
}

// Interaction is one run-time interaction (cmi.interactions.n), shown in progress/detail and
// the FULL report.
type Interaction struct {
	ID               string
	Type             string
	Objectives       []string
	Timestamp        string
	CorrectResponses []string
	Weighting        string
	LearnerResponse  string
	Result           string
	Latency          string
	Description      string
}

// Result is the rollup of an instance.
type Result struct {
	// Completion (COMPLETED, INCOMPLETE, UNKNOWN) and Success (PASSED, FAILED, UNKNOWN) of
	// the registration: the root activity's.
	Completion string
	Success    string
	// Score is the registration's score on the API's scale (scaled × 100), nil if unknown.
	Score *float64
	// CompletionAmount is 0..1, nil while nothing was launched.
	CompletionAmount *float64
	// TotalSecondsTracked sums the server-measured time of every activity.
	TotalSecondsTracked float64
	// Activities holds the outcome of every activity of the tree, keyed by its id.
	Activities map[string]*Outcome
	// Satisfied lists, for cmi5, the block and course ids (the cmi5.xml ids) that are
	// satisfied, in tree order, so the caller can record the LMS's satisfied statements.
	Satisfied []string
	// sequenced is what UseSequencing read of the sequencer that the activity tree shows
	// beyond Activities (suspension, the objectives it tracks, the global objectives), for
	// Digest.
	sequenced []byte
}

// Outcome is the rollup of one activity.
type Outcome struct {
	Completion string
	Success    string
	// Score is scaled × 100 (the API's scale), nil when unknown.
	Score            *float64
	CompletionAmount *float64
	Attempts         int
	Seconds          float64
	// Objectives are the non-primary objectives' outcomes by id (leaves only).
	Objectives map[string]ObjectiveOutcome
}

// ObjectiveOutcome is the state of one non-primary objective.
type ObjectiveOutcome struct {
	Completion string
	Success    string
	Score      *float64
}

// Input is everything Compute needs.
type Input struct {
	Package  *course.Package
	State    State
	Settings Settings
	// ForCredit is the registration's forCredit; with false, SCORM 1.2 mastery scores do
	// not decide passed/failed.
	ForCredit bool
}

// Compute rolls up a SCORM or AICC instance. cmi5 and xAPI courses have no CMI state; use
// Statements for them (Compute returns the untracked result for them).
func Compute(in Input) Result {
	if in.State == nil {
		in.State = State{}
	}
	var r Result
	switch std := in.Package.Standard; {
	case std.IsSCORM2004():
		r = computeSN(in)
	case std == course.SCORM11 || std == course.SCORM12 || std == course.AICC:
		r = computeSCORM12(in)
	default:
		r = untracked(in.Package)
	}
	r.TotalSecondsTracked = roundSeconds(r.TotalSecondsTracked)
	return r
}

// roundSeconds keeps tracked time to hundredths, SCORM's own resolution, so float sums do
// not leak noise into progress.
func roundSeconds(s float64) float64 { return math.Round(s*100) / 100 }

func untracked(pkg *course.Package) Result {
	r := Result{Completion: registration.Unknown, Success: registration.Unknown, Activities: map[string]*Outcome{}}
	pkg.Root.Walk(func(a *course.Activity) {
		r.Activities[a.ID] = &Outcome{Completion: registration.Unknown, Success: registration.Unknown}
	})
	return r
}

// Apply copies the rollup into a registration's progress, keeping its access dates;
// CompletedAt is set to now the first time the completion becomes COMPLETED.
func (r Result) Apply(p *registration.Progress, now time.Time) { r.apply(p, now, r.Digest()) }

// Changed reports whether the rollup differs from a stored progress in what a postback
// reports: completion, success, score, completion amount, more tracked seconds, or the
// activity tree an ACTIVITY or FULL report shows (Digest).
func (r Result) Changed(p registration.Progress) bool { return r.changed(p, r.Digest()) }

// Update applies the rollup to p when it Changed what a post-back reports, and says whether
// it did. It is what a commit calls: the digest, linear in the activity tree, is computed
// once, not once to compare and again to store.
func (r Result) Update(p *registration.Progress, now time.Time) bool {
	d := r.Digest()
	if !r.changed(*p, d) {
		return false
	}
	r.apply(p, now, d)
	return true
}

func (r Result) apply(p *registration.Progress, now time.Time, digest string) {
	p.Completion, p.Success = r.Completion, r.Success
	p.ReportDigest = digest
	p.ScoreScaled = r.Score
	p.CompletionAmount = r.CompletionAmount
	// Measured time only grows within an instance: a rollup computed before a heartbeat raised
	// it (registration.Store.SetTrackedSeconds) must not write the older total back.
	p.TotalSecondsTracked = max(p.TotalSecondsTracked, r.TotalSecondsTracked)
	if r.Completion == registration.Completed && p.CompletedAt == nil {
		t := now.UTC()
		p.CompletedAt = &t
	}
}

func (r Result) changed(p registration.Progress, digest string) bool {
	return r.Completion != p.Completion || r.Success != p.Success || !sameFloat(r.Score, p.ScoreScaled) ||
		!sameFloat(r.CompletionAmount, p.CompletionAmount) || r.TotalSecondsTracked > p.TotalSecondsTracked ||
		digest != p.ReportDigest
}

// Digest fingerprints what an ACTIVITY or FULL report shows of the activity tree beyond the
// registration's summary: each activity's completion, success, score, completion amount and
// attempts, its objectives' outcomes and, with sequencing state, its suspension, the
// objectives the sequencer tracks and the global objectives. Without it a report changed
// only below the root (a second SCO completed, a new attempt, suspendAll) was never posted,
// and the LMS kept an older tree than progress/detail's. Measured time is left out: it
// grows with every heartbeat, and its growth is a change of its own.
func (r Result) Digest() string {
	h := sha256.New()
	for _, id := range slices.Sorted(maps.Keys(r.Activities)) {
		o := r.Activities[id]
		fmt.Fprintf(h, "%q %s %s %s %s %d\n", id, o.Completion, o.Success, floatText(o.Score), floatText(o.CompletionAmount), o.Attempts)
		for _, oid := range slices.Sorted(maps.Keys(o.Objectives)) {
			x := o.Objectives[oid]
			fmt.Fprintf(h, "\t%q %s %s %s\n", oid, x.Completion, x.Success, floatText(x.Score))
		}
	}
	h.Write(r.sequenced)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// floatText is a score in a digest: "-" when unknown.
func floatText(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

func sameFloat(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func norm(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func ptr(v float64) *float64 { return &v }

// round4 keeps scores readable (scaled × 100 with at most 4 decimals) and stable in goldens.
func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

func (s *ActivityState) attempts() int {
	if s == nil {
		return 0
	}
	if s.Attempts > 0 {
		return s.Attempts
	}
	return 1
}
