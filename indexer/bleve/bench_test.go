package bleve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/indexer"
)

// TestScale100k measures indexing and query latency at 100,000 chunks (5,000 versions of 20
// chunks, 384-dimensional vectors). It takes about a minute, so it runs only with
// LECTERN_BENCH_100K=1.
func TestScale100k(t *testing.T) {
	if os.Getenv("LECTERN_BENCH_100K") == "" {
		t.Skip("set LECTERN_BENCH_100K=1 to measure at 100k chunks")
	}
	const versions, perVersion, dims = 5000, 20, 384
	ctx := context.Background()
	ix, err := Open(t.TempDir(), Options{Model: indexer.Model{Name: "bench", Dims: dims}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := strings.Fields("safety fire exit drill alarm manager change management policy training course module " +
		"learner quiz score report data privacy security password phishing email customer service sales " +
		"product launch market team leader meeting project plan budget risk compliance audit law contract " +
		"health wellness stress sleep diet exercise coding review testing deploy cloud server network")
	randVec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	start := time.Now()
	for v := range versions {
		chunks := make([]indexer.Chunk, perVersion)
		for i := range chunks {
			words := make([]string, 60)
			for j := range words {
				words[j] = vocab[rng.IntN(len(vocab))]
				if j%5 == 4 {
					words[j] = "the"
				}
			}
			chunks[i] = indexer.Chunk{Active: true, Location: fmt.Sprintf("slide %d", i), Text: strings.Join(words, " "), Vector: randVec()}
		}
		if err := ix.IndexContent(ctx, "t", fmt.Sprintf("content-%05d", v), 1, chunks, nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("indexed %d chunks in %v", versions*perVersion, time.Since(start))

	measure := func(name string, q indexer.Query) {
		const n = 20
		var total, worst time.Duration
		for range n {
			s := time.Now()
			if _, err := ix.Search(ctx, q); err != nil {
				t.Fatal(err)
			}
			d := time.Since(s)
			total += d
			worst = max(worst, d)
		}
		t.Logf("%-34s mean %8v  max %8v", name, total/n, worst)
	}
	measure("keyword 'rare' (2 lexemes)", indexer.Query{Tenant: "t", Type: indexer.Lexical, Term: "phishing leader"})
	measure("keyword, return_match", indexer.Query{Tenant: "t", Type: indexer.Lexical, Term: "phishing leader", ReturnMatch: true})
	measure("phrase", indexer.Query{Tenant: "t", Type: indexer.Lexical, Term: `"fire exit drill"`})
	measure("keyword within one item", indexer.Query{Tenant: "t", Type: indexer.Lexical, Term: "fire drill", ContentID: "content-00042"})
	measure("semantic tenant-wide", indexer.Query{Tenant: "t", Type: indexer.Semantic, Vector: randVec()})
	measure("semantic within one item", indexer.Query{Tenant: "t", Type: indexer.Semantic, Vector: randVec(), ContentID: "content-00042"})
}
