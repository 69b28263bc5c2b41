package server_test

import (
	"fmt"
	"testing"
	"time"
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
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		files := map[string]string{"imsmanifest.xml": manifest12, "sco/index.html": sco12}
		for i := range 40 {
			files[fmt.Sprintf("sco/asset%02d.txt", i)] = "asset"
		}
		var id struct{ Result string }
		r := e.upload("acme", "course=prog", zipOf(t, files), "course.zip")
		e.expect(r, 200, "import")
		r.json(t, &id)
		var res struct {
			Status   string         `json:"status"`
			Progress importProgress `json:"progress"`
		}
		last := -1
		eventually(t, 60*time.Second, "import progress", func() bool {
			rr := e.do("GET", "/engine/api/v1/acme/courses/importJobs/"+id.Result, root, nil)
			e.expect(rr, 200, "job status")
			rr.json(t, &res)
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
		r = e.upload("acme", "course=bad", []byte("PK\x03\x04 not a zip"), "bad.zip")
		e.expect(r, 200, "bad import")
		r.json(t, &id)
		eventually(t, 60*time.Second, "failed import", func() bool {
			e.do("GET", "/engine/api/v1/acme/courses/importJobs/"+id.Result, root, nil).json(t, &res)
			return res.Status != "RUNNING"
		})
		if want := (importProgress{Stage: "RECEIVED", Percent: 10}); res.Status != "ERROR" || res.Progress != want {
			t.Fatalf("failed import: %s %+v, want ERROR %+v", res.Status, res.Progress, want)
		}
	})
}
