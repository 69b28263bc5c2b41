package engineapi_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

type importProgress struct {
	Stage       string `json:"stage"`
	FilesStored int    `json:"filesStored"`
	FilesTotal  int    `json:"filesTotal"`
	Percent     int    `json:"percent"`
}

// TestImportProgress: the import result's progress (Lectern's extension) never goes back,
// ends at DONE with every file of the package counted as stored, and a job that fails keeps
// the stage it failed in.
func TestImportProgress(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		files := map[string]string{"imsmanifest.xml": servertest.Manifest12, "sco/index.html": servertest.Sco12}
		for i := range 40 {
			files[fmt.Sprintf("sco/asset%02d.txt", i)] = "asset"
		}
		var id struct{ Result string }
		r := e.Upload("acme", "course=prog", servertest.ZipOf(t, files), "course.zip")
		e.Expect(r, 200, "import")
		r.JSON(t, &id)
		var res struct {
			Status   string         `json:"status"`
			Progress importProgress `json:"progress"`
		}
		last := -1
		servertest.Eventually(t, 60*time.Second, "import progress", func() bool {
			rr := e.Do("GET", "/engine/api/v1/acme/courses/importJobs/"+id.Result, servertest.Root, nil)
			e.Expect(rr, 200, "job status")
			rr.JSON(t, &res)
			p := res.Progress
			if p.Percent < last || p.Percent < 0 || p.Percent > 100 {
				t.Fatalf("progress went from %d to %+v", last, p)
			}
			last = p.Percent
			if res.Status == "RUNNING" && (p.Stage == "DONE" || p.Percent == 100) {
				t.Fatalf("a running job claims its end: %+v", p)
			}
			return res.Status != "RUNNING"
		})
		if want := (importProgress{Stage: "DONE", FilesStored: len(files), FilesTotal: len(files), Percent: 100}); res.Status != "COMPLETE" || res.Progress != want {
			t.Fatalf("finished import: %s %+v, want COMPLETE %+v", res.Status, res.Progress, want)
		}

		// A package that is no zip fails after it was received.
		r = e.Upload("acme", "course=bad", []byte("PK\x03\x04 not a zip"), "bad.zip")
		e.Expect(r, 200, "bad import")
		r.JSON(t, &id)
		servertest.Eventually(t, 60*time.Second, "failed import", func() bool {
			e.Do("GET", "/engine/api/v1/acme/courses/importJobs/"+id.Result, servertest.Root, nil).JSON(t, &res)
			return res.Status != "RUNNING"
		})
		if want := (importProgress{Stage: "RECEIVED", Percent: 10}); res.Status != "ERROR" || res.Progress != want {
			t.Fatalf("failed import: %s %+v, want ERROR %+v", res.Status, res.Progress, want)
		}
	})
}
