package sequencing

import (
	"encoding/json"
	"fmt"

	"github.com/lectern-lms/lectern/course"
)

// State is the activity state tree of one registration: the SN book's tracking model for
// every activity plus the sequencing session's Current Activity and Suspended Activity. Only
// tracking data is stored; the definitions come from the package, so the JSON stays small
// and a re-imported package with the same identifiers keeps its learners' state. Marshal it
// with encoding/json (maps marshal in sorted key order, so equal states give equal bytes) and
// rebuild it with Load.
type State struct {
	// Current is the SN book's Current Activity ("" before the session begins or after it
	// ends).
	Current string `json:"current,omitempty"`
	// Suspended is the Suspended Activity a resumeAll request will deliver.
	Suspended string `json:"suspended,omitempty"`
	// Activities holds the tracking model of each activity by identifier.
	Activities map[string]*ActivityState `json:"activities"`
	// Seed drives selection and randomization (randomizationControls): the caller sets it
	// once, e.g. from the registration id, so each learner gets their own draw and keeps it.
	Seed int64 `json:"seed,omitempty"`
	// Globals holds the global objectives when the caller supplies no Globals of its own,
	// so objectives shared inside the course survive with the state.
	Globals MapGlobals `json:"globals,omitempty"`

	t *tree
	g Globals
	// base is the State a look-ahead copy (clone) was made from; nil otherwise.
	base *State
}

// ActivityState is the SN book's tracking model of one activity (activity and attempt
// progress information and activity state information).
type ActivityState struct {
	// ProgressStatus is Activity Progress Status: whether the activity has tracking data.
	ProgressStatus bool `json:"progressStatus,omitempty"`
	// AttemptCount is Activity Attempt Count.
	AttemptCount int `json:"attemptCount,omitempty"`
	// ParentAttempt is the parent's Attempt Count when this activity's attempt began: the
	// attempt of the parent its tracking information belongs to (0: not known, a state saved
	// before it was kept, taken as the parent's current attempt).
	ParentAttempt int `json:"parentAttempt,omitempty"`
	// AttemptProgressStatus is Attempt Progress Status: whether Completed is known.
	AttemptProgressStatus bool `json:"attemptProgressStatus,omitempty"`
	// Completed is Attempt Completion Status.
	Completed bool `json:"completed,omitempty"`
	// AmountStatus is Attempt Completion Amount Status: whether Amount is known.
	AmountStatus bool `json:"amountStatus,omitempty"`
	// Amount is Attempt Completion Amount (the progress measure, 0-1).
	Amount float64 `json:"amount,omitempty"`
	// Active is Activity is Active: an attempt is in progress.
	Active bool `json:"active,omitempty"`
	// IsSuspended is Activity is Suspended.
	IsSuspended bool `json:"suspended,omitempty"`
	// AttemptSeconds is the learner's time in the attempt's closed sessions;
	// SessionSeconds the open session's, as the content last reported it
	// (cmi.session_time). ActivitySeconds adds up every closed session of every attempt.
	AttemptSeconds  float64 `json:"attemptSeconds,omitempty"`
	SessionSeconds  float64 `json:"sessionSeconds,omitempty"`
	ActivitySeconds float64 `json:"activitySeconds,omitempty"`
	// ContentSetCompletion and ContentSetSuccess record that the content reported its
	// completion or success status in this attempt, even as unknown: End Attempt (UP.4)
	// then leaves that status to the content, as ADL's test cases expect.
	ContentSetCompletion bool `json:"contentSetCompletion,omitempty"`
	ContentSetSuccess    bool `json:"contentSetSuccess,omitempty"`
	// Objectives holds each objective's tracking data by objective id (the primary objective
	// of an activity whose manifest names none is stored under "").
	Objectives map[string]*ObjectiveState `json:"objectives,omitempty"`
}

// ObjectiveState is the SN book's objective progress information.
type ObjectiveState struct {
	// ProgressStatus is Objective Progress Status: whether Satisfied is known.
	ProgressStatus bool `json:"progressStatus,omitempty"`
	// Satisfied is Objective Satisfied Status.
	Satisfied bool `json:"satisfied,omitempty"`
	// MeasureStatus is Objective Measure Status: whether Measure is known.
	MeasureStatus bool `json:"measureStatus,omitempty"`
	// Measure is Objective Normalized Measure (-1..1).
	Measure float64 `json:"measure,omitempty"`
	// CompletionStatus and Completed are a secondary objective's completion (4th edition
	// cmi.objectives.n.completion_status), shared through adlseq maps; the primary
	// objective's completion is the activity's attempt completion.
	CompletionStatus bool `json:"completionStatus,omitempty"`
	Completed        bool `json:"completed,omitempty"`
	// AmountStatus and Amount are a secondary objective's progress measure
	// (cmi.objectives.n.progress_measure), shared through adlseq maps; the primary
	// objective's is the activity's attempt completion amount.
	AmountStatus bool    `json:"amountStatus,omitempty"`
	Amount       float64 `json:"amount,omitempty"`
	// Raw, Min and Max are the objective's cmi.objectives.n.score.raw, .min and .max (for the
	// primary objective also cmi.score.*): sequencing never decides by them, but the 4th
	// edition's adlseq maps share them through global objectives. Nil when unknown.
	Raw *float64 `json:"raw,omitempty"`
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// GlobalObjective is a shared (global) objective: what objective maps read and write. The
// completion, progress and score fields carry what the 4th edition adlseq:mapInfo reads and
// writes (completion status, progress measure, raw/min/max score).
type GlobalObjective struct {
	SatisfiedStatus      bool    `json:"satisfiedStatus,omitempty"`
	Satisfied            bool    `json:"satisfied,omitempty"`
	MeasureStatus        bool    `json:"measureStatus,omitempty"`
	Measure              float64 `json:"measure,omitempty"`
	CompletionStatus     bool    `json:"completionStatus,omitempty"`
	Completed            bool    `json:"completed,omitempty"`
	ProgressMeasureKnown bool    `json:"progressMeasureKnown,omitempty"`
	ProgressMeasure      float64 `json:"progressMeasure,omitempty"`
	// Raw, Min and Max are the score.raw, .min and .max adlseq maps share; nil when no map
	// has written them.
	Raw *float64 `json:"raw,omitempty"`
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// Globals stores global objectives. The caller chooses its scope: a MapGlobals kept in the
// State for objectives global to the course attempt, or a store shared by the learner's
// registrations when the organization's objectivesGlobalToSystem is true.
type Globals interface {
	// Objective returns the global objective id, and false when it has never been written.
	Objective(id string) (GlobalObjective, bool)
	// SetObjective stores the global objective id.
	SetObjective(id string, g GlobalObjective)
}

// MapGlobals is an in-memory Globals; the State keeps one when the caller supplies none.
type MapGlobals map[string]GlobalObjective

// Objective implements Globals.
func (m MapGlobals) Objective(id string) (GlobalObjective, bool) {
	g, ok := m[id]
	return g, ok
}

// SetObjective implements Globals.
func (m MapGlobals) SetObjective(id string, g GlobalObjective) { m[id] = g }

// node is one activity of the tree with its effective sequencing definition (the IDRef'd
// collection entry merged under the item's own, SCORM defaults applied at use).
type node struct {
	a        *course.Activity
	seq      course.Sequencing
	def      course.Resolved // seq's controls with the SCORM defaults
	parent   *node
	children []*node
	order    int
	objs     []course.Objective // primary first
}

// tree is the definition side of the activity tree, rebuilt from the package on New and Load.
type tree struct {
	root  *node
	byID  map[string]*node
	nodes []*node // preorder
	// v3 is true for the 2nd and 3rd editions, whose completionThreshold always judges
	// completion from the progress measure.
	v3 bool
}

func (n *node) leaf() bool { return len(n.children) == 0 }

// New builds the activity state tree of a package for a new registration: every activity
// untouched, no session begun. g may be nil: then the State keeps the global objectives
// itself (State.Globals).
func New(pkg *course.Package, g Globals) (*State, error) {
	t, err := buildTree(pkg)
	if err != nil {
		return nil, err
	}
	s := &State{Activities: map[string]*ActivityState{}, t: t}
	s.attach(g)
	return s, nil
}

// Load rebuilds a State persisted as JSON against the package it was built from. Activities
// the saved state does not know (a re-imported package) start untouched; saved activities the
// package no longer has are dropped.
func Load(pkg *course.Package, data []byte, g Globals) (*State, error) {
	t, err := buildTree(pkg)
	if err != nil {
		return nil, err
	}
	s := &State{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("sequencing: reading saved state: %w", err)
	}
	s.t = t
	for id := range s.Activities {
		if t.byID[id] == nil {
			delete(s.Activities, id)
		}
	}
	if s.Current != "" && t.byID[s.Current] == nil {
		s.Current = ""
	}
	if s.Suspended != "" && t.byID[s.Suspended] == nil {
		s.Suspended = ""
	}
	s.attach(g)
	return s, nil
}

func (s *State) attach(g Globals) {
	if s.Activities == nil {
		s.Activities = map[string]*ActivityState{}
	}
	if g == nil {
		if s.Globals == nil {
			s.Globals = MapGlobals{}
		}
		g = s.Globals
	}
	s.g = g
	for _, n := range s.t.nodes {
		st := s.Activities[n.a.ID]
		if st == nil {
			st = &ActivityState{}
			s.Activities[n.a.ID] = st
		}
		if st.Objectives == nil {
			st.Objectives = map[string]*ObjectiveState{}
		}
		for _, o := range n.objs {
			if st.Objectives[o.ID] == nil {
				st.Objectives[o.ID] = &ObjectiveState{}
			}
		}
	}
}

// clone returns a copy sharing the definitions, for evaluating a request without changing
// the state (adl.nav.request_valid, the table of contents' look-ahead). It copies an
// activity's tracking data only when the evaluation first touches it (st), so a look-ahead
// costs what the request visits rather than the whole tree: the player asks one per activity
// after each commit. Writes to global objectives go to a copy too.
func (s *State) clone() *State {
	c := &State{Current: s.Current, Suspended: s.Suspended, Seed: s.Seed, Activities: map[string]*ActivityState{}, t: s.t, base: s}
	c.g = &overlay{base: s.g, own: MapGlobals{}}
	return c
}

// copyOf is a deep copy of an activity's tracking data.
func copyOf(a *ActivityState) *ActivityState {
	ca := *a
	ca.Objectives = make(map[string]*ObjectiveState, len(a.Objectives))
	for oid, o := range a.Objectives {
		co := *o
		ca.Objectives[oid] = &co
	}
	return &ca
}

// overlay reads through to base and keeps its own writes, so look-ahead never writes a
// caller's global objectives.
type overlay struct {
	base Globals
	own  MapGlobals
	// cleared says the look-ahead started the course's global objectives afresh: base is
	// no longer read.
	cleared bool
}

// Objective reads the look-ahead's own writes first.
func (o *overlay) Objective(id string) (GlobalObjective, bool) {
	if g, ok := o.own[id]; ok || o.cleared {
		return g, ok
	}
	return o.base.Objective(id)
}

// SetObjective keeps the write in the look-ahead.
func (o *overlay) SetObjective(id string, g GlobalObjective) { o.own[id] = g }

func buildTree(pkg *course.Package) (*tree, error) {
	if pkg == nil || pkg.Root == nil {
		return nil, fmt.Errorf("sequencing: the package has no activity tree")
	}
	t := &tree{byID: map[string]*node{}, v3: pkg.Standard == course.SCORM2004v2 || pkg.Standard == course.SCORM2004v3}
	var build func(a *course.Activity, parent *node) (*node, error)
	build = func(a *course.Activity, parent *node) (*node, error) {
		if a.ID == "" {
			return nil, fmt.Errorf("sequencing: an activity has no identifier")
		}
		if t.byID[a.ID] != nil {
			return nil, fmt.Errorf("sequencing: activity identifier %q is used twice", a.ID)
		}
		seq := pkg.EffectiveSequencing(a)
		n := &node{a: a, seq: seq, def: seq.Resolved(), parent: parent, order: len(t.nodes)}
		n.objs = seq.PrimaryFirst()
		t.byID[a.ID] = n
		t.nodes = append(t.nodes, n)
		for _, c := range a.Children {
			cn, err := build(c, n)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, cn)
		}
		return n, nil
	}
	root, err := build(pkg.Root, nil)
	if err != nil {
		return nil, err
	}
	t.root = root
	return t, nil
}

// boolOr is *p, or def when the manifest leaves the element out.
func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// path returns the activities from the root down to n, inclusive.
func (n *node) path() []*node {
	var out []*node
	for a := n; a != nil; a = a.parent {
		out = append([]*node{a}, out...)
	}
	return out
}

// isAncestorOf reports whether n is a proper ancestor of d.
func (n *node) isAncestorOf(d *node) bool {
	for a := d.parent; a != nil; a = a.parent {
		if a == n {
			return true
		}
	}
	return false
}

// commonAncestor is the deepest activity that is a or an ancestor of a and b or an
// ancestor of b.
func commonAncestor(a, b *node) *node {
	seen := map[*node]bool{}
	for x := a; x != nil; x = x.parent {
		seen[x] = true
	}
	for x := b; x != nil; x = x.parent {
		if seen[x] {
			return x
		}
	}
	return nil
}

func (s *State) node(id string) *node {
	if id == "" {
		return nil
	}
	return s.t.byID[id]
}

// st is the tracking data of n; a clone copies it from the state it was cloned from on first
// use.
func (s *State) st(n *node) *ActivityState {
	a := s.Activities[n.a.ID]
	if a == nil && s.base != nil {
		a = copyOf(s.base.st(n))
		s.Activities[n.a.ID] = a
	}
	return a
}

func (s *State) cur() *node { return s.node(s.Current) }

// Activity returns the stored tracking data of an activity (nil for an unknown id); the
// caller must not modify it. Reports read Tracking, which applies objective map reads.
func (s *State) Activity(id string) *ActivityState {
	if n := s.node(id); n != nil {
		return s.st(n)
	}
	return nil
}
