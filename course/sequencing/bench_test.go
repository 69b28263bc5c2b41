package sequencing

import (
	"fmt"
	"testing"

	"github.com/lectern-lms/lectern/course"
)

// BenchmarkView measures what the player asks after each SCORM 2004 commit that changed
// something: the table of contents (a choice look-ahead per activity) and the
// request_valid answers (choice and jump per activity), for courses of modules × SCOs.
func BenchmarkView(b *testing.B) {
	for _, size := range [][2]int{{20, 10}, {50, 20}} {
		b.Run(fmt.Sprintf("activities=%d", 1+size[0]*(1+size[1])), func(b *testing.B) { benchView(b, size[0], size[1]) })
	}
}

func benchView(b *testing.B, nModules, nSCOs int) {
	var modules []*course.Activity
	for m := range nModules {
		var scos []*course.Activity
		for i := range nSCOs {
			scos = append(scos, leaf(fmt.Sprintf("m%d-s%d", m, i), nil))
		}
		modules = append(modules, cluster(fmt.Sprintf("m%d", m), flowSeq(), scos...))
	}
	s, err := New(pkg(cluster("root", flowSeq(), modules...)), nil)
	if err != nil {
		b.Fatal(err)
	}
	if r, err := s.Navigate(Request{Kind: Start}); err != nil || r.Deliver != "m0-s0" {
		b.Fatalf("start: %+v %v", r, err)
	}
	b.ResetTimer()
	for b.Loop() {
		toc := s.TOC()
		for _, e := range toc {
			s.NavigationRequestValid(Request{Kind: Jump, Target: e.ID})
		}
	}
}
