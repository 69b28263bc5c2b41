// Package rolluptest builds realistic course versions with learner state for tests of the
// rollup and of what is built from it (progress/detail, postback reports).
package rolluptest

import (
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
)

func f(v float64) *float64 { return &v }

// When is the fixed commit time of the fixtures' state.
func When() time.Time { return time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC) }

// SCORM2004 is a three-SCO SCORM 2004 4th edition course in two modules ("Workplace
// Safety"): the learner finished and passed both SCOs of module 1 (with interactions,
// objectives, comments) and is half way through module 2's SCO, suspended.
func SCORM2004() (*course.Package, rollup.State) {
	primary := func(id string, min float64) []course.Objective {
		return []course.Objective{{ID: id, Primary: true, SatisfiedByMeasure: true, MinNormalizedMeasure: f(min)}}
	}
	intro := &course.Activity{ID: "item_intro", Title: "Introduction", Visible: true, LaunchURL: "intro/index.html",
		ResourceID: "res_intro", ScormType: "sco"}
	quiz := &course.Activity{ID: "item_quiz", Title: "Hazards quiz", Visible: true, LaunchURL: "quiz/index.html?lang=en",
		ResourceID: "res_quiz", ScormType: "sco", MasteryScore: f(0.8), DataFromLMS: "mode=exam",
		Objectives: append(primary("obj_quiz", 0.8), course.Objective{ID: "obj_ladders"}),
		Sequencing: &course.Sequencing{RollupRules: &course.RollupRules{ObjectiveMeasureWeight: f(2)}}}
	fire := &course.Activity{ID: "item_fire", Title: "Fire & evacuation", Visible: true, LaunchURL: "fire/index.html",
		ResourceID: "res_fire", ScormType: "sco", MaxTimeAllowed: "PT1H", TimeLimitAction: "continue,message",
		CompletionThreshold: &course.CompletionThreshold{CompletedByMeasure: true, MinProgressMeasure: 0.9, ProgressWeight: 1}}
	m1 := &course.Activity{ID: "module_1", Title: "Module 1: Hazards", Visible: true, Children: []*course.Activity{intro, quiz}}
	m2 := &course.Activity{ID: "module_2", Title: "Module 2: Emergencies", Visible: true, Children: []*course.Activity{fire}}
	root := &course.Activity{ID: "org_safety", Title: "Workplace Safety", Visible: true, Children: []*course.Activity{m1, m2}}
	pkg := &course.Package{Standard: course.SCORM2004v4, Identifier: "com.example.safety", Title: "Workplace Safety", Root: root}
	t := When()
	state := rollup.State{
		"item_intro": {Attempts: 1, CompletionStatus: "completed", SuccessStatus: "unknown", Entry: "ab-initio", Exit: "normal",
			TotalTime: "PT4M12S", SecondsTracked: 254.6, Terminated: true, Updated: t.Add(-30 * time.Minute),
			LearnerPreference: &registration.LearnerPreference{AudioLevel: 1, Language: "en-GB", DeliverySpeed: 1, AudioCaptioning: 1}},
		"item_quiz": {Attempts: 2, CompletionStatus: "completed", SuccessStatus: "passed", ScoreScaled: f(0.85), ScoreRaw: f(17),
			ScoreMin: f(0), ScoreMax: f(20), Entry: "resume", Exit: "normal", Location: "q20", TotalTime: "PT11M3.5S",
			SecondsTracked: 671.2, Terminated: true, Updated: t.Add(-10 * time.Minute),
			LearnerComments: []registration.Comment{{Value: "Question 7 <ladders> was unclear & long", Location: "q7", DateTime: "2026-03-14T09:15:00Z"}},
			Interactions: []rollup.Interaction{
				{ID: "q1", Type: "choice", Objectives: []string{"obj_ladders"}, Timestamp: "2026-03-14T09:05:10Z",
					CorrectResponses: []string{"b"}, Weighting: "1", LearnerResponse: "b", Result: "correct", Latency: "PT12S",
					Description: "Which ladder angle is safe?"},
				{ID: "q2", Type: "fill-in", Timestamp: "2026-03-14T09:06:02Z", CorrectResponses: []string{"{case_matters=false}exit"},
					Weighting: "1", LearnerResponse: "door", Result: "incorrect", Latency: "PT40S"},
			},
			Objectives: []rollup.ObjectiveState{{ID: "obj_ladders", SuccessStatus: "passed", CompletionStatus: "completed",
				ScoreScaled: f(1), ScoreRaw: f(5), ScoreMin: f(0), ScoreMax: f(5), Description: "Ladder safety"}}},
		"item_fire": {Attempts: 1, CompletionStatus: "incomplete", SuccessStatus: "unknown", ProgressMeasure: f(0.5),
			Entry: "ab-initio", Exit: "suspend", Location: "slide-6", SuspendData: `{"slide":6,"seen":[1,2,3,4,5]}`,
			TotalTime: "PT3M", SecondsTracked: 181, Suspended: true, Updated: t},
	}
	return pkg, state
}

// SCORM12 is a three-SCO SCORM 1.2 course: SCO 1 passed by mastery score, SCO 2
// completed, SCO 3 never launched.
func SCORM12() (*course.Package, rollup.State) {
	s := func(id, title string, mastery *float64) *course.Activity {
		return &course.Activity{ID: id, Title: title, Visible: true, LaunchURL: id + "/index.html", ResourceID: "r_" + id,
			ScormType: "sco", MasteryScore: mastery}
	}
	root := &course.Activity{ID: "org1", Title: "Forklift Basics", Visible: true, Children: []*course.Activity{
		s("sco1", "Controls", f(70)), s("sco2", "Loading", nil), s("sco3", "Final check", f(80))}}
	pkg := &course.Package{Standard: course.SCORM12, Identifier: "forklift", Title: "Forklift Basics", Root: root}
	t := When()
	state := rollup.State{
		"sco1": {Attempts: 1, LessonStatus: "incomplete", ScoreRaw: f(72), ScoreMin: f(0), ScoreMax: f(100),
			Entry: "ab-initio", Exit: "", TotalTime: "0000:05:10.00", SecondsTracked: 312, Terminated: true, Updated: t.Add(-time.Hour),
			Objectives: []rollup.ObjectiveState{{ID: "controls", SuccessStatus: "passed", ScoreRaw: f(8), ScoreMax: f(10), ScoreMin: f(0)}}},
		"sco2": {Attempts: 1, LessonStatus: "completed", Exit: "logout", TotalTime: "0000:02:00.00", SecondsTracked: 121.5,
			Terminated: true, Updated: t},
	}
	return pkg, state
}
