package onnx

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestTokenizerMatchesReference compares token ids with those produced by
// Hugging Face `tokenizers` from the model's own tokenizer.json
// (testdata/tokenizer_cases.json, made by testdata/gen_reference.py). The
// cases cover accents, CJK, punctuation classes, control and zero-width
// characters, [UNK] words and truncation at 256 tokens: any drift here means
// the model sees different input than it was trained on.
func TestTokenizerMatchesReference(t *testing.T) {
	tok, err := loadWordPiece(vocabPath(t), true, 256)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/tokenizer_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Text string  `json:"text"`
		IDs  []int32 `json:"ids"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d reference cases", len(cases))
	}
	for _, c := range cases {
		if got := tok.encode(c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
		}
	}
}

func TestTokenizerRejectsNonBertVocab(t *testing.T) {
	p := t.TempDir() + "/vocab.txt"
	if err := os.WriteFile(p, []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadWordPiece(p, true, 256); err == nil {
		t.Fatal("want error for vocabulary without [CLS]/[SEP]")
	}
}
