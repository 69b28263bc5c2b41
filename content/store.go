// Package content holds the content service's domain records: content items and their
// versions (title, tags, active flag, content_details), kept in the record store. Extraction
// (content/extract), text analysis (mappings/analysis) and the search index (indexer) live
// beside it; this package only knows what a content version is and how it is stored.
package content

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/storage/record"
)

// Record kinds.
const (
	KindItem    = "content"
	KindVersion = "content_version"
)

// Sentinel errors; test them with errors.Is.
var (
	// ErrNotFound means the content item or version does not exist in the tenant.
	ErrNotFound = errors.New("not found")
	// ErrInvalidID means a content id breaks the rules of ValidateID.
	ErrInvalidID = errors.New("invalid content id")
	// ErrInvalidTag means a tag breaks the rules of ValidateTags.
	ErrInvalidTag = errors.New("invalid tag")
	// ErrInvalidCursor means a List cursor was not made by List.
	ErrInvalidCursor = errors.New("invalid content list cursor")
)

// MaxIDLength is the longest content id (and tag) accepted, in characters.
const MaxIDLength = 255

// MaxTags is the most tags one content version may carry.
const MaxTags = 100

// ValidateID checks a content id: 1 to 255 printable characters without surrounding spaces
// (ids are case-sensitive and otherwise free, like course ids).
func ValidateID(id string) error {
	return validateName(id, "content id", ErrInvalidID)
}

func validateName(s, what string, kind error) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: %s is empty", kind, what)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", kind, what)
	case utf8.RuneCountInString(s) > MaxIDLength:
		return fmt.Errorf("%w: %s is longer than %d characters", kind, what, MaxIDLength)
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("%w: %s %q has surrounding spaces", kind, what, s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return fmt.Errorf("%w: %s %q holds a control character", kind, what, s)
		}
	}
	return nil
}

// ValidateTags checks tags (each like a content id) and returns them sorted without
// duplicates, never nil.
func ValidateTags(tags []string) ([]string, error) {
	out := make([]string, 0, len(tags))
	seen := map[string]bool{}
	for _, t := range tags {
		if err := validateName(t, "tag", ErrInvalidTag); err != nil {
			return nil, err
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) > MaxTags {
		return nil, fmt.Errorf("%w: more than %d tags", ErrInvalidTag, MaxTags)
	}
	sort.Strings(out)
	return out, nil
}

// Version is one version of a content item. Versions count from 1.
type Version struct {
	ContentID string          `json:"content_id"`
	Version   int             `json:"version"`
	Title     string          `json:"title"`
	Tags      []string        `json:"tags"`
	Active    bool            `json:"active"`
	Details   extract.Details `json:"content_details"`
	// Kind is the extract.Kind the content was read as.
	Kind string `json:"kind"`
	// SourceName is the uploaded file's name or the URL's last path segment.
	SourceName string `json:"source_name,omitempty"`
	// SectionsKey is the blob holding the extracted sections (JSON), which the indexer reads.
	SectionsKey string `json:"sections_key"`
	// JobID is the import job that created the version (the key of idempotent commits).
	JobID   string    `json:"job_id"`
	Created time.Time `json:"-"`
	Updated time.Time `json:"-"`
}

type itemData struct {
	CreatedByJob string `json:"created_by_job"`
}

// Store keeps content items and versions in the record store, in the item's tenant, so a
// tenant's deletion removes them with its other records.
type Store struct{ records record.Store }

// NewStore returns a content store over records.
func NewStore(records record.Store) *Store { return &Store{records: records} }

func versionID(contentID string, v int) string { return fmt.Sprintf("%010d:%s", v, contentID) }

func decode(r *record.Record) (*Version, error) {
	var v Version
	if err := json.Unmarshal(r.Data, &v); err != nil {
		return nil, fmt.Errorf("decode content version %s: %w", r.ID, err)
	}
	v.Created, v.Updated = r.Created, r.Updated
	if v.Tags == nil {
		v.Tags = []string{}
	}
	if v.Details.Interactions == nil {
		v.Details.Interactions = []extract.Interaction{}
	}
	if v.Details.ExistingMetadata == nil {
		v.Details.ExistingMetadata = map[string]any{}
	}
	return &v, nil
}

// Get returns one version or an error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, tenant, contentID string, v int) (*Version, error) {
	r, err := s.records.Get(ctx, tenant, KindVersion, versionID(contentID, v))
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return nil, fmt.Errorf("content '%s' version %d %w", contentID, v, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decode(r)
}

// ByJob returns the version an import job committed, or nil when it has not committed one.
func (s *Store) ByJob(ctx context.Context, tenant, jobID string) (*Version, error) {
	p, err := s.records.List(ctx, record.Query{Tenant: tenant, Kind: KindVersion, Key: jobID, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(p.Records) == 0 {
		return nil, nil
	}
	return decode(p.Records[0])
}

// versions lists every version of one item, by version.
func (s *Store) versions(ctx context.Context, tenant, contentID string) ([]*Version, error) {
	q := record.Query{Tenant: tenant, Kind: KindVersion, Parent: &record.Ref{Kind: KindItem, ID: contentID}}
	out, err := record.AllAs(ctx, s.records, q, decode)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// ListQuery selects a page of a tenant's content versions for List.
type ListQuery struct {
	// Since keeps versions updated at or after this instant (inclusive); zero keeps all.
	Since time.Time
	// Cursor continues a previous page (Page.Next); it is only valid with the same tenant and
	// Since.
	Cursor string
	// Skip leaves out that many versions before the page.
	Skip int
	// Limit caps the page; at most record.MaxPage.
	Limit int
}

// Page is one page of List. Next is empty on the last page.
type Page struct {
	Versions []*Version
	Next     string
}

// List returns a page of the tenant's content versions in update order (then by version
// and content id), keyset-paged like every record list: a page reads Skip+Limit records
// from its position on, never the whole tenant, and versions created or changed while a
// client pages through land after its cursor, so none is skipped. A cursor that is not from
// List wraps ErrInvalidCursor.
func (s *Store) List(ctx context.Context, tenant string, q ListQuery) (*Page, error) {
	rq := record.Query{Tenant: tenant, Kind: KindVersion, Since: q.Since, Cursor: q.Cursor}
	for skip := q.Skip; skip > 0; {
		rq.Limit = min(skip, record.MaxPage)
		p, err := s.records.List(ctx, rq)
		if err != nil {
			return nil, listError(err)
		}
		if p.Next == "" {
			return &Page{Versions: []*Version{}}, nil
		}
		skip -= len(p.Records)
		rq.Cursor = p.Next
	}
	rq.Limit = max(min(q.Limit, record.MaxPage), 1)
	p, err := s.records.List(ctx, rq)
	if err != nil {
		return nil, listError(err)
	}
	out := &Page{Versions: make([]*Version, 0, len(p.Records)), Next: p.Next}
	for _, r := range p.Records {
		v, err := decode(r)
		if err != nil {
			return nil, err
		}
		out.Versions = append(out.Versions, v)
	}
	return out, nil
}

func listError(err error) error {
	if errors.Is(err, record.ErrInvalid) {
		return fmt.Errorf("%w: %v", ErrInvalidCursor, err)
	}
	return err
}

// AddVersion commits v as the next version of v.ContentID (1 for a new item). The version
// record is the commit point of an import: a redelivered job gets its own version back
// instead of adding another.
func (s *Store) AddVersion(ctx context.Context, tenant string, v *Version) (*Version, error) {
	if err := ValidateID(v.ContentID); err != nil {
		return nil, err
	}
	if done, err := s.ByJob(ctx, tenant, v.JobID); err != nil || done != nil {
		return done, err
	}
	cd, _ := json.Marshal(itemData{CreatedByJob: v.JobID})
	err := s.records.Create(ctx, &record.Record{Tenant: tenant, Kind: KindItem, ID: v.ContentID, Data: cd})
	if err != nil && !errors.Is(err, record.ErrConflict) {
		return nil, err
	}
	next := 1
	vs, err := s.versions(ctx, tenant, v.ContentID)
	if err != nil {
		return nil, err
	}
	if len(vs) > 0 {
		next = vs[len(vs)-1].Version + 1
	}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	r, _, err := record.CreateNext(ctx, s.records, next, func(n int) (*record.Record, error) {
		v.Version = n // a concurrent import may have taken the previous number
		data, err := json.Marshal(v)
		return &record.Record{Tenant: tenant, Kind: KindVersion, ID: versionID(v.ContentID, n), Key: v.JobID,
			Parent: &record.Ref{Kind: KindItem, ID: v.ContentID}, Data: data}, err
	})
	if err != nil {
		return nil, fmt.Errorf("content '%s': %w", v.ContentID, err)
	}
	v.Created, v.Updated = r.Created, r.Updated
	return v, nil
}

// Exists reports whether the content item exists in the tenant.
func (s *Store) Exists(ctx context.Context, tenant, contentID string) (bool, error) {
	_, err := s.records.Get(ctx, tenant, KindItem, contentID)
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return false, nil
	}
	return err == nil, err
}

// Update changes a version with compare-and-set and returns the result.
func (s *Store) Update(ctx context.Context, tenant, contentID string, v int, fn func(*Version)) (*Version, error) {
	var ver *Version
	r, err := record.Modify(ctx, s.records, tenant, KindVersion, versionID(contentID, v), func(r *record.Record) error {
		var err error
		if ver, err = decode(r); err != nil {
			return err
		}
		fn(ver)
		ver.ContentID, ver.Version = contentID, v
		r.Data, err = json.Marshal(ver)
		return err
	})
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return nil, fmt.Errorf("content '%s' version %d %w", contentID, v, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	ver.Updated = r.Updated
	return ver, nil
}
