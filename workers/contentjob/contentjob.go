// Package contentjob runs content imports on the job queue (spec 001, CONTENT_IMPORT jobs):
//
//  1. the import task (TypeImport, worker role) fetches the content (an upload in the blob
//     store or a URL through the outbound client), detects its kind, extracts sections and
//     content_details (content/extract, in a child process with a memory limit and a
//     deadline when Importer.Extractor is a sandbox.Runner, as the app sets it), stores the
//     sections as a blob and commits the content version (content.Store), then enqueues an
//     index task;
//  2. the index task (TypeIndex, indexer role, on its own queue) chunks the sections, embeds
//     the chunks (when an embedder is configured; through the vector cache), generates the
//     metadata fields (TITLE, SUMMARY) and writes everything to the search index; then the
//     job is COMPLETED.
//
// Every step is idempotent, so a redelivered task finishes the work. A failed import ends the
// job FAILED with an error record and leaves no version, upload or sections blob behind.
package contentjob

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/course/archive"
	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/outbound"
	"github.com/lectern-lms/lectern/workers/queue"
)

// Task types.
const (
	TypeImport = "content:import"
	TypeIndex  = "content:index"
)

// JobType is the JobRead type of a content import.
const JobType = "CONTENT_IMPORT"

// Error codes of a failed import's JobRead error record.
const (
	CodeFetch       = "FETCH_FAILED"
	CodeUnsupported = "UNSUPPORTED_CONTENT"
	CodeInvalid     = "INVALID_CONTENT"
	// CodeLimit: reading the content needs more time, memory or decompressed bytes than one
	// item may take (extract.ErrLimit): a decompression bomb, a document that never ends.
	CodeLimit    = "CONTENT_LIMIT_EXCEEDED"
	CodeIndex    = "INDEX_FAILED"
	CodeInternal = "INTERNAL_ERROR"
)

// ImportPayload is everything an import needs; the queue stores it durably.
type ImportPayload struct {
	Tenant    string `json:"tenant"`
	JobID     string `json:"job_id"`
	ContentID string `json:"content_id"`
	// UploadKey is the uploaded file's blob; empty for an import from URL.
	UploadKey string   `json:"upload_key,omitempty"`
	FileName  string   `json:"file_name,omitempty"`
	URL       string   `json:"url,omitempty"`
	Tags      []string `json:"tags,omitempty"`
}

// IndexPayload names the version to index and the job to complete.
type IndexPayload struct {
	Tenant    string `json:"tenant"`
	JobID     string `json:"job_id"`
	ContentID string `json:"content_id"`
	Version   int    `json:"version"`
	// Fields are the field types a FIELD_GENERATION job regenerates; empty means all.
	Fields []string `json:"fields,omitempty"`
	// Rebuild marks a task of an index rebuild (Reindexer): stored generated fields are
	// indexed as they are instead of being generated again.
	Rebuild bool `json:"rebuild,omitempty"`
}

// NewImportTask builds the import task; the job id makes enqueueing twice harmless.
func NewImportTask(p ImportPayload) (*queue.Task, []queue.Option) {
	b, _ := json.Marshal(p)
	return queue.NewTask(TypeImport, b), []queue.Option{queue.TaskID("content-import-" + p.JobID), queue.MaxRetry(5)}
}

// NewIndexTask builds the index task of one committed version.
func NewIndexTask(p IndexPayload) (*queue.Task, []queue.Option) {
	b, _ := json.Marshal(p)
	return queue.NewTask(TypeIndex, b), []queue.Option{queue.TaskID(fmt.Sprintf("content-index-%s", p.JobID)), queue.MaxRetry(5)}
}

// UploadKey is where the HTTP layer stores an uploaded file until the job has used it.
func UploadKey(tenant, jobID string) string { return tenant + "/content-uploads/" + jobID }

// SectionsKey is where a job's extracted sections go (keyed by the job, so a retried
// attempt overwrites its own).
func SectionsKey(tenant, jobID string) string { return tenant + "/content/" + jobID + "/sections.json" }

// Importer is the TypeImport handler.
type Importer struct {
	Content  *content.Store
	Jobs     *jobs.Store
	Blobs    blob.Store
	Outbound *outbound.Client
	// IndexQueue receives the index task (the indexer role consumes it).
	IndexQueue queue.Queue
	Limits     archive.Limits
	// Extractor reads the fetched file. The app sets a *sandbox.Runner, which reads it in a
	// child process with a memory limit and a deadline; nil reads it in this process,
	// bounded only by extract's own limits (a parser stuck in a loop holds the worker).
	Extractor Extractor
	// InProcessText is the size up to which plain text (extract.KindText) is read in this
	// process even when Extractor is set; zero sends every kind to the Extractor. Reading
	// plain text is one linear pass with no decompression and no nesting, its memory a small
	// multiple of the file, while a child process costs a process start (~20 ms of CPU for
	// the lectern binary), which for a short document was the largest part of its import.
	InProcessText int64
	// JobCheckInterval is how often a running extraction checks that its job still exists,
	// so deleting the tenant stops it; zero means every 2 seconds.
	JobCheckInterval time.Duration
	// TempDir holds fetched files while they are read; "" means the system default.
	TempDir string
	Logger  *slog.Logger
}

// Extractor reads one fetched file of a known kind (a package is the zip itself).
// *sandbox.Runner implements it.
type Extractor interface {
	Extract(ctx context.Context, kind extract.Kind, f *os.File, size int64, name string) (*extract.Result, error)
}

// errJobGone cancels an import whose job was deleted (with its tenant) while it ran.
var errJobGone = errors.New("the job was deleted")

// failure is a problem caused by the content or the request: the job ends FAILED.
type failure struct{ code, msg string }

func (f *failure) Error() string { return f.msg }

func fail(code, format string, args ...any) error {
	return &failure{code: code, msg: fmt.Sprintf(format, args...)}
}

// ProcessTask implements queue.Handler.
func (h *Importer) ProcessTask(ctx context.Context, t *queue.Task) error {
	var p ImportPayload
	if err := json.Unmarshal(t.Payload, &p); err != nil || p.Tenant == "" || p.JobID == "" || p.ContentID == "" {
		return fmt.Errorf("bad %s payload %q: %w", TypeImport, t.Payload, queue.SkipRetry)
	}
	job, err := h.Jobs.Get(ctx, p.JobID)
	if errors.Is(err, jobs.ErrNotFound) {
		// The tenant (and its jobs) is gone, or the task belongs to another deployment whose
		// queues share this Redis without a prefix of their own: say so rather than drop it
		// silently.
		h.logger().Warn("task without its job: dropped", "task", TypeImport, "job", p.JobID, "tenant", p.Tenant,
			"hint", "deleted tenant, or another deployment on the same Redis (set LECTERN_QUEUE_PREFIX)")
		return nil
	}
	if err != nil {
		return err
	}
	if job.Status == jobs.StatusCompleted || job.Status == jobs.StatusFailed {
		return nil
	}
	_ = h.Jobs.Update(ctx, p.JobID, func(j *jobs.Job) { j.Status = jobs.StatusRunning })
	rctx, cancel := context.WithCancelCause(ctx)
	stop := h.watchJob(rctx, p.JobID, cancel)
	v, warnings, err := h.run(rctx, p)
	stop()
	cancel(nil)
	var f *failure
	switch {
	case errors.Is(context.Cause(rctx), errJobGone):
		h.logger().Info("content import stopped: its job was deleted", "tenant", p.Tenant, "job_id", p.JobID)
		h.cleanup(ctx, p)
		return nil
	case err == nil:
		_ = h.Blobs.Delete(ctx, p.UploadKey)
		if err := h.Jobs.Update(ctx, p.JobID, func(j *jobs.Job) {
			j.Results = map[string]any{"content_id": v.ContentID, "version": v.Version}
			if warnings != nil {
				j.Warnings = warnings
			}
		}); err != nil {
			return err
		}
		task, opts := NewIndexTask(IndexPayload{Tenant: p.Tenant, JobID: p.JobID, ContentID: v.ContentID, Version: v.Version})
		if _, err := h.IndexQueue.Enqueue(ctx, task, opts...); err != nil && !errors.Is(err, queue.ErrDuplicateTask) {
			return err
		}
		return nil
	case errors.As(err, &f):
		h.cleanup(ctx, p)
		return h.Jobs.Update(ctx, p.JobID, func(j *jobs.Job) {
			j.Status, j.Error = jobs.StatusFailed, &jobs.JobError{Code: f.code, Message: f.msg}
		})
	case queue.LastAttempt(ctx):
		h.cleanup(ctx, p)
		_ = h.Jobs.Update(ctx, p.JobID, func(j *jobs.Job) {
			j.Status, j.Error = jobs.StatusFailed, &jobs.JobError{Code: CodeInternal, Message: "the import failed after retries: " + err.Error()}
		})
		return err
	default:
		return err // infrastructure trouble: retry
	}
}

// watchJob cancels ctx with errJobGone when the job's record disappears (its tenant was
// deleted) while the import runs; the returned func stops watching.
func (h *Importer) watchJob(ctx context.Context, jobID string, cancel context.CancelCauseFunc) (stop func()) {
	every := h.JobCheckInterval
	if every <= 0 {
		every = 2 * time.Second
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := h.Jobs.Get(ctx, jobID); errors.Is(err, jobs.ErrNotFound) {
					cancel(errJobGone)
					return
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (h *Importer) cleanup(ctx context.Context, p ImportPayload) {
	if p.UploadKey != "" {
		_ = h.Blobs.Delete(ctx, p.UploadKey)
	}
	_ = h.Blobs.Delete(ctx, SectionsKey(p.Tenant, p.JobID))
}

func (h *Importer) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.Default()
	}
	return h.Logger
}

func (h *Importer) run(ctx context.Context, p ImportPayload) (*content.Version, []string, error) {
	if v, err := h.Content.ByJob(ctx, p.Tenant, p.JobID); err != nil || v != nil {
		return v, nil, err // an earlier delivery committed already
	}
	f, err := os.CreateTemp(h.TempDir, "lectern-content-*")
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	name, err := h.fetch(ctx, p, f)
	if err != nil {
		return nil, nil, err
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, nil, err
	}
	if size == 0 {
		return nil, nil, fail(CodeInvalid, "the content %q is empty", name)
	}
	head := make([]byte, min(size, 4096))
	if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	kind := extract.Detect(name, head)
	if kind == extract.KindUnknown {
		return nil, nil, fail(CodeUnsupported, "the content %q is of no supported kind (course packages, PDF, HTML, Markdown, WebVTT, SRT, plain text)", name)
	}
	var res *extract.Result
	if h.Extractor != nil && (kind != extract.KindText || size > h.InProcessText) {
		res, err = h.Extractor.Extract(ctx, kind, f, size, name)
	} else {
		res, err = h.extractHere(ctx, kind, f, size, name)
	}
	if err != nil {
		return nil, nil, extractFailure(name, err)
	}
	title := strings.TrimSpace(res.Title)
	if title == "" {
		title = strings.TrimSuffix(name, path.Ext(name))
	}
	key := SectionsKey(p.Tenant, p.JobID)
	if err := h.putSections(ctx, key, res.Sections); err != nil {
		return nil, nil, err
	}
	tags := p.Tags
	if tags == nil {
		tags = []string{}
	}
	v, err := h.Content.AddVersion(ctx, p.Tenant, &content.Version{ContentID: p.ContentID, Title: title, Tags: tags,
		Active: true, Details: res.Details, Kind: string(kind), SourceName: name, SectionsKey: key, JobID: p.JobID})
	if errors.Is(err, content.ErrInvalidID) {
		return nil, nil, fail(CodeInvalid, "%v", err)
	}
	if err != nil {
		return nil, nil, err
	}
	warnings := res.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	h.logger().Info("content imported", "tenant", p.Tenant, "content_id", v.ContentID, "version", v.Version, "kind", kind, "sections", len(res.Sections))
	return v, warnings, nil
}

// extractHere reads the file in this process (Importer.Extractor nil, or short plain text).
func (h *Importer) extractHere(ctx context.Context, kind extract.Kind, f *os.File, size int64, name string) (*extract.Result, error) {
	if kind != extract.KindPackage {
		return extract.Extract(ctx, kind, extract.Source{ReaderAt: f, Size: size, Name: name}, extract.Options{})
	}
	a, err := archive.Open(f, size, h.Limits)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", extract.ErrInvalid, err)
	}
	res, err := extract.Extract(ctx, kind, extract.Source{FS: a.FS(), Name: name}, extract.Options{})
	if err != nil {
		return nil, err
	}
	res.Warnings = append(a.Warnings(), res.Warnings...)
	return res, nil
}

// putSections stores the sections as one JSON array, written section by section through a
// temporary file: as one json.Marshal, 8 MiB of text would cost the worker its size several
// times over in buffers.
func (h *Importer) putSections(ctx context.Context, key string, sections []extract.Section) error {
	f, err := os.CreateTemp(h.TempDir, "lectern-sections-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	w := bufio.NewWriter(f)
	w.WriteByte('[')
	for i, sec := range sections {
		if i > 0 {
			w.WriteByte(',')
		}
		b, err := json.Marshal(sec)
		if err != nil {
			return err
		}
		w.Write(b)
	}
	w.WriteByte(']')
	if err := w.Flush(); err != nil {
		return err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err = h.Blobs.Put(ctx, key, f, size)
	return err
}

func extractFailure(name string, err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, extract.ErrUnsupported):
		return fail(CodeUnsupported, "%s: %v", name, err)
	case errors.Is(err, extract.ErrLimit):
		return fail(CodeLimit, "%s: %v", name, err)
	default:
		return fail(CodeInvalid, "%s: %v", name, err)
	}
}

// fetch copies the content into w and returns its name (file name or URL path segment).
func (h *Importer) fetch(ctx context.Context, p ImportPayload, w io.Writer) (string, error) {
	if p.UploadKey != "" {
		r, _, err := h.Blobs.Get(ctx, p.UploadKey)
		if errors.Is(err, blob.ErrNotFound) {
			return "", fail(CodeFetch, "the uploaded file is no longer available")
		}
		if err != nil {
			return "", err
		}
		defer r.Close()
		_, err = io.Copy(w, r)
		name := p.FileName
		if name == "" {
			name = "upload"
		}
		return name, err
	}
	if h.Outbound == nil {
		return "", fail(CodeFetch, "imports from a URL are not available")
	}
	u, err := url.Parse(p.URL)
	if err != nil {
		return "", fail(CodeFetch, "the url is not valid")
	}
	u.User = nil
	if _, _, err := h.Outbound.Download(ctx, p.URL, w); err != nil {
		if errors.Is(err, context.Canceled) {
			return "", err
		}
		return "", fail(CodeFetch, "cannot download %s: %v", u.String(), err)
	}
	name := path.Base(u.Path)
	if name == "." || name == "/" || name == "" {
		name = u.Host
	}
	return name, nil
}
