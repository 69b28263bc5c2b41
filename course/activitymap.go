package course

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/lectern-lms/lectern/storage/record"
)

// KindActivityMap records that a course's package uses an xAPI activity id, so an import can
// tell that another course of the tenant already uses it (Engine's "activity id already
// mapped to a package" parser warning). The record is a child of the course, so deleting the
// course releases its ids.
const KindActivityMap = "course_activity"

// ActivityIDs returns the xAPI activity ids a package defines itself, in tree order without
// duplicates: the course IRI and the IRIs of its activities (xAPI and cmi5). SCORM and AICC
// packages define none; their course id is derived from the Lectern course id, which no
// other course can share.
func (p *Package) ActivityIDs() []string {
	if p == nil {
		return nil
	}
	var out []string
	add := func(id string) {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	add(p.XAPIActivityID)
	var walk func(a *Activity)
	walk = func(a *Activity) {
		if a == nil {
			return
		}
		if a.Extra != nil {
			add(a.Extra.XAPIActivityID)
		}
		for _, c := range a.Children {
			walk(c)
		}
	}
	walk(p.Root)
	return out
}

type activityMap struct {
	ActivityID string `json:"activityId"`
	CourseID   string `json:"courseId"`
}

// activityKey bounds the indexed key whatever the IRI's length.
func activityKey(activityID string) string {
	h := sha256.Sum256([]byte(activityID))
	return hex.EncodeToString(h[:])
}

// MapActivities records that courseID uses each of activityIDs. It is idempotent, so a
// redelivered import may call it again.
func (s *Store) MapActivities(ctx context.Context, tenant, courseID string, activityIDs []string) error {
	for _, id := range activityIDs {
		data, err := json.Marshal(activityMap{ActivityID: id, CourseID: courseID})
		if err != nil {
			return err
		}
		k := activityKey(id)
		err = s.records.Create(ctx, &record.Record{Tenant: tenant, Kind: KindActivityMap, ID: k + "/" + courseID, Key: k,
			Parent: &record.Ref{Kind: KindCourse, ID: courseID}, Data: data})
		if err != nil && !errors.Is(err, record.ErrConflict) {
			return fmt.Errorf("map activity %q to course '%s': %w", id, courseID, err)
		}
	}
	return nil
}

// HasActivityMaps reports whether any course of the tenant has its activity ids recorded (a
// tenant without any has no course whose ids a new package could share).
func (s *Store) HasActivityMaps(ctx context.Context, tenant string) (bool, error) {
	p, err := s.records.List(ctx, record.Query{Tenant: tenant, Kind: KindActivityMap, Limit: 1})
	if err != nil {
		return false, err
	}
	return len(p.Records) > 0, nil
}

// CoursesUsingActivity returns the ids of the tenant's courses whose packages use
// activityID, sorted.
func (s *Store) CoursesUsingActivity(ctx context.Context, tenant, activityID string) ([]string, error) {
	rs, err := record.All(ctx, s.records, record.Query{Tenant: tenant, Kind: KindActivityMap, Key: activityKey(activityID)})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rs {
		var m activityMap
		if err := json.Unmarshal(r.Data, &m); err != nil {
			return nil, fmt.Errorf("decode activity map %s: %w", r.ID, err)
		}
		if m.ActivityID == activityID && !slices.Contains(out, m.CourseID) {
			out = append(out, m.CourseID)
		}
	}
	slices.Sort(out)
	return out, nil
}
