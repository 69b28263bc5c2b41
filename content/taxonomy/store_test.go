package taxonomy_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lectern-lms/lectern/content/taxonomy"
	"github.com/lectern-lms/lectern/storage/blob/local"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

func TestStore(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			rs := be.Open(t)
			blobs, err := local.New(filepath.Join(t.TempDir(), "blobs"))
			if err != nil {
				t.Fatal(err)
			}
			s := taxonomy.NewStore(rs, blobs)
			if _, err := s.Get(ctx, "a", "x"); !errors.Is(err, taxonomy.ErrNotFound) {
				t.Fatalf("missing taxonomy: %v", err)
			}
			v := [][]float32{{1, 0}, {0, -1.5}}
			if err := s.Put(ctx, "a", "job1", &taxonomy.Taxonomy{ID: "x", Skills: []string{"A", "B"}, Vectors: v, Model: "m"}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, "a", "x")
			if err != nil || !slices.Equal(got.Skills, []string{"A", "B"}) || got.Model != "m" || !slices.Equal(got.Vectors[1], v[1]) {
				t.Fatalf("get: %+v, %v", got, err)
			}
			if ok, _ := s.Exists(ctx, "b", "x"); ok {
				t.Fatal("taxonomy visible in another tenant")
			}
			// Re-import replaces, without vectors too; the old blob goes.
			if err := s.Put(ctx, "a", "job2", &taxonomy.Taxonomy{ID: "x", Skills: []string{"C"}}); err != nil {
				t.Fatal(err)
			}
			got, err = taxonomy.NewStore(rs, blobs).Get(ctx, "a", "x")
			if err != nil || !slices.Equal(got.Skills, []string{"C"}) || got.Vectors != nil {
				t.Fatalf("after re-import: %+v, %v", got, err)
			}
			if _, _, err := blobs.Get(ctx, taxonomy.BlobKey("a", "x", "job1")); err == nil {
				t.Fatal("the replaced import's blob is still there")
			}
			if err := s.Put(ctx, "a", "j", &taxonomy.Taxonomy{ID: " x", Skills: []string{"C"}}); !errors.Is(err, taxonomy.ErrInvalidID) {
				t.Fatalf("id with a space: %v", err)
			}
		})
	}
}
