// Package importjob runs course imports on the job queue: fetch the package (an upload in the
// blob store or a URL), check and open the zip (or take a cmi5.xml that came on its own), parse
// and validate it, copy its files to the blob store and commit the course version. Every step
// is idempotent, so a redelivered task finishes the work; a failed import leaves no course,
// version or file behind.
package importjob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"testing/fstest"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/archive"
	"github.com/lectern-lms/lectern/course/cmi5"
	"github.com/lectern-lms/lectern/course/parse"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/course/xsd"
	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/storage/statements"
	"github.com/lectern-lms/lectern/workers/outbound"
	"github.com/lectern-lms/lectern/workers/queue"
)

// TypeCourseImport is the task type of a course import.
const TypeCourseImport = "course:import"

// Payload names the job; everything else is in the job record.
type Payload struct {
	Tenant string `json:"tenant"`
	JobID  string `json:"job_id"`
}

// NewTask builds the import task; the job id is the task id, so enqueueing twice is harmless.
func NewTask(p Payload) (*queue.Task, []queue.Option) {
	b, _ := json.Marshal(p)
	return queue.NewTask(TypeCourseImport, b), []queue.Option{queue.TaskID("course-import-" + p.JobID), queue.MaxRetry(5)}
}

// UploadKey is where the HTTP layer stores an uploaded zip until the job has used it.
func UploadKey(tenant, jobID string) string { return tenant + "/uploads/" + jobID + ".zip" }

// FilesPrefix is where a job's extracted files go: keyed by the job, so a redelivered job
// overwrites its own earlier attempt instead of leaving a second copy.
func FilesPrefix(tenant, jobID string) string { return tenant + "/courses/" + jobID + "/" }

// maxManifestBytes bounds a manifest fetched on its own (webPathToCourse imports).
const maxManifestBytes = 10 << 20

// Handler is the TypeCourseImport handler.
type Handler struct {
	Courses  *course.Store
	Blobs    blob.Store
	Outbound *outbound.Client
	Limits   archive.Limits
	// Settings gives the tenant's import settings (EnableExistingActivityIdParserWarnings,
	// ValidateManifestsUsingXsd); nil applies the catalogue defaults.
	Settings *settings.Store
	// Statements is the tenant's record store, asked whether an activity id of the package is
	// already recorded there; nil skips that check.
	Statements statements.Store
	// TempDir holds downloaded zips while they are read; "" means the system default.
	TempDir string
	Logger  *slog.Logger
	// Schemas validates structure files against their XSD; nil validates nothing.
	Schemas *xsd.Validator
}

// validateManifests reads the tenant's ValidateManifestsUsingXsd setting.
func (h *Handler) validateManifests(ctx context.Context, tenant string) (bool, error) {
	const id = "ValidateManifestsUsingXsd"
	if h.Settings == nil {
		s, ok := settings.Default().Lookup(id)
		return ok && s.Default == "true", nil
	}
	layer, err := h.Settings.TenantLayer(ctx, tenant)
	if err != nil {
		return false, err
	}
	v, err := h.Settings.Catalogue().Resolve(id, layer)
	if err != nil {
		return false, fail("setting %s: %v", id, err)
	}
	return v == "true", nil
}

// parseOptions are the options every parse of this tenant's import uses.
func (h *Handler) parseOptions(ctx context.Context, tenant string, src cmi5.Source) (parse.Options, error) {
	validate, err := h.validateManifests(ctx, tenant)
	if err != nil {
		return parse.Options{}, err
	}
	return parse.Options{Schemas: h.Schemas, ValidateManifests: validate, CMI5Source: src}, nil
}

// failure is an import problem caused by the package or the request: the job ends in ERROR.
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

func fail(format string, args ...any) error { return &failure{msg: fmt.Sprintf(format, args...)} }

// ProcessTask implements queue.Handler.
func (h *Handler) ProcessTask(ctx context.Context, t *queue.Task) error {
	var p Payload
	if err := json.Unmarshal(t.Payload, &p); err != nil || p.Tenant == "" || p.JobID == "" {
		return fmt.Errorf("bad %s payload %q: %w", TypeCourseImport, t.Payload, queue.SkipRetry)
	}
	job, err := h.Courses.ImportJob(ctx, p.Tenant, p.JobID)
	if errors.Is(err, course.ErrImportJobNotFound) {
		// The tenant or job is gone, or the task belongs to another deployment sharing this
		// Redis without a queue prefix of its own: log it rather than drop it silently.
		cmpLogger(h.Logger).Warn("task without its job: dropped", "task", TypeCourseImport, "job", p.JobID, "tenant", p.Tenant,
			"hint", "deleted tenant, or another deployment on the same Redis (set LECTERN_QUEUE_PREFIX)")
		return nil
	}
	if err != nil {
		return err
	}
	if job.Status != course.ImportRunning {
		return nil
	}
	v, err := h.run(ctx, p.Tenant, job)
	var f *failure
	switch {
	case err == nil:
		// Here rather than in commit, so a delivery that finds the version already committed
		// still records the mapping an earlier attempt may have left unwritten.
		if err := h.Courses.MapActivities(ctx, p.Tenant, v.CourseID, v.Package.ActivityIDs()); err != nil {
			return err
		}
		_ = h.Blobs.Delete(ctx, UploadKey(p.Tenant, job.ID))
		return h.Courses.UpdateImportJob(ctx, p.Tenant, job.ID, func(j *course.ImportJob) {
			j.Status, j.Message, j.CourseTitle = course.ImportComplete, "Import Successful", v.Title
			j.ParserWarnings = nonNil(v.Package.Warnings)
			j.Version = &v.Version
			n := 0
			if j.Progress != nil {
				n = j.Progress.FilesTotal
			}
			j.Progress = course.NewImportProgress(course.StageDone, n, n)
		})
	case errors.As(err, &f):
		h.cleanup(ctx, p.Tenant, job)
		return h.Courses.UpdateImportJob(ctx, p.Tenant, job.ID, func(j *course.ImportJob) {
			j.Status, j.Message = course.ImportError, f.msg
		})
	case queue.LastAttempt(ctx):
		// No retry follows: report the failure rather than leave the job RUNNING forever.
		h.cleanup(ctx, p.Tenant, job)
		_ = h.Courses.UpdateImportJob(ctx, p.Tenant, job.ID, func(j *course.ImportJob) {
			j.Status, j.Message = course.ImportError, "the import failed after retries: "+err.Error()
		})
		return err
	default:
		return err // infrastructure trouble: retry
	}
}

// cmpLogger is l, or the default logger when none was given.
func cmpLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// cleanup removes whatever a failed attempt left: extracted files, the upload, a course
// record with no version.
func (h *Handler) cleanup(ctx context.Context, tenant string, job *course.ImportJob) {
	if _, err := h.Blobs.DeletePrefix(ctx, FilesPrefix(tenant, job.ID)); err != nil {
		h.Logger.Warn("import cleanup: files", "job", job.ID, "error", err)
	}
	_ = h.Blobs.Delete(ctx, UploadKey(tenant, job.ID))
	if err := h.Courses.AbandonCourse(ctx, tenant, job.CourseID, job.ID); err != nil {
		h.Logger.Warn("import cleanup: course", "job", job.ID, "error", err)
	}
}

func (h *Handler) run(ctx context.Context, tenant string, job *course.ImportJob) (*course.Version, error) {
	if v, err := h.Courses.VersionByJob(ctx, tenant, job.ID); err != nil || v != nil {
		return v, err // an earlier delivery committed already
	}
	if job.WebPath != "" {
		return h.importManifest(ctx, tenant, job)
	}
	f, err := os.CreateTemp(h.TempDir, "lectern-import-*.zip")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := h.fetchZip(ctx, tenant, job, f); err != nil {
		return nil, err
	}
	h.progress(ctx, tenant, job, course.StageReceived, 0, 0)
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	a, err := archive.Open(f, size, h.Limits)
	if errors.Is(err, archive.ErrNotZip) {
		if bare, err := h.importBare(ctx, tenant, job, f, size); bare != nil || err != nil {
			return bare, err
		}
	}
	if err != nil {
		return nil, fail("%v", err)
	}
	opts, err := h.parseOptions(ctx, tenant, cmi5.InPackage)
	if err != nil {
		return nil, err
	}
	pkg, err := parse.PackageWith(a.FS(), opts)
	if err != nil {
		return nil, fail("%v", err)
	}
	pkg.Warnings = append(a.Warnings(), pkg.Warnings...)
	total := len(a.Files())
	h.progress(ctx, tenant, job, course.StageParsed, 0, total)
	prefix := FilesPrefix(tenant, job.ID)
	stored, reported := 0, time.Now()
	err = a.Extract(ctx, func(ctx context.Context, name string, r io.Reader, size int64) error {
		_, err := h.Blobs.Put(ctx, prefix+name, r, size)
		if errors.Is(err, blob.ErrInvalidKey) {
			return fail("file %q cannot be stored: %v", name, err)
		}
		if err == nil {
			// A write per file would cost more than storing small files: the count is
			// written at most every progressEvery, and when the last file is in.
			if stored++; stored == total || time.Since(reported) >= progressEvery {
				h.progress(ctx, tenant, job, course.StageStoringFiles, stored, total)
				reported = time.Now()
			}
		}
		return err
	})
	if err != nil {
		var f *failure
		if errors.As(err, &f) || errors.Is(err, archive.ErrTooLarge) || errors.Is(err, archive.ErrUnsafe) {
			return nil, fail("%v", err)
		}
		return nil, err
	}
	return h.commit(ctx, tenant, job, pkg, prefix, "")
}

// progressEvery is the least time between two progress writes while files are stored.
const progressEvery = 200 * time.Millisecond

// progress records how far the job got. It is advisory: a failed write leaves the import
// running, and the conclusion overwrites it.
func (h *Handler) progress(ctx context.Context, tenant string, job *course.ImportJob, stage string, stored, total int) {
	err := h.Courses.UpdateImportJob(ctx, tenant, job.ID, func(j *course.ImportJob) {
		if j.Status == course.ImportRunning {
			j.Progress = course.NewImportProgress(stage, stored, total)
		}
	})
	if err != nil {
		cmpLogger(h.Logger).Warn("import progress not recorded", "job", job.ID, "stage", stage, "error", err)
	}
}

// importBare imports a cmi5 course structure that came on its own instead of in a zip (cmi5
// section 14.2): its AUs must all have absolute urls, so there are no files to store. It
// returns nil, nil when f is not a course structure, leaving the "not a zip" verdict standing.
func (h *Handler) importBare(ctx context.Context, tenant string, job *course.ImportJob, f io.ReaderAt, size int64) (*course.Version, error) {
	head := make([]byte, min(size, 64<<10))
	if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if !cmi5.IsCourseStructure(head) {
		return nil, nil
	}
	if size > cmi5.MaxFileSize {
		return nil, fail("the course structure is larger than %d bytes", cmi5.MaxFileSize)
	}
	data := make([]byte, size)
	if _, err := f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	opts, err := h.parseOptions(ctx, tenant, cmi5.Bare)
	if err != nil {
		return nil, err
	}
	pkg, err := parse.PackageWith(fstest.MapFS{cmi5.FileName: &fstest.MapFile{Data: data, Mode: 0o444}}, opts)
	if err != nil {
		return nil, fail("%v", err)
	}
	return h.commit(ctx, tenant, job, pkg, "", "")
}

func (h *Handler) commit(ctx context.Context, tenant string, job *course.ImportJob, pkg *course.Package, prefix, webPath string) (*course.Version, error) {
	title := pkg.Title
	if title == "" {
		title = job.CourseName
	}
	warnings, err := h.existingActivityWarnings(ctx, tenant, job.CourseID, pkg)
	if err != nil {
		return nil, err
	}
	pkg.Warnings = append(pkg.Warnings, warnings...)
	v, err := h.Courses.AddVersion(ctx, tenant, &course.Version{CourseID: job.CourseID, Title: title, Standard: pkg.Standard,
		Package: pkg, FilesPrefix: prefix, WebPath: webPath, JobID: job.ID}, job.MayCreateNewVersion)
	if errors.Is(err, course.ErrCourseExists) {
		return nil, fail("%v", err)
	}
	return v, err
}

// existingActivityWarnings implements EnableExistingActivityIdParserWarnings: a parser warning
// for each activity id of the package that another course of the tenant already uses, or
// that the tenant's record store already holds statements about although no version of this
// course defined it (statements of this course's earlier versions are expected). Sharing an
// activity id merges two courses' xAPI data, which is rarely what an author meant.
func (h *Handler) existingActivityWarnings(ctx context.Context, tenant, courseID string, pkg *course.Package) ([]string, error) {
	on := "true"
	if h.Settings != nil {
		layer, err := h.Settings.TenantLayer(ctx, tenant)
		if err != nil {
			return nil, err
		}
		if on, err = h.Settings.Catalogue().Resolve("EnableExistingActivityIdParserWarnings", layer); err != nil {
			return nil, err
		}
	}
	if on != "true" {
		return nil, nil
	}
	// Two lookups per activity id (2,000 for a cmi5 course of 1,000 AUs) are spared when the
	// tenant has no course's ids and no statements at all, as a new tenant has.
	mapped, err := h.Courses.HasActivityMaps(ctx, tenant)
	if err != nil {
		return nil, err
	}
	recorded := h.Statements != nil
	if recorded {
		p, err := h.Statements.Query(ctx, statements.Query{Tenant: tenant, Limit: 1})
		if err != nil {
			return nil, err
		}
		recorded = len(p.Statements) > 0
	}
	if !mapped && !recorded {
		return nil, nil
	}
	var out []string
	for _, id := range pkg.ActivityIDs() {
		var users []string
		if mapped {
			if users, err = h.Courses.CoursesUsingActivity(ctx, tenant, id); err != nil {
				return nil, err
			}
		}
		others := slices.DeleteFunc(slices.Clone(users), func(c string) bool { return c == courseID })
		if len(others) > 0 {
			out = append(out, fmt.Sprintf("activity id %q is already used by course %s; their xAPI data will be mixed",
				id, quoteJoin(others)))
			continue
		}
		if len(users) > 0 || !recorded {
			continue // an earlier version of this course defined it, or nothing is recorded
		}
		p, err := h.Statements.Query(ctx, statements.Query{Tenant: tenant, Activity: id, RelatedActivities: true, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(p.Statements) > 0 {
			out = append(out, fmt.Sprintf("activity id %q is already recorded in the tenant's record store (statements about it exist)", id))
		}
	}
	return out, nil
}

func quoteJoin(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "'" + id + "'"
	}
	return strings.Join(q, ", ")
}

func (h *Handler) fetchZip(ctx context.Context, tenant string, job *course.ImportJob, w io.Writer) error {
	if job.UploadKey != "" {
		r, _, err := h.Blobs.Get(ctx, job.UploadKey)
		if errors.Is(err, blob.ErrNotFound) {
			return fail("the uploaded package is no longer available")
		}
		if err != nil {
			return err
		}
		defer r.Close()
		_, err = io.Copy(w, r)
		return err
	}
	if h.Outbound == nil {
		return fail("imports from a URL are not available")
	}
	_, _, err := h.Outbound.Download(ctx, job.URL, w)
	if err != nil {
		return downloadFailure(job.URL, err)
	}
	return nil
}

func downloadFailure(u string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fail("cannot download %s: %v", redact(u), err)
}

// redact drops credentials from a URL before it reaches a message or a log.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the given URL"
	}
	u.User = nil
	return u.String()
}

// importManifest imports only the course definition: the manifest is fetched on its own and
// the content stays at WebPath.
func (h *Handler) importManifest(ctx context.Context, tenant string, job *course.ImportJob) (*course.Version, error) {
	if h.Outbound == nil {
		return nil, fail("imports from a URL are not available")
	}
	u, err := url.Parse(job.URL)
	if err != nil {
		return nil, fail("url %q is not a valid URL", redact(job.URL))
	}
	var buf limitedBuffer
	buf.max = maxManifestBytes
	if _, _, err := h.Outbound.Download(ctx, job.URL, &buf); err != nil {
		return nil, downloadFailure(job.URL, err)
	}
	name := path.Base(u.Path)
	fsys := fstest.MapFS{name: &fstest.MapFile{Data: buf.Bytes(), Mode: 0o444}}
	opts, err := h.parseOptions(ctx, tenant, cmi5.Hosted)
	if err != nil {
		return nil, err
	}
	pkg, err := parse.PackageWith(fs.FS(fsys), opts)
	if err != nil {
		return nil, fail("%v", err)
	}
	// The files a manifest lists are not here to check; those warnings would all be noise.
	pkg.Warnings = nil
	return h.commit(ctx, tenant, job, pkg, "", job.WebPath)
}

type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		return 0, fail("the manifest is larger than %d bytes", b.max)
	}
	return b.Buffer.Write(p)
}
