package course

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// versionCacheBytes bounds the decoded versions a Store keeps, by the size of their stored
// JSON (a decoded package takes a few times that): a player commit reads its course version
// every time, and decoding a large package dominated a commit's CPU.
const versionCacheBytes = 32 << 20

// versionCache is a least-recently-used cache of decoded course versions keyed by tenant,
// course and version number. A version never changes once imported, so an entry is valid for
// as long as the course is not deleted: DeleteCourse drops the course's entries in this
// process, and PinnedVersion's updated stamp catches a course deleted and imported again
// under the same id by another process (its version 0 then has another stamp).
type versionCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // front = most recently used; values are *versionEntry
	byKey map[versionKey]*list.Element
	// epoch counts forgetCourse calls: a version read before one is not cached, so a read
	// racing with a course delete cannot put the deleted version back.
	epoch uint64
}

type versionKey struct {
	tenant, course string
	version        int
}

type versionEntry struct {
	key  versionKey
	v    *Version
	size int
}

func newVersionCache(maxBytes int) *versionCache {
	return &versionCache{max: maxBytes, order: list.New(), byKey: map[versionKey]*list.Element{}}
}

func (c *versionCache) get(k versionKey) *Version {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*versionEntry).v
}

func (c *versionCache) currentEpoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch
}

// put caches v unless a course was forgotten since epoch was taken (before v was read).
func (c *versionCache) put(k versionKey, v *Version, size int, epoch uint64) {
	if size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return
	}
	if e, ok := c.byKey[k]; ok {
		c.removeLocked(e)
	}
	c.byKey[k] = c.order.PushFront(&versionEntry{key: k, v: v, size: size})
	c.size += size
	for c.size > c.max {
		c.removeLocked(c.order.Back())
	}
}

func (c *versionCache) removeLocked(e *list.Element) {
	ve := e.Value.(*versionEntry)
	c.order.Remove(e)
	delete(c.byKey, ve.key)
	c.size -= ve.size
}

// forgetCourse drops every cached version of one course.
func (c *versionCache) forgetCourse(tenant, courseID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	for e := c.order.Front(); e != nil; {
		next := e.Next()
		if k := e.Value.(*versionEntry).key; k.tenant == tenant && k.course == courseID {
			c.removeLocked(e)
		}
		e = next
	}
}

// PinnedVersion returns version v (>= 0) of a course as Version does, from the Store's cache
// of decoded versions when it holds it. The returned Version is shared: callers must not
// modify it. A non-zero updated is the stamp the caller expects (a registration instance's
// snapshot of its version): an entry stamped otherwise belongs to an earlier course of the
// same id and is read again.
func (s *Store) PinnedVersion(ctx context.Context, tenant, courseID string, v int, updated time.Time) (*Version, error) {
	if v < 0 {
		return s.Version(ctx, tenant, courseID, v)
	}
	k := versionKey{tenant: tenant, course: courseID, version: v}
	if got := s.cache.get(k); got != nil && (updated.IsZero() || got.Updated.Equal(updated)) {
		return got, nil
	}
	epoch := s.cache.currentEpoch()
	got, size, err := s.readVersion(ctx, tenant, courseID, v)
	if err != nil {
		return nil, err
	}
	s.cache.put(k, got, size, epoch)
	return got, nil
}
