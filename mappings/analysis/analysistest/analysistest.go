// Package analysistest holds a text corpus for the tests of the Go analysis chain
// (mappings/analysis) and of how the search backends index its terms (indexer/elastic checks
// that Elasticsearch gets back exactly the chain's terms, at the same positions).
package analysistest

import (
	_ "embed"
	"strings"
)

//go:embed corpus.txt
var corpus string

// Corpus returns the corpus's non-empty lines: sentences and word lists chosen to exercise
// the tokenizer (punctuation, numbers, scripts, emoji, apostrophes), the stop list and the
// stemmer (suffix classes and Porter2's exceptions).
func Corpus() []string {
	var lines []string
	for l := range strings.Lines(corpus) {
		if l = strings.TrimRight(l, "\r\n"); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
