package indexer

import (
	"slices"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/mappings/analysis"
)

func TestTermCounts(t *testing.T) {
	for _, tc := range []struct {
		text    string
		lexemes []string
		want    []int
	}{
		{"Carrots, carrot and CARROT cake", []string{"carrot", "cake"}, []int{3, 1}},
		{"the cake of the carrot", []string{"cake", "carrot", "zebra"}, []int{1, 1, 0}},
		{"", []string{"carrot"}, []int{0}},
		{"carrot", nil, []int{}},
		// Stop words never count, even when asked for.
		{"the the cake", []string{"the", "cake"}, []int{0, 1}},
		// Jumping, jumped and jumps share the lexeme jump.
		{"Jumping jacks: she jumped, jumps", analysis.Lexemes("jump"), []int{3}},
	} {
		if got := TermCounts(tc.text, tc.lexemes); !slices.Equal(got, tc.want) {
			t.Errorf("TermCounts(%q, %q) = %v, want %v", tc.text, tc.lexemes, got, tc.want)
		}
	}
}

func TestKeywordScores(t *testing.T) {
	// Four candidates; lexeme 0 is in all of them, lexeme 1 in one.
	counts := [][]int{{1, 0}, {3, 0}, {1, 1}, {2, 0}}
	got := KeywordScores(counts)
	// w = round(100 ln(1 + N/df)): 69 and 161; KeywordTF(1, 2, 3) = 64, 101, 128.
	want := []float64{69 * 64, 69 * 128, 69*64 + 161*64, 69 * 101}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("score %d = %v, want %v", i, got[i], want[i])
		}
	}
	// The rare lexeme outweighs repetitions of the common one; more repetitions rank higher.
	if !(got[2] > got[1] && got[1] > got[3] && got[3] > got[0]) {
		t.Errorf("scores %v: want 2 > 1 > 3 > 0", got)
	}
	// The order of the candidates does not change their scores.
	rev := slices.Clone(counts)
	slices.Reverse(rev)
	back := KeywordScores(rev)
	slices.Reverse(back)
	if !slices.Equal(back, got) {
		t.Errorf("scores depend on the order of the candidates: %v, %v", got, back)
	}
	if s := KeywordScores(nil); len(s) != 0 {
		t.Errorf("KeywordScores(nil) = %v", s)
	}
}

func TestKeywordTF(t *testing.T) {
	for tf, want := range map[int]int{-1: 0, 0: 0, 1: 64, 2: 101, 3: 128, 7: 192, 255: 512, 1000: 512} {
		if got := KeywordTF(tf); got != want {
			t.Errorf("KeywordTF(%d) = %d, want %d", tf, got, want)
		}
	}
	// Every value is exact in a float32 scaled by a power of two (Elasticsearch adds them up
	// bit by bit), fits in KeywordTFBits bits, and does not fall as tf grows.
	prev := 0
	for tf := 1; tf <= MaxKeywordTF; tf++ {
		f := KeywordTF(tf)
		if f < prev || f >= 1<<KeywordTFBits {
			t.Fatalf("KeywordTF(%d) = %d after %d", tf, f, prev)
		}
		prev = f
	}
}

func TestKeywordScoreRoundsLikeFloat32(t *testing.T) {
	// Above 2^24 a float32 cannot hold every integer: the score is the float32 Lucene gets.
	idf := make([]float64, 20)
	tf := make([]int, len(idf))
	for i := range tf {
		idf[i], tf[i] = 2001, 255
	}
	tf[0] = 2
	got := KeywordScore(tf, idf)
	exact := 2001.0 * (19*512 + 101) // odd, above 2^24
	if got != float64(float32(exact)) || got == exact {
		t.Errorf("KeywordScore = %v, want float32(%v)", got, exact)
	}
}

func TestPhraseOccurrences(t *testing.T) {
	for _, tc := range []struct {
		text, phrase string
		want         int
	}{
		{"Carrot cake. Carrot cake is the best carrot cake.", "carrot cake", 3},
		{"cake carrot", "carrot cake", 0},
		{"carrots caked", "carrot cake", 1},
		{"carrot and walnut cake", "carrot cake", 0},
		// A stop word of the phrase matches any stop word, and only a stop word.
		{"cake with a tin, cake in a box, cake big tin", "cake in a", 2},
		{"management big change", "management of change", 0},
		// Overlapping occurrences count separately.
		{"tick tick tick", "tick tick", 2},
		{"Don't panic; we can’t panic", "do not panic", 2},
		{"carrot", "", 0},
	} {
		if got := PhraseOccurrences(tc.text, analysis.PhraseTerms(tc.phrase)); got != tc.want {
			t.Errorf("PhraseOccurrences(%q, %q) = %d, want %d", tc.text, tc.phrase, got, tc.want)
		}
	}
}

// BenchmarkTermCounts measures the per-chunk cost a backend that re-analyses chunk text
// (indexer/elastic) pays for keyword scoring: one 60-word chunk.
func BenchmarkTermCounts(b *testing.B) {
	text := strings.Repeat("the fire safety drill and the exit alarm for every manager ", 6)
	lexemes := analysis.Lexemes("fire drill")
	for b.Loop() {
		TermCounts(text, lexemes)
	}
}

// BenchmarkKeywordScores scores 100,000 candidates of a two-lexeme query.
func BenchmarkKeywordScores(b *testing.B) {
	counts := make([][]int, 100_000)
	for i := range counts {
		counts[i] = []int{i % 3, i % 5}
	}
	for b.Loop() {
		KeywordScores(counts)
	}
}
