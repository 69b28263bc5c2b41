package recordbench

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

const (
	tenant = "bench-tenant"
	kind   = "registration"
	// seedCount is the number of records get and list work on.
	seedCount = 10_000
	// pageSize is the List page size of the list benchmark.
	pageSize = 100
	// seedWorkers is the number of goroutines that fill a store before get and list.
	seedWorkers = 8
	// parallelism multiplies GOMAXPROCS into the number of put_parallel goroutines, standing
	// in for concurrent request handlers on a small server.
	parallelism = 8
)

// BenchmarkRecordStore measures records/s for each operation on each backend, SQLite and
// PostgreSQL next to each other under the same operation.
func BenchmarkRecordStore(b *testing.B) {
	ops := []struct {
		name string
		fn   func(b *testing.B, be recordstores.Backend)
	}{
		{"put", benchPut},
		{"put_parallel", benchPutParallel},
		{"get", benchGet},
		{"list", benchList},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			for _, be := range recordstores.All() {
				b.Run(be.Name, func(b *testing.B) { op.fn(b, be) })
			}
		})
	}
}

func benchPut(b *testing.B, be recordstores.Backend) {
	s := be.Open(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		if err := s.Create(ctx, newRecord(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
	reportRate(b, b.N)
}

// benchPutParallel uses b.N rather than b.Loop (RunParallel needs it), so the store is
// opened, and the timer reset, once per run.
func benchPutParallel(b *testing.B, be recordstores.Backend) {
	s := be.Open(b)
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Create(ctx, newRecord(int(next.Add(1)))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	reportRate(b, b.N)
}

func benchGet(b *testing.B, be recordstores.Backend) {
	s := be.Open(b)
	seed(b, s)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		id := recordID(rng.IntN(seedCount))
		r, err := s.Get(ctx, tenant, kind, id)
		if err != nil {
			b.Fatal(err)
		}
		if r.ID != id || len(r.Data) == 0 {
			b.Fatalf("Get(%s) returned %s with %d bytes", id, r.ID, len(r.Data))
		}
	}
	reportRate(b, b.N)
}

// benchList pages through all seedCount records once per op.
func benchList(b *testing.B, be recordstores.Backend) {
	s := be.Open(b)
	seed(b, s)
	ctx := context.Background()
	for b.Loop() {
		q := record.Query{Tenant: tenant, Kind: kind, Limit: pageSize}
		n := 0
		for {
			p, err := s.List(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			n += len(p.Records)
			if p.Next == "" {
				break
			}
			q.Cursor = p.Next
		}
		if n != seedCount {
			b.Fatalf("a full pass listed %d records, want %d", n, seedCount)
		}
	}
	reportRate(b, b.N*seedCount)
}

// reportRate reports records/s over the timed part of the run.
func reportRate(b *testing.B, records int) {
	if sec := b.Elapsed().Seconds(); sec > 0 {
		b.ReportMetric(float64(records)/sec, "records/s")
	}
}

// seed fills s with seedCount records of one kind through the port, from a few goroutines,
// then analyzes the database.
func seed(b *testing.B, s record.Store) {
	b.Helper()
	ctx := context.Background()
	var (
		next int64 = -1
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range seedWorkers {
		wg.Go(func() {
			for {
				i := int(atomic.AddInt64(&next, 1))
				if i >= seedCount {
					return
				}
				if err := s.Create(ctx, newRecord(i)); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatalf("seed: %v", err)
	}
	// Give the planner the statistics a long-running deployment has. Without them PostgreSQL
	// answers Get through records_by_updated (a scan of the kind's whole index range) instead
	// of the primary key until autovacuum first analyzes the table: ~30x slower at 10k rows.
	if d, ok := s.(interface{ DB() *sql.DB }); ok {
		if _, err := d.DB().ExecContext(ctx, "ANALYZE"); err != nil {
			b.Fatalf("analyze: %v", err)
		}
	}
}

func recordID(i int) string { return fmt.Sprintf("reg-%08d", i) }

func newRecord(i int) *record.Record {
	p := payloads[i%len(payloads)]
	return &record.Record{
		Tenant: tenant,
		Kind:   kind,
		ID:     recordID(i),
		Parent: &record.Ref{Kind: "course", ID: p.course},
		Key:    p.learner,
		Data:   p.data,
	}
}

type payload struct {
	course, learner string
	data            json.RawMessage
}

// payloads are built once so the timed loops measure the store, not JSON encoding.
var payloads = func() []payload {
	rng := rand.New(rand.NewPCG(42, 7))
	out := make([]payload, 256)
	for i := range out {
		course := fmt.Sprintf("course-%04d", rng.IntN(200))
		learner := fmt.Sprintf("learner-%06d", rng.IntN(100_000))
		out[i] = payload{course, learner, registrationJSON(rng, course, learner)}
	}
	return out
}()

// registrationJSON returns a course registration as the LMS stores it: learner, course,
// progress and a handful of SCORM-style interactions, about 1 KB.
func registrationJSON(rng *rand.Rand, course, learner string) json.RawMessage {
	type interaction struct {
		ID        string  `json:"id"`
		Type      string  `json:"type"`
		Result    string  `json:"result"`
		Score     float64 `json:"score"`
		LatencyMS int     `json:"latency_ms"`
	}
	start := time.Date(2025, 9, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(1e6)) * time.Second)
	its := make([]interaction, 5)
	for j := range its {
		its[j] = interaction{
			ID:        fmt.Sprintf("q%02d-%s", j+1, course),
			Type:      []string{"choice", "fill-in", "true-false", "matching"}[rng.IntN(4)],
			Result:    []string{"correct", "incorrect", "neutral"}[rng.IntN(3)],
			Score:     float64(rng.IntN(101)) / 100,
			LatencyMS: 2000 + rng.IntN(60000),
		}
	}
	v := map[string]any{
		"learner":      map[string]string{"id": learner, "name": "Learner " + learner[8:], "email": learner + "@example.edu"},
		"course":       map[string]string{"id": course, "title": "Course " + course[7:] + ": Introduction to Applied Statistics", "version": "3"},
		"status":       []string{"not_attempted", "incomplete", "completed", "passed", "failed"}[rng.IntN(5)],
		"progress":     float64(rng.IntN(101)) / 100,
		"score":        map[string]float64{"raw": float64(rng.IntN(101)), "min": 0, "max": 100, "scaled": float64(rng.IntN(101)) / 100},
		"attempts":     1 + rng.IntN(4),
		"started_at":   start.Format(time.RFC3339),
		"last_seen_at": start.Add(time.Duration(rng.IntN(7200)) * time.Second).Format(time.RFC3339),
		"location":     fmt.Sprintf("module-%d/page-%d", 1+rng.IntN(8), 1+rng.IntN(20)),
		"interactions": its,
		"tags":         []string{"autumn-term", "cohort-b", "mandatory"},
	}
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	// Pad with an opaque suspend_data string, as SCORM content keeps, to about 1 KB.
	if pad := 1024 - len(data) - len(`,"suspend_data":""`); pad > 0 {
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		var sb strings.Builder
		for range pad {
			sb.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		v["suspend_data"] = sb.String()
		if data, err = json.Marshal(v); err != nil {
			panic(err)
		}
	}
	return data
}
