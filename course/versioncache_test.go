package course_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

// TestPinnedVersionCache: PinnedVersion serves a version from the cache once read, never
// after its course is deleted, and reads again when the caller's stamp names another import
// of the same course id (as a second process, which saw no delete, would see it).
func TestPinnedVersionCache(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			open := be.Fresh(t)
			s := course.NewStore(open())
			add := func(s *course.Store, title string) *course.Version {
				t.Helper()
				v, err := s.AddVersion(ctx, "t1", &course.Version{CourseID: "c1", Title: title, JobID: title}, true)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			first := add(s, "first")
			a, err := s.PinnedVersion(ctx, "t1", "c1", 0, first.Updated)
			if err != nil || a.Title != "first" {
				t.Fatalf("PinnedVersion = %+v, %v; want title first", a, err)
			}
			if b, _ := s.PinnedVersion(ctx, "t1", "c1", 0, time.Time{}); b != a {
				t.Fatal("second PinnedVersion did not come from the cache")
			}

			// Another process deletes the course and imports it again: version 0 is new.
			other := course.NewStore(open())
			if _, err := other.DeleteCourse(ctx, "t1", "c1"); err != nil {
				t.Fatal(err)
			}
			second := add(other, "second")
			if second.Updated.Equal(first.Updated) {
				t.Fatalf("both imports stamped %v", first.Updated)
			}
			if got, _ := s.PinnedVersion(ctx, "t1", "c1", 0, second.Updated); got == nil || got.Title != "second" {
				t.Fatalf("with the new stamp PinnedVersion = %+v, want the new import", got)
			}

			// A delete through this store drops its entries at once.
			if _, err := s.DeleteCourse(ctx, "t1", "c1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.PinnedVersion(ctx, "t1", "c1", 0, time.Time{}); !errors.Is(err, course.ErrCourseNotFound) {
				t.Fatalf("after delete PinnedVersion err = %v, want ErrCourseNotFound", err)
			}
		})
	}
}
