package rollup_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/course/rollup/rolluptest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestDetailsGolden pins progress and progress/detail of realistic multi-SCO registrations:
// statuses, scores, attempts, tracked time, objectives and run-time data of every activity.
func TestDetailsGolden(t *testing.T) {
	for name, build := range map[string]func() (*course.Package, rollup.State){
		"scorm2004": rolluptest.SCORM2004, "scorm12": rolluptest.SCORM12,
	} {
		t.Run(name, func(t *testing.T) {
			pkg, st := build()
			r := rollup.Compute(rollup.Input{Package: pkg, State: st, Settings: rollup.DefaultSettings(), ForCredit: true})
			p := registration.Untracked()
			r.Apply(&p, rolluptest.When())
			got, err := json.MarshalIndent(map[string]any{"progress": p, "activityDetails": r.Details(pkg, st, true)}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "details_"+name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from the rollup's output:\n%s", path, got)
			}
		})
	}
}
