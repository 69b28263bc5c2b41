package learner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/coursetest"
	"github.com/lectern-lms/lectern/course/registration"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/scorm"
	"github.com/lectern-lms/lectern/course/sequencing"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/learner"
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
			records := be.Open(b)
			pkg, err := scorm.Parse(fstest.MapFS{"imsmanifest.xml": {Data: []byte(flowManifest(30))}, "sco.html": {Data: []byte("sco")}})
			if err != nil {
				b.Fatal(err)
			}
			courses := course.NewStore(records)
			v, err := courses.AddVersion(ctx, "acme", &course.Version{CourseID: "flow", Title: "Flow", Standard: pkg.Standard, Package: pkg, JobID: "job-1"}, false)
			if err != nil {
				b.Fatal(err)
			}
			sealer, err := settings.NewSealer("test-secret")
			if err != nil {
				b.Fatal(err)
			}
			regs := registration.NewStore(records, sealer)
			q := registration.CreateRequest{ID: "r1", CourseID: "flow", Learner: registration.Learner{ID: "ann"}, ForCredit: true}
			if err := q.Check(); err != nil {
				b.Fatal(err)
			}
			reg, err := regs.Create(ctx, "acme", q, v.Version, registration.CourseRef{Title: "Flow", Standard: string(pkg.Standard)})
			if err != nil {
				b.Fatal(err)
			}
			path := learner.New(learner.Deps{Courses: courses, Registrations: regs, Runtime: scormrt.NewStore(records),
				Settings: settings.NewStore(records, settings.Default(), sealer)})
			in := reg.Current()
			sess := &course.SessionClaims{Tenant: "acme", CourseID: "flow", Version: v.Version, RegistrationID: "r1",
				Instance: in.Number, InstanceKey: in.Key, Expires: time.Now().Add(time.Hour).Unix()}
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
