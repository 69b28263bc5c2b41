package elastic

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/storage/statements/statementstest"
)

// BenchmarkReports measures the reports over statementstest.BenchReportStatements() stored
// statements. The seeded indices stay in the cluster under a fixed prefix (the counterpart of
// the SQLite file cached in $HOME/.cache/lectern/bench) and are reused while they hold all
// statements; reports only read.
func BenchmarkReports(b *testing.B) {
	testURL(b)
	n := statementstest.BenchReportStatements()
	prefix := fmt.Sprintf("lectern_bench_reports_%d_", n)
	s, err := open(prefix)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var count struct {
		Count int `json:"count"`
	}
	if err := s.c.Do(ctx, "count", esapi.CountRequest{Index: []string{s.stmts}}, &count); err != nil {
		b.Fatal(err)
	}
	if count.Count != n {
		if count.Count != 0 {
			if err := s.c.DeleteIndices(ctx, prefix); err != nil {
				b.Fatal(err)
			}
			if s, err = open(prefix); err != nil {
				b.Fatal(err)
			}
		}
		if err := statementstest.FillReports(context.Background(), s, n); err != nil {
			b.Fatal(err)
		}
	}
	statementstest.BenchReports(b, s)
}
