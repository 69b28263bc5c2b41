package learner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/course"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/sequencing"
)

// SCORM 2004 sequencing on the learner's path (docs/sequencing.md, "What is wired"): the
// sequencer (course/sequencing) decides what the player delivers; this file loads its State
// for a player session, feeds it what the SCOs commit, runs navigation requests, and stores it
// again. A tracked session keeps the State durably with its registration instance (the
// run-time store's sequencing record), so another device or a relaunch goes on from it; a
// preview or review tracks nothing, so its State lives in this server's memory for the
// player session only.

// NavState is what the player needs after a sequencing decision: what to deliver, the table
// of contents and the adl.nav.request_valid answers.
type NavState struct {
	// Deliver is the activity to launch now; empty when nothing is delivered.
	Deliver string `json:"deliver,omitempty"`
	// Resumed says Deliver continues a suspended attempt.
	Resumed bool `json:"resumed,omitempty"`
	// SessionEnded says the sequencing session is over: the player exits.
	SessionEnded bool `json:"sessionEnded,omitempty"`
	// Current is the sequencer's Current Activity.
	Current string `json:"current,omitempty"`
	// Exception names why the request was not honoured (the SN book's code, e.g. NB.2.1-2),
	// Message says it in words; both empty when it was.
	Exception string `json:"exception,omitempty"`
	Message   string `json:"message,omitempty"`
	// TOC is the table of contents: what is visible and what a choice would allow now.
	TOC []sequencing.TOCEntry `json:"toc"`
	// Valid answers adl.nav.request_valid.
	Valid NavValid `json:"valid"`
	// Controls are the player's Previous and Next: enabled when the navigation request is
	// allowed (sequencing.State.NavigationAllowed).
	Controls NavControls `json:"controls"`
}

// NavControls says which of the player's flow controls are enabled.
type NavControls struct {
	Continue bool `json:"continue"`
	Previous bool `json:"previous"`
}

// NavValid answers adl.nav.request_valid.continue, previous, choice.{target=ID} and
// jump.{target=ID} (activities missing from Choice and Jump are not valid targets).
type NavValid struct {
	Continue bool            `json:"continue"`
	Previous bool            `json:"previous"`
	Choice   map[string]bool `json:"choice"`
	Jump     map[string]bool `json:"jump"`
}

// Sequenced reports whether the player sequences v with the SCORM 2004 sequencer: every
// SCORM 2004 course with an activity tree. SCORM 1.2, AICC, xAPI and cmi5 are not.
func Sequenced(v *course.Version) bool {
	d, ok := scormrt.DialectOf(v.Standard)
	return ok && d == scormrt.SCORM2004 && v.Package != nil && v.Package.Root != nil
}

// ErrNotSequenced refuses a sequencing call for a course that is not SCORM 2004.
var ErrNotSequenced = errors.New("the course is not sequenced (SCORM 2004 only)")

// ErrNotDelivered refuses the load of a SCORM 2004 activity the sequencer has not delivered:
// only the Current Activity may run, so a learner (or a script) cannot skip the course's
// sequencing rules by asking for another activity's page.
var ErrNotDelivered = errors.New("the sequencer has not delivered this activity")

// memStates keeps the sequencing States of sessions that track nothing (previews, reviews),
// by player session token, for the session's life; bounded so an abandoned preview costs
// nothing for long.
type memStates struct {
	mu sync.Mutex
	m  map[string]memState
}

type memState struct {
	data    []byte
	expires time.Time
}

// maxMemStates bounds the previews' States one server keeps.
const maxMemStates = 2000

func (m *memStates) get(key string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[key].data
}

func (m *memStates) put(key string, data []byte, expires time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]memState{}
	}
	if _, ok := m.m[key]; !ok && len(m.m) >= maxMemStates {
		now := time.Now()
		for k, v := range m.m {
			if now.After(v.expires) {
				delete(m.m, k)
			}
		}
		if len(m.m) >= maxMemStates {
			// Still full of live previews: the oldest-expiring one goes.
			keys := make([]string, 0, len(m.m))
			for k := range m.m {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool { return m.m[keys[i]].expires.Before(m.m[keys[j]].expires) })
			delete(m.m, keys[0])
		}
	}
	m.m[key] = memState{data: data, expires: expires}
}

// tracked reports whether a session's sequencing State is stored with its registration.
func tracked(sess *course.SessionClaims) bool {
	return !sess.Preview && !sess.ForceReview && sess.RegistrationID != "" && sess.InstanceKey != ""
}

// seed is the State's randomization seed of a registration instance (or a preview session),
// so each learner gets their own draw and keeps it.
func seed(parts ...string) int64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return int64(h.Sum64() & (1<<62 - 1))
}

// changeSequencing loads the session's State (creating it on first use), applies fn and
// stores the result: durably with the registration instance for a tracked session (fn may
// run again when another request changed the State meanwhile), in memory for a preview. key
// is the player session token, which names a preview's State. It returns the State as stored
// and whether fn changed it (an unchanged State is not written again: equal States marshal to
// equal bytes). A tracked session's State reads the learner's global objectives shared
// across courses, and what it changed of them is stored back (systemGlobals).
func (s *Service) changeSequencing(ctx context.Context, sess *course.SessionClaims, key string, v *course.Version, fn func(st *sequencing.State) error) (*sequencing.State, bool, error) {
	if !Sequenced(v) {
		return nil, false, ErrNotSequenced
	}
	sys, err := s.loadSystemGlobals(ctx, sess, v)
	if err != nil {
		return nil, false, err
	}
	build := func(old []byte) (*sequencing.State, []byte, error) {
		var st *sequencing.State
		var err error
		if len(old) > 0 {
			st, err = sequencing.Load(v.Package, old, nil)
		} else if st, err = sequencing.New(v.Package, nil); err == nil {
			if tracked(sess) {
				st.Seed = seed(sess.RegistrationID, sess.InstanceKey)
			} else {
				st.Seed = seed(key)
			}
		}
		if err != nil {
			return nil, nil, err
		}
		if sys != nil {
			st.ShareGlobals(sys.held, sys.ids)
		}
		if err := fn(st); err != nil {
			return nil, nil, err
		}
		data, err := json.Marshal(st)
		return st, data, err
	}
	if !tracked(sess) {
		old := s.seqMem.get(key)
		st, data, err := build(old)
		if err != nil {
			return nil, false, err
		}
		changed := !bytes.Equal(old, data)
		if changed {
			s.seqMem.put(key, data, time.Unix(sess.Expires, 0))
		}
		return st, changed, nil
	}
	var out *sequencing.State
	changed := false
	err = s.d.Runtime.UpdateSequencing(ctx, sess.Tenant, sess.RegistrationID, sess.InstanceKey, func(old json.RawMessage) (json.RawMessage, error) {
		st, data, err := build(old)
		if err != nil {
			return nil, err
		}
		out, changed = st, !bytes.Equal(old, data)
		// The learner's global objectives are written before the State: a request that
		// fails between the two leaves the State as it was, and its retry writes the same
		// values again. The other order would leave a State ahead of the learner's record,
		// which the next request reads over the State's copy (ShareGlobals), losing the
		// change.
		if sys != nil {
			if err := sys.store(ctx, s, st); err != nil {
				return nil, err
			}
		}
		if !changed {
			return nil, nil
		}
		return data, nil
	})
	return out, changed, err
}

// afterSequencing stores the progress of a tracked session's registration instance after a
// navigation request, a launch or an activity load changed its sequencing State outside a
// commit: the reports are the sequencer's (rollup.UseSequencing), and a request changes
// them (End Attempt completes and satisfies a SCO that said nothing, a post-condition retry
// starts a new attempt, exitAll ends the course's). A change of what a post-back reports is
// posted whatever ApiRollupRegistrationDuringSession says, as the content's exit would be:
// a request ends what the session did. It must not fail the request, whose State is stored:
// a failure is logged, and the next commit or request repairs it.
func (s *Service) afterSequencing(ctx context.Context, sess *course.SessionClaims, v *course.Version, changed bool) {
	if !changed || !tracked(sess) {
		return
	}
	err := func() error {
		reg, err := s.d.Registrations.Get(ctx, sess.Tenant, sess.RegistrationID)
		if err != nil {
			return err
		}
		in := instanceOf(reg, sess.InstanceKey)
		if in == nil {
			return nil
		}
		p, err := s.versionRollup(ctx, sess.Tenant, reg, *in, v, nil, false, nil)
		if err != nil || p.Result.Completion == "" {
			return err
		}
		stored, err := s.storeProgress(ctx, sess.Tenant, reg, *in, p.Result)
		if err != nil || !stored || !s.hasPostBack(reg, p.Layers) {
			return err
		}
		s.postBack(ctx, sess.Tenant, reg, p.Layers)
		return nil
	}()
	if err != nil {
		s.log.Warn("rollup after a sequencing request failed", "tenant", sess.Tenant, "registration", sess.RegistrationID, "error", err)
	}
}

// navState describes st for the player after res (or the refusal err).
func navState(st *sequencing.State, res sequencing.Result, err error) *NavState {
	n := &NavState{Deliver: res.Deliver, Resumed: res.Resumed, SessionEnded: res.SessionEnded, Current: st.Current}
	var se *sequencing.Error
	if errors.As(err, &se) {
		n.Exception, n.Message = se.Code, se.Message
	} else if err != nil {
		n.Message = err.Error()
	}
	n.TOC = st.TOC()
	n.Valid = NavValid{Choice: map[string]bool{}, Jump: map[string]bool{},
		Continue: st.NavigationRequestValid(sequencing.Request{Kind: sequencing.Continue}),
		Previous: st.NavigationRequestValid(sequencing.Request{Kind: sequencing.Previous})}
	n.Controls = NavControls{Continue: st.NavigationAllowed(sequencing.Request{Kind: sequencing.Continue}), Previous: n.Valid.Previous}
	for _, e := range n.TOC {
		n.Valid.Choice[e.ID] = e.Enabled
		n.Valid.Jump[e.ID] = st.NavigationRequestValid(sequencing.Request{Kind: sequencing.Jump, Target: e.ID})
	}
	return n
}

// SequencingLaunch is where a player session of a SCORM 2004 course starts: the activity the
// sequencer's Current Activity still is (the page was reloaded), the StartSco the launch
// asked for (as a choice, when the sequencer allows it), the suspended activity (resumeAll),
// or the start of the course; when that delivers nothing (flow not allowed), the first SCO a
// choice may deliver. key is the player session token.
func (s *Service) SequencingLaunch(ctx context.Context, sess *course.SessionClaims, key string, v *course.Version) (*NavState, error) {
	var res sequencing.Result
	var nerr error
	st, changed, err := s.changeSequencing(ctx, sess, key, v, func(st *sequencing.State) error {
		res, nerr = sequencing.Result{}, nil
		if st.Current != "" {
			res.Deliver = st.Current
			return nil
		}
		if sess.StartSco != "" {
			if r, err := st.Navigate(sequencing.Request{Kind: sequencing.Choice, Target: sess.StartSco}); err == nil && r.Deliver != "" {
				res = r
				return nil
			}
		}
		res, nerr = resumeOrStart(st)
		if res.Deliver == "" && !res.SessionEnded && st.Current == "" {
			// Lectern's policy: a course whose start delivers nothing (its root does not
			// allow flow, as SCORM's defaults have it) starts with the first SCO the learner
			// could choose, as they would from the table of contents.
			for _, e := range st.TOC() {
				if e.Enabled && launchableID(v.Package, e.ID) {
					if r, err := st.Navigate(sequencing.Request{Kind: sequencing.Choice, Target: e.ID}); err == nil && r.Deliver != "" {
						res, nerr = r, nil
						break
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.afterSequencing(ctx, sess, v, changed)
	return navState(st, res, nerr), nil
}

// resumeOrStart begins a sequencing session as a launch does: resumeAll when an activity is
// suspended, else start.
func resumeOrStart(st *sequencing.State) (sequencing.Result, error) {
	kind := sequencing.Start
	if st.Suspended != "" {
		kind = sequencing.ResumeAll
	}
	return st.Navigate(sequencing.Request{Kind: kind})
}

// launchableID reports whether id is a launchable activity of pkg.
func launchableID(pkg *course.Package, id string) bool {
	found := false
	pkg.Root.Walk(func(a *course.Activity) { found = found || (a.ID == id && Launchable(a)) })
	return found
}

// SequencingState is the session's State as the player shows it, changing nothing but
// creating the State on first use.
func (s *Service) SequencingState(ctx context.Context, sess *course.SessionClaims, key string, v *course.Version) (*NavState, error) {
	st, _, err := s.changeSequencing(ctx, sess, key, v, func(*sequencing.State) error { return nil })
	if err != nil {
		return nil, err
	}
	return navState(st, sequencing.Result{}, nil), nil
}

// SequencingActivity is SequencingState for the load of activity actID, whose initial data
// model is values: each objective the SCO's cmi.objectives names by id starts with what the
// sequencer holds for it (success and completion status, scaled, raw, min and max score,
// progress measure, read through the activity's objective maps and adlseq maps, so a global objective another SCO or course wrote
// arrives: RTE 4.2.17, ADL OB and RU cases). What the sequencer knows wins over the SCO's
// stored data (a global objective may have changed since, ADL OB-14a); what it does not know
// leaves the stored value.
func (s *Service) SequencingActivity(ctx context.Context, sess *course.SessionClaims, key string, v *course.Version, actID string, values scormrt.Values) (*NavState, error) {
	st, changed, err := s.changeSequencing(ctx, sess, key, v, func(st *sequencing.State) error {
		if st.Current == "" {
			// No sequencing session runs (a client loads the activity without the player page,
			// or the last session ended): the load starts one with a choice of the activity,
			// which the sequencer honours only where its rules let the learner choose it, else
			// as a launch does (resumeAll or start), which must then deliver this activity.
			if r, err := st.Navigate(sequencing.Request{Kind: sequencing.Choice, Target: actID}); err == nil && r.Deliver != "" {
				return nil
			}
			_, _ = resumeOrStart(st)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.afterSequencing(ctx, sess, v, changed)
	if st.Current != actID {
		cur := st.Current
		if cur == "" {
			cur = "none: the sequencer neither starts with it nor lets the learner choose it now"
		}
		return nil, fmt.Errorf("activity %q (the current activity is %s): %w", actID, cur, ErrNotDelivered)
	}
	objs := st.Objectives(actID)
	for k, id := range values {
		rest, ok := strings.CutPrefix(k, "cmi.objectives.")
		if !ok || !strings.HasSuffix(rest, ".id") {
			continue
		}
		o, ok := objs[id]
		if !ok {
			continue
		}
		p := "cmi.objectives." + strings.TrimSuffix(rest, ".id") + "."
		set := func(field, val string) {
			if val != "" {
				values[p+field] = val
			}
		}
		setNum := func(field string, val *float64) {
			if val != nil {
				set(field, strconv.FormatFloat(*val, 'f', -1, 64))
			}
		}
		set("success_status", o.SuccessStatus)
		set("completion_status", o.CompletionStatus)
		setNum("score.scaled", o.ScoreScaled)
		setNum("score.raw", o.ScoreRaw)
		setNum("score.min", o.ScoreMin)
		setNum("score.max", o.ScoreMax)
		setNum("progress_measure", o.ProgressMeasure)
	}
	return navState(st, sequencing.Result{}, nil), nil
}

// SequencingNavigate runs a navigation request of the learner (the player's controls) or of
// a SCO, and stores the State. A request the sequencer does not honour is no error: the
// answer's Exception says why (the State keeps what the book keeps, e.g. a termination that
// succeeded before the sequencing request failed).
func (s *Service) SequencingNavigate(ctx context.Context, sess *course.SessionClaims, key string, v *course.Version, req sequencing.Request) (*NavState, error) {
	var res sequencing.Result
	var nerr error
	st, changed, err := s.changeSequencing(ctx, sess, key, v, func(st *sequencing.State) error {
		res, nerr = st.Navigate(req)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.afterSequencing(ctx, sess, v, changed)
	return navState(st, res, nerr), nil
}

// SequencingCommit feeds a SCO's commit to the session's State (its outcome, rolled up) and,
// at Terminate, processes the navigation request the SCO left pending (adl.nav.request).
// values are the SCO's data as stored after the commit (a preview's: the commit's own).
// A request the sequencer refuses is answered in the NavState, as SequencingNavigate does.
// The answer is nil when the commit changed nothing the sequencer tracks (most automatic
// commits): the player's view stands, and building it again (a look-ahead per activity) is
// spared.
func (s *Service) SequencingCommit(ctx context.Context, sess *course.SessionClaims, key string, v *course.Version, act *course.Activity, values scormrt.Values, navRequest string, exit bool) (*NavState, error) {
	if exit {
		values = suspendedByRequest(values, navRequest) // a preview's commit is not stored first
	}
	out := Outcome(values)
	var req sequencing.Request
	pending := false
	if exit && navRequest != "" {
		var err error
		if req, pending, err = sequencing.ParseRequest(navRequest); err != nil {
			return nil, err
		}
	}
	var res sequencing.Result
	var nerr error
	st, changed, err := s.changeSequencing(ctx, sess, key, v, func(st *sequencing.State) error {
		res, nerr = sequencing.Result{}, nil
		if pending && (req.Kind == sequencing.Abandon || req.Kind == sequencing.AbandonAll) {
			// An abandoned attempt's data is discarded (SN book, RTE to SN mapping).
		} else if err := st.Report(act.ID, out); err != nil {
			return err
		}
		if pending {
			res, nerr = st.Navigate(req)
		}
		return nil
	})
	if err != nil || (!changed && !pending) {
		return nil, err
	}
	return navState(st, res, nerr), nil
}

// Outcome reads what a SCO reported, in the sequencer's terms, from its SCORM 2004 data.
func Outcome(v scormrt.Values) sequencing.RuntimeOutcome {
	num := func(name string) *float64 {
		if t := v[name]; t != "" {
			if f, err := strconv.ParseFloat(t, 64); err == nil {
				return &f
			}
		}
		return nil
	}
	out := sequencing.RuntimeOutcome{CompletionStatus: v["cmi.completion_status"], SuccessStatus: v["cmi.success_status"],
		ScoreScaled: num("cmi.score.scaled"), ScoreRaw: num("cmi.score.raw"), ScoreMin: num("cmi.score.min"), ScoreMax: num("cmi.score.max"),
		ProgressMeasure: num("cmi.progress_measure"), Exit: v["cmi.exit"]}
	if t := v["cmi.session_time"]; t != "" {
		sec, _ := course.DurationSeconds(t)
		out.SessionSeconds = &sec
	}
	for name, id := range v {
		rest, ok := strings.CutPrefix(name, "cmi.objectives.")
		if !ok || !strings.HasSuffix(rest, ".id") || id == "" {
			continue
		}
		p := "cmi.objectives." + strings.TrimSuffix(rest, ".id") + "."
		if out.Objectives == nil {
			out.Objectives = map[string]sequencing.ObjectiveOutcome{}
		}
		out.Objectives[id] = sequencing.ObjectiveOutcome{SuccessStatus: v[p+"success_status"], ScoreScaled: num(p + "score.scaled"),
			ScoreRaw: num(p + "score.raw"), ScoreMin: num(p + "score.min"), ScoreMax: num(p + "score.max"),
			CompletionStatus: v[p+"completion_status"], ProgressMeasure: num(p + "progress_measure")}
	}
	return out
}
