package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/storage/record/recordstores"
	"github.com/lectern-lms/lectern/workers/jobs"
)

// TestList: a tenant's jobs in update order on both record backends; status and type filters
// that skip records still fill each page, and the cursor resumes right after it; another
// tenant's jobs never appear, and a foreign cursor is ErrBadCursor.
func TestList(t *testing.T) {
	for _, b := range recordstores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s := jobs.NewStore(b.Open(t))
			for i := range 9 {
				id := fmt.Sprintf("j%d", i)
				typ := "A"
				if i%3 == 2 {
					typ = "B"
				}
				if _, err := s.Create(ctx, id, typ, "t1", true); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Create(ctx, "x"+id, typ, "t2", true); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Update(ctx, "j5", func(j *jobs.Job) { j.Status = jobs.StatusFailed }); err != nil {
				t.Fatal(err)
			}
			// j5 was updated last, so it moves to the end.
			want := []string{"j2", "j8", "j5"}
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				list, next, err := s.List(ctx, jobs.Filter{Tenant: "t1", Type: "B", Cursor: cursor, Limit: 1})
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range list {
					if j.Tenant != "t1" || j.Type != "B" {
						t.Fatalf("listed %+v", j)
					}
					got = append(got, j.ID)
				}
				if cursor = next; cursor == "" || pages > 10 {
					break
				}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("type B one a page: %v, want %v", got, want)
			}
			list, next, err := s.List(ctx, jobs.Filter{Tenant: "t1", Status: jobs.StatusFailed})
			if err != nil || len(list) != 1 || list[0].ID != "j5" || next != "" {
				t.Fatalf("FAILED: %v %q %v", list, next, err)
			}
			all, _, err := s.List(ctx, jobs.Filter{Tenant: "t1"})
			if err != nil || len(all) != 9 {
				t.Fatalf("all of t1: %d jobs, %v", len(all), err)
			}
			if _, _, err := s.List(ctx, jobs.Filter{Tenant: "t1", Cursor: "!!"}); !errors.Is(err, jobs.ErrBadCursor) {
				t.Fatalf("bad cursor: %v", err)
			}
		})
	}
}
