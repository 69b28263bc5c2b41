package embed

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
)

// Cache stores vectors by key (see [CacheKey]). It has no error returns on
// purpose: a cache that cannot answer is a cache miss, and a failed Put only
// costs a future re-embed, so a persistent implementation logs its own
// failures instead of failing indexing.
//
// Implementations must be safe for concurrent use and must not let callers
// mutate stored vectors through returned or passed-in slices.
type Cache interface {
	// Get returns the vectors found for keys; missing keys are absent.
	Get(keys []string) map[string][]float32
	// Put stores vectors by key.
	Put(entries map[string][]float32)
}

// CacheKey is the cache key for text embedded by model: hex
// sha256(name NUL dims NUL text). The model is part of the key so that
// switching models can never return another model's vector; dims is included
// because one model name can serve several sizes (OpenAI "dimensions"). The
// NUL separators keep ("ab","c") and ("a","bc") apart.
func CacheKey(model Info, text string) string {
	h := sha256.New()
	h.Write([]byte(model.Name))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(model.Dims)))
	h.Write([]byte{0})
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))
}

// Cached is an Embedder that consults a Cache before embedding, so that
// re-indexing a course only embeds chunks whose text changed.
type Cached struct {
	inner Embedder
	store Cache
}

// NewCached wraps inner with store.
func NewCached(inner Embedder, store Cache) *Cached {
	return &Cached{inner: inner, store: store}
}

// Model returns the wrapped embedder's Info.
func (c *Cached) Model() Info { return c.inner.Model() }

// Embed returns cached vectors where present and embeds only the misses,
// each distinct text once, in one call to the wrapped embedder.
func (c *Cached) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	info := c.inner.Model()
	keys := make([]string, len(texts))
	for i, t := range texts {
		keys[i] = CacheKey(info, t)
	}
	hits := c.store.Get(keys)
	out := make([][]float32, len(texts))

	var missTexts []string
	missIdx := map[string]int{} // key -> position in missTexts
	for i, k := range keys {
		if v, ok := hits[k]; ok && len(v) == info.Dims {
			out[i] = v
			continue
		}
		if _, seen := missIdx[k]; !seen {
			missIdx[k] = len(missTexts)
			missTexts = append(missTexts, texts[i])
		}
	}
	if len(missTexts) == 0 {
		return out, nil
	}
	vs, err := c.inner.Embed(ctx, missTexts)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(missTexts) {
		return nil, fmt.Errorf("embed: %s returned %d vectors for %d texts", info.Name, len(vs), len(missTexts))
	}
	fresh := make(map[string][]float32, len(missTexts))
	for i, k := range keys {
		if out[i] != nil {
			continue
		}
		v := vs[missIdx[k]]
		if _, dup := fresh[k]; dup {
			// The same text twice in one call: give each position its own
			// slice so callers cannot alias each other's results.
			v = append([]float32(nil), v...)
		}
		out[i] = v
		fresh[k] = v
	}
	if mp, ok := c.store.(modelPutter); ok {
		mp.putModel(info, fresh)
	} else {
		c.store.Put(fresh)
	}
	return out, nil
}

// modelPutter is a Cache that records which model produced the vectors it stores.
type modelPutter interface {
	putModel(model Info, entries map[string][]float32)
}

// LRU is an in-memory Cache holding at most a fixed number of vectors,
// evicting the least recently used. It copies vectors in and out, so cached
// data cannot be changed through slices held by callers.
type LRU struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = most recently used; values are *lruEntry
	items map[string]*list.Element
}

type lruEntry struct {
	key string
	vec []float32
}

// NewLRU returns an LRU holding up to capacity vectors (a 384-dim vector
// takes ~1.6 kB, so 100,000 entries is about 160 MB). capacity < 1 means 1.
func NewLRU(capacity int) *LRU {
	return &LRU{max: max(capacity, 1), order: list.New(), items: map[string]*list.Element{}}
}

// Get implements Cache.
func (l *LRU) Get(keys []string) map[string][]float32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string][]float32)
	for _, k := range keys {
		if el, ok := l.items[k]; ok {
			l.order.MoveToFront(el)
			out[k] = append([]float32(nil), el.Value.(*lruEntry).vec...)
		}
	}
	return out
}

// Put implements Cache.
func (l *LRU) Put(entries map[string][]float32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, v := range entries {
		v = append([]float32(nil), v...)
		if el, ok := l.items[k]; ok {
			el.Value.(*lruEntry).vec = v
			l.order.MoveToFront(el)
			continue
		}
		l.items[k] = l.order.PushFront(&lruEntry{key: k, vec: v})
		for l.order.Len() > l.max {
			last := l.order.Back()
			l.order.Remove(last)
			delete(l.items, last.Value.(*lruEntry).key)
		}
	}
}

// remove drops key if present.
func (l *LRU) remove(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.items[key]; ok {
		l.order.Remove(el)
		delete(l.items, key)
	}
}

// Len reports the number of cached vectors.
func (l *LRU) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}
