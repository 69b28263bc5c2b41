package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeServer is an in-process OpenAI-compatible /v1/embeddings endpoint. Its
// "model" maps each text to a deterministic 3-dim vector and it answers with
// data items in reverse order, to prove the client uses "index".
type fakeServer struct {
	t        *testing.T
	mu       sync.Mutex
	requests []embeddingsRequest
	auth     []string
	// fail, when set, answers instead of the normal handler.
	fail func(w http.ResponseWriter, call int) bool
	dims int
	call atomic.Int32
}

func fakeVector(text string, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(len(text)+i+1) * 0.5
	}
	return v
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call := int(f.call.Add(1))
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	var req embeddingsRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	if f.fail != nil && f.fail(w, call) {
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i := len(req.Input) - 1; i >= 0; i-- {
		data = append(data, item{"embedding", i, fakeVector(req.Input[i], f.dims)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data})
}

func newFake(t *testing.T) (*fakeServer, *httptest.Server) {
	f := &fakeServer{t: t, dims: 3}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func TestOpenAIEmbed(t *testing.T) {
	f, srv := newFake(t)
	e, err := NewOpenAI(context.Background(), OpenAIConfig{
		BaseURL: srv.URL + "/v1/", Model: "nomic-embed-text", APIKey: "sk-test", Dims: 3, BatchSize: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if e.Model() != (Info{Name: "nomic-embed-text", Dims: 3}) {
		t.Fatalf("Model() = %+v", e.Model())
	}
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		want := fakeVector(text, 3)
		Normalize(want)
		if Cosine(vs[i], want) < 0.999999 {
			t.Errorf("text %q: got %v want %v", text, vs[i], want)
		}
		var n float64
		for _, x := range vs[i] {
			n += float64(x * x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d not normalised: |v|^2=%f", i, n)
		}
	}
	if len(f.requests) != 3 { // batches of 2, 2, 1
		t.Fatalf("%d requests, want 3", len(f.requests))
	}
	for i, r := range f.requests {
		if r.Model != "nomic-embed-text" || r.Dimensions != 0 {
			t.Errorf("request %d: %+v", i, r)
		}
		if f.auth[i] != "Bearer sk-test" {
			t.Errorf("request %d: Authorization %q", i, f.auth[i])
		}
	}
}

func TestOpenAIProbesDims(t *testing.T) {
	f, srv := newFake(t)
	f.dims = 5
	e, err := NewOpenAI(context.Background(), OpenAIConfig{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Model().Dims != 5 {
		t.Fatalf("Dims = %d, want 5", e.Model().Dims)
	}
	if f.auth[0] != "" {
		t.Fatalf("sent Authorization %q without an API key", f.auth[0])
	}
}

func TestOpenAISendDimensions(t *testing.T) {
	f, srv := newFake(t)
	e, err := NewOpenAI(context.Background(), OpenAIConfig{BaseURL: srv.URL, Model: "m", Dims: 3, SendDimensions: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if f.requests[0].Dimensions != 3 {
		t.Fatalf("dimensions not sent: %+v", f.requests[0])
	}
}

func TestOpenAIDimsMismatch(t *testing.T) {
	_, srv := newFake(t)
	e, err := NewOpenAI(context.Background(), OpenAIConfig{BaseURL: srv.URL, Model: "m", Dims: 768})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "768") {
		t.Fatalf("err = %v, want a dimension mismatch", err)
	}
}

func TestOpenAIErrors(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		kind   error
		msg    string
		calls  int32
	}{
		{"openai-401", 401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`, ErrUnauthorized, "Incorrect API key", 1},
		{"ollama-404", 404, `{"error":"model \"nomic\" not found, try pulling it first"}`, ErrModelNotFound, "try pulling", 1},
		{"tei-413", 413, `{"error":"batch size 64 > maximum allowed batch size 32","error_type":"Validation"}`, ErrBadRequest, "maximum allowed", 1},
		{"429-retried", 429, `{"error":{"message":"Rate limit reached"}}`, ErrRateLimited, "Rate limit", 3},
		{"500-retried", 500, `upstream exploded`, ErrServer, "upstream exploded", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, srv := newFake(t)
			f.fail = func(w http.ResponseWriter, _ int) bool {
				w.WriteHeader(c.status)
				fmt.Fprint(w, c.body)
				return true
			}
			e, err := NewOpenAI(context.Background(), OpenAIConfig{BaseURL: srv.URL, Model: "m", Dims: 3})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), []string{"x"})
			var apiErr *APIError
			if !errors.Is(err, c.kind) || !errors.As(err, &apiErr) || apiErr.Status != c.status {
				t.Fatalf("err = %v, want kind %v status %d", err, c.kind, c.status)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q lacks server message %q", err, c.msg)
			}
			if got := f.call.Load(); got != c.calls {
				t.Fatalf("%d calls, want %d", got, c.calls)
			}
		})
	}
}

func TestOpenAIRetryRecovers(t *testing.T) {
	f, srv := newFake(t)
	f.fail = func(w http.ResponseWriter, call int) bool {
		if call == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}
	e, err := NewOpenAI(context.Background(), OpenAIConfig{BaseURL: srv.URL, Model: "m", Dims: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatalf("retry did not recover: %v", err)
	}
}

func TestOpenAIMalformedResponse(t *testing.T) {
	f, srv := newFake(t)
	f.fail = func(w http.ResponseWriter, _ int) bool {
		fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1,2,3]}]}`) // 1 vector for 2 texts
		return true
	}
	e, err := NewOpenAI(context.Background(), OpenAIConfig{BaseURL: srv.URL, Model: "m", Dims: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"x", "y"}); !errors.Is(err, ErrServer) {
		t.Fatalf("err = %v, want ErrServer", err)
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	_, err := NewOpenAI(context.Background(), OpenAIConfig{BaseURL: url, Model: "m", MaxRetries: -1})
	if !errors.Is(err, ErrServer) {
		t.Fatalf("err = %v, want ErrServer", err)
	}
}

func TestOpenAIConfigValidation(t *testing.T) {
	if _, err := NewOpenAI(context.Background(), OpenAIConfig{Model: "m", Dims: 3}); err == nil {
		t.Fatal("accepted empty BaseURL")
	}
	if _, err := NewOpenAI(context.Background(), OpenAIConfig{BaseURL: "http://x", Model: "m", SendDimensions: true}); err == nil {
		t.Fatal("accepted SendDimensions without Dims")
	}
}
