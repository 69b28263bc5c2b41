package server_test

import (
	"context"
	"encoding/xml"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/sequencing"
)

// After each ADL case the reports are held against the sequencer (issue 24, second "Done
// when"): for every registration of the case, progress/detail's activity tree and
// globalObjectives, and the last FULL post-back the LMS received, must show the sequencing
// state the learner's path stored — every activity's attempts, suspension, completion and
// satisfaction, every objective the sequencer tracks, every global objective. The expected
// values are read from the stored State with course/sequencing alone, not through the rollup
// that builds the reports.

// lmsWant is what the reports must say of one activity or objective, in the API's words.
type lmsWant struct {
	attempts            int
	suspended           bool
	completion, success string
	score               *float64 // scaled × 100, nil when the measure is unknown
}

// lmsWord is the API's word for a tri-state the sequencer holds.
func lmsWord(b *bool, yes, no, unknown string) string {
	switch {
	case b == nil:
		return unknown
	case *b:
		return yes
	}
	return no
}

// lmsScaled is a normalized measure on the API's 0–100 scale, as the reports round it.
func lmsScaled(m *float64) *float64 {
	if m == nil {
		return nil
	}
	v := math.Round(*m*100*1e4) / 1e4
	return &v
}

func lmsObjectiveWant(o sequencing.ObjectiveReport) lmsWant {
	return lmsWant{completion: lmsWord(o.Completed, registration.Completed, registration.Incomplete, registration.Unknown),
		success: lmsWord(o.Satisfied, registration.Passed, registration.Failed, registration.Unknown), score: lmsScaled(o.Measure)}
}

func lmsGlobalWant(g sequencing.GlobalObjective) lmsWant {
	w := lmsWant{completion: registration.Unknown, success: registration.Unknown}
	if g.CompletionStatus {
		w.completion = lmsWord(&g.Completed, registration.Completed, registration.Incomplete, "")
	}
	if g.SatisfiedStatus {
		w.success = lmsWord(&g.Satisfied, registration.Passed, registration.Failed, "")
	}
	if g.MeasureStatus {
		w.score = lmsScaled(&g.Measure)
	}
	return w
}

func sameScore(a, b *float64) bool {
	return (a == nil) == (b == nil) && (a == nil || math.Abs(*a-*b) < 1e-9)
}

func scoreText(v *float64) string {
	if v == nil {
		return "none"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// lmsDetail is progress/detail as the check reads it.
type lmsDetail struct {
	GlobalObjectives []lmsDetailObjective `json:"globalObjectives"`
	ActivityDetails  *lmsDetailActivity   `json:"activityDetails"`
}

type lmsDetailActivity struct {
	ID                 string               `json:"id"`
	Attempts           int                  `json:"attempts"`
	Suspended          bool                 `json:"suspended"`
	ActivityCompletion string               `json:"activityCompletion"`
	ActivitySuccess    string               `json:"activitySuccess"`
	Objectives         []lmsDetailObjective `json:"objectives"`
	Children           []*lmsDetailActivity `json:"children"`
}

type lmsDetailObjective struct {
	ID                  string `json:"id"`
	Primary             bool   `json:"primary"`
	ObjectiveCompletion string `json:"objectiveCompletion"`
	ObjectiveSuccess    string `json:"objectiveSuccess"`
	Score               *struct {
		Scaled float64 `json:"scaled"`
	} `json:"score"`
}

func (o lmsDetailObjective) got() lmsWant {
	w := lmsWant{completion: o.ObjectiveCompletion, success: o.ObjectiveSuccess}
	if o.Score != nil {
		w.score = &o.Score.Scaled
	}
	return w
}

// lmsFull is a FULL registrationreport as the check reads it.
type lmsFull struct {
	Activity lmsFullActivity    `xml:"activity"`
	Globals  []lmsFullObjective `xml:"globalobjectives>objective"`
}

type lmsFullActivity struct {
	ID                    string             `xml:"id,attr"`
	Satisfied             bool               `xml:"satisfied"`
	Completed             bool               `xml:"completed"`
	ProgressStatus        bool               `xml:"progressstatus"`
	AttemptProgressStatus bool               `xml:"attemptprogressstatus"`
	Attempts              int                `xml:"attempts"`
	Suspended             bool               `xml:"suspended"`
	Objectives            []lmsFullObjective `xml:"objectives>objective"`
	Children              []lmsFullActivity  `xml:"children>activity"`
}

type lmsFullObjective struct {
	ID                string  `xml:"id,attr"`
	Primary           bool    `xml:"primary,attr"`
	MeasureStatus     bool    `xml:"measurestatus"`
	NormalizedMeasure float64 `xml:"normalizedmeasure"`
	ProgressStatus    bool    `xml:"progressstatus"`
	SatisfiedStatus   bool    `xml:"satisfiedstatus"`
}

// got is what a FULL objective says in the API's words; the XML has no objective completion,
// so it is taken from want.
func (o lmsFullObjective) got(want lmsWant) lmsWant {
	w := lmsWant{completion: want.completion, success: registration.Unknown}
	if o.ProgressStatus {
		w.success = lmsWord(&o.SatisfiedStatus, registration.Passed, registration.Failed, "")
	}
	if o.MeasureStatus {
		v := math.Round(o.NormalizedMeasure*100*1e4) / 1e4
		w.score = &v
	}
	return w
}

func (w lmsWant) differs(got lmsWant) string {
	var d []string
	if got.completion != w.completion {
		d = append(d, fmt.Sprintf("completion %s, want %s", got.completion, w.completion))
	}
	if got.success != w.success {
		d = append(d, fmt.Sprintf("success %s, want %s", got.success, w.success))
	}
	if !sameScore(got.score, w.score) {
		d = append(d, fmt.Sprintf("measure %s, want %s", scoreText(got.score), scoreText(w.score)))
	}
	return strings.Join(d, ", ")
}

// lmsReportCounts is what the checks covered, for the test's log.
type lmsReportCounts struct{ registrations, activities, objectives, globals, postBacks int }

// reportsAgree checks the reports of every registration of case name against the sequencing
// state stored for it; it returns the differences found.
func (r *lmsRunner) reportsAgree(name, tenant string, counts *lmsReportCounts) []string {
	ctx := context.Background()
	var problems []string
	for _, pkg := range lmsPackages(r.t, name) {
		regID := "r-" + strings.ToLower(pkg)
		reg, err := r.e.app.Registrations.Get(ctx, tenant, regID)
		if err != nil {
			return append(problems, fmt.Sprintf("%s: %v", regID, err))
		}
		in := reg.Current()
		raw, err := scormrt.NewStore(r.e.app.Records).Sequencing(ctx, tenant, regID, in.Key)
		if err != nil || raw == nil {
			problems = append(problems, fmt.Sprintf("%s: no sequencing state stored (%v)", regID, err))
			continue
		}
		v, err := r.e.app.Courses.Version(ctx, tenant, reg.CourseID, in.CourseVersion)
		if err != nil {
			return append(problems, fmt.Sprintf("%s: %v", regID, err))
		}
		st, err := sequencing.Load(v.Package, raw, nil)
		if err != nil {
			return append(problems, fmt.Sprintf("%s: %v", regID, err))
		}
		counts.registrations++

		var detail lmsDetail
		res := r.e.do("GET", "/engine/api/v1/"+tenant+"/registrations/"+regID+"/progress/detail", root, nil)
		if res.Status != 200 {
			return append(problems, fmt.Sprintf("%s: progress/detail answered %d", regID, res.Status))
		}
		res.json(r.t, &detail)
		problems = append(problems, detailAgrees(regID, v.Package, st, detail, counts)...)

		// The post-back may still be on its way (a queued retry): the last one received must
		// come to agree before the deadline.
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := r.rc.At("/" + tenant + "/" + regID)
			var diff []string
			if len(got) == 0 {
				diff = []string{regID + ": no FULL post-back received"}
			} else {
				var rep lmsFull
				if err := xml.Unmarshal(got[len(got)-1].Body, &rep); err != nil {
					diff = []string{fmt.Sprintf("%s: the post-back is not a registrationreport: %v", regID, err)}
				} else {
					diff = fullAgrees(regID, v.Package, st, rep)
				}
			}
			if len(diff) == 0 {
				counts.postBacks++
				break
			}
			if time.Now().After(deadline) {
				problems = append(problems, diff...)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return problems
}

// activityWant is what the reports must say of activity id, from the State alone.
func activityWant(st *sequencing.State, id string) (lmsWant, sequencing.ActivityReport, bool) {
	rep, ok := st.Tracking(id)
	if !ok {
		return lmsWant{}, rep, false
	}
	w := lmsWant{attempts: rep.Attempts, suspended: rep.Suspended,
		completion: lmsWord(rep.Completed, registration.Completed, registration.Incomplete, registration.Unknown),
		success:    lmsWord(rep.Satisfied, registration.Passed, registration.Failed, registration.Unknown)}
	if rep.Completed == nil && rep.Attempts > 0 {
		// An attempt begun whose completion is not known yet reports INCOMPLETE.
		w.completion = registration.Incomplete
	}
	return w, rep, true
}

func detailAgrees(regID string, pkg *course.Package, st *sequencing.State, d lmsDetail, counts *lmsReportCounts) []string {
	var problems []string
	byID := map[string]*lmsDetailActivity{}
	var walk func(a *lmsDetailActivity)
	walk = func(a *lmsDetailActivity) {
		if a == nil {
			return
		}
		byID[a.ID] = a
		for _, c := range a.Children {
			walk(c)
		}
	}
	walk(d.ActivityDetails)
	pkg.Root.Walk(func(a *course.Activity) {
		want, rep, ok := activityWant(st, a.ID)
		got := byID[a.ID]
		if !ok || got == nil {
			problems = append(problems, fmt.Sprintf("%s: progress/detail has no activity %s", regID, a.ID))
			return
		}
		counts.activities++
		at := fmt.Sprintf("%s: progress/detail %s", regID, a.ID)
		if got.Attempts != want.attempts || got.Suspended != want.suspended {
			problems = append(problems, fmt.Sprintf("%s: attempts %d suspended %v, the sequencer's %d %v", at, got.Attempts, got.Suspended, want.attempts, want.suspended))
		}
		if diff := want.differs(lmsWant{completion: got.ActivityCompletion, success: got.ActivitySuccess, score: want.score}); diff != "" {
			problems = append(problems, at+": "+diff)
		}
		for _, o := range rep.Objectives {
			counts.objectives++
			w := lmsObjectiveWant(o)
			if o.Primary && o.Completed == nil {
				// The primary objective is the activity's: an attempt begun is INCOMPLETE.
				w.completion = want.completion
			}
			i := slices.IndexFunc(got.Objectives, func(g lmsDetailObjective) bool {
				return (o.Primary && g.Primary) || (!o.Primary && !g.Primary && g.ID == o.ID)
			})
			if i < 0 {
				problems = append(problems, fmt.Sprintf("%s: no objective %q (primary %v)", at, o.ID, o.Primary))
				continue
			}
			if diff := w.differs(got.Objectives[i].got()); diff != "" {
				problems = append(problems, fmt.Sprintf("%s objective %q: %s", at, o.ID, diff))
			}
		}
	})
	ids := slices.Sorted(maps.Keys(st.Globals))
	if len(d.GlobalObjectives) != len(ids) {
		problems = append(problems, fmt.Sprintf("%s: progress/detail lists %d global objectives, the sequencer holds %d (%q)", regID, len(d.GlobalObjectives), len(ids), ids))
	}
	for _, id := range ids {
		counts.globals++
		i := slices.IndexFunc(d.GlobalObjectives, func(g lmsDetailObjective) bool { return g.ID == id })
		if i < 0 {
			problems = append(problems, fmt.Sprintf("%s: progress/detail has no global objective %q", regID, id))
			continue
		}
		if diff := lmsGlobalWant(st.Globals[id]).differs(d.GlobalObjectives[i].got()); diff != "" {
			problems = append(problems, fmt.Sprintf("%s: progress/detail global objective %q: %s", regID, id, diff))
		}
	}
	return problems
}

func fullAgrees(regID string, pkg *course.Package, st *sequencing.State, rep lmsFull) []string {
	var problems []string
	byID := map[string]lmsFullActivity{}
	var walk func(a lmsFullActivity)
	walk = func(a lmsFullActivity) {
		byID[a.ID] = a
		for _, c := range a.Children {
			walk(c)
		}
	}
	walk(rep.Activity)
	pkg.Root.Walk(func(a *course.Activity) {
		want, sr, ok := activityWant(st, a.ID)
		got, found := byID[a.ID]
		if !ok || !found {
			problems = append(problems, fmt.Sprintf("%s: the FULL post-back has no activity %s", regID, a.ID))
			return
		}
		at := fmt.Sprintf("%s: FULL post-back %s", regID, a.ID)
		g := lmsWant{completion: registration.Unknown, success: registration.Unknown, score: want.score}
		if got.AttemptProgressStatus {
			g.completion = lmsWord(&got.Completed, registration.Completed, registration.Incomplete, "")
		}
		if got.ProgressStatus {
			g.success = lmsWord(&got.Satisfied, registration.Passed, registration.Failed, "")
		}
		if got.Attempts != want.attempts || got.Suspended != want.suspended {
			problems = append(problems, fmt.Sprintf("%s: attempts %d suspended %v, the sequencer's %d %v", at, got.Attempts, got.Suspended, want.attempts, want.suspended))
		}
		if diff := want.differs(g); diff != "" {
			problems = append(problems, at+": "+diff)
		}
		for _, o := range sr.Objectives {
			i := slices.IndexFunc(got.Objectives, func(g lmsFullObjective) bool {
				return (o.Primary && g.Primary) || (!o.Primary && !g.Primary && g.ID == o.ID)
			})
			if i < 0 {
				problems = append(problems, fmt.Sprintf("%s: no objective %q (primary %v)", at, o.ID, o.Primary))
				continue
			}
			w := lmsObjectiveWant(o)
			if diff := w.differs(got.Objectives[i].got(w)); diff != "" {
				problems = append(problems, fmt.Sprintf("%s objective %q: %s", at, o.ID, diff))
			}
		}
	})
	ids := slices.Sorted(maps.Keys(st.Globals))
	if len(rep.Globals) != len(ids) {
		problems = append(problems, fmt.Sprintf("%s: the FULL post-back lists %d global objectives, the sequencer holds %d (%q)", regID, len(rep.Globals), len(ids), ids))
	}
	for _, id := range ids {
		i := slices.IndexFunc(rep.Globals, func(g lmsFullObjective) bool { return g.ID == id })
		if i < 0 {
			problems = append(problems, fmt.Sprintf("%s: the FULL post-back has no global objective %q", regID, id))
			continue
		}
		w := lmsGlobalWant(st.Globals[id])
		if diff := w.differs(rep.Globals[i].got(w)); diff != "" {
			problems = append(problems, fmt.Sprintf("%s: FULL post-back global objective %q: %s", regID, id, diff))
		}
	}
	return problems
}
