package contentjob_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/content/extract/extracttest"
	"github.com/lectern-lms/lectern/content/extract/sandbox"
	"github.com/lectern-lms/lectern/course/archive"
	"github.com/lectern-lms/lectern/storage/blob/local"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
	"github.com/lectern-lms/lectern/workers/contentjob"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/queue/inproc"
)

// childEnv makes the test binary serve one extraction, as `lectern extract` does for the
// worker.
const childEnv = "LECTERN_CONTENTJOB_TEST_EXTRACT_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := sandbox.Serve(context.Background(), os.Stdin, os.Stdout, os.NewFile(3, "content")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// worker is one worker process's import path: the import handler on a started queue, as the
// worker role runs it, reading content in a sandboxed child.
type worker struct {
	records  record.Store
	jobs     *jobs.Store
	blobs    *local.Store
	queue    *inproc.Queue
	importer *contentjob.Importer
}

func startWorker(t *testing.T, backend recordstores.Backend, runner *sandbox.Runner, concurrency int, configure ...func(*contentjob.Importer)) *worker {
	t.Helper()
	rs := backend.Open(t)
	blobs, err := local.New(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blobs.Close() })
	w := &worker{records: rs, jobs: jobs.NewStore(rs), blobs: blobs, queue: inproc.New(rs, inproc.Config{Concurrency: concurrency, PollInterval: 50 * time.Millisecond})}
	importer := &contentjob.Importer{Content: content.NewStore(rs), Jobs: w.jobs, Blobs: blobs,
		IndexQueue: inproc.New(rs, inproc.Config{Name: "index"}), Limits: archive.DefaultLimits(),
		Extractor: runner, JobCheckInterval: 100 * time.Millisecond}
	for _, c := range configure {
		c(importer)
	}
	w.importer = importer
	w.queue.Handle(contentjob.TypeImport, importer)
	if err := w.queue.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = w.queue.Shutdown(ctx)
		_ = w.queue.Close()
	})
	return w
}

// submit uploads a document and enqueues its import, as POST /api/v1/content does.
func (w *worker) submit(t *testing.T, tenant string, doc extracttest.Doc) string {
	t.Helper()
	ctx := context.Background()
	id := jobs.NewID()
	if _, err := w.jobs.Create(ctx, id, contentjob.JobType, tenant, true); err != nil {
		t.Fatal(err)
	}
	p := contentjob.ImportPayload{Tenant: tenant, JobID: id, ContentID: jobs.NewID(), UploadKey: contentjob.UploadKey(tenant, id), FileName: doc.Name}
	if _, err := w.blobs.Put(ctx, p.UploadKey, bytes.NewReader(doc.Data), int64(len(doc.Data))); err != nil {
		t.Fatal(err)
	}
	task, opts := contentjob.NewImportTask(p)
	if _, err := w.queue.Enqueue(ctx, task, opts...); err != nil {
		t.Fatal(err)
	}
	return id
}

// settled is a job the import handler is done with: FAILED, or imported (results recorded,
// waiting for the indexer, which this worker does not run).
func (w *worker) settled(t *testing.T, id string) *jobs.Job {
	j, err := w.jobs.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("job %s: %v", id, err)
	}
	if j.Status == jobs.StatusFailed || len(j.Results) > 0 {
		return j
	}
	return nil
}

// A hostile document fails its own job with a message that says what is wrong, while a
// normal document imported next to it, on the same worker at the same time, succeeds: one
// stuck or huge document never blocks or takes down the others.
func TestHostileDocumentFailsItsOwnJob(t *testing.T) {
	hostile := map[string]struct {
		doc  extracttest.Doc
		code string
		want string
	}{
		"self-reference": {extracttest.SelfReferencingPageTree(), contentjob.CodeInvalid, "page tree refers to itself"},
		"self-parent":    {extracttest.SelfParentPage(), contentjob.CodeInvalid, "parents refer to themselves"},
		"nested flate":   {extracttest.NestedFlatePDF(3, 1<<30), contentjob.CodeLimit, "decompresses to more than 16 MiB"},
		"operands":       {extracttest.ManyOperandsPDF(15 << 20), contentjob.CodeLimit, "needed more than 128 MiB of memory"},
		// The slow document also grows: under load its child can meet the memory limit before
		// the deadline (content/extract/sandbox's tests hold the deadline itself), so either
		// limit, named, is the right answer.
		"slow":     {extracttest.SlowPDF(3000), contentjob.CodeLimit, "took longer than 5s|needed more than 128 MiB of memory"},
		"zip bomb": {extracttest.ZipBombPackage(1 << 30), contentjob.CodeInvalid, "zip bomb"},
	}
	for _, backend := range recordstores.All() {
		t.Run(backend.Name, func(t *testing.T) {
			// The per-item decompression budget is raised so that the slow document meets the
			// deadline first on any machine.
			runner := &sandbox.Runner{Command: []string{os.Args[0]}, Env: append(sandbox.RuntimeEnv(os.Environ()), childEnv+"=1"),
				Timeout: 5 * time.Second, MemoryBytes: 128 << 20, Options: extract.Options{Limits: extract.Limits{MaxDecodedBytes: 4 << 30}}}
			w := startWorker(t, backend, runner, 2)
			ids := map[string]string{}
			for name, h := range hostile {
				ids[name] = w.submit(t, "acme", h.doc)
			}
			normal := w.submit(t, "acme", extracttest.Doc{Name: "gloves.pdf", Data: extracttest.TextPDF("Gloves protect hands")})

			deadline := time.Now().Add(90 * time.Second)
			for name, h := range hostile {
				var j *jobs.Job
				for j = w.settled(t, ids[name]); j == nil; j = w.settled(t, ids[name]) {
					if time.Now().After(deadline) {
						t.Fatalf("%s: job not settled in 90s", name)
					}
					time.Sleep(50 * time.Millisecond)
				}
				if j.Status != jobs.StatusFailed || j.Error == nil || j.Error.Code != h.code || !containsOne(j.Error.Message, h.want) ||
					!strings.Contains(j.Error.Message, h.doc.Name) {
					t.Errorf("%s (%s): job %s %+v, want FAILED %s naming %s and %q", name, h.doc.What, j.Status, j.Error, h.code, h.doc.Name, h.want)
				}
			}
			// The normal document may still be in line behind the hostile ones on a busy
			// machine (two workers): it must settle, as imported, within the same deadline.
			j := w.settled(t, normal)
			for ; j == nil && time.Now().Before(deadline); j = w.settled(t, normal) {
				time.Sleep(50 * time.Millisecond)
			}
			if j == nil || j.Status == jobs.StatusFailed || j.Results["content_id"] == nil {
				t.Fatalf("normal document: %+v", j)
			}
		})
	}
}

// Deleting the tenant (which removes its jobs) while one of its documents is being read
// stops the reading: the child is killed and the worker is free again long before the
// deadline.
func TestDeletedJobStopsExtraction(t *testing.T) {
	backend := recordstores.All()[0]
	runner := &sandbox.Runner{Command: []string{os.Args[0]}, Env: append(sandbox.RuntimeEnv(os.Environ()), childEnv+"=1"), Timeout: 10 * time.Minute,
		Options: extract.Options{Limits: extract.Limits{MaxDecodedBytes: 4 << 30}}}
	w := startWorker(t, backend, runner, 1)
	slow := w.submit(t, "acme", extracttest.SlowPDF(3000))
	for {
		j, err := w.jobs.Get(context.Background(), slow)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == jobs.StatusRunning {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // the child is reading by now
	deleted := time.Now()
	// Tenant deletion removes the tenant's records, its jobs among them.
	if err := w.records.Delete(context.Background(), "", "job", slow); err != nil {
		t.Fatal(err)
	}
	// With one handler, the next import runs only once the slow one has stopped.
	next := w.submit(t, "acme", extracttest.Doc{Name: "gloves.pdf", Data: extracttest.TextPDF("Gloves protect hands")})
	deadline := time.Now().Add(60 * time.Second)
	for w.settled(t, next) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the next import did not run: the deleted job's extraction still holds the worker")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d := time.Since(deleted); d > 20*time.Second {
		t.Errorf("the worker was held %s after the job was deleted", d)
	}
}

// Short plain text is read in the worker, everything else in the child: with a child that
// cannot start, a short .txt is imported, while a .txt over InProcessText and a short
// Markdown file fail in the child.
func TestShortTextSkipsTheChild(t *testing.T) {
	backend := recordstores.All()[0]
	broken := &sandbox.Runner{Command: []string{filepath.Join(t.TempDir(), "no-such-extractor")}}
	w := startWorker(t, backend, broken, 2, func(i *contentjob.Importer) { i.InProcessText = 64 })
	short := w.submit(t, "acme", extracttest.Doc{Name: "short.txt", Data: []byte("Gloves protect hands.\n")})
	long := w.submit(t, "acme", extracttest.Doc{Name: "long.txt", Data: []byte(strings.Repeat("Gloves protect hands. ", 10))})
	md := w.submit(t, "acme", extracttest.Doc{Name: "short.md", Data: []byte("# Gloves\n\nThey protect hands.\n")})
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range []string{short, long, md} {
		for w.settled(t, id) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("job %s not settled in 60s", id)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if j := w.settled(t, short); j.Status == jobs.StatusFailed || j.Results["content_id"] == nil {
		t.Errorf("short text: %s %+v, want imported in the worker", j.Status, j.Error)
	}
	for name, id := range map[string]string{"long text": long, "short markdown": md} {
		if j := w.settled(t, id); j.Status != jobs.StatusFailed {
			t.Errorf("%s: %s %+v, want FAILED by the child that cannot start", name, j.Status, j.Results)
		}
	}
}

// containsOne reports whether s contains one of the '|'-separated alternatives of want.
func containsOne(s, want string) bool {
	for _, w := range strings.Split(want, "|") {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
