package embed

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/storage/record"
)

// KindVector is the record kind of persisted vectors: one record per (tenant, CacheKey),
// in the tenant whose content produced the text.
const KindVector = "embedding_vector"

// DefaultRetention is how long a persisted vector that nobody uses is kept.
const DefaultRetention = 30 * 24 * time.Hour

// expireBatch bounds the records one Expire call deletes, so the index task that runs it
// never spends long on housekeeping; the next task continues.
const expireBatch = 1000

// recordWorkers bounds concurrent record reads and writes of one Get or Put: with a remote
// PostgreSQL each is a round trip, and a thousand sequential ones would add up.
const recordWorkers = 4

// RecordCacheOptions configures NewRecordCache.
type RecordCacheOptions struct {
	// FrontEntries is the capacity of the in-memory LRU consulted before the record store;
	// zero means 20,000 (a 384-dim vector takes ~1.6 kB).
	FrontEntries int
	// Retention: an entry not used for this long is deleted by Expire. Zero means
	// DefaultRetention.
	Retention time.Duration
	// Logger receives record store failures, which the cache otherwise swallows (a failing
	// cache is a cache miss). Nil discards them.
	Logger *slog.Logger
}

// RecordCache persists vectors in the record store, per tenant, behind an in-memory LRU, so
// that re-indexing after a restart, or in another indexer process, does not re-embed text
// whose vector is already known.
//
// Entries are per tenant on purpose: a cache shared across tenants would tell one tenant,
// through indexing time, whether another tenant holds a given text, and would keep vectors
// (which leak their text to inversion attacks) after a tenant's deletion. Per tenant, the
// entries are ordinary records of the tenant, so the tenant purge deletes them, and the
// in-memory LRU keys carry the tenant too. The cost is re-embedding text two tenants share.
//
// The record id is CacheKey (hex SHA-256 of model name, dims and text), so vectors of one
// model never serve another. Writers race benignly: two indexers embedding the same text
// both try to create the record, the second gets record.ErrConflict and drops its copy (the
// model is deterministic). Entries are refreshed (their Updated stamp) at most every
// Retention/8 when read, and Expire deletes those older than Retention.
type RecordCache struct {
	records   record.Store
	front     *LRU
	retention time.Duration
	logger    *slog.Logger
	now       func() time.Time
}

// NewRecordCache returns a persistent vector cache over records.
func NewRecordCache(records record.Store, opts RecordCacheOptions) *RecordCache {
	if opts.FrontEntries <= 0 {
		opts.FrontEntries = 20000
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &RecordCache{records: records, front: NewLRU(opts.FrontEntries), retention: opts.Retention,
		logger: opts.Logger, now: func() time.Time { return time.Now().UTC() }}
}

// Retention returns how long an unused entry is kept.
func (c *RecordCache) Retention() time.Duration { return c.retention }

// Tenant returns the Cache of one tenant's vectors. ctx bounds the record store calls made
// through it (the Cache interface has none), so build one per task.
func (c *RecordCache) Tenant(ctx context.Context, tenant string) Cache {
	return &tenantCache{c: c, ctx: ctx, tenant: tenant}
}

// Expire deletes up to a batch of the tenant's entries not used since before; it returns how
// many it deleted. Entries come oldest first (the record store lists by Updated), so the
// call reads only what it deletes plus one page.
func (c *RecordCache) Expire(ctx context.Context, tenant string, before time.Time) (int, error) {
	n := 0
	q := record.Query{Tenant: tenant, Kind: KindVector, Limit: 100}
	for n < expireBatch {
		p, err := c.records.List(ctx, q)
		if err != nil {
			return n, fmt.Errorf("expire vectors of %q: %w", tenant, err)
		}
		for _, r := range p.Records {
			if !r.Updated.Before(before) {
				return n, nil
			}
			if err := c.records.Delete(ctx, tenant, KindVector, r.ID); err != nil && !errors.Is(err, record.ErrNotFound) {
				return n, fmt.Errorf("expire vectors of %q: %w", tenant, err)
			}
			c.front.remove(frontKey(tenant, r.ID))
			n++
		}
		if p.Next == "" {
			return n, nil
		}
		q.Cursor = p.Next
	}
	return n, nil
}

// storedVector is the record data: model and dims for whoever inspects the table, the vector
// as little-endian float32 bytes in base64 (a quarter of the size of a JSON number array).
type storedVector struct {
	Model  string `json:"model"`
	Dims   int    `json:"dims"`
	Vector string `json:"vector"`
}

func encodeVector(model Info, v []float32) json.RawMessage {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	data, _ := json.Marshal(storedVector{Model: model.Name, Dims: model.Dims, Vector: base64.StdEncoding.EncodeToString(b)})
	return data
}

func decodeVector(data []byte) ([]float32, bool) {
	var s storedVector
	if json.Unmarshal(data, &s) != nil {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(s.Vector)
	if err != nil || len(b) != 4*s.Dims || s.Dims == 0 {
		return nil, false
	}
	v := make([]float32, s.Dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
}

// frontKey keeps tenants apart in the shared LRU (tenant ids hold no NUL).
func frontKey(tenant, key string) string { return tenant + "\x00" + key }

type tenantCache struct {
	c      *RecordCache
	ctx    context.Context
	tenant string
}

// Get implements Cache: the LRU first, then the record store for the rest.
func (t *tenantCache) Get(keys []string) map[string][]float32 {
	fk := make([]string, len(keys))
	for i, k := range keys {
		fk[i] = frontKey(t.tenant, k)
	}
	found := t.c.front.Get(fk)
	out := make(map[string][]float32, len(keys))
	var misses []string
	for i, k := range keys {
		if v, ok := found[fk[i]]; ok {
			out[k] = v
		} else {
			misses = append(misses, k)
		}
	}
	if len(misses) == 0 {
		return out
	}
	var mu sync.Mutex
	loaded := map[string][]float32{}
	touchBefore := t.c.now().Add(-t.c.retention / 8)
	t.each(misses, func(k string) {
		r, err := t.c.records.Get(t.ctx, t.tenant, KindVector, k)
		if err != nil {
			if !errors.Is(err, record.ErrNotFound) {
				t.c.logger.Warn("vector cache read failed", "tenant", t.tenant, "error", err)
			}
			return
		}
		v, ok := decodeVector(r.Data)
		if !ok {
			return // unreadable: a miss, and the fresh vector's Create will conflict harmlessly
		}
		if r.Updated.Before(touchBefore) {
			// Rewriting marks the entry as used so Expire keeps it; a concurrent toucher
			// (ErrStale) has done the same.
			if err := t.c.records.Update(t.ctx, r); err != nil && !errors.Is(err, record.ErrStale) && !errors.Is(err, record.ErrNotFound) {
				t.c.logger.Warn("vector cache refresh failed", "tenant", t.tenant, "error", err)
			}
		}
		mu.Lock()
		loaded[k] = v
		mu.Unlock()
	})
	front := make(map[string][]float32, len(loaded))
	for k, v := range loaded {
		out[k] = v
		front[frontKey(t.tenant, k)] = v
	}
	t.c.front.Put(front)
	return out
}

// Put implements Cache. The model name stored beside a vector is informational (the key
// already separates models); Cached supplies it through putModel.
func (t *tenantCache) Put(entries map[string][]float32) { t.putModel(Info{}, entries) }

func (t *tenantCache) putModel(model Info, entries map[string][]float32) {
	front := make(map[string][]float32, len(entries))
	keys := make([]string, 0, len(entries))
	for k, v := range entries {
		front[frontKey(t.tenant, k)] = v
		keys = append(keys, k)
	}
	t.c.front.Put(front)
	t.each(keys, func(k string) {
		m := model
		m.Dims = len(entries[k])
		err := t.c.records.Create(t.ctx, &record.Record{Tenant: t.tenant, Kind: KindVector, ID: k, Data: encodeVector(m, entries[k])})
		if err != nil && !errors.Is(err, record.ErrConflict) {
			t.c.logger.Warn("vector cache write failed", "tenant", t.tenant, "error", err)
		}
	})
}

// each runs fn on every key with at most recordWorkers at once.
func (t *tenantCache) each(keys []string, fn func(k string)) {
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(recordWorkers, len(keys)) {
		wg.Go(func() {
			for k := range work {
				fn(k)
			}
		})
	}
	for _, k := range keys {
		if t.ctx.Err() != nil {
			break
		}
		work <- k
	}
	close(work)
	wg.Wait()
}
