package rollup

import (
	"encoding/json"
	"slices"
	"sort"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

// VerbAnswered is the verb of an answered question (xAPI's cmi.interaction statements).
const VerbAnswered = "http://adlnet.gov/expapi/verbs/answered"

// activityTypeInteraction is the activity type of a question (xAPI's SCORM profile).
const activityTypeInteraction = "http://adlnet.gov/expapi/activities/cmi.interaction"

type foldStatement struct {
	ID     string    `json:"id"`
	Stored time.Time `json:"stored"`
	// Timestamp stays a string: the interaction shows it as the content wrote it.
	Timestamp string              `json:"timestamp"`
	Verb      struct{ ID string } `json:"verb"`
	Object    struct {
		ID         string `json:"id"`
		ObjectType string `json:"objectType"`
		Definition *struct {
			Type                    string            `json:"type"`
			InteractionType         string            `json:"interactionType"`
			Description             map[string]string `json:"description"`
			CorrectResponsesPattern []string          `json:"correctResponsesPattern"`
		} `json:"definition"`
	} `json:"object"`
	Result *struct {
		Duration   string  `json:"duration"`
		Completion *bool   `json:"completion"`
		Response   *string `json:"response"`
		Success    *bool   `json:"success"`
		Score      *struct {
			Scaled *float64 `json:"scaled"`
		} `json:"score"`
	} `json:"result"`
	Context *struct {
		ContextActivities struct {
			Parent   []struct{ ID string } `json:"parent"`
			Grouping []struct{ ID string } `json:"grouping"`
			Category []struct{ ID string } `json:"category"`
		} `json:"contextActivities"`
		Extensions map[string]json.RawMessage `json:"extensions"`
	} `json:"context"`
	Authority json.RawMessage `json:"authority"`
}

// FoldStatements folds statements (full xAPI JSON as stored, in stored order) into f and
// reports whether anything changed. What it keeps per object activity: completed, passed,
// failed (counting until some passed), waived and result.completion true; the score of the latest (by stored time)
// completed/passed/failed statement with one; the terminated statements' durations (one per
// session, cmi5 §9.3.8) and the longest duration reported; and per question the latest
// answer. Statements about other objects (agents, statement refs) are skipped. Folding a
// statement again changes nothing.
func FoldStatements(f *registration.StatementFold, raws []json.RawMessage) bool {
	if f.Activities == nil {
		f.Activities = map[string]*registration.ActivityFold{}
	}
	changed := false
	set := func(dst *bool) {
		if !*dst {
			*dst, changed = true, true
		}
	}
	for _, raw := range raws {
		var s foldStatement
		if json.Unmarshal(raw, &s) != nil || s.Object.ID == "" || (s.Object.ObjectType != "" && s.Object.ObjectType != "Activity") {
			continue
		}
		id := s.Object.ID
		a := f.Activities[id]
		if a == nil {
			a, changed = &registration.ActivityFold{}, true
			f.Activities[id] = a
		}
		var scaled *float64
		var secs float64
		if s.Result != nil {
			secs, _ = course.DurationSeconds(s.Result.Duration)
			if c := s.Result.Completion; c != nil && *c {
				set(&a.CompletionSeen)
			}
			if s.Result.Score != nil {
				scaled = s.Result.Score.Scaled
			}
		}
		switch s.Verb.ID {
		case VerbCompleted:
			set(&a.Completed)
		case VerbPassed:
			set(&a.Passed)
		case VerbFailed:
			set(&a.FailedSeen)
		case VerbWaived:
			set(&a.Waived)
		case VerbSatisfied:
			set(&a.Satisfied)
		case VerbTerminated:
			if foldSession(a, registration.FoldSession{ID: s.ID, Stored: s.Stored, Seconds: secs}) {
				changed = true
			}
		}
		if scaled != nil && (s.Verb.ID == VerbCompleted || s.Verb.ID == VerbPassed || s.Verb.ID == VerbFailed) &&
			!s.Stored.Before(a.ScaledAt) {
			if a.Scaled == nil || *a.Scaled != *scaled || !a.ScaledAt.Equal(s.Stored) {
				changed = true
			}
			sc := *scaled
			a.Scaled, a.ScaledAt = &sc, s.Stored
		}
		if secs > a.Longest {
			a.Longest, changed = secs, true
		}
		if foldInteraction(f, &s) {
			changed = true
		}
		if foldCMI5Session(f, &s) {
			changed = true
		}
	}
	return changed
}

// cmi5Defined are the verbs of cmi5 defined statements an AU sends (cmi5 9.3), each at most
// once per session.
var cmi5Defined = map[string]bool{VerbInitialized: true, VerbCompleted: true, VerbPassed: true, VerbFailed: true, VerbTerminated: true}

// foldCMI5Session folds a statement that names a cmi5 session (the sessionid context
// extension) into its session: the launched statement's time and activity, the AU's cmi5
// defined verbs, the end (terminated, abandoned).
func foldCMI5Session(f *registration.StatementFold, s *foldStatement) bool {
	if s.Context == nil || s.Context.Extensions[CMI5SessionExt] == nil {
		return false
	}
	var id string
	if json.Unmarshal(s.Context.Extensions[CMI5SessionExt], &id) != nil || id == "" {
		return false
	}
	if f.CMI5Sessions == nil {
		f.CMI5Sessions = map[string]*registration.CMI5SessionFold{}
	}
	changed := false
	ss := f.CMI5Sessions[id]
	if ss == nil {
		ss, changed = &registration.CMI5SessionFold{}, true
		f.CMI5Sessions[id] = ss
	}
	if s.Stored.After(ss.Last) {
		ss.Last, changed = s.Stored, true
	}
	switch s.Verb.ID {
	case VerbLaunched:
		if ss.Launched.IsZero() {
			ss.Launched, ss.ActivityID, changed = s.Stored, s.Object.ID, true
		}
		return changed
	case VerbAbandoned, VerbSatisfied, VerbWaived:
		// The LMS's own statements.
		if s.Verb.ID == VerbAbandoned && !ss.Ended {
			ss.Ended, changed = true, true
		}
		return changed
	}
	category := false
	for _, c := range s.Context.ContextActivities.Category {
		category = category || c.ID == CMI5Category
	}
	if category && cmi5Defined[s.Verb.ID] && !slices.Contains(ss.Verbs, s.Verb.ID) {
		ss.Verbs, changed = append(ss.Verbs, s.Verb.ID), true
	}
	if s.Verb.ID == VerbTerminated && !ss.Ended {
		ss.Ended, changed = true, true
	}
	return changed
}

// foldSession adds a terminated statement's duration once, in stored order.
func foldSession(a *registration.ActivityFold, fs registration.FoldSession) bool {
	if fs.ID != "" && slices.ContainsFunc(a.Sessions, func(o registration.FoldSession) bool { return o.ID == fs.ID }) {
		return false
	}
	i := sort.Search(len(a.Sessions), func(i int) bool { return a.Sessions[i].Stored.After(fs.Stored) })
	a.Sessions = slices.Insert(a.Sessions, i, fs)
	return true
}

// foldInteraction keeps the latest answer to a question: an answered statement, or one about a
// cmi.interaction activity, that has a result.
func foldInteraction(f *registration.StatementFold, s *foldStatement) bool {
	def := s.Object.Definition
	isQuestion := s.Verb.ID == VerbAnswered || (def != nil && (def.Type == activityTypeInteraction || def.InteractionType != ""))
	if !isQuestion || s.Result == nil {
		return false
	}
	if old := f.Interactions[s.Object.ID]; old != nil && (s.Stored.Before(old.Stored) || (old.Stored.Equal(s.Stored) && !s.Stored.IsZero())) {
		return false
	}
	in := &registration.FoldInteraction{ID: s.Object.ID, Latency: s.Result.Duration, Timestamp: s.Timestamp, Stored: s.Stored}
	if def != nil {
		in.Type, in.CorrectResponses = def.InteractionType, def.CorrectResponsesPattern
		in.Description = def.Description["en-US"]
		if in.Description == "" {
			for _, k := range sortedKeys(def.Description) {
				in.Description = def.Description[k]
				break
			}
		}
	}
	if s.Result.Response != nil {
		in.LearnerResponse = *s.Result.Response
	}
	if s.Result.Success != nil {
		in.Result = "incorrect"
		if *s.Result.Success {
			in.Result = "correct"
		}
	}
	if s.Context != nil {
		for _, p := range s.Context.ContextActivities.Parent {
			in.Parents = append(in.Parents, p.ID)
		}
		for _, g := range s.Context.ContextActivities.Grouping {
			in.Parents = append(in.Parents, g.ID)
		}
	}
	if f.Interactions == nil {
		f.Interactions = map[string]*registration.FoldInteraction{}
	}
	f.Interactions[s.Object.ID] = in
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// VerbsOfFold reads the verbs seen per activity out of a fold (see VerbsOf).
func VerbsOfFold(f *registration.StatementFold) map[string]Verbs {
	out := make(map[string]Verbs, len(f.Activities))
	for id, a := range f.Activities {
		v := Verbs{Completed: a.Completed, Passed: a.Passed, Failed: a.FailedSeen && !a.Passed, Waived: a.Waived,
			CompletionResult: a.CompletionSeen, Seconds: a.Longest}
		if a.Scaled != nil {
			sc := *a.Scaled
			v.Scaled = &sc
		}
		if len(a.Sessions) > 0 {
			v.Seconds = 0
			for _, s := range a.Sessions {
				v.Seconds += s.Seconds
			}
		}
		out[id] = v
	}
	return out
}

// FoldInteractions are the answered questions of a fold as run-time interactions, by the
// launchable activity of pkg they belong to: the one named as the statement's parent or
// grouping activity, else, in a course with a single launchable activity, that one.
// Questions of no activity of the course are left out.
func FoldInteractions(pkg *course.Package, f *registration.StatementFold) map[string][]Interaction {
	if f == nil || len(f.Interactions) == 0 || pkg == nil || pkg.Root == nil {
		return nil
	}
	byKey := map[string]string{}
	var aus []string
	pkg.Root.Walk(func(a *course.Activity) {
		if a.LaunchURL != "" && len(a.Children) == 0 {
			aus = append(aus, a.ID)
			for _, k := range activityKeys(pkg, a) {
				byKey[k] = a.ID
			}
		}
	})
	ids := make([]string, 0, len(f.Interactions))
	for id := range f.Interactions {
		ids = append(ids, id)
	}
	// Oldest answer first, as a SCORM run-time lists its interactions.
	sort.Slice(ids, func(i, j int) bool {
		a, b := f.Interactions[ids[i]], f.Interactions[ids[j]]
		if !a.Stored.Equal(b.Stored) {
			return a.Stored.Before(b.Stored)
		}
		return ids[i] < ids[j]
	})
	out := map[string][]Interaction{}
	for _, id := range ids {
		in := f.Interactions[id]
		owner := ""
		for _, p := range in.Parents {
			if o, ok := byKey[p]; ok {
				owner = o
				break
			}
		}
		if owner == "" && len(aus) == 1 {
			owner = aus[0]
		}
		if owner == "" {
			continue
		}
		out[owner] = append(out[owner], Interaction{ID: in.ID, Type: in.Type, Timestamp: in.Timestamp,
			CorrectResponses: in.CorrectResponses, LearnerResponse: in.LearnerResponse, Result: in.Result,
			Latency: in.Latency, Description: in.Description})
	}
	return out
}

// AddInteractions appends run-time interactions (FoldInteractions) to the launchable
// activities of a progress/detail tree.
func AddInteractions(tree *registration.ActivityResult, byActivity map[string][]Interaction) {
	if tree == nil || len(byActivity) == 0 {
		return
	}
	var walk func(d *registration.ActivityResult)
	walk = func(d *registration.ActivityResult) {
		if d.Runtime != nil {
			for _, in := range byActivity[d.ID] {
				d.Runtime.RuntimeInteractions = append(d.Runtime.RuntimeInteractions, registration.RuntimeInteraction{
					ID: in.ID, Type: in.Type, Objectives: []string{}, Timestamp: in.Timestamp,
					CorrectResponses: nonNil(in.CorrectResponses), Weighting: in.Weighting,
					LearnerResponse: in.LearnerResponse, Result: in.Result, Latency: in.Latency,
					Description: in.Description,
				})
			}
		}
		for _, c := range d.Children {
			walk(c)
		}
	}
	walk(tree)
}
