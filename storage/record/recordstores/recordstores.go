// Package recordstores opens the record store backends (SQLite and PostgreSQL) for the tests
// and benchmarks of packages built on the record port, so that each of them runs against
// both backends the same way without repeating how a fresh database is made.
package recordstores

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/postgres"
	"github.com/lectern-lms/lectern/storage/record/sqlite"
)

// Backend is one record store backend a test can run against.
type Backend struct {
	// Name is "sqlite" or "postgres", for subtest names.
	Name string
	// Fresh creates an empty database that lives as long as tb and returns a function that
	// connects to it. Every call is a new connection to the same data, as a restarted or a
	// second process would make; connections are closed when tb ends, before the database
	// is dropped. PostgreSQL needs LECTERN_TEST_POSTGRES_URL (testenv.External: a skip, or a
	// failure when CI is set).
	Fresh func(tb testing.TB) func() record.Store
}

// All returns the backends: SQLite, then PostgreSQL.
func All() []Backend {
	return []Backend{
		{"sqlite", func(tb testing.TB) func() record.Store {
			path := filepath.Join(tb.TempDir(), "records.db")
			return connector(tb, func() (record.Store, error) { return sqlite.Open(path) })
		}},
		{"postgres", func(tb testing.TB) func() record.Store {
			dsn := testenv.FreshPostgres(tb, testenv.External(tb, "LECTERN_TEST_POSTGRES_URL"))
			return connector(tb, func() (record.Store, error) { return postgres.Open(context.Background(), dsn) })
		}},
	}
}

// Open returns one connection to a fresh database of b.
func (b Backend) Open(tb testing.TB) record.Store { return b.Fresh(tb)() }

func connector(tb testing.TB, open func() (record.Store, error)) func() record.Store {
	return func() record.Store {
		s, err := open()
		if err != nil {
			tb.Fatal(err)
		}
		// Registered after the database's own cleanup, so it runs first.
		tb.Cleanup(func() { s.Close() })
		return s
	}
}
