package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
	"github.com/lectern-lms/lectern/storage/statements/sqlite"
	"github.com/lectern-lms/lectern/storage/statements/statementstest"
)

func TestStatementStore(t *testing.T) {
	open := func(dsn string) (statements.Backend, error) { return sqlite.Open(dsn) }
	newDSN := func(t testing.TB) string { return filepath.Join(t.TempDir(), "statements.db") }
	statementstest.Run(t, func(t *testing.T) statements.Backend {
		s, err := open(newDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, statementstest.WithCrashTest(newDSN, open))
}

// benchDir holds the 100k-statement database, built once per test binary run and shared by
// every BenchmarkQuery invocation (the framework calls a benchmark several times).
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// fake builds statement n of a synthetic LRS: 1000 learners, 20 verbs, 500 activities in 20
// courses, 10 statements per registration, 5 authorities. Like the HTTP layer, it stamps the
// whole batch with one stored time, so the store bumps and rewrites all but the first.
func fake(n int, stored time.Time) *statements.Statement {
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n)
	agent := fmt.Sprintf("mbox:mailto:learner%d@example.com", n%1000)
	act := fmt.Sprintf("http://example.com/activity/%d", n%500)
	course := fmt.Sprintf("http://example.com/course/%d", n%20)
	raw, _ := json.Marshal(map[string]any{
		"id":     id,
		"actor":  map[string]any{"mbox": agent[5:], "name": "Learner"},
		"verb":   map[string]any{"id": fmt.Sprintf("http://example.com/verb/%d", n%20)},
		"object": map[string]any{"id": act, "definition": map[string]any{"name": map[string]string{"en-US": "Activity"}}},
		"result": map[string]any{"score": map[string]any{"scaled": 0.5}, "success": true},
		"context": map[string]any{"registration": fmt.Sprintf("%08x-1111-4000-8000-000000000000", n/10),
			"contextActivities": map[string]any{"parent": []any{map[string]string{"id": course}}}},
		"timestamp": "2024-01-01T00:00:00Z",
		"stored":    stored.UTC().Format(time.RFC3339Nano),
	})
	return &statements.Statement{
		ID: id, Raw: raw, Hash: id, Stored: stored,
		Timestamp:         time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		VerbID:            fmt.Sprintf("http://example.com/verb/%d", n%20),
		Agents:            []string{agent},
		RelatedAgents:     []string{agent, fmt.Sprintf("account:https://lectern|authority%d", n%5)},
		Activity:          act,
		RelatedActivities: []string{act, course},
		Registration:      fmt.Sprintf("%08x-1111-4000-8000-000000000000", n/10),
	}
}

func BenchmarkPut100(b *testing.B) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	n := 0
	b.ResetTimer()
	for b.Loop() {
		batch := make([]*statements.Statement, 100)
		now := time.Now()
		for i := range batch {
			batch[i] = fake(n, now)
			n++
		}
		if err := s.Put(ctx, "bench", batch, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "statements/s")
}

var (
	benchOnce sync.Once
	benchErr  error
)

const benchStatements = 100_000

func benchStore(b *testing.B) *sqlite.Store {
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "lectern-statements-bench")
		if benchErr != nil {
			return
		}
		s, err := sqlite.Open(filepath.Join(benchDir, "bench.db"))
		if err != nil {
			benchErr = err
			return
		}
		defer s.Close()
		start := time.Now()
		// Large batches: one fsync per 5000 statements keeps the set-up to seconds.
		for n := 0; n < benchStatements; n += 5000 {
			batch := make([]*statements.Statement, 5000)
			now := time.Now()
			for i := range batch {
				batch[i] = fake(n+i, now)
			}
			if benchErr = s.Put(context.Background(), "bench", batch, nil); benchErr != nil {
				return
			}
		}
		fmt.Fprintf(os.Stderr, "BenchmarkQuery: stored %d statements in %s\n", benchStatements, time.Since(start).Round(time.Millisecond))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	s, err := sqlite.Open(filepath.Join(benchDir, "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkQuery measures one page (default limit 100) per operation over 100k stored
// statements, per filter shape, and reports the latency percentiles the HTTP layer sees.
func BenchmarkQuery(b *testing.B) {
	s := benchStore(b)
	mid := time.Now() // every statement is older: since=mid is an empty tail, until=mid everything
	shapes := []struct {
		name string
		q    func(r *rand.Rand) statements.Query
	}{
		{"all", func(*rand.Rand) statements.Query { return statements.Query{} }},
		{"all-ascending", func(*rand.Rand) statements.Query { return statements.Query{Ascending: true} }},
		{"agent", func(r *rand.Rand) statements.Query {
			return statements.Query{Agent: fmt.Sprintf("mbox:mailto:learner%d@example.com", r.IntN(1000))}
		}},
		{"related_agents-authority", func(r *rand.Rand) statements.Query {
			return statements.Query{Agent: fmt.Sprintf("account:https://lectern|authority%d", r.IntN(5)), RelatedAgents: true}
		}},
		{"verb", func(r *rand.Rand) statements.Query {
			return statements.Query{Verb: fmt.Sprintf("http://example.com/verb/%d", r.IntN(20))}
		}},
		{"activity", func(r *rand.Rand) statements.Query {
			return statements.Query{Activity: fmt.Sprintf("http://example.com/activity/%d", r.IntN(500))}
		}},
		{"related_activities-course", func(r *rand.Rand) statements.Query {
			return statements.Query{Activity: fmt.Sprintf("http://example.com/course/%d", r.IntN(20)), RelatedActivities: true}
		}},
		{"registration", func(r *rand.Rand) statements.Query {
			return statements.Query{Registration: fmt.Sprintf("%08x-1111-4000-8000-000000000000", r.IntN(benchStatements/10))}
		}},
		{"agent+verb", func(r *rand.Rand) statements.Query {
			return statements.Query{Agent: fmt.Sprintf("mbox:mailto:learner%d@example.com", r.IntN(1000)), Verb: fmt.Sprintf("http://example.com/verb/%d", r.IntN(20))}
		}},
		// Rare combination: the course walk finds few statements of one learner.
		{"related_activities+agent", func(r *rand.Rand) statements.Query {
			return statements.Query{Agent: fmt.Sprintf("mbox:mailto:learner%d@example.com", r.IntN(1000)),
				Activity: fmt.Sprintf("http://example.com/course/%d", r.IntN(20)), RelatedActivities: true}
		}},
		{"until-verb", func(r *rand.Rand) statements.Query {
			return statements.Query{Until: mid, Verb: fmt.Sprintf("http://example.com/verb/%d", r.IntN(20))}
		}},
		{"since-empty-tail", func(*rand.Rand) statements.Query { return statements.Query{Since: mid} }},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			var lat []time.Duration
			for b.Loop() {
				q := sh.q(r)
				q.Tenant = "bench"
				t0 := time.Now()
				if _, err := s.Query(context.Background(), q); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
		})
	}
}
