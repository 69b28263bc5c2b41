package xapiconv

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/lrs/xapi"
)

var update = flag.Bool("update", false, "rewrite the golden statement files")

func base(d runtime.Dialect, v runtime.Values) Input {
	return Input{Dialect: d, Values: v, Attempt: 1700000000000000000, HomePage: "https://lms.example.com", LearnerID: "learner-1",
		LearnerName: "Ada Lovelace", Registration: "6f1c1d8e-7c55-4a53-9f4e-0c6b1d1f2a10",
		CourseIRI: "urn:lectern:course:acme:golf", CourseTitle: "Golf Explained", SCOID: "sco 1", SCOTitle: "Playing",
		Timestamp: time.Date(2026, 11, 26, 18, 0, 0, 0, time.UTC)}
}

// TestConvertGolden compares each case's statements with testdata/<name>.json.
func TestConvertGolden(t *testing.T) {
	cases := map[string]func() Input{
		"scorm12_passed": func() Input {
			in := base(runtime.SCORM12, runtime.Values{"cmi.core.lesson_status": "passed", "cmi.core.score.raw": "85",
				"cmi.core.score.min": "0", "cmi.core.score.max": "100", "cmi.core.session_time": "0000:12:30.5", "cmi.core.exit": "",
				"cmi.interactions.0.id": "q1", "cmi.interactions.0.type": "choice", "cmi.interactions.0.student_response": "b",
				"cmi.interactions.0.result": "correct", "cmi.interactions.0.correct_responses.0.pattern": "b",
				"cmi.objectives.0.id": "obj 1", "cmi.objectives.0.status": "failed", "cmi.objectives.0.score.raw": "30"})
			in.Terminated = true
			return in
		},
		"scorm12_incomplete": func() Input {
			return base(runtime.SCORM12, runtime.Values{"cmi.core.lesson_status": "incomplete"})
		},
		"scorm2004_failed_suspended": func() Input {
			in := base(runtime.SCORM2004, runtime.Values{"cmi.completion_status": "completed", "cmi.success_status": "failed",
				"cmi.score.scaled": "0.4", "cmi.score.raw": "40", "cmi.score.min": "0", "cmi.score.max": "100",
				"cmi.exit": "suspend", "cmi.session_time": "PT5M",
				"cmi.interactions.1.id": "q2", "cmi.interactions.1.type": "numeric", "cmi.interactions.1.learner_response": "7",
				"cmi.interactions.1.result": "incorrect", "cmi.interactions.1.description": "Par of hole 2",
				"cmi.interactions.0.id": "q1", "cmi.interactions.0.type": "true-false", "cmi.interactions.0.learner_response": "true",
				"cmi.interactions.0.result": "correct", "cmi.interactions.0.latency": "PT3S",
				"cmi.objectives.0.id": "putting", "cmi.objectives.0.success_status": "passed", "cmi.objectives.0.completion_status": "completed",
				"cmi.objectives.0.score.scaled": "1", "cmi.objectives.1.id": "driving", "cmi.objectives.1.success_status": "unknown"})
			in.Terminated = true
			return in
		},
		"scorm2004_resumed": func() Input {
			in := base(runtime.SCORM2004, runtime.Values{"cmi.completion_status": "incomplete", "cmi.success_status": "unknown"})
			in.Resumed = true
			return in
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := json.MarshalIndent(Convert(mk()), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			// Every converted statement must pass the record store's validation.
			if _, _, err := xapi.ParseStatements(got, xapi.V103); err != nil {
				t.Fatalf("the record store rejects the statements: %v", err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("statements differ from %s:\n%s", path, got)
			}
		})
	}
}

// TestConvertIDsAreStable shows the idempotence the writers rely on: the same load converted
// twice, at different times, names the same statements, and a later commit of the load keeps
// the ids of the events it repeats.
func TestConvertIDsAreStable(t *testing.T) {
	v := runtime.Values{"cmi.completion_status": "incomplete"}
	first := base(runtime.SCORM2004, v)
	again := first
	again.Timestamp = first.Timestamp.Add(time.Hour)
	a, b := Convert(first), Convert(again)
	if len(a) != len(b) || a[0].ID() != b[0].ID() {
		t.Fatalf("ids differ between two conversions of one load: %v / %v", a, b)
	}
	later := base(runtime.SCORM2004, runtime.Values{"cmi.completion_status": "completed"})
	c := Convert(later)
	if len(c) != 2 || c[0].ID() != a[0].ID() || c[1]["verb"].(map[string]any)["id"] != VerbCompleted {
		t.Fatalf("later commit: want the same initialized id and a completed statement, got %v", c)
	}
	next := base(runtime.SCORM2004, v)
	next.Attempt++
	if Convert(next)[0].ID() == a[0].ID() {
		t.Fatal("a new attempt reuses the previous attempt's initialized id")
	}
	seen := map[string]bool{}
	full := base(runtime.SCORM2004, runtime.Values{"cmi.completion_status": "completed", "cmi.success_status": "passed", "cmi.score.scaled": "1"})
	full.Terminated, full.Resumed = true, true
	for _, st := range Convert(full) {
		if seen[st.ID()] {
			t.Fatalf("two statements of one load share id %s", st.ID())
		}
		seen[st.ID()] = true
	}
}

func TestDuration(t *testing.T) {
	for in, want := range map[string]string{"0000:12:30.5": "PT0H12M30.5S", "01:02:03": "PT1H2M3S", "bad": "", "": ""} {
		if got := duration(runtime.SCORM12, in); got != want {
			t.Errorf("duration(%q) = %q, want %q", in, got, want)
		}
	}
}
