package contentapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

type jobList struct {
	Jobs []servertest.JobRead `json:"jobs"`
	More string               `json:"more"`
}

func listJobs(e *servertest.Env, a servertest.Auth, query string, headers ...string) jobList {
	e.T.Helper()
	r := e.Do("GET", "/api/v1/jobs?"+query, a, nil, headers...)
	e.Expect(r, 200, "list jobs "+query)
	var l jobList
	r.JSON(e.T, &l)
	return l
}

func jobIDs(l jobList) string {
	ids := []string{}
	for _, j := range l.Jobs {
		ids = append(ids, j.ID)
	}
	return strings.Join(ids, ",")
}

// TestJobListAPI: GET /api/v1/jobs (a Lectern extension) lists the tenant's jobs in update
// order, filters by status and type, pages with more, and keeps tenants apart.
func TestJobListAPI(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		const ten = "joblist"
		e.CreateTenant(ten, true)
		e.CreateTenant("other", true)
		th := []string{"tenant_id", ten}
		if l := listJobs(e, servertest.Root, "", th...); len(l.Jobs) != 0 || l.More != "" {
			t.Fatalf("jobs of a new tenant: %+v", l)
		}
		failed := e.WaitContentJob(ten, e.UploadContent(servertest.Root, ten, "content_id=broken", []byte("%PDF-1.4 not really a pdf"), "broken.pdf"))
		done := e.WaitContentJob(ten, e.UploadContent(servertest.Root, ten, "content_id=garden", []byte(servertest.GardenMarkdown), "garden.md"))
		if failed.Status != "FAILED" || done.Status != "COMPLETED" {
			t.Fatalf("jobs: %+v %+v", failed, done)
		}
		otherJob := e.WaitContentJob("other", e.UploadContent(servertest.Root, "other", "content_id=broken", []byte("%PDF-1.4 nope"), "broken.pdf"))

		all := listJobs(e, servertest.Root, "", th...)
		if jobIDs(all) != failed.ID+","+done.ID || all.More != "" {
			t.Fatalf("all jobs: %s more %q", jobIDs(all), all.More)
		}
		if all.Jobs[0].Type != "CONTENT_IMPORT" || all.Jobs[0].Error == nil || all.Jobs[0].Created == "" || all.Jobs[0].Updated == "" {
			t.Fatalf("a listed job lacks what GET /jobs/{id} shows: %+v", all.Jobs[0])
		}
		if l := listJobs(e, servertest.Root, "status=FAILED", th...); jobIDs(l) != failed.ID {
			t.Fatalf("FAILED jobs: %s", jobIDs(l))
		}
		if l := listJobs(e, servertest.Root, "status=COMPLETED&type=CONTENT_IMPORT", th...); jobIDs(l) != done.ID {
			t.Fatalf("COMPLETED content imports: %s", jobIDs(l))
		}
		if l := listJobs(e, servertest.Root, "type=TAXONOMY_IMPORT", th...); len(l.Jobs) != 0 {
			t.Fatalf("taxonomy imports: %s", jobIDs(l))
		}
		// Keyset paging: one job a page, the token continues after it.
		p1 := listJobs(e, servertest.Root, "limit=1", th...)
		if jobIDs(p1) != failed.ID || p1.More == "" {
			t.Fatalf("page 1: %s more %q", jobIDs(p1), p1.More)
		}
		p2 := listJobs(e, servertest.Root, "limit=1&more="+url.QueryEscape(p1.More), th...)
		if jobIDs(p2) != done.ID {
			t.Fatalf("page 2: %s more %q", jobIDs(p2), p2.More)
		}
		if p2.More != "" {
			if p3 := listJobs(e, servertest.Root, "limit=1&more="+url.QueryEscape(p2.More), th...); len(p3.Jobs) != 0 || p3.More != "" {
				t.Fatalf("page 3: %+v", p3)
			}
		}
		// A filtered page that must skip records still fills and continues.
		if l := listJobs(e, servertest.Root, "status=COMPLETED&limit=1", th...); jobIDs(l) != done.ID {
			t.Fatalf("filtered page: %s", jobIDs(l))
		}

		// A tenant credential lists its own jobs (no header needed) and no other tenant's.
		key, secret := e.Credential(ten)
		if l := listJobs(e, servertest.Basic(key, secret), ""); jobIDs(l) != failed.ID+","+done.ID {
			t.Fatalf("tenant credential: %s", jobIDs(l))
		}
		e.Expect(e.Do("GET", "/api/v1/jobs", servertest.Basic(key, secret), nil, "tenant_id", "other"), 403, "another tenant's jobs")
		if l := listJobs(e, servertest.Root, "", "tenant_id", "other"); jobIDs(l) != otherJob.ID {
			t.Fatalf("other tenant: %s", jobIDs(l))
		}
		// Root without a tenant sees every tenant's jobs.
		if l := listJobs(e, servertest.Root, "limit=1000"); !strings.Contains(jobIDs(l), otherJob.ID) || !strings.Contains(jobIDs(l), done.ID) {
			t.Fatalf("root's jobs: %s", jobIDs(l))
		}

		for q, want := range map[string]string{
			"status=DONE":     "status must be",
			"limit=0":         "limit must be",
			"limit=1001":      "limit must be",
			"more=%21%21nope": "more is not a token",
		} {
			r := e.Do("GET", "/api/v1/jobs?"+q, servertest.Root, nil, th...)
			e.Expect(r, 400, q)
			if !strings.Contains(r.Message(), want) {
				t.Fatalf("%s: %q", q, r.Message())
			}
		}
		e.Expect(e.Do("GET", "/api/v1/jobs", servertest.Root, nil, "tenant_id", "nope"), 404, "jobs of an unknown tenant")
	})
}
