package course

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/storage/record"
)

// Record kinds of the course engine inside a tenant.
const (
	KindCourse    = "course"
	KindVersion   = "course_version"
	KindImportJob = "import_job"
)

// Sentinel errors of the course store.
var (
	// ErrCourseNotFound means the course (or the asked version) does not exist.
	ErrCourseNotFound = errors.New("not found")
	// ErrImportJobNotFound means no import job has the id.
	ErrImportJobNotFound = errors.New("not found")
	// ErrCourseExists means an import would create a new version while that is not allowed.
	ErrCourseExists = errors.New("course already exists")
	// ErrInvalidCourseID means the course id cannot be used.
	ErrInvalidCourseID = errors.New("invalid course id")
)

// MaxCourseIDLength bounds course ids (Rustici Engine allows 255 characters).
const MaxCourseIDLength = 255

// ValidateCourseID checks an application-chosen course id: 1-255 characters of printable
// UTF-8 without surrounding white space. Ids are compared case-sensitively.
func ValidateCourseID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: the course id is empty", ErrInvalidCourseID)
	case !utf8.ValidString(id) || len(id) > MaxCourseIDLength:
		return fmt.Errorf("%w: the course id must be at most %d characters of UTF-8", ErrInvalidCourseID, MaxCourseIDLength)
	case strings.TrimSpace(id) != id:
		return fmt.Errorf("%w: course id %q has leading or trailing white space", ErrInvalidCourseID, id)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: course id %q contains a control character", ErrInvalidCourseID, id)
		}
	}
	return nil
}

// Version is one imported version of a course.
type Version struct {
	CourseID string   `json:"courseId"`
	Version  int      `json:"version"`
	Title    string   `json:"title"`
	Standard Standard `json:"standard"`
	Package  *Package `json:"package"`
	// FilesPrefix is the blob key prefix of the extracted files ("" for a manifest-only import).
	FilesPrefix string `json:"filesPrefix,omitempty"`
	// WebPath is where the content lives for a manifest-only import (webPathToCourse).
	WebPath string    `json:"webPath,omitempty"`
	JobID   string    `json:"jobId"`
	Created time.Time `json:"-"`
	Updated time.Time `json:"-"`
}

type courseData struct {
	// CreatedByJob lets a redelivered import recognise the course it created itself.
	CreatedByJob string `json:"createdByJob"`
}

// versionID encodes (version, course id) injectively; the version comes first so ids of one
// course sort by version.
func versionID(courseID string, v int) string { return fmt.Sprintf("%010d:%s", v, courseID) }

// Store keeps courses, their versions and import jobs in the record store.
type Store struct {
	records record.Store
	cache   *versionCache
	// importConcluding is the OnImportConcluding hook.
	importConcluding func(ctx context.Context, tenant string, j *ImportJob) error
}

// OnImportConcluding makes f run for every UpdateImportJob that moves a job from RUNNING to
// COMPLETE or ERROR, before that is written: engine imports conclude here, not in the jobs
// store, and the content service's JOB_PROCESSED webhooks report them too. As with
// jobs.Store.OnConcluding, an error from f fails the update and f must be idempotent. Set it
// before the store is used.
func (s *Store) OnImportConcluding(f func(ctx context.Context, tenant string, j *ImportJob) error) {
	s.importConcluding = f
}

// NewStore returns a course store over records.
func NewStore(records record.Store) *Store {
	return &Store{records: records, cache: newVersionCache(versionCacheBytes)}
}

func decodeVersion(r *record.Record) (*Version, error) {
	var v Version
	if err := json.Unmarshal(r.Data, &v); err != nil {
		return nil, fmt.Errorf("decode course version %s: %w", r.ID, err)
	}
	v.Created, v.Updated = r.Created, r.Updated
	return &v, nil
}

// Versions returns every version of a course, oldest first; ErrCourseNotFound when none.
func (s *Store) Versions(ctx context.Context, tenant, courseID string) ([]*Version, error) {
	rs, err := record.All(ctx, s.records, record.Query{Tenant: tenant, Kind: KindVersion, Parent: &record.Ref{Kind: KindCourse, ID: courseID}})
	if err != nil {
		return nil, err
	}
	out := make([]*Version, 0, len(rs))
	for _, r := range rs {
		v, err := decodeVersion(r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("course '%s' %w", courseID, ErrCourseNotFound)
	}
	sortVersions(out)
	return out, nil
}

func sortVersions(vs []*Version) {
	slices.SortFunc(vs, func(a, b *Version) int { return a.Version - b.Version })
}

// Version returns one version; v < 0 means the latest.
func (s *Store) Version(ctx context.Context, tenant, courseID string, v int) (*Version, error) {
	if v >= 0 {
		got, _, err := s.readVersion(ctx, tenant, courseID, v)
		return got, err
	}
	vs, err := s.Versions(ctx, tenant, courseID)
	if err != nil {
		return nil, err
	}
	return vs[len(vs)-1], nil
}

// readVersion reads and decodes version v (>= 0) and returns the size of its stored form.
func (s *Store) readVersion(ctx context.Context, tenant, courseID string, v int) (*Version, int, error) {
	r, err := s.records.Get(ctx, tenant, KindVersion, versionID(courseID, v))
	if errors.Is(err, record.ErrNotFound) {
		return nil, 0, fmt.Errorf("course '%s' version %d %w", courseID, v, ErrCourseNotFound)
	}
	if err != nil {
		return nil, 0, err
	}
	got, err := decodeVersion(r)
	return got, len(r.Data), err
}

// VersionByJob finds the version an import job created, if it got that far.
func (s *Store) VersionByJob(ctx context.Context, tenant, jobID string) (*Version, error) {
	p, err := s.records.List(ctx, record.Query{Tenant: tenant, Kind: KindVersion, Key: jobID, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(p.Records) == 0 {
		return nil, nil
	}
	return decodeVersion(p.Records[0])
}

// AddVersion commits an imported package as the next version of courseID: version 0 when the
// course is new, else latest+1 when mayCreateNewVersion, else ErrCourseExists. The version
// record is the commit point of an import; a redelivered job that already committed gets its
// version back instead of a second one.
func (s *Store) AddVersion(ctx context.Context, tenant string, v *Version, mayCreateNewVersion bool) (*Version, error) {
	if done, err := s.VersionByJob(ctx, tenant, v.JobID); err != nil || done != nil {
		return done, err
	}
	cd, _ := json.Marshal(courseData{CreatedByJob: v.JobID})
	err := s.records.Create(ctx, &record.Record{Tenant: tenant, Kind: KindCourse, ID: v.CourseID, Data: cd})
	createdNow := err == nil
	if err != nil && !errors.Is(err, record.ErrConflict) {
		return nil, err
	}
	if !createdNow {
		c, err := s.records.Get(ctx, tenant, KindCourse, v.CourseID)
		if err != nil {
			return nil, err
		}
		var d courseData
		_ = json.Unmarshal(c.Data, &d)
		ownCourse := d.CreatedByJob == v.JobID
		if !ownCourse && !mayCreateNewVersion {
			return nil, fmt.Errorf("course '%s' %w and mayCreateNewVersion is false", v.CourseID, ErrCourseExists)
		}
	}
	next := 0
	if vs, err := s.Versions(ctx, tenant, v.CourseID); err == nil {
		next = vs[len(vs)-1].Version + 1
	} else if !errors.Is(err, ErrCourseNotFound) {
		return nil, err
	}
	r, _, err := record.CreateNext(ctx, s.records, next, func(n int) (*record.Record, error) {
		v.Version = n // a concurrent import may have taken the previous number
		data, err := json.Marshal(v)
		return &record.Record{Tenant: tenant, Kind: KindVersion, ID: versionID(v.CourseID, n), Key: v.JobID,
			Parent: &record.Ref{Kind: KindCourse, ID: v.CourseID}, Data: data}, err
	})
	if err != nil {
		return nil, fmt.Errorf("course '%s': %w", v.CourseID, err)
	}
	v.Created, v.Updated = r.Created, r.Updated
	return v, nil
}

// AbandonCourse removes a course record an import created when it failed before committing a
// version, so a failed import leaves nothing behind.
func (s *Store) AbandonCourse(ctx context.Context, tenant, courseID, jobID string) error {
	c, err := s.records.Get(ctx, tenant, KindCourse, courseID)
	if errors.Is(err, record.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var d courseData
	_ = json.Unmarshal(c.Data, &d)
	if d.CreatedByJob != jobID {
		return nil
	}
	if _, err := s.Versions(ctx, tenant, courseID); !errors.Is(err, ErrCourseNotFound) {
		return err // it has versions (or the lookup failed): keep it
	}
	err = s.records.Delete(ctx, tenant, KindCourse, courseID)
	if errors.Is(err, record.ErrNotFound) {
		return nil
	}
	return err
}

// VersionPage is one page of the course list.
type VersionPage struct {
	Versions []*Version
	Next     string
}

// ListVersions lists every course version of the tenant updated at or after since, in update order.
func (s *Store) ListVersions(ctx context.Context, tenant string, since time.Time, cursor string, limit int) (*VersionPage, error) {
	p, err := s.records.List(ctx, record.Query{Tenant: tenant, Kind: KindVersion, Since: since, Cursor: cursor, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := &VersionPage{Next: p.Next}
	for _, r := range p.Records {
		v, err := decodeVersion(r)
		if err != nil {
			return nil, err
		}
		out.Versions = append(out.Versions, v)
	}
	return out, nil
}

// DeleteCourse removes a course with its versions and everything under them in one
// transaction, and returns the deleted versions so their files can be removed.
func (s *Store) DeleteCourse(ctx context.Context, tenant, courseID string) ([]*Version, error) {
	vs, err := s.Versions(ctx, tenant, courseID)
	if err != nil && !errors.Is(err, ErrCourseNotFound) {
		return nil, err
	}
	err = s.records.Delete(ctx, tenant, KindCourse, courseID)
	// After the delete: a read that started before it is not cached (see versionCache.epoch).
	s.cache.forgetCourse(tenant, courseID)
	if errors.Is(err, record.ErrNotFound) {
		return nil, fmt.Errorf("course '%s' %w", courseID, ErrCourseNotFound)
	}
	return vs, err
}

// Import job statuses, as the engine API reports them.
const (
	ImportRunning  = "RUNNING"
	ImportComplete = "COMPLETE"
	ImportError    = "ERROR"
)

// Import stages, in order: where a job is (Lectern's extension of the import result). A
// failed job keeps the stage it failed in.
const (
	// StageQueued: the job waits for a worker (an upload is already stored).
	StageQueued = "QUEUED"
	// StageReceived: the worker holds the package (the upload, or the download of a URL).
	StageReceived = "RECEIVED"
	// StageParsed: the manifest was read; the package's files are counted.
	StageParsed = "PARSED"
	// StageStoringFiles: files are being copied to the blob store, FilesStored of FilesTotal.
	StageStoringFiles = "STORING_FILES"
	// StageDone: the version is committed.
	StageDone = "DONE"
)

// ImportProgress is how far an import got. Percent weighs the stages by the work they do:
// receiving 10, parsing 10, storing the files 75 (in proportion to the files stored), the
// commit the rest.
type ImportProgress struct {
	Stage       string `json:"stage"`
	FilesStored int    `json:"filesStored"`
	FilesTotal  int    `json:"filesTotal"`
	Percent     int    `json:"percent"`
}

// NewImportProgress is the progress at stage with stored of total files stored.
func NewImportProgress(stage string, stored, total int) *ImportProgress {
	p := &ImportProgress{Stage: stage, FilesStored: stored, FilesTotal: total}
	switch stage {
	case StageReceived:
		p.Percent = 10
	case StageParsed:
		p.Percent = 20
	case StageStoringFiles:
		p.Percent = 20
		if total > 0 {
			p.Percent += 75 * min(stored, total) / total
		}
	case StageDone:
		p.Percent = 100
	}
	return p
}

// ProgressOf is a job's progress; a job recorded without one gets the stage its status implies.
func ProgressOf(j *ImportJob) ImportProgress {
	switch {
	case j.Progress != nil:
		return *j.Progress
	case j.Status == ImportComplete:
		return *NewImportProgress(StageDone, 0, 0)
	default:
		return *NewImportProgress(StageQueued, 0, 0)
	}
}

// ImportJob is an import's state; it is the engine's "import result".
type ImportJob struct {
	ID                  string   `json:"id"`
	Status              string   `json:"status"`
	Message             string   `json:"message"`
	CourseTitle         string   `json:"courseTitle"`
	ParserWarnings      []string `json:"parserWarnings"`
	CourseID            string   `json:"courseId"`
	MayCreateNewVersion bool     `json:"mayCreateNewVersion"`
	// Exactly one source: an uploaded zip in the blob store, a zip URL, or a manifest URL
	// with the web path where its content lives.
	UploadKey string `json:"uploadKey,omitempty"`
	URL       string `json:"url,omitempty"`
	WebPath   string `json:"webPath,omitempty"`
	// CourseName is the display name given in a JSON import.
	CourseName string `json:"courseName,omitempty"`
	Version    *int   `json:"version,omitempty"`
	// Progress is where a job is; nil on jobs recorded before it existed.
	Progress *ImportProgress `json:"progress,omitempty"`
	Created  time.Time       `json:"-"`
	Updated  time.Time       `json:"-"`
}

// CreateImportJob records a new RUNNING job.
func (s *Store) CreateImportJob(ctx context.Context, tenant string, j *ImportJob) error {
	j.Status = ImportRunning
	j.Progress = NewImportProgress(StageQueued, 0, 0)
	if j.ParserWarnings == nil {
		j.ParserWarnings = []string{}
	}
	data, _ := json.Marshal(j)
	r := &record.Record{Tenant: tenant, Kind: KindImportJob, ID: j.ID, Data: data}
	if err := s.records.Create(ctx, r); err != nil {
		return err
	}
	j.Created, j.Updated = r.Created, r.Updated
	return nil
}

// ImportJob returns a job or ErrImportJobNotFound.
func (s *Store) ImportJob(ctx context.Context, tenant, id string) (*ImportJob, error) {
	r, err := s.records.Get(ctx, tenant, KindImportJob, id)
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return nil, fmt.Errorf("import job '%s' %w", id, ErrImportJobNotFound)
	}
	if err != nil {
		return nil, err
	}
	var j ImportJob
	if err := json.Unmarshal(r.Data, &j); err != nil {
		return nil, err
	}
	j.Created, j.Updated = r.Created, r.Updated
	return &j, nil
}

// UpdateImportJob changes a job with compare-and-set.
// An update that concludes the job calls the OnImportConcluding hook first.
func (s *Store) UpdateImportJob(ctx context.Context, tenant, id string, fn func(*ImportJob)) error {
	return s.updateImportJob(ctx, tenant, id, fn, true)
}

// UpdateImportJobUnannounced is UpdateImportJob without the OnImportConcluding hook, for an
// import the queue refused: the hook needs that queue, and the job must still say it failed.
func (s *Store) UpdateImportJobUnannounced(ctx context.Context, tenant, id string, fn func(*ImportJob)) error {
	return s.updateImportJob(ctx, tenant, id, fn, false)
}

func (s *Store) updateImportJob(ctx context.Context, tenant, id string, fn func(*ImportJob), announce bool) error {
	_, err := record.Modify(ctx, s.records, tenant, KindImportJob, id, func(r *record.Record) error {
		var j ImportJob
		if err := json.Unmarshal(r.Data, &j); err != nil {
			return err
		}
		was := j.Status
		fn(&j)
		if announce && s.importConcluding != nil && was == ImportRunning && j.Status != ImportRunning {
			if err := s.importConcluding(ctx, tenant, &j); err != nil {
				return fmt.Errorf("import job %s: %w", id, err)
			}
		}
		r.Data, _ = json.Marshal(&j)
		return nil
	})
	return err
}

// ParseVersionParam reads a version query value: "" or "-1" mean latest (-1).
func ParseVersionParam(s string) (int, error) {
	if s == "" {
		return -1, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < -1 {
		return 0, fmt.Errorf("version must be an integer, -1 for the latest, not %q", s)
	}
	return v, nil
}
