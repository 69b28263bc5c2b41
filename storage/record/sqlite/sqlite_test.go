package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/recordtest"
	"github.com/lectern-lms/lectern/storage/record/sqlite"
)

func TestRecordStore(t *testing.T) {
	recordtest.Run(t, recordtest.Backend{
		NewDSN: func(t testing.TB) string { return filepath.Join(t.TempDir(), "lectern.db") },
		Open:   func(dsn string) (record.Store, error) { return sqlite.Open(dsn) },
	})
}
