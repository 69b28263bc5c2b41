package learner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/course/coursetest"
	"github.com/lectern-lms/lectern/course/sequencing"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

// flowManifest is a SCORM 2004 course of n SCOs in flow, each writing its satisfaction to
// a global objective of the learner (so every request reads the learner's objectives too).
func flowManifest(n int) string {
	var items strings.Builder
	for i := range n {
		fmt.Fprintf(&items, `<item identifier="s%d" identifierref="r1" parameters="?s%d"><title>SCO %d</title>
      <imsss:sequencing><imsss:objectives><imsss:primaryObjective objectiveID="o%d">
        <imsss:mapInfo targetObjectiveID="g%d" writeSatisfiedStatus="true"/>
      </imsss:primaryObjective></imsss:objectives></imsss:sequencing></item>`, i, i, i, i, i)
	}
	return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="flow" version="1" ` + coursetest.NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Flow</title>` + items.String() + `
    <imsss:sequencing><imsss:controlMode choice="true" flow="true"/></imsss:sequencing>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`
}

// BenchmarkSequencingNavigate is one navigation request of a tracked session on the
// learner's path, with its store reads and writes: Continue and Previous in turn between
// the first two SCOs of a 30-SCO course (each request ends one attempt and starts another,
// so the State and the registration's progress are stored every time).
func BenchmarkSequencingNavigate(b *testing.B) {
	for _, be := range recordstores.All() {
		b.Run(be.Name, func(b *testing.B) {
			ctx := context.Background()
			tr := newTracked(b, be.Open(b), "flow", flowManifest(30))
			path, v, sess := tr.path, tr.v, tr.sess
			if nav, err := path.SequencingLaunch(ctx, sess, "", v); err != nil || nav.Deliver != "s0" {
				b.Fatalf("launch: %+v, %v", nav, err)
			}
			next, _, _ := sequencing.ParseRequest("continue")
			prev, _, _ := sequencing.ParseRequest("previous")
			i := 0
			for b.Loop() {
				req, want := next, "s1"
				if i%2 == 1 {
					req, want = prev, "s0"
				}
				nav, err := path.SequencingNavigate(ctx, sess, "", v, req)
				if err != nil || nav.Deliver != want {
					b.Fatalf("request %d: %+v, %v", i, nav, err)
				}
				i++
			}
		})
	}
}
