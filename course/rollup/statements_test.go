package rollup

import (
	"encoding/json"
	"testing"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

func TestMoveOn(t *testing.T) {
	c, p, fl, w := Verbs{Completed: true}, Verbs{Passed: true}, Verbs{Failed: true}, Verbs{Waived: true}
	cp := Verbs{Completed: true, Passed: true}
	for _, tc := range []struct {
		moveOn string
		v      Verbs
		want   bool
	}{
		{"Passed", p, true}, {"Passed", c, false}, {"Passed", fl, false},
		{"Completed", c, true}, {"Completed", p, false},
		{"CompletedAndPassed", cp, true}, {"CompletedAndPassed", c, false}, {"CompletedAndPassed", p, false},
		{"CompletedOrPassed", c, true}, {"CompletedOrPassed", p, true}, {"CompletedOrPassed", fl, false},
		{"NotApplicable", Verbs{}, true},
		{"Passed", w, true}, {"CompletedAndPassed", w, true},
	} {
		if got := MoveOnMet(tc.moveOn, tc.v); got != tc.want {
			t.Errorf("%s with %+v: %v, want %v", tc.moveOn, tc.v, got, tc.want)
		}
	}
}

func au(id, moveOn string) *course.Activity {
	return &course.Activity{ID: id, Title: id, LaunchURL: "https://example.com/" + id,
		CMI5: &course.CMI5AU{ID: "https://example.com/au/" + id, MoveOn: moveOn}}
}

func cmi5Course() *course.Package {
	block := &course.Activity{ID: "b1", Title: "Block", CMI5: &course.CMI5AU{ID: "https://example.com/block/1", Block: true},
		Children: []*course.Activity{au("quiz", "Passed"), au("video", "Completed")}}
	return &course.Package{Standard: course.CMI5, XAPIActivityID: "https://example.com/course",
		Root: &course.Activity{ID: "course", Title: "Course", Children: []*course.Activity{block, au("survey", "NotApplicable")}}}
}

func TestStatementsCMI5(t *testing.T) {
	p := cmi5Course()
	// Nothing seen yet: the NotApplicable AU is satisfied, the block is not.
	r := Statements(p, nil)
	if r.Completion != registration.Unknown || r.Success != registration.Unknown || len(r.Satisfied) != 0 {
		t.Fatalf("untouched: %s/%s satisfied %v", r.Completion, r.Success, r.Satisfied)
	}
	seen := map[string]Verbs{"https://example.com/au/quiz": {Completed: true, Failed: true, Scaled: f(0.4), Seconds: 30}}
	r = Statements(p, seen)
	if r.Completion != registration.Incomplete || r.Success != registration.Failed || fmtScore(r.Score) != "40" {
		t.Fatalf("quiz failed: %s/%s score %s", r.Completion, r.Success, fmtScore(r.Score))
	}
	seen["https://example.com/au/quiz"] = Verbs{Completed: true, Passed: true, Scaled: f(0.9), Seconds: 50}
	r = Statements(p, seen)
	if r.Completion != registration.Incomplete || len(r.Satisfied) != 0 {
		t.Fatalf("video not completed: %s satisfied %v", r.Completion, r.Satisfied)
	}
	seen["video"] = Verbs{Completed: true, Seconds: 10} // keyed by the tree id works too
	r = Statements(p, seen)
	if r.Completion != registration.Completed || r.Success != registration.Passed || fmtScore(r.Score) != "90" {
		t.Fatalf("all moved on: %s/%s score %s", r.Completion, r.Success, fmtScore(r.Score))
	}
	if len(r.Satisfied) != 2 || r.Satisfied[0] != "https://example.com/block/1" || r.Satisfied[1] != "https://example.com/course" {
		t.Fatalf("satisfied %v, want the block then the course", r.Satisfied)
	}
	if r.TotalSecondsTracked != 60 || fmtScore(r.CompletionAmount) != "1" {
		t.Fatalf("time %v amount %s", r.TotalSecondsTracked, fmtScore(r.CompletionAmount))
	}
	// Waived counts as moved on.
	r = Statements(p, map[string]Verbs{"quiz": {Waived: true}, "video": {Waived: true}})
	if r.Completion != registration.Completed {
		t.Fatalf("waived: %s", r.Completion)
	}
}

func TestStatementsXAPI(t *testing.T) {
	p := &course.Package{Standard: course.XAPI, XAPIActivityID: "https://example.com/tc",
		Root: &course.Activity{ID: "https://example.com/tc", Title: "TC", Extra: &course.ActivityExt{XAPIActivityID: "https://example.com/tc"},
			Children: []*course.Activity{{ID: "https://example.com/tc/m1", LaunchURL: "index.html"}}}}
	if r := Statements(p, map[string]Verbs{"https://example.com/tc/m1": {Completed: true}}); r.Completion != registration.Completed {
		t.Fatalf("activity completed: %s", r.Completion)
	}
	r := Statements(p, map[string]Verbs{"https://example.com/tc": {Passed: true, Scaled: f(0.8)}})
	if r.Completion != registration.Completed || r.Success != registration.Passed || fmtScore(r.Score) != "80" {
		t.Fatalf("course passed: %s/%s %s", r.Completion, r.Success, fmtScore(r.Score))
	}
	r = Statements(p, map[string]Verbs{"https://example.com/tc": {Failed: true}})
	if r.Completion != registration.Incomplete || r.Success != registration.Failed {
		t.Fatalf("course failed: %s/%s", r.Completion, r.Success)
	}
}

func TestStatementsXAPISingleActivity(t *testing.T) {
	// The common tincan.xml: one course activity that is itself launched.
	p := &course.Package{Standard: course.XAPI, XAPIActivityID: "https://example.com/one",
		Root: &course.Activity{ID: "https://example.com/one", LaunchURL: "index.html", Extra: &course.ActivityExt{XAPIActivityID: "https://example.com/one"}}}
	if r := Statements(p, nil); r.Completion != registration.Unknown {
		t.Fatalf("nothing seen: %s", r.Completion)
	}
	r := Statements(p, map[string]Verbs{"https://example.com/one": {Completed: true, Passed: true, Scaled: f(0.75), Seconds: 12}})
	if r.Completion != registration.Completed || r.Success != registration.Passed || fmtScore(r.Score) != "75" || r.TotalSecondsTracked != 12 {
		t.Fatalf("got %s/%s %s %v", r.Completion, r.Success, fmtScore(r.Score), r.TotalSecondsTracked)
	}
	// A launchable course with launchable children rolls up from the children.
	p.Root.Children = []*course.Activity{{ID: "https://example.com/one/m1", LaunchURL: "m1.html"}, {ID: "https://example.com/one/m2", LaunchURL: "m2.html"}}
	r = Statements(p, map[string]Verbs{"https://example.com/one/m1": {Completed: true}})
	if r.Completion != registration.Incomplete || fmtScore(r.CompletionAmount) != "0.5" {
		t.Fatalf("one of two children: %s amount %s", r.Completion, fmtScore(r.CompletionAmount))
	}
}

// Rustici's Tin Can Golf example: one launchable course activity; the assessment ends with
// passed (result.completion true) on the course activity, and never sends completed. The
// pass completes it (xAPI activities are CompletedOrPassed), and so does result.completion
// true under any verb.
func TestStatementsTinCanGolf(t *testing.T) {
	const golf = "http://id.tincanapi.com/activity/tincan-prototypes/golf-example"
	p := &course.Package{Standard: course.XAPI, XAPIActivityID: golf,
		Root: &course.Activity{ID: golf, LaunchURL: "index.html", Extra: &course.ActivityExt{XAPIActivityID: golf}}}
	st := func(verb, object, result string) json.RawMessage {
		s := `{"id":"` + verb + object + `","verb":{"id":"http://adlnet.gov/expapi/verbs/` + verb + `"},"object":{"objectType":"Activity","id":"` + object + `"}`
		if result != "" {
			s += `,"result":` + result
		}
		return json.RawMessage(s + `}`)
	}
	raws := []json.RawMessage{
		st("attempted", golf, ""),
		st("experienced", golf+"/GolfBasics.html", ""),
		st("attempted", golf+"/GolfAssessment", ""),
		st("passed", golf, `{"score":{"scaled":0.8,"raw":8,"min":0,"max":10},"success":true,"completion":true,"duration":"PT1M2S"}`),
	}
	r := Statements(p, VerbsOf(raws))
	if r.Completion != registration.Completed || r.Success != registration.Passed || fmtScore(r.Score) != "80" || fmtScore(r.CompletionAmount) != "1" {
		t.Fatalf("Golf passed: %s/%s score %s amount %s", r.Completion, r.Success, fmtScore(r.Score), fmtScore(r.CompletionAmount))
	}
	// result.completion true under another verb completes the activity; without it, only
	// completed or passed do.
	r = Statements(p, VerbsOf([]json.RawMessage{st("experienced", golf, `{"completion":true}`)}))
	if r.Completion != registration.Completed || r.Success != registration.Unknown {
		t.Fatalf("completion true: %s/%s", r.Completion, r.Success)
	}
	r = Statements(p, VerbsOf([]json.RawMessage{st("experienced", golf, `{"completion":false}`)}))
	if r.Completion != registration.Incomplete {
		t.Fatalf("completion false: %s", r.Completion)
	}
	// cmi5 reads its own verbs only: result.completion does not stand for completed.
	c5 := &course.Package{Standard: course.CMI5, Root: &course.Activity{ID: "c", Children: []*course.Activity{
		{ID: "au", LaunchURL: "au.html", CMI5: &course.CMI5AU{ID: "https://example.com/au", MoveOn: "Completed"}}}}}
	r = Statements(c5, VerbsOf([]json.RawMessage{st("experienced", "https://example.com/au", `{"completion":true}`)}))
	if r.Completion == registration.Completed {
		t.Fatalf("cmi5 AU completed by result.completion: %s", r.Completion)
	}
}
