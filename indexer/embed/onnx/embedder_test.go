//go:build cgo

package onnx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/indexer/embed"
)

func newTestONNX(t testing.TB, opts ...Option) *Embedder {
	t.Helper()
	e, err := New(testModelDir(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func embedOne(t testing.TB, e embed.Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func TestONNXInfo(t *testing.T) {
	e := newTestONNX(t)
	if got := e.Model(); got != (embed.Info{Name: DefaultModelName, Dims: 384}) {
		t.Fatalf("Model() = %+v", got)
	}
}

// TestONNXSemantics checks that the vectors carry meaning: a paraphrase with
// no content word in common must score far above an unrelated sentence.
func TestONNXSemantics(t *testing.T) {
	e := newTestONNX(t)
	cat := embedOne(t, e, "A cat sits on the mat")
	kitten := embedOne(t, e, "A kitten is resting on a rug")
	revenue := embedOne(t, e, "Quarterly revenue grew by 5%")
	simPara, simOther := embed.Cosine(cat, kitten), embed.Cosine(cat, revenue)
	t.Logf("cos(cat, kitten)=%.3f cos(cat, revenue)=%.3f", simPara, simOther)
	if simPara <= simOther+0.3 {
		t.Fatalf("paraphrase %.3f not clearly above unrelated %.3f", simPara, simOther)
	}
	// A second pair, from the learning domain and with no shared stems.
	q := embedOne(t, e, "settling arguments among coworkers")
	good := embedOne(t, e, "resolving workplace disputes between colleagues")
	bad := embedOne(t, e, "baking sourdough bread at home")
	if embed.Cosine(q, good) <= embed.Cosine(q, bad)+0.3 {
		t.Fatalf("cos(q, good)=%.3f cos(q, bad)=%.3f", embed.Cosine(q, good), embed.Cosine(q, bad))
	}
}

// TestONNXMatchesFP32Reference compares with all-MiniLM-L6-v2 computed
// independently (fp32 safetensors weights, numpy forward pass; see
// testdata/gen_reference.py). It proves tokenization, input wiring, pooling
// and normalisation end to end; int8 quantisation alone costs < 0.001.
func TestONNXMatchesFP32Reference(t *testing.T) {
	e := newTestONNX(t)
	raw, err := os.ReadFile("testdata/reference_fp32.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Text   string    `json:"text"`
			Vector []float32 `json:"vector"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	for _, c := range ref.Cases {
		if sim := embed.Cosine(embedOne(t, e, c.Text), c.Vector); sim < 0.995 {
			t.Errorf("%q: cosine to fp32 reference %.4f, want >= 0.995", c.Text, sim)
		}
	}
}

func TestONNXUnitNormAndDims(t *testing.T) {
	e := newTestONNX(t)
	vs, err := e.Embed(context.Background(), []string{"short", "", strings.Repeat("a long chunk of text ", 400)})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if len(v) != 384 {
			t.Fatalf("vector %d has %d dims", i, len(v))
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(math.Sqrt(n)-1) > 1e-4 {
			t.Errorf("vector %d norm %.6f", i, math.Sqrt(n))
		}
	}
}

// TestONNXBatchEqualsSingle: padding inside a batch must not change a text's
// vector, or re-indexing would produce different vectors for unchanged text
// depending on its neighbours.
func TestONNXBatchEqualsSingle(t *testing.T) {
	e := newTestONNX(t, WithBatchSize(4))
	texts := []string{
		"A cat sits on the mat",
		"Quarterly revenue grew by 5%",
		strings.Repeat("Learners practise giving feedback in role plays. ", 20),
		"x",
		"Héllo wörld, naïve café",
		"The course covers conflict resolution, negotiation and active listening.",
		"",
	}
	batch, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		single := embedOne(t, e, text)
		for k := range single {
			if d := math.Abs(float64(single[k] - batch[i][k])); d > 1e-5 {
				t.Fatalf("text %d dim %d: single %g batch %g", i, k, single[k], batch[i][k])
			}
		}
	}
}

func TestONNXDeterministic(t *testing.T) {
	e := newTestONNX(t)
	a := embedOne(t, e, "Deterministic output for caching")
	b := embedOne(t, e, "Deterministic output for caching")
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("dim %d differs: %g vs %g", k, a[k], b[k])
		}
	}
}

func TestONNXConcurrent(t *testing.T) {
	e := newTestONNX(t, WithBatchSize(8))
	want := embedOne(t, e, "concurrency check")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts := []string{"other text", "concurrency check", "more text here"}
			vs, err := e.Embed(context.Background(), texts)
			if err != nil {
				errs <- err
				return
			}
			if embed.Cosine(vs[1], want) < 0.99999 {
				errs <- fmt.Errorf("concurrent result differs: %f", embed.Cosine(vs[1], want))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestONNXCancelled(t *testing.T) {
	e := newTestONNX(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"a", "b"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestONNXCancelInFlight: cancelling stops a large Embed promptly instead of
// finishing every batch.
func TestONNXCancelInFlight(t *testing.T) {
	e := newTestONNX(t, WithBatchSize(64))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Embed(ctx, benchChunks(2000))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("cancellation took %v", d)
	}
}

func TestONNXClosed(t *testing.T) {
	e, err := New(testModelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"a"}); err == nil {
		t.Fatal("Embed after Close succeeded")
	}
	// The runtime is released with the last user and can be loaded again.
	e2 := newTestONNX(t)
	embedOne(t, e2, "reloaded")
}

func TestNewMissingModel(t *testing.T) {
	_, err := New(filepath.Join(t.TempDir(), "nothing-here"))
	if !errors.Is(err, ErrNoModel) {
		t.Fatalf("err = %v, want ErrNoModel", err)
	}
	if !strings.Contains(err.Error(), "make model") {
		t.Fatalf("error does not say how to install: %v", err)
	}
}

// TestCachedWithONNX: the wrapper around the real model returns the same
// vectors as the model itself.
func TestCachedWithONNX(t *testing.T) {
	e, err := New(testModelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := embed.NewCached(e, embed.NewLRU(10))
	texts := []string{"A cat sits on the mat", "Quarterly revenue grew by 5%"}
	direct, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // miss, then hit
		got, err := c.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range texts {
			if !slices.Equal(got[i], direct[i]) {
				t.Fatalf("cached vector %d differs", i)
			}
		}
	}
}

// benchChunks makes n chunks of about 100 words of English-like text.
func benchChunks(n int) []string {
	words := strings.Fields(`learners practise feedback conversations with peers while the facilitator
		observes and records evidence of each competency the module assesses including active listening
		negotiation planning conflict resolution coaching delegation and prioritisation under time pressure
		assessment rubrics describe observable behaviours at four levels from emerging to expert and every
		level links to resources activities and reflective prompts that managers can assign`)
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for w := 0; w < 100; w++ {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		b.WriteByte('.')
		out[i] = b.String()
	}
	return out
}

// BenchmarkEmbed reports throughput in chunks/s for 1,000 chunks of ~100
// words (~130 tokens each), the indexer's typical chunk size.
func BenchmarkEmbed(b *testing.B) {
	e := newTestONNX(b)
	chunks := benchChunks(1000)
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), chunks); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(chunks))/b.Elapsed().Seconds(), "chunks/s")
}
