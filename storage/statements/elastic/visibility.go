package elastic

import (
	"context"
	"fmt"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"
)

// Visibility: writes never ask for a refresh (no refresh parameter), so a write costs one
// translog fsync, not one Lucene segment. Searches (Query, reports, ListDocs, the voider
// searches of Put, deleteMatching) must still see every write acknowledged before they
// started, which the port promises; the store keeps count of its acknowledged writes and a
// search that finds writes acknowledged after the last refresh began joins or starts one
// refresh first. Concurrent callers share one _refresh (single flight), so a burst of writes
// followed by a wave of queries costs one refresh, and pure ingest costs none beyond the
// background refresh (backgroundRefresh, once a second) that keeps the watermark moving.
//
// The watermark is the instant T such that every statement this process stored at or before
// T is searchable: a refresh takes T = min(now, earliest stored instant of the batches still
// being written − 1µs) before it calls _refresh and publishes T once _refresh answered. The
// stamping clock (last) is raised to T, so a statement stamped afterwards gets a later stored
// instant; both happen under mu, as stamping does.

// backgroundRefresh is how often the store refreshes on its own, so the watermark moves and
// pure ingest becomes searchable without a query. A refresh of an index with nothing new is
// cheap (no new segment).
const backgroundRefresh = time.Second

// refreshTimeout bounds one _refresh request, shared by callers with contexts of their own.
const refreshTimeout = time.Minute

// refreshRun is one _refresh request, shared by every caller that waits for it.
type refreshRun struct {
	// gen is the number of writes acknowledged when it started: it makes those searchable.
	gen uint64
	// mark is the watermark (unix µs) it publishes.
	mark int64
	done chan struct{}
	err  error // set before done is closed
}

// beginBatch registers a batch being written whose earliest stored instant is first (unix
// µs) and returns its token for endWrite. The caller holds mu (it has just stamped it).
func (s *Store) beginBatch(first int64) uint64 {
	s.nextBatch++
	s.inflight[s.nextBatch] = first
	return s.nextBatch
}

// endWrite counts a write whose request has answered (successfully or not: a failed bulk
// may have applied some items) and removes batch (when not 0) from the batches in flight.
// voiders marks a write holding voiding statements, which Put's voider searches must see.
func (s *Store) endWrite(batch uint64, voiders bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if batch != 0 {
		delete(s.inflight, batch)
	}
	s.acked++
	if voiders {
		s.voidersAcked = s.acked
	}
}

// markLocked returns the watermark a refresh starting now publishes and raises the stamping
// clock to it. The caller holds mu.
func (s *Store) markLocked() int64 {
	now := time.Now().UnixMicro()
	s.last = max(s.last, now)
	mark := now
	for _, first := range s.inflight {
		mark = min(mark, first-1)
	}
	return mark
}

// startRefreshLocked starts a refresh of the searched indices. The caller holds mu and no
// refresh is running.
func (s *Store) startRefreshLocked() *refreshRun {
	r := &refreshRun{gen: s.acked, mark: s.markLocked(), done: make(chan struct{})}
	s.run = r
	go func() {
		// Not the caller's context: others wait for this refresh too.
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		defer cancel()
		var res struct {
			Shards struct {
				Failed int `json:"failed"`
			} `json:"_shards"`
		}
		err := s.c.Do(ctx, "refresh", esapi.IndicesRefreshRequest{Index: []string{s.stmts, s.docs}}, &res)
		if err == nil && res.Shards.Failed > 0 {
			err = fmt.Errorf("refresh: %d shards failed", res.Shards.Failed)
		}
		s.mu.Lock()
		s.run = nil
		if err != nil {
			r.err = fmt.Errorf("statements/elastic: %w", err)
		} else {
			s.refreshed = max(s.refreshed, r.gen)
			s.watermark = max(s.watermark, r.mark)
		}
		s.mu.Unlock()
		close(r.done)
	}()
	return r
}

// visible returns once every write acknowledged before the call (with voidersOnly, every
// write holding voiding statements) is searchable, joining the running refresh or starting
// one when needed.
func (s *Store) visible(ctx context.Context, voidersOnly bool) error {
	s.mu.Lock()
	need := s.acked
	if voidersOnly {
		need = s.voidersAcked
	}
	for s.refreshed < need {
		r := s.run
		if r == nil {
			r = s.startRefreshLocked()
		}
		s.mu.Unlock()
		// A run that started before our writes were acknowledged does not cover them: wait
		// for it and loop to start the next one.
		select {
		case <-r.done:
		case <-ctx.Done():
			return fmt.Errorf("statements/elastic: waiting for a refresh: %w", ctx.Err())
		}
		if r.err != nil {
			return r.err
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
	return nil
}

// ConsistentThrough implements statements.Store: the published watermark, the start of the
// latest refresh (below the batches this store had in flight then). It never refreshes; the
// background refresh keeps it within about a second of now. It is not "now" even when this
// store has nothing pending, because other processes' writes become searchable only with a
// refresh: a refresh that started at T covers every write acknowledged before T, whichever
// process made it (see docs/decisions.md for what remains: other processes' writes in flight).
func (s *Store) ConsistentThrough(context.Context) (time.Time, error) {
	return time.UnixMicro(s.snapshot()).UTC(), nil
}

// snapshot returns the published watermark (unix µs).
func (s *Store) snapshot() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watermark
}

// refreshLoop refreshes every backgroundRefresh until Close: it makes this store's pending
// writes searchable without a query and moves the watermark over other processes' writes.
func (s *Store) refreshLoop() {
	defer close(s.stopped)
	t := time.NewTicker(backgroundRefresh)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			r := s.run
			if r == nil {
				r = s.startRefreshLocked()
			}
			s.mu.Unlock()
			// An error is the next query's to report; the next tick tries again.
			select {
			case <-r.done:
			case <-s.stop:
				return
			}
		}
	}
}

// Close stops the background refresh; the client belongs to the caller.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.stopped
	})
	return nil
}
