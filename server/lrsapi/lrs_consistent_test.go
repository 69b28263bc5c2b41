package lrsapi_test

import (
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestLRSConsistentThrough: X-Experience-API-Consistent-Through on GET /statements is the
// record store's watermark: parseable, never ahead of the clock, and at least the stored
// instant of every statement acknowledged before the query, also after a burst of
// concurrent POSTs (which a since/until query then returns in full).
func TestLRSConsistentThrough(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		base := servertest.LRS + "/acme/statements"
		through := func(r servertest.Resp) time.Time {
			t.Helper()
			h := r.Header.Get("X-Experience-API-Consistent-Through")
			ct, err := time.Parse(time.RFC3339Nano, h)
			if err != nil {
				t.Fatalf("X-Experience-API-Consistent-Through %q: %v", h, err)
			}
			if now := time.Now(); ct.After(now) {
				t.Fatalf("X-Experience-API-Consistent-Through %s is after now (%s)", h, now.UTC().Format(time.RFC3339Nano))
			}
			return ct
		}
		storedOf := func(st map[string]any) time.Time {
			t.Helper()
			s, _ := st["stored"].(string)
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				t.Fatalf("stored %q: %v", s, err)
			}
			return at
		}

		// One statement written and read back by id, then a query.
		r := e.Do("POST", base, servertest.Root, servertest.Statement("ann@example.com", "attempted", "http://example.com/ct"), servertest.V200...)
		e.Expect(r, 200, "post statement")
		var ids []string
		r.JSON(t, &ids)
		r = e.Do("GET", base+"?statementId="+ids[0], servertest.Root, nil, servertest.V200...)
		e.Expect(r, 200, "get by id")
		through(r)
		var st map[string]any
		r.JSON(t, &st)
		stored := storedOf(st)
		r = e.Do("GET", base+"?verb="+url.QueryEscape("http://adlnet.gov/expapi/verbs/attempted"), servertest.Root, nil, servertest.V200...)
		e.Expect(r, 200, "query")
		if ct := through(r); ct.Before(stored) {
			t.Fatalf("query consistent through %s, before the statement just stored at %s", ct, stored)
		}

		// A burst: concurrent writers POST batches; then one since/until query.
		since := time.Now().Add(-time.Second).UTC()
		const writers, batches, size = 4, 5, 4
		var wg sync.WaitGroup
		statuses := make(chan int, writers*batches)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range batches {
					var batch []any
					for i := range size {
						batch = append(batch, servertest.Statement(fmt.Sprintf("w%d@example.com", w), "experienced",
							fmt.Sprintf("http://example.com/burst/%d/%d", n, i)))
					}
					statuses <- e.Do("POST", base, servertest.Root, batch, servertest.V200...).Status
				}
			}()
		}
		wg.Wait()
		close(statuses)
		for s := range statuses {
			if s != 200 {
				t.Fatalf("burst POST: status %d", s)
			}
		}
		q := url.Values{"verb": {"http://adlnet.gov/expapi/verbs/experienced"}, "limit": {"1000"},
			"since": {since.Format(time.RFC3339Nano)}, "until": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)}}
		r = e.Do("GET", base+"?"+q.Encode(), servertest.Root, nil, servertest.V200...)
		e.Expect(r, 200, "since/until query after the burst")
		ct := through(r)
		var res servertest.StatementResult
		r.JSON(t, &res)
		if len(res.Statements) != writers*batches*size {
			t.Fatalf("since/until query after the burst: %d statements, want %d", len(res.Statements), writers*batches*size)
		}
		for _, s := range res.Statements {
			if at := storedOf(s); ct.Before(at) {
				t.Fatalf("consistent through %s, before a statement acknowledged at %s", ct, at)
			}
		}
	})
}
