package course_test

import (
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/course"
)

// TestCMI5LMSActivityID: the LMS's cmi5 ids are never the publisher's, stable, of their kind,
// and differ across courses sharing an AU id (cmi5 8.1.5.0-1..4, 9.3.9.0-3/-4/-7/-8).
func TestCMI5LMSActivityID(t *testing.T) {
	pkg := func(courseID string) (*course.Package, *course.Activity, *course.Activity) {
		au := &course.Activity{ID: "au", LaunchURL: "a.html", CMI5: &course.CMI5AU{ID: "https://example.com/au"}}
		block := &course.Activity{ID: "b", CMI5: &course.CMI5AU{ID: "https://example.com/block", Block: true}, Children: []*course.Activity{au}}
		root := &course.Activity{ID: "root", Children: []*course.Activity{block}}
		return &course.Package{Standard: course.CMI5, XAPIActivityID: courseID, Root: root}, block, au
	}
	p, block, au := pkg("https://example.com/c1")
	ids := map[string]string{"au": p.CMI5LMSActivityID(au), "block": p.CMI5LMSActivityID(block), "course": p.CMI5LMSActivityID(p.Root)}
	for kind, id := range ids {
		if !strings.HasPrefix(id, "urn:lectern:cmi5:"+kind+":") || strings.Contains(id, "example.com") {
			t.Errorf("%s id %q", kind, id)
		}
	}
	again, _, au2 := pkg("https://example.com/c1")
	if again.CMI5LMSActivityID(au2) != ids["au"] {
		t.Error("the AU's id changed between two parses of the same course")
	}
	other, _, au3 := pkg("https://example.com/c2")
	if other.CMI5LMSActivityID(au3) == ids["au"] {
		t.Error("two courses sharing an AU id got the same LMS id")
	}
	if (&course.Package{Standard: course.XAPI, Root: au}).CMI5LMSActivityID(au) != "" {
		t.Error("an xAPI package has no cmi5 ids")
	}
}
