//go:build cgo

package onnx

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/indexer/embed"
)

// fixtureTexts are the texts of testdata/recorded_vectors.json: lengths from one token to
// past the 256-token cut, mixed so that any batching groups them differently.
func fixtureTexts() []string {
	return []string{
		"x",
		"A cat sits on the mat",
		"resolving workplace disputes between colleagues",
		"Héllo wörld, naïve café — 日本語のテキスト",
		strings.Repeat("Learners practise giving feedback in role plays. ", 6),
		strings.Repeat("Assessment rubrics describe observable behaviours at four levels. ", 14),
		"Quarterly revenue grew by 5%",
		strings.Repeat("The facilitator observes and records evidence of each competency the module assesses, ", 30),
		"",
		"Gloves protect hands from cuts, burns and chemicals; wear them whenever the task needs it.",
	}
}

// TestONNXMatchesRecordedVectors compares with vectors recorded from the embedder before its
// batching and threading changed (issue 13: length-sorted batches of 8 on one session with
// runtime.NumCPU() intra-op threads): a text of up to IntegerMinTokens tokens (queries, skill
// names) must keep its vector (cosine >= 1-1e-5), or caches and indexes built before would no
// longer match new queries; a longer one runs on the integer model when it is installed and
// must stay within cosine 0.99 of it (the evaluation shows recall unchanged).
func TestONNXMatchesRecordedVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/recorded_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Texts   []string    `json:"texts"`
		Vectors [][]float32 `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	e := newTestONNX(t)
	got, err := e.Embed(context.Background(), rec.Texts)
	if err != nil {
		t.Fatal(err)
	}
	want := func(i int) float64 {
		if e.integer != nil && len(e.tok.encode(rec.Texts[i])) > IntegerMinTokens {
			return 0.99
		}
		return 1 - 1e-5
	}
	for i := range rec.Texts {
		if c := embed.Cosine(got[i], rec.Vectors[i]); c < want(i) {
			t.Errorf("text %d (%.40q): cosine to the recorded vector %.7f", i, rec.Texts[i], c)
		}
	}
	// One at a time too: a text's vector must not depend on what it is batched with.
	for i, text := range rec.Texts {
		if c := embed.Cosine(embedOne(t, e, text), rec.Vectors[i]); c < want(i) {
			t.Errorf("text %d alone: cosine to the recorded vector %.7f", i, c)
		}
	}
}
