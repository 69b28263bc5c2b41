// Package postback formats a registration's results for an LMS — the legacy
// `registrationreport` XML in COURSE, ACTIVITY and FULL detail (course-engine-semantics.md
// §2.7), or JSON — and builds the HTTP request that posts it (FORM or HTTPBASIC, with an
// HMAC-SHA256 signature). It sends nothing: the job queue delivers what Build returns
// through the outbound client, which applies the SSRF policy.
package postback

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/course/registration"
)

// ErrInvalid is wrapped by every problem with a report request or postback target.
var ErrInvalid = errors.New("invalid postback")

// Format is the detail of a report.
type Format string

// The report formats (postBack.resultsFormat; ApiRollupRegistrationFormat in lower case).
const (
	Course   Format = "COURSE"
	Activity Format = "ACTIVITY"
	Full     Format = "FULL"
)

// ParseFormat accepts a format in any case; empty means COURSE (the spec's default).
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToUpper(strings.TrimSpace(s))); f {
	case "":
		return Course, nil
	case Course, Activity, Full:
		return f, nil
	}
	return "", fmt.Errorf("%w: results format %q is not COURSE, ACTIVITY or FULL", ErrInvalid, s)
}

// Report is what a report is built from: the registration, the instance reported (the
// latest), its progress and, for ACTIVITY and FULL, its activity tree (progress/detail's
// activityDetails, as rollup.Result.Details builds it).
type Report struct {
	Registration *registration.Registration
	Instance     int
	Progress     registration.Progress
	Details      *registration.ActivityResult
	// Updated is when the progress last changed (the JSON report's updated; omitted when zero).
	Updated time.Time
	// GlobalObjectives are the registration's global objectives as its sequencing holds
	// them (progress's globalObjectives): in the JSON reports and FULL's <globalobjectives>.
	GlobalObjectives []registration.ObjectiveResult
}

func (rep Report) check(f Format) error {
	if rep.Registration == nil {
		return fmt.Errorf("%w: no registration", ErrInvalid)
	}
	if f != Course && rep.Details == nil {
		return fmt.Errorf("%w: %s report needs the activity tree", ErrInvalid, f)
	}
	return nil
}

// XML returns the registrationreport document in format f: an XML declaration, then
// <registrationreport format=".." regid=".." instanceid="..">, indented by two spaces.
func XML(rep Report, f Format) ([]byte, error) {
	if err := rep.check(f); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	w := &writer{e: xml.NewEncoder(&buf)}
	w.e.Indent("", "  ")
	w.start("registrationreport", "format", strings.ToLower(string(f)), "regid", rep.Registration.ID,
		"instanceid", strconv.Itoa(rep.Instance))
	switch f {
	case Course:
		p := rep.Progress
		w.text("complete", completeWord(p.Completion))
		w.text("success", lower(p.Success))
		w.text("totaltime", strconv.FormatFloat(math.Round(p.TotalSecondsTracked), 'f', 0, 64))
		w.text("score", scoreText(p.ScoreScaled))
	case Activity:
		w.activity(rep.Details)
	case Full:
		w.full(rep.Details, rep.Registration.Learner)
		// The legacy schema has no element for them; Lectern adds one after the tree, in
		// the shape of an activity's objectives, so a FULL report carries what progress's
		// globalObjectives does (receivers that read by name skip it).
		w.start("globalobjectives")
		for _, o := range rep.GlobalObjectives {
			w.objective(o)
		}
		w.end()
	}
	w.end()
	if w.err == nil {
		w.err = w.e.Flush()
	}
	if w.err != nil {
		return nil, w.err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// writer emits elements in order; the first error sticks.
type writer struct {
	e     *xml.Encoder
	stack []string
	err   error
}

func (w *writer) start(name string, attrs ...string) {
	se := xml.StartElement{Name: xml.Name{Local: name}}
	for i := 0; i+1 < len(attrs); i += 2 {
		se.Attr = append(se.Attr, xml.Attr{Name: xml.Name{Local: attrs[i]}, Value: attrs[i+1]})
	}
	w.stack = append(w.stack, name)
	if w.err == nil {
		w.err = w.e.EncodeToken(se)
	}
}

func (w *writer) end() {
	name := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	if w.err == nil {
		w.err = w.e.EncodeToken(xml.EndElement{Name: xml.Name{Local: name}})
	}
}

func (w *writer) text(name, value string) {
	w.start(name)
	if w.err == nil && value != "" {
		w.err = w.e.EncodeToken(xml.CharData(value))
	}
	w.end()
}

// activity writes the ACTIVITY format's recursive <activity> element.
func (w *writer) activity(a *registration.ActivityResult) {
	w.start("activity", "id", a.ID)
	w.text("title", a.Title)
	w.text("attempts", strconv.Itoa(a.Attempts))
	w.text("complete", completeWord(a.ActivityCompletion))
	w.text("success", lower(a.ActivitySuccess))
	w.text("time", a.TimeTracked)
	w.text("score", scaledText(a.Score))
	w.start("children")
	for _, c := range a.Children {
		w.activity(c)
	}
	w.end()
	w.end()
}

// objective writes a FULL report's <objective>: its measure and satisfaction as sequencing
// tracks them.
func (w *writer) objective(o registration.ObjectiveResult) {
	w.start("objective", "id", o.ID, "primary", boolText(o.Primary))
	w.text("measurestatus", boolText(o.Score != nil))
	measure := "0.0"
	if o.Score != nil {
		measure = decimal(o.Score.Scaled / 100)
	}
	w.text("normalizedmeasure", measure)
	w.text("progressstatus", boolText(o.ObjectiveSuccess != registration.Unknown))
	w.text("satisfiedstatus", boolText(o.ObjectiveSuccess == registration.Passed))
	w.end()
}

// full writes the FULL format's recursive <activity> element: the activity's tracking
// state, its objectives, the run-time data of a SCO, then its children.
func (w *writer) full(a *registration.ActivityResult, learner registration.Learner) {
	w.start("activity", "id", a.ID)
	w.text("title", a.Title)
	w.text("satisfied", boolText(a.ActivitySuccess == registration.Passed))
	w.text("completed", boolText(a.ActivityCompletion == registration.Completed))
	w.text("progressstatus", boolText(a.ActivitySuccess != registration.Unknown))
	w.text("attemptprogressstatus", boolText(a.ActivityCompletion != registration.Unknown))
	w.text("attempts", strconv.Itoa(a.Attempts))
	w.text("suspended", boolText(a.Suspended))
	w.start("objectives")
	for _, o := range a.Objectives {
		w.objective(o)
	}
	w.end()
	if a.Runtime != nil {
		w.runtime(a, learner)
	}
	w.start("children")
	for _, c := range a.Children {
		w.full(c, learner)
	}
	w.end()
	w.end()
}

func (w *writer) runtime(a *registration.ActivityResult, learner registration.Learner) {
	rt := a.Runtime
	w.start("runtime")
	w.text("completion_status", completionVocab(rt.CompletionStatus))
	w.text("credit", creditVocab(rt.Credit))
	w.text("entry", entryVocab(rt.Entry))
	w.text("exit", exitVocab(rt.Exit))
	w.start("learnerpreference")
	lp := rt.LearnerPreference
	w.text("audio_level", strconv.FormatFloat(lp.AudioLevel, 'f', 1, 64))
	w.text("language", lp.Language)
	w.text("delivery_speed", strconv.FormatFloat(lp.DeliverySpeed, 'f', 1, 64))
	w.text("audio_captioning", strconv.Itoa(lp.AudioCaptioning))
	w.end()
	w.text("location", rt.Location)
	w.text("mode", modeVocab(rt.Mode))
	w.text("progress_measure", rt.ProgressMeasure)
	w.text("score_scaled", rt.ScoreScaled)
	w.text("score_raw", rt.ScoreRaw)
	w.text("score_min", rt.ScoreMin)
	w.text("score_max", rt.ScoreMax)
	w.text("total_time", rt.TotalTime)
	w.text("timetracked", rt.TimeTracked)
	w.text("success_status", successVocab(rt.SuccessStatus))
	w.text("suspend_data", rt.SuspendData)
	for _, cs := range []struct {
		name string
		list []registration.Comment
	}{{"comments_from_learner", rt.LearnerComments}, {"comments_from_lms", rt.LMSComments}} {
		w.start(cs.name)
		for _, c := range cs.list {
			w.start("comment")
			w.text("value", c.Value)
			w.text("location", c.Location)
			w.text("date_time", c.DateTime)
			w.end()
		}
		w.end()
	}
	w.start("interactions")
	for _, in := range rt.RuntimeInteractions {
		w.start("interaction", "id", in.ID)
		w.text("type", in.Type)
		w.start("objectives")
		for _, id := range in.Objectives {
			w.start("objective", "id", id)
			w.end()
		}
		w.end()
		w.text("timestamp", in.Timestamp)
		w.start("correct_responses")
		for _, p := range in.CorrectResponses {
			w.start("response", "id", p)
			w.end()
		}
		w.end()
		for _, k := range []struct{ el, value string }{{"weighting", in.Weighting}, {"learner_response", in.LearnerResponse},
			{"result", in.Result}, {"latency", in.Latency}, {"description", in.Description}} {
			w.text(k.el, k.value)
		}
		w.end()
	}
	w.end()
	w.start("objectives")
	for _, o := range rt.RuntimeObjectives {
		w.start("objective", "id", o["id"])
		w.text("score_scaled", o["scoreScaled"])
		w.text("score_min", o["scoreMin"])
		w.text("score_raw", o["scoreRaw"])
		w.text("score_max", o["scoreMax"])
		w.text("success_status", successVocab(o["successStatus"]))
		w.text("completion_status", completionVocab(o["completionStatus"]))
		w.text("progress_measure", o["progressMeasure"])
		w.text("description", o["description"])
		w.end()
	}
	w.end()
	sp := a.StaticProperties
	w.start("static")
	w.text("completion_threshold", sp.CompletionThreshold)
	w.text("launch_data", sp.LaunchData)
	w.text("learner_id", learner.ID)
	w.text("learner_name", strings.TrimSpace(learner.FirstName+" "+learner.LastName))
	w.text("max_time_allowed", sp.MaxTimeAllowed)
	passing := ""
	if sp.ScaledPassingScoreUsed && sp.ScaledPassingScore != nil {
		passing = decimal(*sp.ScaledPassingScore)
	}
	w.text("scaled_passing_score", passing)
	tla := sp.TimeLimitAction
	if tla == "" {
		tla = "Undefined"
	}
	w.text("time_limit_action", tla)
	w.end()
	w.end()
}

func lower(s string) string { return strings.ToLower(s) }

func boolText(b bool) string { return strconv.FormatBool(b) }

// scoreText is a score on the API's 0-100 scale as the legacy report writes it: the
// shortest decimal, or the word unknown.
func scoreText(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func scaledText(s *registration.Scaled) string {
	if s == nil {
		return "unknown"
	}
	return scoreText(&s.Scaled)
}

// decimal writes a 0-1 measure with at least one decimal ("1.0", "0.85").
func decimal(v float64) string {
	s := strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func vocabOf(v string, m map[string]string, fallback string) string {
	if out, ok := m[strings.ToLower(strings.TrimSpace(v))]; ok {
		return out
	}
	return fallback
}

// completeWord is the <complete> vocabulary of the COURSE and ACTIVITY reports:
// complete, incomplete or unknown (course-engine-semantics.md §2.7), where the API says
// COMPLETED.
func completeWord(v string) string {
	if v == "COMPLETED" {
		return "complete"
	}
	return lower(v)
}

func completionVocab(v string) string {
	return vocabOf(v, map[string]string{"completed": "Completed", "incomplete": "Incomplete", "browsed": "Browsed",
		"not attempted": "Not_Attempted", "not_attempted": "Not_Attempted", "passed": "Completed", "failed": "Completed"}, "Unknown")
}

func successVocab(v string) string {
	return vocabOf(v, map[string]string{"passed": "Passed", "failed": "Failed"}, "Unknown")
}

func creditVocab(v string) string {
	return vocabOf(v, map[string]string{"no-credit": "NoCredit", "nocredit": "NoCredit", "no_credit": "NoCredit"}, "Credit")
}

func entryVocab(v string) string {
	return vocabOf(v, map[string]string{"abinitio": "AbInitio", "ab-initio": "AbInitio", "resume": "Resume"}, "Other")
}

func exitVocab(v string) string {
	return vocabOf(v, map[string]string{"undefined": "Undefined", "timeout": "TimeOut", "time-out": "TimeOut",
		"suspend": "Suspend", "logout": "Logout", "normal": "Normal", "override": "Override"}, "Unknown")
}

func modeVocab(v string) string {
	return vocabOf(v, map[string]string{"browse": "Browse", "review": "Review"}, "Normal")
}
