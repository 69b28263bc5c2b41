package analysis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/mappings/analysis/analysistest"
	"github.com/lectern-lms/lectern/storage/elastic/elastictest"
)

// utf16Offset converts a byte offset in s into the UTF-16 offset Elasticsearch reports.
func utf16Offset(s string, byteOff int) int {
	return len(utf16.Encode([]rune(s[:byteOff])))
}

type esTok struct {
	term       string
	pos        int
	start, end int
}

func (e esTok) String() string { return fmt.Sprintf("%q@%d[%d:%d]", e.term, e.pos, e.start, e.end) }

// TestMatchesElasticsearch checks that this package analyses text exactly like the
// Elasticsearch analyzers of mappings (on a real node, with the Lectern plugin): the same
// terms at the same positions with the same offsets, for lectern_english (stop words
// dropped, stems) and lectern_phrase (every word, lowercased, unstemmed).
func TestMatchesElasticsearch(t *testing.T) {
	c := elastictest.NewClient(t, "lectern_test")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// EnsureIndex creates the index from mappings.Render(mappings.Content, ...), so the
	// analyzers compared are exactly the ones production uses.
	if _, _, err := c.EnsureIndex(ctx, mappings.Content, mappings.Options{EmbeddingDims: 4}); err != nil {
		t.Fatal(err)
	}

	lines := analysistest.Corpus()
	if n := len(strings.Fields(strings.Join(lines, " "))); n < 1000 {
		t.Fatalf("corpus has %d words, want at least 1000", n)
	}
	diverged := 0
	for _, line := range lines {
		toks := Tokens(line)
		var wantEnglish, wantPhrase []esTok
		for _, tk := range toks {
			s, e := utf16Offset(line, tk.Start), utf16Offset(line, tk.End)
			wantPhrase = append(wantPhrase, esTok{strings.ToLower(line[tk.Start:tk.End]), tk.Position, s, e})
			if !tk.Stop {
				wantEnglish = append(wantEnglish, esTok{tk.Term, tk.Position, s, e})
			}
		}
		for _, tc := range []struct {
			analyzer string
			want     []esTok
		}{
			{mappings.AnalyzerEnglish, wantEnglish},
			{mappings.AnalyzerPhrase, wantPhrase},
		} {
			got, err := c.Analyze(ctx, mappings.Content, tc.analyzer, line)
			if err != nil {
				t.Fatal(err)
			}
			var es []esTok
			for _, g := range got {
				es = append(es, esTok{g.Token, g.Position, g.StartOffset, g.EndOffset})
			}
			if fmt.Sprint(es) != fmt.Sprint(tc.want) {
				diverged++
				t.Errorf("%s %q:\n  elasticsearch %v\n  go            %v", tc.analyzer, line, es, tc.want)
			}
		}
	}
	t.Logf("compared %d lines, %d divergences", len(lines), diverged)
}
