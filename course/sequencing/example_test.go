package sequencing_test

import (
	"encoding/json"
	"fmt"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/sequencing"
)

// The learner's path builds the state once per registration, stores it as JSON, and on each
// request loads it, feeds what the SCO reported, navigates and stores it again.
func Example() {
	flow := true
	pkg := &course.Package{Standard: course.SCORM2004v4, Root: &course.Activity{
		ID: "org", Sequencing: &course.Sequencing{ControlMode: &course.ControlMode{Flow: &flow}},
		Children: []*course.Activity{
			{ID: "intro", LaunchURL: "intro.html"},
			{ID: "quiz", LaunchURL: "quiz.html"},
		},
	}}
	s, _ := sequencing.New(pkg, nil)
	res, _ := s.Navigate(sequencing.Request{Kind: sequencing.Start})
	fmt.Println("deliver", res.Deliver)
	saved, _ := json.Marshal(s)

	// Next request: the SCO terminated with adl.nav.request=continue.
	s, _ = sequencing.Load(pkg, saved, nil)
	_ = s.Report("intro", sequencing.RuntimeOutcome{CompletionStatus: "completed"})
	req, _, _ := sequencing.ParseRequest("continue")
	res, _ = s.Navigate(req)
	fmt.Println("deliver", res.Deliver)
	fmt.Println("previous valid:", s.NavigationRequestValid(sequencing.Request{Kind: sequencing.Previous}))
	res, _ = s.Navigate(req)
	fmt.Println("session ended:", res.SessionEnded)
	// Output:
	// deliver intro
	// deliver quiz
	// previous valid: true
	// session ended: true
}
