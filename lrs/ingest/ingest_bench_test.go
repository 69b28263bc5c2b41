package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/lrs/ingest"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/storage/statements"
)

// nullStore stores nothing: the benchmark measures the write's own cost, not a backend's.
type nullStore struct{}

func (nullStore) Get(context.Context, string, string) (*statements.Statement, error) {
	return nil, statements.ErrNotFound
}
func (nullStore) Put(context.Context, string, []*statements.Statement, []*statements.Attachment) error {
	return nil
}
func (nullStore) PutChunks(_ context.Context, _ string, chunks statements.Chunks, _ []*statements.Attachment) error {
	return chunks(func([]*statements.Statement) error { return nil })
}
func (nullStore) PutActivity(context.Context, string, string, json.RawMessage) error { return nil }
func (nullStore) GetActivity(context.Context, string, string) (json.RawMessage, error) {
	return nil, statements.ErrNotFound
}
func (nullStore) GetActivities(context.Context, string, []string) (map[string]json.RawMessage, error) {
	return map[string]json.RawMessage{}, nil
}
func (nullStore) PutActivities(context.Context, string, map[string]json.RawMessage) error { return nil }

// batchBody is a POST body of n statements of the kind a course sends (about 900 bytes
// each): an actor, a verb with a display, an activity with a definition, a result and a
// context with a registration and parent activity.
func batchBody(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"actor":{"objectType":"Agent","name":"Learner %d","mbox":"mailto:learner%d@example.com"},`+
			`"verb":{"id":"http://adlnet.gov/expapi/verbs/answered","display":{"en-US":"answered","de-DE":"beantwortet"}},`+
			`"object":{"objectType":"Activity","id":"http://example.com/course/quiz/q%d","definition":{"name":{"en-US":"Question %d"},`+
			`"description":{"en-US":"Which of these is a prime number? Choose one answer from the list."},"type":"http://adlnet.gov/expapi/activities/cmi.interaction","interactionType":"choice",`+
			`"correctResponsesPattern":["b"],"choices":[{"id":"a","description":{"en-US":"4"}},{"id":"b","description":{"en-US":"7"}},{"id":"c","description":{"en-US":"9"}}]}},`+
			`"result":{"score":{"scaled":0.5,"raw":5,"min":0,"max":10},"success":true,"completion":true,"response":"b","duration":"PT1M3.25S"},`+
			`"context":{"registration":"6b7e7c51-0ba5-4a5c-9a3e-%012d","contextActivities":{"parent":[{"id":"http://example.com/course/quiz"}],"grouping":[{"id":"http://example.com/course"}]},"platform":"Lectern bench","language":"en-US"},`+
			`"timestamp":"2026-12-06T19:00:00.000Z"}`, i%50, i%50, i%200, i%200, i)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// peakHeap runs f and returns the largest heap growth over the heap before it, sampled
// every 200 µs with the collector set to run at 10 % growth so that the heap tracks what is
// live (a sample can miss a peak shorter than the interval).
func peakHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base && m.HeapAlloc-base > peak.Load() {
				peak.Store(m.HeapAlloc - base)
			}
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return peak.Load()
}

// BenchmarkWritePeak writes one POST batch of 16 MiB (about 18,000 statements) through the
// statement-write use case over a store that keeps nothing, and reports the peak heap
// growth while it runs as a multiple of the payload (goal: at most 3).
func BenchmarkWritePeak(b *testing.B) {
	body := batchBody(18000)
	w := ingest.New(nullStore{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	authority := json.RawMessage(`{"objectType":"Agent","account":{"homePage":"http://lectern","name":"bench"}}`)
	var worst uint64
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		var err error
		peak := peakHeap(func() {
			// Keep none: the result holds no statement (the server's choice for a batch
			// without a course registration), so the peak is the write's own.
			_, err = w.Write(context.Background(), ingest.Request{Tenant: "t", Version: xapi.V103, Authority: authority,
				ContentType: "application/json", Body: body, Define: true, Keep: keepNone})
		})
		if err != nil {
			b.Fatal(err)
		}
		worst = max(worst, peak)
	}
	b.ReportMetric(float64(worst)/float64(len(body)), "peak/payload")
	b.ReportMetric(float64(len(body))/(1<<20), "payload-MiB")
}

func keepNone(*statements.Statement) bool { return false }

// BenchmarkWrite100 writes batches of 100 statements (the ingest benchmarks' size) over the
// same store, for the CPU and allocation cost of a write.
func BenchmarkWrite100(b *testing.B) {
	body := batchBody(100)
	w := ingest.New(nullStore{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	authority := json.RawMessage(`{"objectType":"Agent","account":{"homePage":"http://lectern","name":"bench"}}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for range b.N {
		if _, err := w.Write(context.Background(), ingest.Request{Tenant: "t", Version: xapi.V103, Authority: authority,
			ContentType: "application/json", Body: body, Define: true}); err != nil {
			b.Fatal(err)
		}
	}
}
