package indexer

import (
	"fmt"
	"strings"
	"testing"
)

// show renders fragments with the matches in brackets.
func show(fs []Fragment) string {
	var b strings.Builder
	for _, f := range fs {
		if f.Match {
			fmt.Fprintf(&b, "[%s]", f.Text)
		} else {
			b.WriteString(f.Text)
		}
	}
	return b.String()
}

func TestSnippet(t *testing.T) {
	for _, tc := range []struct {
		text, term string
		max        int
		want       string
	}{
		{"Bake the carrot cake at 180 degrees.\nLet the cake cool.", "cakes baking", 200,
			"[Bake] the carrot [cake] at 180 degrees. Let the [cake] cool."},
		{"Bake the carrot in a cake, a carrot cake.", `"carrot in the cake"`, 200, "Bake the [carrot in a cake], a carrot cake."},
		{"She don't jump. She jumped over it and jumped again.", `"she jumps"`, 200, "She don'[t jump]. [She jumped] over it [and jumped] again."},
		{"a b c d e f g h i j k l m n o p q r s t u v w x y z volcano lava flows here and there and everywhere", "volcano", 40,
			"… v w x y z [volcano] lava flows here and …"},
		{"volcano " + strings.Repeat("word ", 20), "lava", 20, "volcano word word …"},
		{"Ünïcödé wörds: café naïve résumé", "café", 200, "Ünïcödé wörds: [café] naïve résumé"},
		{"the the the", "the", 200, "the the the"},
		{"", "x", 10, ""},
	} {
		got := show(Snippet(tc.text, MatchSpans(tc.text, tc.term), tc.max))
		if got != tc.want {
			t.Errorf("Snippet(%q, %q, %d) = %q, want %q", tc.text, tc.term, tc.max, got, tc.want)
		}
	}
}

func TestMatchSpansMergeOverlappingPhrases(t *testing.T) {
	text := "go go go stop"
	got := MatchSpans(text, `"go go"`)
	if len(got) != 1 || text[got[0].Start:got[0].End] != "go go go" {
		t.Errorf("overlapping phrase occurrences: %v", got)
	}
}
