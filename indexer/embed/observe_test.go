package embed

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestObserve: every call is reported, with the vectors computed (none for a failed call),
// and the wrapper keeps the model's Info.
func TestObserve(t *testing.T) {
	type call struct {
		vectors int
		d       time.Duration
	}
	var calls []call
	inner := &countingEmbedder{info: Info{Name: "m", Dims: 3}}
	e := Observe(inner, func(vectors int, d time.Duration) { calls = append(calls, call{vectors, d}) })
	if e.Model() != inner.info {
		t.Fatalf("Model() = %v, want %v", e.Model(), inner.info)
	}
	if _, err := e.Embed(context.Background(), []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	inner.err = boom
	if _, err := e.Embed(context.Background(), []string{"c"}); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if len(calls) != 2 || calls[0].vectors != 2 || calls[1].vectors != 0 || calls[0].d < 0 || calls[1].d < 0 {
		t.Fatalf("observed %+v, want 2 vectors then 0", calls)
	}
}

// TestObserveNil: nothing to wrap, or nothing to tell, leaves the embedder as it is.
func TestObserveNil(t *testing.T) {
	if e := Observe(nil, func(int, time.Duration) {}); e != nil {
		t.Fatalf("Observe(nil) = %v", e)
	}
	inner := &countingEmbedder{}
	if e := Observe(inner, nil); e != Embedder(inner) {
		t.Fatal("Observe(e, nil) wrapped e")
	}
}
