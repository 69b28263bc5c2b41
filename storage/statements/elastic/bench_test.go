package elastic

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/statements"
)

// The benchmarks mirror the SQLite backend's (storage/statements/sqlite) statement for
// statement, with the same names, data and metrics, so a report can put them side by side.

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

// fake builds statement n of a synthetic LRS: 1000 learners, 20 verbs, 500 activities in 20
// courses, 10 statements per registration, 5 authorities (as the SQLite benchmark).
func fake(n int) *statements.Statement {
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
	})
	return &statements.Statement{
		ID: id, Raw: raw, Hash: id,
		Timestamp:         time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		VerbID:            fmt.Sprintf("http://example.com/verb/%d", n%20),
		Agents:            []string{agent},
		RelatedAgents:     []string{agent, fmt.Sprintf("account:https://lectern|authority%d", n%5)},
		Activity:          act,
		RelatedActivities: []string{act, course},
		Registration:      fmt.Sprintf("%08x-1111-4000-8000-000000000000", n/10),
	}
}

// BenchmarkPut100 measures Puts of 100 new statements, one after the other, and reports
// their throughput and latency percentiles, with the default refresh=wait_for.
func BenchmarkPut100(b *testing.B) { benchPut100(b, newStore(b)) }

// BenchmarkPut100RefreshImmediately is BenchmarkPut100 with RefreshImmediately.
func BenchmarkPut100RefreshImmediately(b *testing.B) {
	benchPut100(b, newStore(b, RefreshImmediately()))
}

func benchPut100(b *testing.B, s *Store) {
	ctx := context.Background()
	n := 0
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		batch := make([]*statements.Statement, 100)
		for i := range batch {
			batch[i] = fake(n)
			n++
		}
		t0 := time.Now()
		if err := s.Put(ctx, "bench", batch, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "statements/s")
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

var (
	benchOnce sync.Once
	benchErr  error
)

const benchStatements = 100_000

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
		start := time.Now()
		for n := 0; n < benchStatements; n += 5000 {
			batch := make([]*statements.Statement, 5000)
			for i := range batch {
				batch[i] = fake(n + i)
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
	s, err := open(benchPrefix)
	if err != nil {
		b.Fatal(err)
	}
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
			reportPercentiles(b, lat)
		})
	}
}
