package statementstest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
)

// testConsistentThroughBurst has writers Put batches concurrently while a reader queries: every
// page's ConsistentThrough must be a true watermark (each statement stored at or before it is in
// that page, which holds the whole store), never after the query returned; after the burst a
// since/until query sees every statement and its watermark covers every acknowledged stored
// instant, and so does ConsistentThrough.
func testConsistentThroughBurst(t *testing.T, b statements.Backend) {
	const writers, batches, size = 6, 8, 5 // 240 statements: one page of MaxLimit holds them all
	start := time.Now().Add(-time.Second)
	type seen struct {
		through time.Time
		ids     map[string]bool
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		stored  = map[string]time.Time{}
		errs    []error
		reads   []seen
		done    = make(chan struct{})
		readErr = make(chan error, 1)
	)
	go func() {
		// The reader: a query wave while writes are in flight.
		defer close(readErr)
		for {
			select {
			case <-done:
				return
			default:
			}
			p, err := b.Query(ctx, statements.Query{Tenant: "burst", Limit: statements.MaxLimit})
			if err != nil {
				readErr <- err
				return
			}
			if after := time.Now(); p.ConsistentThrough.After(after) {
				readErr <- fmt.Errorf("ConsistentThrough %s after the query returned (%s)", p.ConsistentThrough, after)
				return
			}
			r := seen{through: p.ConsistentThrough, ids: map[string]bool{}}
			for _, s := range p.Statements {
				r.ids[s.ID] = true
			}
			reads = append(reads, r)
		}
	}()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range batches {
				var batch []*statements.Statement
				for i := range size {
					id := fmt.Sprintf("%08d-0000-4000-8000-%012d", w, n*size+i)
					batch = append(batch, st(id, "h"+id))
				}
				err := b.Put(ctx, "burst", batch, nil)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				for _, s := range batch {
					stored[s.ID] = s.Stored
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(done)
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Fatalf("puts: %v", errs)
	}
	if len(reads) == 0 {
		t.Fatal("the reader ran no query")
	}
	for _, r := range reads {
		for id, at := range stored {
			if !at.After(r.through) && !r.ids[id] {
				t.Fatalf("statement %s stored at %s is missing from a query consistent through %s",
					id, at.Format(time.RFC3339Nano), r.through.Format(time.RFC3339Nano))
			}
		}
	}

	latest := time.Time{}
	for _, at := range stored {
		if at.After(latest) {
			latest = at
		}
	}
	q := statements.Query{Tenant: "burst", Since: start, Until: time.Now().Add(time.Hour), Limit: statements.MaxLimit}
	p, err := b.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Statements) != writers*batches*size || p.Next != "" {
		t.Fatalf("since/until query after the burst: %d statements (next %q), want %d", len(p.Statements), p.Next, writers*batches*size)
	}
	if p.ConsistentThrough.Before(latest) {
		t.Fatalf("query ConsistentThrough %s before the latest acknowledged stored %s", p.ConsistentThrough, latest)
	}
	ct, err := b.ConsistentThrough(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if now := time.Now(); ct.Before(latest) || ct.After(now) {
		t.Fatalf("ConsistentThrough %s: want between the latest stored %s and now %s", ct, latest, now)
	}
	// Statements stored later are stored after it, whatever Stored the caller proposes.
	late := st("99999999-0000-4000-8000-000000000001", "late")
	late.Stored = start
	put(t, b, "burst", late)
	if !late.Stored.After(ct) {
		t.Fatalf("statement stored at %s after ConsistentThrough answered %s", late.Stored, ct)
	}
}
