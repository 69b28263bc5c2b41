package learner_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/lectern-lms/lectern/course/coursetest"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

// writerManifest is a SCORM 2004 course whose one SCO writes its satisfaction to the
// learner's global objective g (objectivesGlobalToSystem, the default).
const writerManifest = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="writer" version="1" ` + coursetest.NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Writer</title>
    <item identifier="s1" identifierref="r1"><title>One</title>
      <imsss:sequencing><imsss:objectives><imsss:primaryObjective objectiveID="obj1">
        <imsss:mapInfo targetObjectiveID="g" writeSatisfiedStatus="true" writeNormalizedMeasure="true"/>
      </imsss:primaryObjective></imsss:objectives></imsss:sequencing>
    </item>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`

// failingGlobals is a record store whose writes of learners' global objectives fail while
// fail is set: the process dying between the writes of one sequencing request.
type failingGlobals struct {
	record.Store
	fail atomic.Bool
}

var errInjected = errors.New("injected: learner objectives not written")

func (f *failingGlobals) Create(ctx context.Context, r *record.Record) error {
	if f.fail.Load() && r.Kind == scormrt.KindLearnerObjectives {
		return errInjected
	}
	return f.Store.Create(ctx, r)
}

func (f *failingGlobals) Update(ctx context.Context, r *record.Record) error {
	if f.fail.Load() && r.Kind == scormrt.KindLearnerObjectives {
		return errInjected
	}
	return f.Store.Update(ctx, r)
}

// TestGlobalsNeverBehindTheState: a sequencing request that changes a learner's global
// objective writes it before the registration's sequencing State, so a request that fails
// between the two (here: the objectives' write refused) leaves the State as it was, and the
// client's retry of the same commit leaves both written. Were the State written first, it
// would hold the change while the learner's record did not, and the next request, which reads
// the learner's record over the State's copy, would lose it.
func TestGlobalsNeverBehindTheState(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			records := &failingGlobals{Store: be.Open(t)}
			tr := newTracked(t, records, "writer", writerManifest)
			path, runtime, v, sess, in := tr.path, tr.runtime, tr.v, tr.sess, tr.reg.Current()
			pkg := v.Package
			nav, err := path.SequencingLaunch(ctx, sess, "", v)
			if err != nil || nav.Deliver != "s1" {
				t.Fatalf("launch: %+v, %v", nav, err)
			}
			state := func() string {
				raw, err := runtime.Sequencing(ctx, "acme", "r1", in.Key)
				if err != nil {
					t.Fatal(err)
				}
				return string(raw)
			}
			before := state()
			passed := scormrt.Values{"cmi.completion_status": "completed", "cmi.success_status": "passed", "cmi.score.scaled": "0.8"}
			act := pkg.Root.Children[0]

			records.fail.Store(true)
			if _, err := path.SequencingCommit(ctx, sess, "", v, act, passed, "", true); !errors.Is(err, errInjected) {
				t.Fatalf("commit with the objectives' write refused: %v, want the refusal", err)
			}
			if after := state(); after != before {
				t.Errorf("the State moved on without the learner's objectives:\nbefore %s\nafter  %s", before, after)
			}

			records.fail.Store(false)
			if _, err := path.SequencingCommit(ctx, sess, "", v, act, passed, "", true); err != nil {
				t.Fatalf("the retried commit: %v", err)
			}
			raw, err := runtime.LearnerObjectives(ctx, "acme", "ann")
			if err != nil {
				t.Fatal(err)
			}
			var globals map[string]struct {
				SatisfiedStatus, Satisfied bool
			}
			if err := json.Unmarshal(raw, &globals); err != nil {
				t.Fatalf("learner objectives %s: %v", raw, err)
			}
			if g := globals["g"]; !g.SatisfiedStatus || !g.Satisfied {
				t.Errorf("after the retry the learner's objectives are %s, want g satisfied", raw)
			}
			if state() == before {
				t.Error("after the retry the State did not change")
			}
		})
	}
}
