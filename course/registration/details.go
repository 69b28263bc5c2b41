package registration

import (
	"strconv"

	"github.com/lectern-lms/lectern/course"
)

// ActivityResult is one node of progress/detail's activityDetails: the activity tree of the
// instance's course version with what is known of each activity.
type ActivityResult struct {
	ID                 string            `json:"id"`
	Title              string            `json:"title"`
	Attempts           int               `json:"attempts"`
	ActivityCompletion string            `json:"activityCompletion"`
	ActivitySuccess    string            `json:"activitySuccess"`
	Score              *Scaled           `json:"score,omitempty"`
	TimeTracked        string            `json:"timeTracked"`
	CompletionAmount   *Scaled           `json:"completionAmount,omitempty"`
	Suspended          bool              `json:"suspended"`
	Children           []*ActivityResult `json:"children"`
	Objectives         []ObjectiveResult `json:"objectives"`
	StaticProperties   StaticProperties  `json:"staticProperties"`
	// Runtime is the CMI data of a launchable activity (SCOs, AUs, AICC units); nil elsewhere.
	Runtime *Runtime `json:"runtime,omitempty"`
}

// Scaled is a measure on the API's 0-100 scale.
type Scaled struct {
	Scaled float64 `json:"scaled"`
}

// ObjectiveResult is the state of one objective of an activity.
type ObjectiveResult struct {
	ID                  string  `json:"id"`
	Primary             bool    `json:"primary"`
	Score               *Scaled `json:"score,omitempty"`
	ObjectiveCompletion string  `json:"objectiveCompletion"`
	ObjectiveSuccess    string  `json:"objectiveSuccess"`
}

// StaticProperties are the activity's authored limits, as the package states them.
type StaticProperties struct {
	CompletionThreshold    string   `json:"completionThreshold"`
	LaunchData             string   `json:"launchData"`
	MaxTimeAllowed         string   `json:"maxTimeAllowed"`
	ScaledPassingScore     *float64 `json:"scaledPassingScore,omitempty"`
	ScaledPassingScoreUsed bool     `json:"scaledPassingScoreUsed"`
	TimeLimitAction        string   `json:"timeLimitAction"`
}

// Runtime is a launchable activity's run-time data. Values are strings, empty when unset, as
// Rustici Engine reports them.
type Runtime struct {
	CompletionStatus    string               `json:"completionStatus"`
	Credit              string               `json:"credit"`
	Entry               string               `json:"entry"`
	Exit                string               `json:"exit"`
	LearnerPreference   LearnerPreference    `json:"learnerPreference"`
	Location            string               `json:"location"`
	Mode                string               `json:"mode"`
	ProgressMeasure     string               `json:"progressMeasure"`
	ScoreScaled         string               `json:"scoreScaled"`
	ScoreRaw            string               `json:"scoreRaw"`
	ScoreMin            string               `json:"scoreMin"`
	ScoreMax            string               `json:"scoreMax"`
	TotalTime           string               `json:"totalTime"`
	TimeTracked         string               `json:"timeTracked"`
	SuccessStatus       string               `json:"successStatus"`
	SuspendData         string               `json:"suspendData"`
	LearnerComments     []Comment            `json:"learnerComments"`
	LMSComments         []Comment            `json:"lmsComments"`
	RuntimeInteractions []RuntimeInteraction `json:"runtimeInteractions"`
	RuntimeObjectives   []map[string]string  `json:"runtimeObjectives"`
}

// RuntimeInteraction is one interaction of an activity's run-time data. A struct rather than
// a map: progress/detail of a commit of 10,000 interactions encoded 10,000 maps, each sorted
// by key. The fields are in the order of their JSON names, the order the maps were written in.
type RuntimeInteraction struct {
	CorrectResponses []string `json:"correctResponses"`
	Description      string   `json:"description"`
	ID               string   `json:"id"`
	Latency          string   `json:"latency"`
	LearnerResponse  string   `json:"learnerResponse"`
	Objectives       []string `json:"objectives"`
	Result           string   `json:"result"`
	Timestamp        string   `json:"timestamp"`
	Type             string   `json:"type"`
	Weighting        string   `json:"weighting"`
}

// LearnerPreference is cmi.learner_preference.
type LearnerPreference struct {
	AudioLevel      float64 `json:"audioLevel"`
	Language        string  `json:"language"`
	DeliverySpeed   float64 `json:"deliverySpeed"`
	AudioCaptioning int     `json:"audioCaptioning"`
}

// Comment is one learner or LMS comment.
type Comment struct {
	Value    string `json:"value"`
	Location string `json:"location"`
	DateTime string `json:"dateTime"`
}

// ImplicitPrimaryObjective is the id of a SCORM 2004 activity's primary objective when its
// manifest declares none (Rustici Engine's name for it).
const ImplicitPrimaryObjective = "PRIMARYOBJ"

// zeroDuration is how a tracked time of nothing is written.
const zeroDuration = "0000:00:00"

// Details returns the activity tree of pkg with the state of an instance nothing has been
// tracked in: every status UNKNOWN, no attempts, and the initial run-time data of each
// launchable activity (credit from the registration's forCredit).
func Details(pkg *course.Package, forCredit bool) *ActivityResult {
	credit := "credit"
	if !forCredit {
		credit = "no-credit"
	}
	var build func(a *course.Activity) *ActivityResult
	build = func(a *course.Activity) *ActivityResult {
		r := &ActivityResult{ID: a.ID, Title: a.Title, ActivityCompletion: Unknown, ActivitySuccess: Unknown,
			TimeTracked: zeroDuration, Children: []*ActivityResult{}, Objectives: []ObjectiveResult{},
			StaticProperties: staticProperties(pkg.Standard, a)}
		primary := false
		for _, o := range a.Objectives {
			primary = primary || o.Primary
			r.Objectives = append(r.Objectives, ObjectiveResult{ID: o.ID, Primary: o.Primary, ObjectiveCompletion: Unknown, ObjectiveSuccess: Unknown})
		}
		if !primary && pkg.Standard.IsSCORM2004() {
			// IMS SS: every activity has a primary objective, declared or not; Engine reports
			// an undeclared one as PRIMARYOBJ.
			r.Objectives = append([]ObjectiveResult{{ID: ImplicitPrimaryObjective, Primary: true, ObjectiveCompletion: Unknown,
				ObjectiveSuccess: Unknown}}, r.Objectives...)
		}
		if a.LaunchURL != "" && (a.ScormType == "" || a.ScormType == "sco") {
			r.Runtime = &Runtime{CompletionStatus: "unknown", Credit: credit, Entry: "abinitio", Exit: "Unknown",
				LearnerPreference: LearnerPreference{AudioLevel: 1, DeliverySpeed: 1}, Mode: "Normal",
				TotalTime: zeroDuration, TimeTracked: zeroDuration, SuccessStatus: "unknown",
				LearnerComments: []Comment{}, LMSComments: []Comment{}, RuntimeInteractions: []RuntimeInteraction{}, RuntimeObjectives: []map[string]string{}}
		}
		for _, ch := range a.Children {
			r.Children = append(r.Children, build(ch))
		}
		return r
	}
	return build(pkg.Root)
}

func staticProperties(std course.Standard, a *course.Activity) StaticProperties {
	sp := StaticProperties{LaunchData: a.DataFromLMS, MaxTimeAllowed: a.MaxTimeAllowed, TimeLimitAction: a.TimeLimitAction}
	if a.CompletionThreshold != nil {
		sp.CompletionThreshold = strconv.FormatFloat(a.CompletionThreshold.MinProgressMeasure, 'f', -1, 64)
	}
	if a.MasteryScore != nil {
		v := *a.MasteryScore
		// SCORM 1.x and AICC write the mastery score on 0-100; cmi5 and SCORM 2004 on 0-1.
		if std == course.SCORM11 || std == course.SCORM12 || std == course.AICC {
			v /= 100
		}
		sp.ScaledPassingScore, sp.ScaledPassingScoreUsed = &v, true
	}
	return sp
}
