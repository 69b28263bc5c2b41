package contentjob_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/extract/extracttest"
	"github.com/lectern-lms/lectern/content/extract/sandbox"
	"github.com/lectern-lms/lectern/course/archive"
	"github.com/lectern-lms/lectern/storage/blob/local"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
	"github.com/lectern-lms/lectern/workers/contentjob"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/queue/inproc"
)

// procStatus reads a field of /proc/self/status in bytes (VmRSS, VmHWM).
func procStatus(b *testing.B, field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("needs /proc (Linux)")
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// BenchmarkHostileDocuments imports the hostile set (extracttest.Set) one document after
// the other through the import handler, as the worker role runs it with its production
// settings (a sandboxed child per document, LECTERN_EXTRACT_TIMEOUT and _MEMORY_MB at their
// defaults), and reports the peak resident memory over the worker's baseline: the worker's
// own growth (VmHWM, reset after set-up) plus the largest child's peak. Each document's line
// ("hostile: …") gives its outcome, time and child peak; scripts/bench-report.sh prints them
// as a table.
func BenchmarkHostileDocuments(b *testing.B) {
	docs := extracttest.Set()
	docs = append(docs, extracttest.Doc{Name: "normal.pdf", What: "a normal one-page PDF", Data: extracttest.TextPDF("Gloves protect hands")})
	rs := recordstores.All()[0].Open(b)
	blobs, err := local.New(filepath.Join(b.TempDir(), "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	defer blobs.Close()
	var usage sandbox.Usage
	runner := &sandbox.Runner{Command: []string{os.Args[0]}, Env: append(sandbox.RuntimeEnv(os.Environ()), childEnv+"=1"),
		OnDone: func(u sandbox.Usage) { usage = u }}
	js := jobs.NewStore(rs)
	h := &contentjob.Importer{Content: content.NewStore(rs), Jobs: js, Blobs: blobs,
		IndexQueue: inproc.New(rs, inproc.Config{Name: "index"}), Limits: archive.DefaultLimits(), Extractor: runner}
	ctx := context.Background()

	for i := 0; i < b.N; i++ {
		// The baseline is the worker after set-up, its peak reset (clear_refs 5) so the
		// fixtures generated above do not count.
		runtime.GC()
		debug.FreeOSMemory()
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Fatalf("reset peak RSS: %v", err)
		}
		base := procStatus(b, "VmRSS")
		var maxChild int64
		for _, d := range docs {
			id := jobs.NewID()
			if _, err := js.Create(ctx, id, contentjob.JobType, "bench", true); err != nil {
				b.Fatal(err)
			}
			p := contentjob.ImportPayload{Tenant: "bench", JobID: id, ContentID: jobs.NewID(), UploadKey: contentjob.UploadKey("bench", id), FileName: d.Name}
			if _, err := blobs.Put(ctx, p.UploadKey, bytes.NewReader(d.Data), int64(len(d.Data))); err != nil {
				b.Fatal(err)
			}
			task, _ := contentjob.NewImportTask(p)
			usage = sandbox.Usage{}
			start := time.Now()
			if err := h.ProcessTask(ctx, task); err != nil {
				b.Fatalf("%s: %v", d.Name, err)
			}
			took := time.Since(start)
			j, err := js.Get(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			outcome := j.Status
			if j.Error != nil {
				outcome += " " + j.Error.Code + ": " + j.Error.Message
			} else if len(j.Results) > 0 {
				outcome = "imported"
				if len(j.Warnings) > 0 {
					outcome += " (" + j.Warnings[len(j.Warnings)-1] + ")"
				}
			}
			maxChild = max(maxChild, usage.MaxRSS)
			fmt.Printf("hostile: %s\t%s\t%d\t%.2f\t%.1f\t%.1f\t%s\n", d.Name, d.What, len(d.Data), took.Seconds(), float64(usage.MaxRSS)/(1<<20),
				float64(procStatus(b, "VmHWM")-base)/(1<<20), outcome)
		}
		worker := procStatus(b, "VmHWM") - base
		b.ReportMetric(float64(worker)/(1<<20), "worker-MiB")
		b.ReportMetric(float64(maxChild)/(1<<20), "child-MiB")
		b.ReportMetric(float64(worker+maxChild)/(1<<20), "peak-over-baseline-MiB")
	}
}
