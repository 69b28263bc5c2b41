package learner_test

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/scorm"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/storage/record"
)

// tracked is a learner's path over records with one SCORM 2004 course imported from manifest
// (course id courseID, its SCOs all sco.html) and a tracked player session of registration r1
// of learner ann, not launched yet.
type tracked struct {
	path    *learner.Service
	runtime *scormrt.Store
	v       *course.Version
	sess    *course.SessionClaims
	reg     *registration.Registration
}

func newTracked(t testing.TB, records record.Store, courseID, manifest string) *tracked {
	t.Helper()
	ctx := context.Background()
	pkg, err := scorm.Parse(fstest.MapFS{"imsmanifest.xml": {Data: []byte(manifest)}, "sco.html": {Data: []byte("sco")}})
	if err != nil {
		t.Fatal(err)
	}
	courses := course.NewStore(records)
	v, err := courses.AddVersion(ctx, "acme", &course.Version{CourseID: courseID, Title: courseID, Standard: pkg.Standard, Package: pkg, JobID: "job-1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := settings.NewSealer("test-secret")
	if err != nil {
		t.Fatal(err)
	}
	regs := registration.NewStore(records, sealer)
	q := registration.CreateRequest{ID: "r1", CourseID: courseID, Learner: registration.Learner{ID: "ann"}, ForCredit: true}
	if err := q.Check(); err != nil {
		t.Fatal(err)
	}
	reg, err := regs.Create(ctx, "acme", q, v.Version, registration.CourseRef{Title: courseID, Standard: string(pkg.Standard)})
	if err != nil {
		t.Fatal(err)
	}
	runtime := scormrt.NewStore(records)
	path := learner.New(learner.Deps{Courses: courses, Registrations: regs, Runtime: runtime,
		Settings: settings.NewStore(records, settings.Default(), sealer)})
	in := reg.Current()
	sess := &course.SessionClaims{Tenant: "acme", CourseID: courseID, Version: v.Version, RegistrationID: "r1",
		Instance: in.Number, InstanceKey: in.Key, Expires: time.Now().Add(time.Hour).Unix()}
	return &tracked{path: path, runtime: runtime, v: v, sess: sess, reg: reg}
}
