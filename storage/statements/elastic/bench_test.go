package elastic

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/statements/statementstest"
)

// The benchmarks run statementstest's workload, as the SQLite backend's
// (storage/statements/sqlite) do, with the same names, data and metrics, so
// scripts/bench-report.sh can put them side by side.

// benchPrefix holds the 100k-statement indices, built once per test binary run and shared by
// every BenchmarkQuery invocation; TestMain deletes them.
var benchPrefix string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchPrefix != "" {
		if c, err := elastic.New(elastic.Config{URLs: []string{os.Getenv("LECTERN_TEST_ELASTICSEARCH_URL")}, IndexPrefix: benchPrefix}); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_ = c.DeleteIndices(ctx, benchPrefix)
			cancel()
		}
	}
	os.Exit(code)
}

// BenchmarkPut100 measures Puts of 100 new statements, one after the other, and reports
// their throughput and latency percentiles. Writes ask for no refresh; with no query between
// them, only the background refresh runs.
func BenchmarkPut100(b *testing.B) { statementstest.BenchPut100(b, newStore(b)) }

var (
	benchOnce sync.Once
	benchErr  error
)

func benchStore(b *testing.B) *Store {
	testURL(b)
	benchOnce.Do(func() {
		prefix := "lectern_bench_" + fmt.Sprint(time.Now().UnixNano()) + "_"
		s, err := open(prefix)
		if err != nil {
			benchErr = err
			return
		}
		benchPrefix = prefix
		benchErr = statementstest.FillBench(s)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	s, err := open(benchPrefix)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkQuery measures one page per operation over 100k stored statements, per filter
// shape (statementstest.BenchQuery).
func BenchmarkQuery(b *testing.B) {
	statementstest.BenchQuery(b, benchStore(b), time.Now())
}

// BenchmarkActivityMerge compares a batch's activity merge one activity at a time with the
// batched reads and writes the LRS makes (statementstest.BenchActivityMerge).
func BenchmarkActivityMerge(b *testing.B) { statementstest.BenchActivityMerge(b, newStore(b)) }
