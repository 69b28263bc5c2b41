package eval

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/bleve"
	"github.com/lectern-lms/lectern/indexer/elastic"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/embed/onnx"
	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/storage/elastic/elastictest"
)

// minSemanticRecall is the floor for semantic recall@5 on the set.
const minSemanticRecall = 0.7

// TestEvaluation indexes the set with the real model into each backend (Bleve always,
// Elasticsearch when LECTERN_TEST_ELASTICSEARCH_URL is set, and required in CI) and checks
// that semantic recall@5 is at least minSemanticRecall and above lexical recall@5. It logs
// the figures (go test -v) that docs/search.md reports.
func TestEvaluation(t *testing.T) {
	e := Embedder(t)
	t.Run("bleve", func(t *testing.T) {
		ix, err := bleve.Open(t.TempDir(), bleve.Options{Model: Model(e)})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		evaluate(t, ix, e)
	})
	// Every passage on the integer model (by default only texts past onnx.IntegerMinTokens
	// use it, and most of the set's passages are shorter), queries too: it must keep the
	// float model's recall.
	t.Run("bleve-integer", func(t *testing.T) {
		ei := Embedder(t, onnx.WithIntegerMinTokens(0))
		ix, err := bleve.Open(t.TempDir(), bleve.Options{Model: Model(ei)})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		evaluate(t, ix, ei)
	})
	t.Run("elastic", func(t *testing.T) {
		c := elastictest.NewClient(t, "lectern_eval")
		ix, err := elastic.New(testCtx(t), c, elastic.Options{Model: Model(e)})
		if err != nil {
			t.Fatal(err)
		}
		// Every write waits for a refresh; a short interval changes no result, only the time.
		err = c.Do(testCtx(t), "put settings", esapi.IndicesPutSettingsRequest{
			Index: []string{c.Alias(mappings.Content)},
			Body:  strings.NewReader(`{"index":{"refresh_interval":"20ms"}}`),
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		evaluate(t, ix, e)
	})
}

func evaluate(t *testing.T, ix indexer.Index, e embed.Embedder) {
	ctx := testCtx(t)
	if err := Load(ctx, ix, e, Set); err != nil {
		t.Fatal(err)
	}
	lex, sem, err := Evaluate(ctx, ix, e, Set)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("model %s, %d passages", e.Model().Name, len(Set))
	t.Logf("%v", lex)
	t.Logf("%v", sem)
	if testing.Verbose() {
		for i, r := range sem.Ranks {
			if r == 0 || r > K {
				t.Logf("semantic miss: %s (rank %d): %q", Set[i].ID, r, Set[i].Query)
			}
		}
	}
	if sem.RecallAtK < minSemanticRecall {
		t.Errorf("semantic recall@%d = %.3f, want at least %.2f", K, sem.RecallAtK, minSemanticRecall)
	}
	if sem.RecallAtK <= lex.RecallAtK {
		t.Errorf("semantic recall@%d = %.3f, not above lexical %.3f", K, sem.RecallAtK, lex.RecallAtK)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
