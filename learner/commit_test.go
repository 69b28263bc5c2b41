package learner

import (
	"testing"

	scormrt "github.com/lectern-lms/lectern/course/runtime"
)

// A SCORM 2004 SCO that terminates with a suspendAll request has its attempt suspended, as
// cmi.exit "suspend" would (its next launch resumes); other requests leave its exit as set,
// and the commit's own map is never changed.
func TestSuspendedByRequest(t *testing.T) {
	for _, tc := range []struct {
		name, request, exit, want string
	}{
		{"suspendAll without exit", "suspendAll", "", "suspend"},
		{"suspendAll over normal", "suspendAll", "normal", "suspend"},
		{"suspendAll with suspend", "suspendAll", "suspend", "suspend"},
		{"exitAll", "exitAll", "", ""},
		{"continue", "continue", "normal", "normal"},
		{"choice", "{target=a}choice", "", ""},
		{"none", "", "time-out", "time-out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := scormrt.Values{"cmi.exit": tc.exit, "cmi.location": "p3"}
			out := suspendedByRequest(in, tc.request)
			if out["cmi.exit"] != tc.want || out["cmi.location"] != "p3" {
				t.Errorf("got %v, want cmi.exit %q", out, tc.want)
			}
			if in["cmi.exit"] != tc.exit {
				t.Errorf("the commit's values were changed: %v", in)
			}
		})
	}
}
