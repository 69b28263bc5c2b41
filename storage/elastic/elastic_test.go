package elastic

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/mappings"
)

// newTestClient returns a client for the cluster of LECTERN_TEST_ELASTICSEARCH_URL with an
// index prefix of its own, and deletes the test's indices when the test ends.
func newTestClient(t *testing.T) *Client {
	t.Helper()
	url := testenv.External(t, "LECTERN_TEST_ELASTICSEARCH_URL")
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{URLs: []string{url}, IndexPrefix: "lectern_test_" + hex.EncodeToString(b) + "_"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.DeleteIndices(ctx, c.Prefix()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return c
}

func TestContract(t *testing.T) {
	c := newTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	h, err := c.Health(ctx)
	if err != nil {
		t.Fatalf("Health: %v", err)
	}
	if h.Status != "green" && h.Status != "yellow" {
		t.Fatalf("health status %q, want green or yellow", h.Status)
	}
	if h.NumberOfNodes < 1 {
		t.Errorf("health reports %d nodes", h.NumberOfNodes)
	}

	opts := mappings.Options{EmbeddingDims: 3}
	for _, name := range []string{mappings.Content, mappings.Statements} {
		index, created, err := c.EnsureIndex(ctx, name, opts)
		if err != nil {
			t.Fatalf("EnsureIndex(%s): %v", name, err)
		}
		if want := c.Prefix() + mappings.Versioned(name); index != want || !created {
			t.Errorf("EnsureIndex(%s) = %q, %v; want %q, true", name, index, created, want)
		}
		again, created, err := c.EnsureIndex(ctx, name, opts)
		if err != nil {
			t.Fatalf("EnsureIndex(%s) again: %v", name, err)
		}
		if again != index || created {
			t.Errorf("EnsureIndex(%s) again = %q, %v; want %q, false", name, again, created, index)
		}
		var aliases map[string]any
		if err := c.Do(ctx, "get alias", esapi.IndicesGetAliasRequest{Name: []string{c.Alias(name)}}, &aliases); err != nil {
			t.Fatalf("alias %s: %v", c.Alias(name), err)
		}
		if _, ok := aliases[index]; !ok || len(aliases) != 1 {
			t.Errorf("alias %s points at %v, want only %s", c.Alias(name), aliases, index)
		}
	}
	if _, _, err := c.EnsureIndex(ctx, "nope", opts); err == nil {
		t.Error("EnsureIndex of an unknown definition: no error")
	}

	t.Run("analyzer", func(t *testing.T) {
		// The phrase field's analyzer is Elasticsearch's built-in whitespace analyzer: it
		// splits the terms Go made apart again, each at its position, and changes nothing
		// (no lower-casing, no stop words, no stemming).
		text := "_STOP_ Run dogs don t _STOP_ the"
		toks, err := c.Analyze(ctx, mappings.Content, mappings.AnalyzerTerms, text)
		if err != nil {
			t.Fatalf("Analyze(%q): %v", text, err)
		}
		var got []string
		for i, tok := range toks {
			got = append(got, tok.Token)
			if tok.Position != i {
				t.Errorf("token %q at position %d, want %d", tok.Token, tok.Position, i)
			}
		}
		if want := strings.Fields(text); !slices.Equal(got, want) {
			t.Errorf("%s(%q) = %q, want %q", mappings.AnalyzerTerms, text, got, want)
		}
	})

	t.Run("search", func(t *testing.T) {
		docs := map[string]map[string]any{
			"a": {"tenant_id": "t1", "content_id": "c1", "version": 1, "tags": []string{"x"}, "active": true,
				"location": "c1/1", "text": "The running dogs ate the cakes", "phrase": "_STOP_ run dog ate _STOP_ cake", "embedding": []float32{1, 0, 0}},
			"b": {"tenant_id": "t1", "content_id": "c2", "version": 1, "active": true,
				"location": "c2/1", "text": "Stars shine at night", "phrase": "star shine _STOP_ night", "embedding": []float32{0, 1, 0}},
			"c": {"tenant_id": "t2", "content_id": "c3", "version": 1, "active": true,
				"location": "c3/1", "text": "A cake for the other tenant", "phrase": "_STOP_ cake _STOP_ _STOP_ _STOP_ tenant", "embedding": []float32{1, 0.1, 0}},
		}
		for id, d := range docs {
			b, _ := json.Marshal(d)
			err := c.Do(ctx, "index "+id, esapi.IndexRequest{
				Index: c.Alias(mappings.Content), DocumentID: id, Body: bytes.NewReader(b), Refresh: "true",
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
		}
		search := func(query map[string]any) []string {
			t.Helper()
			b, _ := json.Marshal(query)
			var res struct {
				Hits struct {
					Hits []struct {
						ID string `json:"_id"`
					} `json:"hits"`
				} `json:"hits"`
			}
			err := c.Do(ctx, "search", esapi.SearchRequest{
				Index: []string{c.Alias(mappings.Content)}, Body: bytes.NewReader(b),
			}, &res)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range res.Hits.Hits {
				ids = append(ids, h.ID)
			}
			return ids
		}
		knn := search(map[string]any{"knn": map[string]any{
			"field": "embedding", "query_vector": []float32{0.9, 0.2, 0}, "k": 1, "num_candidates": 10,
			"filter": map[string]any{"term": map[string]any{"tenant_id": "t1"}},
		}})
		if !slices.Equal(knn, []string{"a"}) {
			t.Errorf("kNN hits %v, want [a]", knn)
		}
		match := search(map[string]any{"query": map[string]any{"bool": map[string]any{
			"must":   map[string]any{"match": map[string]any{"phrase": "cake"}},
			"filter": map[string]any{"term": map[string]any{"tenant_id": "t1"}},
		}}})
		if !slices.Equal(match, []string{"a"}) {
			t.Errorf("match hits %v, want [a]", match)
		}
		phrase := search(map[string]any{"query": map[string]any{
			"match_phrase": map[string]any{"phrase": "run dog"},
		}})
		if !slices.Equal(phrase, []string{"a"}) {
			t.Errorf("phrase hits %v, want [a]", phrase)
		}
		// A stop word's placeholder holds its position: "ate the cake" is a phrase of a,
		// "ate cake" is not.
		if got := search(map[string]any{"query": map[string]any{
			"match_phrase": map[string]any{"phrase": "ate _STOP_ cake"},
		}}); !slices.Equal(got, []string{"a"}) {
			t.Errorf("phrase with a stop word: hits %v, want [a]", got)
		}
		if got := search(map[string]any{"query": map[string]any{
			"match_phrase": map[string]any{"phrase": "ate cake"},
		}}); len(got) != 0 {
			t.Errorf("phrase across a stop word: hits %v, want none", got)
		}
	})

	t.Run("statements", func(t *testing.T) {
		stmt := map[string]any{
			"tenant_id":            "t1",
			"id":                   "6690e6c9-3ef0-4ed3-8b37-7f3964730bee",
			"stored":               "2024-05-01T10:00:00.123Z",
			"timestamp":            "2024-05-01T09:59:59.5+02:00",
			"verb_id":              "http://adlnet.gov/expapi/verbs/completed",
			"activity_id":          "http://example.com/a1",
			"related_activity_ids": []string{"http://example.com/a1", "http://example.com/course"},
			"agent_ifis":           []string{"mbox:mailto:learner@example.com"},
			"related_agent_ifis":   []string{"mbox:mailto:learner@example.com", "mbox:mailto:lrs@example.com"},
			"registration":         "ec531277-b57b-4c15-8d91-d292c5b2b8f7",
			"voided":               false,
			"statement":            map[string]any{"any": map[string]any{"shape": []any{1, "x"}}},
		}
		b, _ := json.Marshal(stmt)
		err := c.Do(ctx, "index statement", esapi.IndexRequest{
			Index: c.Alias(mappings.Statements), DocumentID: "s1", Body: bytes.NewReader(b), Refresh: "true",
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := json.Marshal(map[string]any{"query": map[string]any{"bool": map[string]any{"filter": []any{
			map[string]any{"term": map[string]any{"verb_id": "http://adlnet.gov/expapi/verbs/completed"}},
			map[string]any{"term": map[string]any{"related_activity_ids": "http://example.com/course"}},
			map[string]any{"range": map[string]any{"stored": map[string]any{"gt": "2024-05-01T10:00:00.122Z"}}},
		}}}})
		var res struct {
			Hits struct {
				Total struct {
					Value int `json:"value"`
				} `json:"total"`
			} `json:"hits"`
		}
		if err := c.Do(ctx, "search statements", esapi.SearchRequest{
			Index: []string{c.Alias(mappings.Statements)}, Body: bytes.NewReader(q),
		}, &res); err != nil {
			t.Fatal(err)
		}
		if res.Hits.Total.Value != 1 {
			t.Errorf("statement query found %d, want 1", res.Hits.Total.Value)
		}
		// The mapping is strict: an unknown field is refused, not guessed.
		bad, _ := json.Marshal(map[string]any{"tenant_id": "t1", "surprise": 1})
		err = c.Do(ctx, "index bad statement", esapi.IndexRequest{
			Index: c.Alias(mappings.Statements), DocumentID: "bad", Body: bytes.NewReader(bad),
		}, nil)
		var e *Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
			t.Errorf("unknown field: err = %v, want a 400 *Error", err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		err := c.Do(ctx, "get", esapi.GetRequest{Index: c.Prefix() + "missing", DocumentID: "x"}, nil)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("get from a missing index: %v, want ErrNotFound", err)
		}
		err = c.Do(ctx, "get", esapi.GetRequest{Index: c.Alias(mappings.Content), DocumentID: "nope"}, nil)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("get of a missing document: %v, want ErrNotFound", err)
		}
	})

	if err := c.DeleteIndices(ctx, c.Prefix()); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := c.Do(ctx, "list", esapi.CatIndicesRequest{Index: []string{c.Prefix() + "*"}, Format: "json"}, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 0 {
		t.Errorf("indices left after DeleteIndices: %v", rows)
	}
	if err := c.DeleteIndices(ctx, c.Prefix()); err != nil {
		t.Errorf("DeleteIndices with nothing to delete: %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("no URLs: no error")
	}
	for _, p := range []string{"Upper_", "_x", "a*", "a,b", "a b"} {
		if _, err := New(Config{URLs: []string{"http://127.0.0.1:9200"}, IndexPrefix: p}); err == nil {
			t.Errorf("prefix %q: no error", p)
		}
	}
	c, err := New(Config{URLs: []string{"http://127.0.0.1:9200"}, IndexPrefix: "lectern_"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Alias(mappings.Content); got != "lectern_content" {
		t.Errorf("Alias = %q", got)
	}
	if got := c.Index(mappings.Content); got != "lectern_"+mappings.Versioned(mappings.Content) || !strings.HasPrefix(got, "lectern_content_v") {
		t.Errorf("Index = %q", got)
	}
	if err := c.DeleteIndices(context.Background(), ""); err == nil {
		t.Error("DeleteIndices with an empty prefix: no error")
	}
}

func TestUnreachableIsUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	c, err := New(Config{URLs: []string{url}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Ping of a closed port: %v, want ErrUnavailable", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Ping with a canceled context: %v, want context.Canceled", err)
	}
}

func TestErrorTranslation(t *testing.T) {
	status := http.StatusOK
	body := `{}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	c, err := New(Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	status, body = http.StatusOK, `{"status":"yellow","cluster_name":"c","number_of_nodes":1}`
	h, err := c.Health(ctx)
	if err != nil || h.Status != "yellow" || h.ClusterName != "c" || h.NumberOfNodes != 1 {
		t.Errorf("Health = %+v, %v", h, err)
	}

	for _, tc := range []struct {
		status   int
		body     string
		sentinel error
		typ      string
	}{
		{404, `{"error":{"type":"index_not_found_exception","reason":"no such index [x]"},"status":404}`, ErrNotFound, "index_not_found_exception"},
		{404, ``, ErrNotFound, ""},
		{503, `{"error":{"type":"cluster_block_exception","reason":"blocked"},"status":503}`, ErrUnavailable, "cluster_block_exception"},
		{429, `{"error":{"type":"es_rejected_execution_exception","reason":"full"},"status":429}`, ErrUnavailable, "es_rejected_execution_exception"},
		{400, `{"error":{"type":"illegal_argument_exception","reason":"bad"},"status":400}`, nil, "illegal_argument_exception"},
		{405, `{"error":"Incorrect HTTP method for uri [/]","status":405}`, nil, ""},
	} {
		status, body = tc.status, tc.body
		err := c.Ping(ctx)
		var e *Error
		if !errors.As(err, &e) || e.Status != tc.status || e.Type != tc.typ {
			t.Errorf("status %d: err = %#v", tc.status, err)
			continue
		}
		if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
			t.Errorf("status %d: %v does not match %v", tc.status, err, tc.sentinel)
		}
		if tc.sentinel == nil && (errors.Is(err, ErrNotFound) || errors.Is(err, ErrUnavailable)) {
			t.Errorf("status %d: %v matches a sentinel", tc.status, err)
		}
	}
}

// TestMoveAliasForward: a cluster upgraded from a release whose content mapping was older has
// its alias on the older index; OlderAlias reports it (readiness says so), MoveAliasForward
// points the alias at this version's index in one update and leaves the old index; an alias
// already on this version, or on a newer one (a newer release ran first), never moves.
func TestMoveAliasForward(t *testing.T) {
	c := newTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alias := c.Alias(mappings.Content)
	addAlias := func(index string) {
		t.Helper()
		if err := c.Do(ctx, "create "+index, esapi.IndicesCreateRequest{Index: index}, nil); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]any{"actions": []any{map[string]any{"add": map[string]any{"index": index, "alias": alias}}}})
		if err := c.Do(ctx, "alias "+index, esapi.IndicesUpdateAliasesRequest{Body: bytes.NewReader(b)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if old, err := c.OlderAlias(ctx, mappings.Content); err != nil || old != "" {
		t.Fatalf("no alias: OlderAlias = %q, %v", old, err)
	}
	older := alias + "_v1"
	addAlias(older)
	if old, err := c.OlderAlias(ctx, mappings.Content); err != nil || old != older {
		t.Fatalf("alias on %s: OlderAlias = %q, %v", older, old, err)
	}
	old, err := c.MoveAliasForward(ctx, mappings.Content, mappings.Options{EmbeddingDims: 8})
	if err != nil || old != older {
		t.Fatalf("MoveAliasForward = %q, %v; want %q", old, err, older)
	}
	if target, err := c.AliasTarget(ctx, mappings.Content); err != nil || target != c.Index(mappings.Content) {
		t.Fatalf("after the move the alias names %q (%v), want %q", target, err, c.Index(mappings.Content))
	}
	if err := c.Do(ctx, "old index kept", esapi.IndicesExistsRequest{Index: []string{older}}, nil); err != nil {
		t.Fatalf("the older index is gone: %v", err)
	}
	if old, err := c.MoveAliasForward(ctx, mappings.Content, mappings.Options{EmbeddingDims: 8}); err != nil || old != "" {
		t.Fatalf("second MoveAliasForward = %q, %v; want no move", old, err)
	}

	// A newer release's index: never moved back.
	newer := newTestClient(t)
	c = newer
	alias = c.Alias(mappings.Content)
	addAlias(alias + "_v99")
	if old, err := c.MoveAliasForward(ctx, mappings.Content, mappings.Options{EmbeddingDims: 8}); err != nil || old != "" {
		t.Fatalf("alias on a newer index: MoveAliasForward = %q, %v; want no move", old, err)
	}
	if target, _ := c.AliasTarget(ctx, mappings.Content); target != alias+"_v99" {
		t.Fatalf("the alias left the newer index for %q", target)
	}
}

// TestAliases: one request lists the aliases that exist among several names, with the index
// each points at; the ones that do not exist are absent (readiness reports them as missing)
// rather than failing the whole answer.
func TestAliases(t *testing.T) {
	c := newTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, _, err := c.EnsureIndex(ctx, mappings.XAPIDocuments, mappings.Options{}); err != nil {
		t.Fatal(err)
	}
	found, err := c.Aliases(ctx, mappings.XAPIDocuments, mappings.XAPIActivities)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{c.Alias(mappings.XAPIDocuments): {c.Index(mappings.XAPIDocuments)}}
	if !reflect.DeepEqual(found, want) {
		t.Fatalf("Aliases = %v, want %v", found, want)
	}
	missing, err := c.MissingAliases(ctx, mappings.XAPIActivities, mappings.XAPIDocuments, mappings.Statements)
	if err != nil || !reflect.DeepEqual(missing, []string{c.Alias(mappings.XAPIActivities), c.Alias(mappings.Statements)}) {
		t.Fatalf("MissingAliases = %v, %v", missing, err)
	}
}
