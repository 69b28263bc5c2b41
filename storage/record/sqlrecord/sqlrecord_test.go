package sqlrecord_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/sqlrecord"
)

// TestListPagingTies pages through records that share update instants, with and without
// since: the cursor's seek on (updated, id) must neither skip nor repeat a record whose
// updated equals the cursor's.
func TestListPagingTies(t *testing.T) {
	backends := []struct {
		name    string
		dialect sqlrecord.Dialect
		open    func(t *testing.T) *sql.DB
	}{
		{"sqlite", sqlrecord.SQLite, func(t *testing.T) *sql.DB {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "r.db"))
			if err != nil {
				t.Fatal(err)
			}
			return db
		}},
		{"postgres", sqlrecord.Postgres, func(t *testing.T) *sql.DB {
			db, err := sql.Open("pgx", testenv.FreshPostgres(t, testenv.External(t, "LECTERN_TEST_POSTGRES_URL")))
			if err != nil {
				t.Fatal(err)
			}
			return db
		}},
	}
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			db := be.open(t)
			t.Cleanup(func() { db.Close() })
			base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			at := base
			s, err := sqlrecord.New(ctx, db, be.dialect, sqlrecord.WithClock(func() time.Time { return at }))
			if err != nil {
				t.Fatal(err)
			}
			// Three instants, four records each, created out of id order.
			var want []string
			for tick := 0; tick < 3; tick++ {
				at = base.Add(time.Duration(tick) * time.Second)
				for _, n := range []int{3, 0, 2, 1} {
					id := fmt.Sprintf("r%d-%d", tick, n)
					if err := s.Create(ctx, &record.Record{Tenant: "t", Kind: "k", ID: id, Data: []byte(`{}`)}); err != nil {
						t.Fatal(err)
					}
				}
				for n := 0; n < 4; n++ {
					want = append(want, fmt.Sprintf("r%d-%d", tick, n))
				}
			}
			for _, limit := range []int{1, 3, 4, 5} {
				if got := pageAll(t, s, record.Query{Tenant: "t", Kind: "k", Limit: limit}); got != strings.Join(want, ",") {
					t.Errorf("limit %d: got %s, want %s", limit, got, strings.Join(want, ","))
				}
				// since at the second instant (inclusive) keeps the last eight.
				q := record.Query{Tenant: "t", Kind: "k", Limit: limit, Since: base.Add(time.Second)}
				if got := pageAll(t, s, q); got != strings.Join(want[4:], ",") {
					t.Errorf("since, limit %d: got %s, want %s", limit, got, strings.Join(want[4:], ","))
				}
			}
			// A cursor from before since: since still bounds the page.
			p, err := s.List(ctx, record.Query{Tenant: "t", Kind: "k", Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			p, err = s.List(ctx, record.Query{Tenant: "t", Kind: "k", Limit: 2, Cursor: p.Next, Since: base.Add(2 * time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p.Records); got != "r2-0,r2-1" {
				t.Errorf("cursor before since: got %s, want r2-0,r2-1", got)
			}
		})
	}
}

func pageAll(t *testing.T, s *sqlrecord.Store, q record.Query) string {
	t.Helper()
	var out []*record.Record
	for i := 0; i < 100; i++ {
		p, err := s.List(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Records...)
		if p.Next == "" {
			return ids(out)
		}
		q.Cursor = p.Next
	}
	t.Fatal("paging does not end")
	return ""
}

func ids(rs []*record.Record) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.ID)
	}
	return strings.Join(s, ",")
}
