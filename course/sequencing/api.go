package sequencing

import (
	"errors"
	"fmt"
	"strings"
)

// Result is what the Overall Sequencing Process decided for a navigation request.
type Result struct {
	// Deliver names the activity to launch; empty when nothing is delivered.
	Deliver string `json:"deliver,omitempty"`
	// Resumed says the delivered activity continues its suspended attempt, so the runtime
	// must restore its data instead of starting a new attempt.
	Resumed bool `json:"resumed,omitempty"`
	// SessionEnded says the sequencing session is over (exitAll, suspendAll, or flowing or
	// exiting past the root): the player closes.
	SessionEnded bool `json:"sessionEnded,omitempty"`
}

// Navigate is the Overall Sequencing Process (OP.1) for one navigation request: navigation
// request (NB.2.1), termination request (TB.2.3), sequencing request (SB.2.12), then the
// delivery request (DB.1.1) and content delivery environment (DB.2). Errors are *Error
// values naming the book's exception. As in the book, a termination that succeeded stays
// done even when the sequencing request that follows fails.
func (s *State) Navigate(r Request) (Result, error) {
	nav, err := s.navigationRequest(r)
	if err != nil {
		return Result{}, err
	}
	seq := nav.seq
	if nav.term != "" {
		replaced, err := s.terminationRequest(nav.term)
		s.refreshReaders()
		if err != nil {
			return Result{}, err
		}
		if replaced != "" {
			seq = replaced
		}
	}
	if seq == "" {
		return Result{}, nil
	}
	n, end, err := s.sequencingRequest(seq, r.Target)
	if errors.Is(err, ErrFlowActivityNoFlow) && seq == seqStart {
		// Lectern's policy, as ADL's own test cases expect (SX-08a, CM-11): a course
		// whose root does not allow flow but has a single leaf starts with that leaf,
		// as the learner could choose nothing else.
		if leaf := s.singleLeaf(); leaf != nil {
			n, end, err = s.choiceRequest(leaf)
		}
	}
	if err != nil {
		return Result{}, err
	}
	if end {
		s.endSession()
		return Result{SessionEnded: true}, nil
	}
	if n == nil {
		return Result{}, nil
	}
	if err := s.deliveryRequest(n); err != nil {
		return Result{}, err
	}
	resumed, err := s.contentDelivery(n, seq == seqRetry)
	if err != nil {
		return Result{}, err
	}
	return Result{Deliver: n.a.ID, Resumed: resumed}, nil
}

// endSession clears the Current Activity when the session ends, so the next session
// starts with start or resumeAll (the Suspended Activity survives).
func (s *State) endSession() {
	if cur := s.cur(); cur != nil && s.st(cur).Active {
		s.endAttempt(cur)
	}
	s.Current = ""
}

// NavigationRequestValid answers adl.nav.request_valid: whether the request would be
// honoured now. It runs the whole request on a copy of the state, so nothing changes: for
// continue and previous the answer is whether an activity would be delivered (or, for
// continue, the session would end by flowing past the last activity); for choice and jump,
// whether the target would be delivered.
func (s *State) NavigationRequestValid(r Request) bool {
	c := s.clone()
	res, err := c.Navigate(r)
	if err != nil {
		return false
	}
	switch r.Kind {
	case Continue:
		return res.Deliver != "" || res.SessionEnded
	case Previous, Choice, Jump, Start, ResumeAll:
		return res.Deliver != ""
	}
	return true
}

// NavigationAllowed reports whether the Navigation Request Process (NB.2.1) accepts r now,
// without running the sequencing request it leads to: what the player's Previous and Next
// controls show, as the LMS's user interface the SN book describes (ADL CM-07d: Next stays
// enabled on the last activity of a cluster whose parent allows flow, though the flow out
// of the cluster then finds nothing; the learner is told why).
func (s *State) NavigationAllowed(r Request) bool {
	_, err := s.clone().navigationRequest(r)
	return err == nil
}

// ParseRequest reads an adl.nav.request value: continue, previous, choice or jump with
// {target=ID}, exit, exitAll, abandon, abandonAll, suspendAll, or _none_ (ok false).
func ParseRequest(v string) (r Request, ok bool, err error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "_none_" {
		return Request{}, false, nil
	}
	if strings.HasPrefix(v, "{target=") {
		end := strings.Index(v, "}")
		if end < 0 {
			return Request{}, false, fmt.Errorf("sequencing: malformed navigation request %q", v)
		}
		r.Target = v[len("{target="):end]
		v = v[end+1:]
		if r.Target == "" || (v != string(Choice) && v != string(Jump)) {
			return Request{}, false, fmt.Errorf("sequencing: malformed navigation request %q", v)
		}
		r.Kind = Kind(v)
		return r, true, nil
	}
	if k := Kind(v); k.Known() && k != Choice && k != Jump {
		return Request{Kind: k}, true, nil
	}
	return Request{}, false, fmt.Errorf("sequencing: unknown navigation request %q", v)
}

// RuntimeOutcome is what a SCO reported for its attempt (its cmi data model), in the terms
// the sequencer tracks. Nil pointers and empty strings mean "not reported".
type RuntimeOutcome struct {
	// CompletionStatus is cmi.completion_status (completed, incomplete, not attempted,
	// unknown).
	CompletionStatus string `json:"completionStatus,omitempty"`
	// SuccessStatus is cmi.success_status (passed, failed, unknown).
	SuccessStatus string `json:"successStatus,omitempty"`
	// ScoreScaled is cmi.score.scaled, the primary objective's measure.
	ScoreScaled *float64 `json:"scoreScaled,omitempty"`
	// ScoreRaw, ScoreMin and ScoreMax are cmi.score.raw, .min and .max: the primary
	// objective's scores, which adlseq maps share.
	ScoreRaw *float64 `json:"scoreRaw,omitempty"`
	ScoreMin *float64 `json:"scoreMin,omitempty"`
	ScoreMax *float64 `json:"scoreMax,omitempty"`
	// ProgressMeasure is cmi.progress_measure, the attempt completion amount.
	ProgressMeasure *float64 `json:"progressMeasure,omitempty"`
	// SessionSeconds is cmi.session_time of the SCO's current session, in seconds.
	SessionSeconds *float64 `json:"sessionSeconds,omitempty"`
	// Exit is cmi.exit; "suspend" suspends the attempt.
	Exit string `json:"exit,omitempty"`
	// Objectives are the cmi.objectives.n entries by id.
	Objectives map[string]ObjectiveOutcome `json:"objectives,omitempty"`
}

// ObjectiveOutcome is one cmi.objectives.n entry. For the primary objective, completion
// status and progress measure are the activity's own; a secondary objective keeps its
// completion status (for rules and adlseq maps) and progress measure (for adlseq maps). The
// raw, min and max scores are only shared through adlseq maps.
type ObjectiveOutcome struct {
	SuccessStatus    string   `json:"successStatus,omitempty"`
	ScoreScaled      *float64 `json:"scoreScaled,omitempty"`
	ScoreRaw         *float64 `json:"scoreRaw,omitempty"`
	ScoreMin         *float64 `json:"scoreMin,omitempty"`
	ScoreMax         *float64 `json:"scoreMax,omitempty"`
	CompletionStatus string   `json:"completionStatus,omitempty"`
	ProgressMeasure  *float64 `json:"progressMeasure,omitempty"`
}

// Report feeds what a SCO reported into the activity's tracking data (the SCORM RTE to SN
// mapping) and rolls it up, so the statuses the table of contents and rules see are
// current. Call it on Commit and Terminate, before the navigation request that follows; not
// for an attempt the SCO abandons (abandon, abandonAll), whose data is discarded.
func (s *State) Report(activityID string, rt RuntimeOutcome) error {
	n := s.node(activityID)
	if n == nil {
		return fmt.Errorf("sequencing: no activity %q", activityID)
	}
	st := s.st(n)
	if !n.def.Tracked {
		return nil
	}
	// What sequencing knew of each objective before this report: the content's data model
	// started with it (Objectives), so an "unknown" now where a status was known is the
	// content's own SetValue, which clears the global objectives it writes.
	knewSat, knewDone := map[string]bool{}, map[string]bool{}
	for _, def := range n.objs {
		knewSat[def.ID], knewDone[def.ID] = s.satisfied(n, def) != unknown, s.objectiveCompleted(n, def) != unknown
	}
	if po, ok := rt.Objectives[n.primary().ID]; ok && n.primary().ID != "" {
		if rt.CompletionStatus == "" {
			rt.CompletionStatus = po.CompletionStatus
		}
		if rt.ProgressMeasure == nil {
			rt.ProgressMeasure = po.ProgressMeasure
		}
		if rt.ScoreRaw == nil && rt.ScoreMin == nil && rt.ScoreMax == nil {
			rt.ScoreRaw, rt.ScoreMin, rt.ScoreMax = po.ScoreRaw, po.ScoreMin, po.ScoreMax
		}
	}
	if rt.CompletionStatus != "" {
		st.ContentSetCompletion = true
	}
	if rt.SuccessStatus != "" {
		st.ContentSetSuccess = true
	}
	switch rt.CompletionStatus {
	case "completed":
		st.AttemptProgressStatus, st.Completed = true, true
	case "incomplete", "not attempted":
		st.AttemptProgressStatus, st.Completed = true, false
	case "unknown":
		st.AttemptProgressStatus, st.Completed = false, false
	}
	if rt.ProgressMeasure != nil {
		st.AmountStatus, st.Amount = true, *rt.ProgressMeasure
		if ct := n.a.CompletionThreshold; ct != nil && !ct.CompletedByMeasure && s.t.v3 {
			// A 3rd edition cmi.completion_threshold: the LMS judges completion from
			// the measure (the 4th edition's completedByMeasure is the rollup's job).
			st.AttemptProgressStatus, st.Completed = true, *rt.ProgressMeasure >= ct.MinProgressMeasure
		}
	}
	success, scaled := rt.SuccessStatus, rt.ScoreScaled
	if po, ok := rt.Objectives[n.primary().ID]; ok && n.primary().ID != "" {
		// The primary objective's cmi.objectives entry only speaks where cmi.success_status
		// and cmi.score.scaled do not: the LMS seeds that entry by id (RTE 4.2.17), and a
		// runtime's full commit then carries its "unknown" next to the SCO's own passed
		// (ADL OB-01a).
		if (success == "" || success == "unknown") && po.SuccessStatus != "" {
			success = po.SuccessStatus
		}
		if scaled == nil {
			scaled = po.ScoreScaled
		}
	}
	pos := s.objState(n, n.primary())
	setObjective(pos, success, scaled)
	setScores(pos, rt.ScoreRaw, rt.ScoreMin, rt.ScoreMax)
	if p := n.primary(); success == "unknown" && knewSat[p.ID] && !p.SatisfiedByMeasure {
		// The content made a known status unknown: that is its say on success, which
		// End Attempt leaves alone (ADL OB-17b).
		st.ContentSetSuccess = true
		s.clearGlobals(n, p, true)
	}
	if rt.CompletionStatus == "unknown" && knewDone[n.primary().ID] {
		s.clearGlobals(n, n.primary(), false)
	}
	for id, o := range rt.Objectives {
		for _, def := range n.objs {
			if def.ID == id && id != "" && id != n.primary().ID {
				os := s.objState(n, def)
				setObjective(os, o.SuccessStatus, o.ScoreScaled)
				setScores(os, o.ScoreRaw, o.ScoreMin, o.ScoreMax)
				if o.ProgressMeasure != nil {
					os.AmountStatus, os.Amount = true, *o.ProgressMeasure
				}
				switch o.CompletionStatus {
				case "completed":
					os.CompletionStatus, os.Completed = true, true
				case "incomplete", "not attempted":
					os.CompletionStatus, os.Completed = true, false
				case "unknown":
					os.CompletionStatus, os.Completed = false, false
				}
			}
		}
	}
	for _, def := range n.objs[1:] {
		// A secondary objective satisfied by measure is judged by the LMS from its
		// measure, as rollup (RB.1.2.a) judges the primary one (ADL OB-13c).
		if os := s.objState(n, def); def.SatisfiedByMeasure && os.MeasureStatus {
			min := 1.0
			if def.MinNormalizedMeasure != nil {
				min = *def.MinNormalizedMeasure
			}
			os.ProgressStatus, os.Satisfied = true, os.Measure >= min
		}
	}
	for _, def := range n.objs[1:] {
		o, ok := rt.Objectives[def.ID]
		if !ok || def.ID == "" {
			continue
		}
		if o.SuccessStatus == "unknown" && knewSat[def.ID] && !s.objState(n, def).ProgressStatus {
			s.clearGlobals(n, def, true)
		}
		if o.CompletionStatus == "unknown" && knewDone[def.ID] {
			s.clearGlobals(n, def, false)
		}
	}
	if rt.SessionSeconds != nil && *rt.SessionSeconds >= 0 {
		st.SessionSeconds = *rt.SessionSeconds
	}
	st.IsSuspended = rt.Exit == "suspend"
	s.overallRollup(n)
	s.refreshReaders()
	return nil
}

func setObjective(os *ObjectiveState, success string, scaled *float64) {
	switch success {
	case "passed":
		os.ProgressStatus, os.Satisfied = true, true
	case "failed":
		os.ProgressStatus, os.Satisfied = true, false
	case "unknown":
		os.ProgressStatus, os.Satisfied = false, false
	}
	if scaled != nil {
		os.MeasureStatus, os.Measure = true, *scaled
	}
}

// setScores records the raw, min and max scores the content reported (nil: not reported).
func setScores(os *ObjectiveState, raw, min, max *float64) {
	for k, v := range [...]*float64{raw, min, max} {
		if v != nil {
			*scoreKind(k).local(os) = v
		}
	}
}

// singleLeaf returns the only leaf of the tree, or nil when there are several.
func (s *State) singleLeaf() *node {
	var leaf *node
	for _, n := range s.t.nodes {
		if n.leaf() {
			if leaf != nil {
				return nil
			}
			leaf = n
		}
	}
	return leaf
}

// Objectives is what each objective of the activity (by objective id; an unnamed primary
// objective is left out) holds now as sequencing reads it, through its imsss and adlseq
// objective maps (success, completion, scaled, raw, min and max score, progress measure):
// the values a SCO's cmi.objectives.n starts a session with (SCORM 2004 RTE 4.2.17). A
// status or number that is not known is left empty. It is Tracking's view in the run-time's
// words.
func (s *State) Objectives(activityID string) map[string]ObjectiveOutcome {
	r, ok := s.Tracking(activityID)
	if !ok {
		return nil
	}
	word := func(b *bool, yes, no string) string {
		switch {
		case b == nil:
			return ""
		case *b:
			return yes
		}
		return no
	}
	out := map[string]ObjectiveOutcome{}
	for _, o := range r.Objectives {
		if o.ID == "" {
			continue
		}
		out[o.ID] = ObjectiveOutcome{SuccessStatus: word(o.Satisfied, "passed", "failed"),
			CompletionStatus: word(o.Completed, "completed", "incomplete"), ScoreScaled: o.Measure,
			ScoreRaw: o.Raw, ScoreMin: o.Min, ScoreMax: o.Max, ProgressMeasure: o.Amount}
	}
	return out
}
