package embed

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// countingEmbedder records which texts reach the model.
type countingEmbedder struct {
	info Info
	mu   sync.Mutex
	seen []string
	err  error
}

func (c *countingEmbedder) Model() Info { return c.info }

func (c *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	c.seen = append(c.seen, texts...)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = fakeVector(t, c.info.Dims)
	}
	return out, nil
}

func TestCachedEmbedsOnlyMisses(t *testing.T) {
	inner := &countingEmbedder{info: Info{Name: "m", Dims: 3}}
	c := NewCached(inner, NewLRU(100))
	ctx := context.Background()

	first, err := c.Embed(ctx, []string{"a", "bb", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inner.seen, []string{"a", "bb"}) {
		t.Fatalf("model saw %v, want each distinct text once", inner.seen)
	}
	first[0][0] = 999 // must not leak into the other "a" or the cache
	if first[2][0] == 999 {
		t.Fatal("duplicate texts share one slice")
	}

	inner.seen = nil
	second, err := c.Embed(ctx, []string{"bb", "ccc", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inner.seen, []string{"ccc"}) {
		t.Fatalf("model saw %v on re-index, want only the changed text", inner.seen)
	}
	for i, text := range []string{"bb", "ccc", "a"} {
		if !slices.Equal(second[i], fakeVector(text, 3)) {
			t.Errorf("%q: got %v", text, second[i])
		}
	}
	if c.Model() != inner.info {
		t.Fatal("Model() not passed through")
	}
}

func TestCachedKeyedByModel(t *testing.T) {
	store := NewLRU(100)
	a := &countingEmbedder{info: Info{Name: "model-a", Dims: 3}}
	b := &countingEmbedder{info: Info{Name: "model-b", Dims: 3}}
	if _, err := NewCached(a, store).Embed(context.Background(), []string{"same text"}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewCached(b, store).Embed(context.Background(), []string{"same text"}); err != nil {
		t.Fatal(err)
	}
	if len(b.seen) != 1 {
		t.Fatal("model-b was served model-a's cached vector")
	}
	if CacheKey(Info{"ab", 3}, "c") == CacheKey(Info{"a", 3}, "bc") {
		t.Fatal("key is ambiguous across the name/text boundary")
	}
	if CacheKey(Info{"m", 256}, "t") == CacheKey(Info{"m", 512}, "t") {
		t.Fatal("key ignores dims")
	}
}

func TestCachedPropagatesErrors(t *testing.T) {
	boom := errors.New("boom")
	store := NewLRU(10)
	c := NewCached(&countingEmbedder{info: Info{Name: "m", Dims: 3}, err: boom}, store)
	if _, err := c.Embed(context.Background(), []string{"x"}); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if store.Len() != 0 {
		t.Fatal("failed embed was cached")
	}
}

func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	l := NewLRU(2)
	l.Put(map[string][]float32{"a": {1}})
	l.Put(map[string][]float32{"b": {2}})
	l.Get([]string{"a"}) // a is now more recent than b
	l.Put(map[string][]float32{"c": {3}})
	got := l.Get([]string{"a", "b", "c"})
	if _, ok := got["b"]; ok || len(got) != 2 {
		t.Fatalf("after eviction got %v, want a and c", got)
	}
	got["a"][0] = 42
	if l.Get([]string{"a"})["a"][0] != 1 {
		t.Fatal("caller mutated the cached vector")
	}
}
