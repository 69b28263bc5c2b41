package rollup

import (
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

func TestFromCMISCORM12(t *testing.T) {
	st, err := FromCMI(map[string]string{
		"cmi.core.lesson_status": "incomplete", "cmi.core.score.raw": "85", "cmi.core.score.min": "0", "cmi.core.score.max": "100",
		"cmi.core.credit": "credit", "cmi.core.lesson_mode": "normal", "cmi.core.entry": "ab-initio", "cmi.core.exit": "suspend",
		"cmi.core.lesson_location": "page3", "cmi.suspend_data": "a=1", "cmi.core.total_time": "0000:01:30.00",
		"cmi.comments": "too long", "cmi.student_preference.language": "fr", "cmi.student_preference.audio": "50",
		"cmi.objectives.0.id": "obj1", "cmi.objectives.0.status": "passed", "cmi.objectives.0.score.raw": "9",
		"cmi.interactions.0.id": "q1", "cmi.interactions.0.type": "choice", "cmi.interactions.0.time": "10:00:00",
		"cmi.interactions.0.student_response": "a", "cmi.interactions.0.result": "correct",
		"cmi.interactions.0.correct_responses.0.pattern": "a", "cmi.interactions.0.objectives.0.id": "obj1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.LessonStatus != "incomplete" || *st.ScoreRaw != 85 || st.Exit != "suspend" || st.Location != "page3" || st.TotalTime != "0000:01:30.00" ||
		st.LearnerComments[0].Value != "too long" || st.LearnerPreference.Language != "fr" || st.LearnerPreference.AudioLevel != 50 {
		t.Fatalf("core fields: %+v", st)
	}
	if len(st.Objectives) != 1 || st.Objectives[0].SuccessStatus != "passed" || *st.Objectives[0].ScoreRaw != 9 {
		t.Fatalf("objectives %+v", st.Objectives)
	}
	if in := st.Interactions; len(in) != 1 || in[0].LearnerResponse != "a" || in[0].Timestamp != "10:00:00" || in[0].CorrectResponses[0] != "a" || in[0].Objectives[0] != "obj1" {
		t.Fatalf("interactions %+v", in)
	}
	// Mastery 80 and a raw score of 85: the commit passes the SCO.
	r := Compute(Input{Package: pkg12(sco("a", f(80))), State: State{"a": st}, Settings: DefaultSettings(), ForCredit: true})
	if r.Completion != registration.Completed || r.Success != registration.Passed || fmtScore(r.Score) != "85" {
		t.Fatalf("rollup of the commit: %s/%s %s", r.Completion, r.Success, fmtScore(r.Score))
	}
}

func TestFromCMISCORM2004(t *testing.T) {
	cmi := map[string]string{
		"cmi.completion_status": "completed", "cmi.success_status": "failed", "cmi.score.scaled": "0.4", "cmi.progress_measure": "1",
		"cmi.location": "end", "cmi.exit": "normal", "cmi.total_time": "PT2M",
		"cmi.learner_preference.audio_captioning": "1", "cmi.learner_preference.delivery_speed": "1.5",
		"cmi.comments_from_learner.0.comment": "hi", "cmi.comments_from_learner.0.location": "p1", "cmi.comments_from_learner.0.timestamp": "2026-01-01T00:00:00Z",
		"cmi.objectives.1.id": "second", "cmi.objectives.0.id": "first", "cmi.objectives.0.success_status": "passed",
		"cmi.objectives.0.completion_status": "completed", "cmi.objectives.0.score.scaled": "0.9",
		"cmi.interactions.10.id": "q10", "cmi.interactions.2.id": "q2", "cmi.interactions.2.learner_response": "x",
	}
	st, err := FromCMI(cmi)
	if err != nil {
		t.Fatal(err)
	}
	if st.CompletionStatus != "completed" || st.SuccessStatus != "failed" || *st.ScoreScaled != 0.4 || *st.ProgressMeasure != 1 ||
		st.LearnerPreference.AudioCaptioning != 1 || st.LearnerPreference.DeliverySpeed != 1.5 || st.LearnerPreference.AudioLevel != 1 {
		t.Fatalf("core fields %+v", st)
	}
	if st.Objectives[0].ID != "first" || st.Objectives[1].ID != "second" || *st.Objectives[0].ScoreScaled != 0.9 {
		t.Fatalf("objectives out of order: %+v", st.Objectives)
	}
	if st.Interactions[0].ID != "q2" || st.Interactions[1].ID != "q10" {
		t.Fatalf("interactions in index order: %+v", st.Interactions)
	}
	if c := st.LearnerComments; len(c) != 1 || c[0].Location != "p1" || c[0].DateTime != "2026-01-01T00:00:00Z" {
		t.Fatalf("comments %+v", c)
	}
	leaf := sco04("a")
	leaf.Objectives = append(leaf.Objectives, course.Objective{ID: "first"})
	r := Compute(Input{Package: pkg04(course.SCORM2004v4, cluster("org", nil, leaf)), State: State{"a": st}, Settings: DefaultSettings()})
	d := r.Details(pkg04(course.SCORM2004v4, cluster("org", nil, leaf)), State{"a": st}, true)
	o := d.Children[0].Objectives[1]
	if r.Success != registration.Failed || o.ID != "first" || o.ObjectiveSuccess != registration.Passed || o.Score == nil || o.Score.Scaled != 90 {
		t.Fatalf("rollup %s, objective %+v", r.Success, o)
	}

	cmi["cmi.score.scaled"], cmi["cmi.objectives.0.score.raw"] = "high", "1e"
	if _, err := FromCMI(cmi); err == nil || !strings.Contains(err.Error(), "cmi.objectives.0.score.raw, cmi.score.scaled") {
		t.Fatalf("bad numbers: %v", err)
	}
}
