package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/lectern-lms/lectern/storage/statements/sqlite"
	"github.com/lectern-lms/lectern/storage/statements/statementstest"
)

// BenchmarkReports measures the reports over statementstest.BenchReportStatements() stored
// statements, seeded once into the bench cache ($HOME/.cache/lectern/bench) and reused:
// reports only read, so the cached file stays as seeded.
func BenchmarkReports(b *testing.B) {
	dir, err := statementstest.ReportBenchDir()
	if err != nil {
		b.Fatal(err)
	}
	n := statementstest.BenchReportStatements()
	path := filepath.Join(dir, fmt.Sprintf("statements-reports-sqlite-%d.db", n))
	done := path + ".seeded"
	if _, err := os.Stat(done); err != nil {
		for _, f := range []string{path, path + "-wal", path + "-shm"} {
			os.Remove(f)
		}
		s, err := sqlite.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := statementstest.FillReports(context.Background(), s, n); err != nil {
			b.Fatal(err)
		}
		if _, err := s.DB().Exec(`ANALYZE`); err != nil {
			b.Fatal(err)
		}
		s.Close()
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	statementstest.BenchReports(b, s)
}
