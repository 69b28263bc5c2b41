package content

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

// benchVersions is the size of the tenant the list benchmark pages through.
const benchVersions = 10000

// BenchmarkList times one page of 100 versions of a 10,000-version tenant, at the start and
// at the end of the list (by cursor and by skip), next to the record store's own List of the
// same page (raw) and the pre-keyset way (every version read and sorted per page).
func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	for _, backend := range recordstores.All() {
		b.Run(backend.Name, func(b *testing.B) {
			rs := backend.Open(b)
			for i := range benchVersions {
				id := fmt.Sprintf("item-%05d", i)
				data, _ := json.Marshal(&Version{ContentID: id, Version: 1, Title: "t", Tags: []string{}, JobID: id})
				if err := rs.Create(ctx, &record.Record{Tenant: "bench", Kind: KindVersion, ID: versionID(id, 1), Key: id,
					Parent: &record.Ref{Kind: KindItem, ID: id}, Data: data}); err != nil {
					b.Fatal(err)
				}
			}
			s := NewStore(rs)
			// The cursor of the last page.
			var last string
			q := record.Query{Tenant: "bench", Kind: KindVersion, Limit: benchVersions - 100}
			if p, err := rs.List(ctx, q); err != nil || p.Next == "" {
				b.Fatal(err)
			} else {
				last = p.Next
			}
			check := func(n int, err error) {
				if err != nil || n != 100 {
					b.Fatalf("page of %d: %v", n, err)
				}
			}
			b.Run("first", func(b *testing.B) {
				for b.Loop() {
					p, err := s.List(ctx, "bench", ListQuery{Limit: 100})
					check(len(p.Versions), err)
				}
			})
			b.Run("last_by_cursor", func(b *testing.B) {
				for b.Loop() {
					p, err := s.List(ctx, "bench", ListQuery{Cursor: last, Limit: 100})
					check(len(p.Versions), err)
				}
			})
			b.Run("last_by_skip", func(b *testing.B) {
				for b.Loop() {
					p, err := s.List(ctx, "bench", ListQuery{Skip: benchVersions - 100, Limit: 100})
					check(len(p.Versions), err)
				}
			})
			b.Run("raw_last", func(b *testing.B) {
				for b.Loop() {
					p, err := rs.List(ctx, record.Query{Tenant: "bench", Kind: KindVersion, Cursor: last, Limit: 100})
					check(len(p.Records), err)
				}
			})
			b.Run("full_scan_last", func(b *testing.B) {
				for b.Loop() {
					all, err := record.All(ctx, rs, record.Query{Tenant: "bench", Kind: KindVersion})
					vs := make([]*Version, 0, len(all))
					for _, r := range all {
						v, _ := decode(r)
						vs = append(vs, v)
					}
					check(len(vs[len(vs)-100:]), err)
				}
			})
		})
	}
}
