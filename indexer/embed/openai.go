package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// OpenAIConfig configures [NewOpenAI].
type OpenAIConfig struct {
	// BaseURL is the server root, e.g. "http://localhost:11434" (Ollama),
	// "http://tei:8080" (TEI), "https://api.openai.com". A trailing "/v1" is
	// accepted too; requests go to {BaseURL}/v1/embeddings.
	BaseURL string
	// Model is sent as "model" and becomes Info.Name.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>". Local
	// servers usually need none.
	APIKey string
	// Dims is the expected vector length. When 0, NewOpenAI learns it with a
	// one-text probe request, because the index must know it before the
	// first document is embedded.
	Dims int
	// SendDimensions adds "dimensions": Dims to requests, for models that can
	// shorten their vectors (OpenAI text-embedding-3-*). Off by default since
	// other servers may reject the field.
	SendDimensions bool
	// BatchSize caps texts per request (default 32, the default client batch
	// limit of Hugging Face TEI).
	BatchSize int
	// MaxRetries is how often a request is retried after 429 or 5xx
	// responses or transport errors (default 2; negative disables).
	MaxRetries int
	// HTTPClient defaults to a client with a 60 s timeout.
	HTTPClient *http.Client
}

// OpenAI is an Embedder backed by an OpenAI-compatible /v1/embeddings
// endpoint (OpenAI, Ollama, Hugging Face TEI, vLLM, llama.cpp server). It is
// safe for concurrent use.
type OpenAI struct {
	cfg      OpenAIConfig
	endpoint string
	info     Info
}

// Errors an [OpenAI] embedder wraps so callers can react by kind with
// errors.Is, whatever server they talk to.
var (
	// ErrUnauthorized: the server rejected the API key (401/403).
	ErrUnauthorized = errors.New("embed: embeddings endpoint rejected the credentials")
	// ErrModelNotFound: unknown model or wrong base URL (404).
	ErrModelNotFound = errors.New("embed: embeddings model or endpoint not found")
	// ErrRateLimited: still rate limited after retries (429).
	ErrRateLimited = errors.New("embed: embeddings endpoint rate limited the request")
	// ErrBadRequest: the server refused the input (400/413/422), e.g. a text
	// longer than the model's context.
	ErrBadRequest = errors.New("embed: embeddings endpoint refused the request")
	// ErrServer: 5xx, transport failure, or a malformed response.
	ErrServer = errors.New("embed: embeddings endpoint failed")
)

// APIError is a non-2xx answer from the endpoint. It unwraps to one of the
// Err* kinds above.
type APIError struct {
	Status  int    // HTTP status code
	Message string // server's message, from OpenAI-, TEI- or Ollama-style bodies
	kind    error
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%v: HTTP %d: %s", e.kind, e.Status, e.Message)
}

// Unwrap returns the error's kind, e.g. ErrUnauthorized.
func (e *APIError) Unwrap() error { return e.kind }

// NewOpenAI validates cfg and, when cfg.Dims is 0, probes the endpoint once
// to learn the dimension.
func NewOpenAI(ctx context.Context, cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.BaseURL == "" || cfg.Model == "" {
		return nil, errors.New("embed: OpenAI-compatible embedder needs BaseURL and Model")
	}
	if cfg.SendDimensions && cfg.Dims <= 0 {
		return nil, errors.New("embed: SendDimensions needs Dims")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 32
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 2
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	base := strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1")
	o := &OpenAI{cfg: cfg, endpoint: base + "/v1/embeddings", info: Info{Name: cfg.Model, Dims: cfg.Dims}}
	if cfg.Dims == 0 {
		vs, err := o.request(ctx, []string{"dimension probe"})
		if err != nil {
			return nil, fmt.Errorf("embed: probe %s for the vector size: %w", o.endpoint, err)
		}
		o.info.Dims = len(vs[0])
	}
	return o, nil
}

// Model reports the configured model name and its dimension.
func (o *OpenAI) Model() Info { return o.info }

// Embed sends texts in batches of at most BatchSize and checks that every
// vector has the expected dimension, so a server silently switching models
// cannot corrupt an index. Vectors are L2-normalised (not every server does
// it, e.g. some Ollama models) so that, as with the local backend, a dot
// product is the cosine.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.cfg.BatchSize {
		vs, err := o.request(ctx, texts[start:min(start+o.cfg.BatchSize, len(texts))])
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if len(v) != o.info.Dims {
				return nil, fmt.Errorf("%w: got a %d-dim vector from model %q, expected %d",
					ErrServer, len(v), o.info.Name, o.info.Dims)
			}
			Normalize(v)
		}
		out = append(out, vs...)
	}
	return out, nil
}

type embeddingsRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// request performs one POST with retries on transient failures.
func (o *OpenAI) request(ctx context.Context, texts []string) ([][]float32, error) {
	req := embeddingsRequest{Model: o.cfg.Model, Input: texts}
	if o.cfg.SendDimensions {
		req.Dimensions = o.cfg.Dims
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; ; attempt++ {
		vs, retryAfter, err := o.post(ctx, body, len(texts))
		if err == nil {
			return vs, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if retryAfter < 0 || attempt >= o.cfg.MaxRetries {
			return nil, lastErr
		}
		// Exponential backoff, or the server's Retry-After when it gave one.
		wait := time.Duration(200<<attempt) * time.Millisecond
		if retryAfter > 0 {
			wait = min(retryAfter, 30*time.Second)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// post does one HTTP exchange. retryAfter < 0 means "do not retry"; 0 means
// retry with backoff; > 0 is the server's requested delay.
func (o *OpenAI) post(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, -1, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if o.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.cfg.HTTPClient.Do(hreq)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrServer, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: read response: %v", ErrServer, err)
	}
	if resp.StatusCode/100 != 2 {
		apiErr := &APIError{Status: resp.StatusCode, Message: errorMessage(raw)}
		retry := time.Duration(-1)
		switch {
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			apiErr.kind = ErrUnauthorized
		case resp.StatusCode == http.StatusNotFound:
			apiErr.kind = ErrModelNotFound
		case resp.StatusCode == http.StatusTooManyRequests:
			apiErr.kind = ErrRateLimited
			retry = retryAfter(resp.Header.Get("Retry-After"))
		case resp.StatusCode >= 500:
			apiErr.kind = ErrServer
			retry = retryAfter(resp.Header.Get("Retry-After"))
		default:
			apiErr.kind = ErrBadRequest
		}
		return nil, retry, apiErr
	}
	var parsed embeddingsResponse
	if err := json.Unmarshal(raw, &parsed); err != nil {
		return nil, -1, fmt.Errorf("%w: decode response: %v", ErrServer, err)
	}
	if len(parsed.Data) != n {
		return nil, -1, fmt.Errorf("%w: sent %d texts, got %d embeddings", ErrServer, n, len(parsed.Data))
	}
	// The spec lets servers return items in any order; "index" is authoritative.
	out := make([][]float32, n)
	for _, d := range parsed.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, -1, fmt.Errorf("%w: bad or duplicate embedding index %d", ErrServer, d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, -1, fmt.Errorf("%w: empty embedding at index %d", ErrServer, d.Index)
		}
		out[d.Index] = d.Embedding
	}
	return out, 0, nil
}

// errorMessage extracts the human message from the error bodies of OpenAI
// ({"error":{"message":...}}), TEI ({"error":"...","error_type":...}) and
// Ollama ({"error":"..."}), falling back to the raw body.
func errorMessage(raw []byte) string {
	var oa struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &oa) == nil && len(oa.Error) > 0 {
		var s string
		if json.Unmarshal(oa.Error, &s) == nil {
			return s
		}
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(oa.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
	}
	msg := strings.TrimSpace(string(raw))
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if msg == "" {
		msg = "(empty body)"
	}
	return msg
}

// retryAfter parses a Retry-After header given in seconds; 0 when absent or
// in the HTTP-date form, which then falls back to backoff.
func retryAfter(h string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}
