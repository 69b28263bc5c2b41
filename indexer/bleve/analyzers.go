package bleve

import (
	"strings"

	bleveanalysis "github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/lectern-lms/lectern/mappings/analysis"
)

// Names of the analyzers this package registers in Bleve's registry. Bleve stores analyzer
// names (not code) in an index's mapping and looks them up again when the index is opened,
// so the analyzers must be registered globally, once, before any index opens: this
// package's init does it, and that registration is the package's only side effect outside
// its own indexes. The names are prefixed so they cannot clash with Bleve's own.
const (
	// analyzerKeyword is mappings/analysis's chain with stop words dropped (field "text").
	analyzerKeyword = "lectern_english"
	// analyzerPhrase is the same chain with stop words replaced by
	// analysis.StopPlaceholder, every word at its own position (field "text_phrase").
	analyzerPhrase = "lectern_phrase"
	// analyzerExact makes the whole value one lowercased token (field search).
	analyzerExact = "lectern_exact"
)

func init() {
	for name, a := range map[string]bleveanalysis.Analyzer{
		analyzerKeyword: chain{},
		analyzerPhrase:  chain{phrase: true},
		analyzerExact:   exact{},
	} {
		err := registry.RegisterAnalyzer(name, func(map[string]any, *registry.Cache) (bleveanalysis.Analyzer, error) {
			return a, nil
		})
		if err != nil {
			panic(err)
		}
	}
}

// chain runs mappings/analysis on a field, so Bleve indexes exactly the terms that queries
// (and the Elasticsearch backend) compute with the same Go code.
type chain struct{ phrase bool }

func (c chain) Analyze(in []byte) bleveanalysis.TokenStream {
	toks := analysis.Tokens(string(in))
	out := make(bleveanalysis.TokenStream, 0, len(toks))
	for _, t := range toks {
		term := t.Term
		if t.Stop {
			if !c.phrase {
				continue
			}
			term = analysis.StopPlaceholder
		}
		out = append(out, &bleveanalysis.Token{
			Term:     []byte(term),
			Start:    t.Start,
			End:      t.End,
			Position: t.Position + 1, // Bleve counts from 1
			Type:     bleveanalysis.AlphaNumeric,
		})
	}
	return out
}

// exact makes the whole (lowercased) value a single token: field search matches whole
// values, ignoring case only.
type exact struct{}

func (exact) Analyze(in []byte) bleveanalysis.TokenStream {
	return bleveanalysis.TokenStream{{
		Term: []byte(strings.ToLower(string(in))), Start: 0, End: len(in), Position: 1,
		Type: bleveanalysis.AlphaNumeric,
	}}
}
