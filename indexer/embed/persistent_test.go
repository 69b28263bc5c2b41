package embed_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/embed/onnx"
	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

// modelCounter delegates to a real embedder and counts the texts that reach it; rename, when
// set, makes it report another model name (the same weights under another identity).
type modelCounter struct {
	embed.Embedder
	rename string
	mu     sync.Mutex
	texts  int
}

func (m *modelCounter) Model() embed.Info {
	info := m.Embedder.Model()
	if m.rename != "" {
		info.Name = m.rename
	}
	return info
}

func (m *modelCounter) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m.mu.Lock()
	m.texts += len(texts)
	m.mu.Unlock()
	return m.Embedder.Embed(ctx, texts)
}

func (m *modelCounter) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.texts
}

// realModel is the installed local model: $LECTERN_TEST_MODEL_DIR, else the default install.
// Without one the test is skipped locally but fails in CI, where `make model` has run: a
// silent skip there would hide that the cache was never tested with real vectors.
func realModel(t testing.TB) *onnx.Embedder {
	t.Helper()
	dir := cmp.Or(os.Getenv("LECTERN_TEST_MODEL_DIR"), onnx.DefaultModelDir(testenv.CacheDir()))
	m, err := onnx.New(dir)
	if err != nil {
		if errors.Is(err, onnx.ErrNoModel) && os.Getenv("CI") == "" {
			t.Skipf("no embedding model installed (%v); run scripts/install-model.sh", err)
		}
		t.Fatalf("embedding model required: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

var cacheTexts = []string{
	"Keep three points of contact when climbing a ladder.",
	"Compound interest is earned on interest already added to the principal.",
	"A recursive function calls itself on a smaller input until it reaches a base case.",
}

func TestRecordCacheSurvivesRestart(t *testing.T) {
	model := realModel(t)
	ctx := context.Background()
	for _, backend := range recordstores.All() {
		t.Run(backend.Name, func(t *testing.T) {
			connect := backend.Fresh(t)
			first := &modelCounter{Embedder: model}
			want, err := embed.NewCached(first, embed.NewRecordCache(connect(), embed.RecordCacheOptions{}).Tenant(ctx, "t1")).Embed(ctx, cacheTexts)
			if err != nil {
				t.Fatal(err)
			}
			if first.count() != len(cacheTexts) {
				t.Fatalf("first run embedded %d texts, want %d", first.count(), len(cacheTexts))
			}

			// A new connection and a new cache, as after a restart: nothing in memory.
			again := &modelCounter{Embedder: model}
			got, err := embed.NewCached(again, embed.NewRecordCache(connect(), embed.RecordCacheOptions{}).Tenant(ctx, "t1")).Embed(ctx, cacheTexts)
			if err != nil {
				t.Fatal(err)
			}
			if again.count() != 0 {
				t.Fatalf("after a restart the model embedded %d texts again, want 0", again.count())
			}
			for i := range want {
				if !slices.Equal(got[i], want[i]) {
					t.Fatalf("text %d: persisted vector differs from the model's", i)
				}
			}

			// Another tenant never sees t1's entries, and another model never gets its vectors.
			other := &modelCounter{Embedder: model}
			if _, err := embed.NewCached(other, embed.NewRecordCache(connect(), embed.RecordCacheOptions{}).Tenant(ctx, "t2")).Embed(ctx, cacheTexts); err != nil {
				t.Fatal(err)
			}
			renamed := &modelCounter{Embedder: model, rename: "another-model"}
			if _, err := embed.NewCached(renamed, embed.NewRecordCache(connect(), embed.RecordCacheOptions{}).Tenant(ctx, "t1")).Embed(ctx, cacheTexts); err != nil {
				t.Fatal(err)
			}
			if other.count() != len(cacheTexts) || renamed.count() != len(cacheTexts) {
				t.Fatalf("embedded %d texts for another tenant and %d for another model, want %d each",
					other.count(), renamed.count(), len(cacheTexts))
			}

			// The tenant purge (every record of the tenant) removes its vectors.
			s := connect()
			if err := s.Delete(ctx, "t1", "", ""); err != nil {
				t.Fatal(err)
			}
			if p, err := s.List(ctx, record.Query{Tenant: "t1", Kind: embed.KindVector}); err != nil || len(p.Records) != 0 {
				t.Fatalf("after the tenant purge: %v, %d vectors left", err, len(p.Records))
			}
		})
	}
}

func TestRecordCacheConcurrentIndexers(t *testing.T) {
	model := realModel(t)
	ctx := context.Background()
	for _, backend := range recordstores.All() {
		t.Run(backend.Name, func(t *testing.T) {
			connect := backend.Fresh(t)
			texts := make([]string, 40)
			for i := range texts {
				texts[i] = fmt.Sprintf("Safety rule number %d: report every incident to your supervisor.", i)
			}
			// Four indexers (two processes with two tasks each) embed the same texts at once,
			// as redelivered at-least-once tasks do.
			caches := []*embed.RecordCache{embed.NewRecordCache(connect(), embed.RecordCacheOptions{}), embed.NewRecordCache(connect(), embed.RecordCacheOptions{})}
			results := make([][][]float32, 4)
			errs := make([]error, 4)
			var wg sync.WaitGroup
			for i := range results {
				wg.Go(func() {
					results[i], errs[i] = embed.NewCached(model, caches[i%2].Tenant(ctx, "t")).Embed(ctx, texts)
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("indexer %d: %v", i, err)
				}
				for j := range texts {
					if embed.Cosine(results[i][j], results[0][j]) < 0.9999 {
						t.Fatalf("indexer %d text %d: vector differs", i, j)
					}
				}
			}
			all, err := record.All(ctx, connect(), record.Query{Tenant: "t", Kind: embed.KindVector})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != len(texts) {
				t.Fatalf("%d vector records for %d texts", len(all), len(texts))
			}
		})
	}
}

func TestRecordCacheExpire(t *testing.T) {
	model := realModel(t)
	ctx := context.Background()
	for _, backend := range recordstores.All() {
		t.Run(backend.Name, func(t *testing.T) {
			connect := backend.Fresh(t)
			// Retention 80 ms: a read refreshes an entry older than 10 ms.
			opts := embed.RecordCacheOptions{Retention: 80 * time.Millisecond}
			if _, err := embed.NewCached(model, embed.NewRecordCache(connect(), opts).Tenant(ctx, "t")).Embed(ctx, cacheTexts); err != nil {
				t.Fatal(err)
			}
			time.Sleep(30 * time.Millisecond)
			cutoff := time.Now()
			// A fresh process reads the first text only: that entry is in use again.
			if _, err := embed.NewCached(model, embed.NewRecordCache(connect(), opts).Tenant(ctx, "t")).Embed(ctx, cacheTexts[:1]); err != nil {
				t.Fatal(err)
			}

			rc := embed.NewRecordCache(connect(), opts)
			n, err := rc.Expire(ctx, "t", cutoff)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(cacheTexts)-1 {
				t.Fatalf("expired %d entries, want the %d unused ones", n, len(cacheTexts)-1)
			}
			if n, err := rc.Expire(ctx, "t", cutoff); err != nil || n != 0 {
				t.Fatalf("second expiry: %d, %v; want nothing left to expire", n, err)
			}
			counter := &modelCounter{Embedder: model}
			if _, err := embed.NewCached(counter, rc.Tenant(ctx, "t")).Embed(ctx, cacheTexts); err != nil {
				t.Fatal(err)
			}
			if counter.count() != len(cacheTexts)-1 {
				t.Fatalf("after expiry the model embedded %d texts, want the %d expired ones", counter.count(), len(cacheTexts)-1)
			}
		})
	}
}

// BenchmarkRecordCache re-embeds 1,000 distinct chunk texts (~60 words each): through the
// model alone, through a embed.RecordCache that holds them but starts with an empty LRU (a
// restarted indexer: every vector read from the record store), and with a warm LRU. Each op
// is the whole batch.
func BenchmarkRecordCache(b *testing.B) {
	m := realModel(b)
	ctx := context.Background()
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = fmt.Sprintf("Chunk %d. Keep three points of contact when climbing a ladder, face the rungs, "+
			"and never stand on the top step; compound interest is earned on interest already added to the "+
			"principal, so small deposits grow; a recursive function calls itself on a smaller input until "+
			"it reaches a base case.", i)
	}
	run := func(b *testing.B, e embed.Embedder) {
		for b.Loop() {
			if _, err := e.Embed(ctx, texts); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "chunks/s")
	}
	b.Run("model", func(b *testing.B) { run(b, m) })
	for _, backend := range recordstores.All() {
		b.Run(backend.Name, func(b *testing.B) {
			rs := backend.Open(b)
			if _, err := embed.NewCached(m, embed.NewRecordCache(rs, embed.RecordCacheOptions{}).Tenant(ctx, "t")).Embed(ctx, texts); err != nil {
				b.Fatal(err)
			}
			counter := &modelCounter{Embedder: m}
			b.Run("restarted", func(b *testing.B) {
				for b.Loop() {
					// A new cache per batch: the LRU is empty, as after a restart.
					if _, err := embed.NewCached(counter, embed.NewRecordCache(rs, embed.RecordCacheOptions{}).Tenant(ctx, "t")).Embed(ctx, texts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "chunks/s")
			})
			warm := embed.NewRecordCache(rs, embed.RecordCacheOptions{})
			b.Run("warm", func(b *testing.B) { run(b, embed.NewCached(counter, warm.Tenant(ctx, "t"))) })
			if counter.count() != 0 {
				b.Fatalf("the model embedded %d texts through a full cache", counter.count())
			}
		})
	}
}
