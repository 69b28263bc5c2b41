package statementstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
)

// The benchmark workload every backend runs, so `make bench` (scripts/bench-report.sh) can put
// the backends side by side: the same statements, filter shapes and metrics.

// BenchTenant is the tenant the benchmarks write to.
const BenchTenant = "bench"

// BenchStatements is the size of the store BenchQuery runs against.
const BenchStatements = 100_000

// Fake builds statement n of a synthetic LRS: 1000 learners, 20 verbs, 500 activities in 20
// courses, 10 statements per registration, 5 authorities. Like the HTTP layer, callers stamp
// a whole batch with one stored time, so the store bumps and rewrites all but the first.
func Fake(n int, stored time.Time) *statements.Statement {
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

// FillBench stores the BenchStatements statements BenchQuery runs against (Fill) and says
// on stderr how long that took.
func FillBench(s statements.Store) error {
	start := time.Now()
	if err := Fill(context.Background(), s, BenchStatements); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "BenchmarkQuery: stored %d statements in %s\n", BenchStatements, time.Since(start).Round(time.Millisecond))
	return nil
}

// Fill stores statements 0..n-1 of Fake in batches of 5000 (one commit each keeps the set-up
// of BenchQuery to seconds).
func Fill(ctx context.Context, s statements.Store, n int) error {
	for i := 0; i < n; i += 5000 {
		batch := make([]*statements.Statement, min(5000, n-i))
		now := time.Now()
		for j := range batch {
			batch[j] = Fake(i+j, now)
		}
		if err := s.Put(ctx, BenchTenant, batch, nil); err != nil {
			return err
		}
	}
	return nil
}

// BenchPut100 measures Puts of 100 new statements, one after the other, into s (a fresh
// store), and reports their throughput (statements/s) and latency percentiles.
func BenchPut100(b *testing.B, s statements.Store) {
	ctx := context.Background()
	n := 0
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		batch := make([]*statements.Statement, 100)
		now := time.Now()
		for i := range batch {
			batch[i] = Fake(n, now)
			n++
		}
		t0 := time.Now()
		if err := s.Put(ctx, BenchTenant, batch, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "statements/s")
	ReportPercentiles(b, lat)
}

// ReportPercentiles reports the p50 and p99 of lat in microseconds (p50-µs, p99-µs).
func ReportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchQuery measures one page (default limit 100) per operation over s, filled by Fill with
// BenchStatements statements, per filter shape (sub-benchmarks), and reports the latency
// percentiles the HTTP layer sees. mid is after every stored statement: since=mid is an empty
// tail, until=mid everything.
func BenchQuery(b *testing.B, s statements.Store, mid time.Time) {
	learner := func(r *rand.Rand) string { return fmt.Sprintf("mbox:mailto:learner%d@example.com", r.IntN(1000)) }
	verb := func(r *rand.Rand) string { return fmt.Sprintf("http://example.com/verb/%d", r.IntN(20)) }
	course := func(r *rand.Rand) string { return fmt.Sprintf("http://example.com/course/%d", r.IntN(20)) }
	shapes := []struct {
		name string
		q    func(r *rand.Rand) statements.Query
	}{
		{"all", func(*rand.Rand) statements.Query { return statements.Query{} }},
		{"all-ascending", func(*rand.Rand) statements.Query { return statements.Query{Ascending: true} }},
		{"agent", func(r *rand.Rand) statements.Query { return statements.Query{Agent: learner(r)} }},
		{"related_agents-authority", func(r *rand.Rand) statements.Query {
			return statements.Query{Agent: fmt.Sprintf("account:https://lectern|authority%d", r.IntN(5)), RelatedAgents: true}
		}},
		{"verb", func(r *rand.Rand) statements.Query { return statements.Query{Verb: verb(r)} }},
		{"activity", func(r *rand.Rand) statements.Query {
			return statements.Query{Activity: fmt.Sprintf("http://example.com/activity/%d", r.IntN(500))}
		}},
		{"related_activities-course", func(r *rand.Rand) statements.Query {
			return statements.Query{Activity: course(r), RelatedActivities: true}
		}},
		{"registration", func(r *rand.Rand) statements.Query {
			return statements.Query{Registration: fmt.Sprintf("%08x-1111-4000-8000-000000000000", r.IntN(BenchStatements/10))}
		}},
		{"agent+verb", func(r *rand.Rand) statements.Query { return statements.Query{Agent: learner(r), Verb: verb(r)} }},
		// Rare combination: the course walk finds few statements of one learner.
		{"related_activities+agent", func(r *rand.Rand) statements.Query {
			return statements.Query{Agent: learner(r), Activity: course(r), RelatedActivities: true}
		}},
		{"until-verb", func(r *rand.Rand) statements.Query { return statements.Query{Until: mid, Verb: verb(r)} }},
		{"since-empty-tail", func(*rand.Rand) statements.Query { return statements.Query{Since: mid} }},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			var lat []time.Duration
			for b.Loop() {
				q := sh.q(r)
				q.Tenant = BenchTenant
				t0 := time.Now()
				if _, err := s.Query(context.Background(), q); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			ReportPercentiles(b, lat)
		})
	}
}

// BenchActivityMerge measures the activity merge of one statement batch of 1,000 new
// activities side by side: "one-by-one" reads and writes each activity alone (as the merge
// did before 2026-12-07), "batched" reads them in one GetActivities and writes them in one
// PutActivities. Each run uses new activity ids, so every write is an insert.
func BenchActivityMerge(b *testing.B, s statements.Activities) {
	ctx := context.Background()
	run := 0
	batch := func() map[string]json.RawMessage {
		run++
		acts := make(map[string]json.RawMessage, 1000)
		for i := range 1000 {
			id := fmt.Sprintf("http://example.com/bench/%d/%d", run, i)
			acts[id] = json.RawMessage(`{"id":"` + id + `","definition":{"name":{"en":"Question ` + strconv.Itoa(i) + `"}}}`)
		}
		return acts
	}
	b.Run("one-by-one", func(b *testing.B) {
		for b.Loop() {
			for id, a := range batch() {
				if _, err := s.GetActivity(ctx, BenchTenant, id); err != nil && !errors.Is(err, statements.ErrNotFound) {
					b.Fatal(err)
				}
				if err := s.PutActivity(ctx, BenchTenant, id, a); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "activities/s")
	})
	b.Run("batched", func(b *testing.B) {
		for b.Loop() {
			acts := batch()
			ids := slices.Collect(maps.Keys(acts))
			if _, err := s.GetActivities(ctx, BenchTenant, ids); err != nil {
				b.Fatal(err)
			}
			if err := s.PutActivities(ctx, BenchTenant, acts); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "activities/s")
	})
}
