package statementstest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
)

// The report benchmark (`make bench`, scripts/bench-report.sh): BenchReportStatements
// statements of FakeReport (default 1M, LECTERN_BENCH_REPORT_STATEMENTS), seeded once into a
// cache (ReportBenchDir) and reused, one report page per operation.

// BenchReportStatements is the store size of BenchReports: LECTERN_BENCH_REPORT_STATEMENTS,
// default 1,000,000.
func BenchReportStatements() int {
	if n, err := strconv.Atoi(os.Getenv("LECTERN_BENCH_REPORT_STATEMENTS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// ReportBenchDir is where seeded benchmark stores are cached: $LECTERN_CACHE_DIR/bench
// (default $HOME/.cache/lectern/bench), as the search benchmarks do.
func ReportBenchDir() (string, error) {
	base := os.Getenv("LECTERN_CACHE_DIR")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache", "lectern")
	}
	dir := filepath.Join(base, "bench")
	return dir, os.MkdirAll(dir, 0o755)
}

// FakeReport is Fake with the report fields lrs/xapi would derive: one named actor, and a
// result object on four statements of five.
func FakeReport(n int, stored time.Time) *statements.Statement {
	s := Fake(n, stored)
	agent, _ := json.Marshal(map[string]string{"objectType": "Agent", "name": fmt.Sprintf("Learner %d", n%1000), "mbox": s.Agents[0][5:]})
	s.ReportActors = []statements.ReportActor{{IFI: s.Agents[0], Agent: agent}}
	s.Result = n%5 != 0
	return s
}

// FillReports stores statements 0..n-1 of FakeReport in batches of 5000 and reports progress
// on stderr.
func FillReports(ctx context.Context, s statements.Store, n int) error {
	start := time.Now()
	for i := 0; i < n; i += 5000 {
		batch := make([]*statements.Statement, min(5000, n-i))
		now := time.Now()
		for j := range batch {
			batch[j] = FakeReport(i+j, now)
		}
		if err := s.Put(ctx, BenchTenant, batch, nil); err != nil {
			return err
		}
		if (i+len(batch))%100_000 == 0 {
			fmt.Fprintf(os.Stderr, "BenchmarkReports: seeded %d statements in %s\n", i+len(batch), time.Since(start).Round(time.Second))
		}
	}
	fmt.Fprintf(os.Stderr, "BenchmarkReports: seeded %d statements in %s\n", n, time.Since(start).Round(time.Millisecond))
	return nil
}

// BenchReports measures one report page per operation (the port's default page for results,
// statements.MaxLimit for activities and actors, as lrs/report asks) per report shape over a
// store holding FillReports(BenchReportStatements()), and reports latency percentiles.
func BenchReports(b *testing.B, s statements.Reports) {
	learner := func(r *rand.Rand) string { return fmt.Sprintf("mbox:mailto:learner%d@example.com", r.IntN(1000)) }
	activity := func(r *rand.Rand) string { return fmt.Sprintf("http://example.com/activity/%d", r.IntN(500)) }
	// Statement n has a result unless n%5 == 0, and learner n%1000 and activity n%500 do
	// what n does: the filters of the results shapes pick among those with results.
	withResults := func(r *rand.Rand, m int) int { k := r.IntN(m / 5 * 4); return k/4*5 + k%4 + 1 }
	type call func(ctx context.Context, r *rand.Rand) (int, error)
	results := func(q func(r *rand.Rand) statements.ReportQuery) call {
		return func(ctx context.Context, r *rand.Rand) (int, error) {
			p, err := s.ReportResults(ctx, q(r))
			if err != nil {
				return 0, err
			}
			return len(p.Items), nil
		}
	}
	activities := func(q func(r *rand.Rand) statements.ReportQuery) call {
		return func(ctx context.Context, r *rand.Rand) (int, error) {
			p, err := s.ReportActivities(ctx, q(r))
			if err != nil {
				return 0, err
			}
			return len(p.Items), nil
		}
	}
	actors := func(q func(r *rand.Rand) statements.ReportQuery) call {
		return func(ctx context.Context, r *rand.Rand) (int, error) {
			p, err := s.ReportActors(ctx, q(r))
			if err != nil {
				return 0, err
			}
			return len(p.Items), nil
		}
	}
	q := func(f func(r *rand.Rand, q *statements.ReportQuery)) func(r *rand.Rand) statements.ReportQuery {
		return func(r *rand.Rand) statements.ReportQuery {
			out := statements.ReportQuery{Tenant: BenchTenant}
			f(r, &out)
			return out
		}
	}
	shapes := []struct {
		name string
		run  call
	}{
		{"results-agent", results(q(func(r *rand.Rand, q *statements.ReportQuery) {
			q.Agent = fmt.Sprintf("mbox:mailto:learner%d@example.com", withResults(r, 1000))
		}))},
		{"results-activity", results(q(func(r *rand.Rand, q *statements.ReportQuery) {
			q.Activity = fmt.Sprintf("http://example.com/activity/%d", withResults(r, 500))
		}))},
		{"results-agent+activity", results(q(func(r *rand.Rand, q *statements.ReportQuery) {
			l := withResults(r, 1000)
			q.Agent, q.Activity = fmt.Sprintf("mbox:mailto:learner%d@example.com", l), fmt.Sprintf("http://example.com/activity/%d", l%500)
		}))},
		{"activities-all", activities(q(func(r *rand.Rand, q *statements.ReportQuery) { q.Limit = statements.MaxLimit }))},
		{"activities-agent", activities(q(func(r *rand.Rand, q *statements.ReportQuery) {
			q.Agent, q.Limit = learner(r), statements.MaxLimit
		}))},
		{"actors-all", actors(q(func(r *rand.Rand, q *statements.ReportQuery) { q.Limit = statements.MaxLimit }))},
		{"actors-activity", actors(q(func(r *rand.Rand, q *statements.ReportQuery) {
			q.Activity, q.Limit = activity(r), statements.MaxLimit
		}))},
		{"actors-viewer", actors(q(func(r *rand.Rand, q *statements.ReportQuery) {
			q.Viewer, q.Limit = learner(r), statements.MaxLimit
		}))},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				n, err := sh.run(context.Background(), r)
				if err != nil {
					b.Fatal(err)
				}
				if n == 0 {
					b.Fatalf("%s: empty page", sh.name)
				}
				lat = append(lat, time.Since(t0))
			}
			ReportPercentiles(b, lat)
		})
	}
}
