package postbackjob_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
	"github.com/lectern-lms/lectern/workers/outbound"
	"github.com/lectern-lms/lectern/workers/postbackjob"
)

// TestXAPIFullReport: the FULL report of an xAPI registration shows its activity from what
// the instance's statements said (the fold), with the answered questions as run-time
// interactions while TinCanInteractionsEnabled is true.
func TestXAPIFullReport(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			records := be.Open(t)
			sealer, err := settings.NewSealer("test-secret")
			if err != nil {
				t.Fatal(err)
			}
			courses := course.NewStore(records)
			pkg := &course.Package{Standard: course.XAPI, Title: "Golf", XAPIActivityID: "http://example.com/golf",
				Root: &course.Activity{ID: "golf", Title: "Golf", LaunchURL: "index.html", Visible: true}}
			if _, err := courses.AddVersion(ctx, "acme", &course.Version{CourseID: "golf", Title: "Golf", Standard: course.XAPI, Package: pkg, JobID: "job-1"}, false); err != nil {
				t.Fatal(err)
			}
			ob, err := outbound.New(outbound.Config{Allow: []string{"127.0.0.1/32"}, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			regs, set := registration.NewStore(records, sealer), settings.NewStore(records, settings.Default(), sealer)
			// The report's activity tree is the learner's path's, over the same stores.
			path := learner.New(learner.Deps{Courses: courses, Registrations: regs, Runtime: scormrt.NewStore(records), Settings: set})
			h := &postbackjob.Handler{Registrations: regs, Settings: set, Outbound: ob, Details: path}
			rc := newReceiver(t, 0)
			q := registration.CreateRequest{ID: "r1", CourseID: "golf", Learner: registration.Learner{ID: "ann"}, ForCredit: true,
				PostBack: &registration.PostBack{URL: rc.srv.URL, ResultsFormat: "FULL"}}
			if err := q.Check(); err != nil {
				t.Fatal(err)
			}
			if _, err := regs.Create(ctx, "acme", q, 0, registration.CourseRef{Title: "Golf", Standard: string(course.XAPI)}); err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(map[string]any{"id": "00000000-0000-4000-8000-000000000001", "stored": "2026-01-01T00:00:00Z",
				"verb":   map[string]any{"id": rollup.VerbAnswered},
				"object": map[string]any{"id": "urn:example:question:7", "definition": map[string]any{"interactionType": "true-false"}},
				"result": map[string]any{"response": "true", "success": true}})
			completed, _ := json.Marshal(map[string]any{"id": "00000000-0000-4000-8000-000000000002", "stored": "2026-01-01T00:00:01Z",
				"verb": map[string]any{"id": rollup.VerbCompleted}, "object": map[string]any{"id": "http://example.com/golf"}})
			if _, err := regs.FoldXAPI(ctx, "acme", q.XAPIRegistrationID, func(x *registration.XAPIInstance) (bool, error) {
				x.Fold = &registration.StatementFold{}
				return rollup.FoldStatements(x.Fold, []json.RawMessage{raw, completed}), nil
			}); err != nil {
				t.Fatal(err)
			}
			deliver := func() string {
				n := len(rc.requests())
				if err := h.ProcessTask(ctx, task(postbackjob.Payload{Tenant: "acme", RegistrationID: "r1"})); err != nil {
					t.Fatal(err)
				}
				got := rc.requests()
				if len(got) != n+1 {
					t.Fatalf("%d requests", len(got))
				}
				return got[n].form.Get("data")
			}
			if data := deliver(); !strings.Contains(data, `id="urn:example:question:7"`) || !strings.Contains(data, "true-false") ||
				!strings.Contains(data, "completed") {
				t.Errorf("FULL report of an xAPI registration: %s", data)
			}
			if err := set.Set(ctx, "acme", settings.TenantScope, "TinCanInteractionsEnabled", "false"); err != nil {
				t.Fatal(err)
			}
			if data := deliver(); strings.Contains(data, "urn:example:question:7") {
				t.Errorf("FULL report with TinCanInteractionsEnabled false shows the answer: %s", data)
			}
		})
	}
}
