package indexer

import (
	"math"

	"github.com/lectern-lms/lectern/mappings/analysis"
)

// Lexical and field ranking.
//
// Ranking is not left to the backends' own scoring (Elasticsearch's BM25, Bleve's TF-IDF),
// which rank the same hits differently. Each backend only selects the matching chunks (or
// fields); the Score of every lexical and field hit is then computed here, in Go, from data
// both backends hold exactly, so that both return the same ordered results (and the same
// scores, to the bit) for the same query:
//
//   - Keyword: KeywordScores (KeywordIDF, KeywordTF, KeywordScore). For a chunk c and the
//     query's lexemes l,
//
//     score(c) = Σ_l w(l) × KeywordTF(tf(l, c)),
//     w(l) = round(100 × ln(1 + N / df(l))),  KeywordTF(t) = round(64 × log2(1 + min(t, 255)))
//
//     where tf(l, c) is the number of words of c whose lexeme is l (mappings/analysis), N is
//     the number of candidate chunks — the chunks the query may find (tenant, content id,
//     version, tags, active) that hold at least one of the lexemes — and df(l) the number of
//     candidates holding l. log(1+tf) rewards repetition with diminishing returns; the
//     weight w (an idf) makes the rarer lexemes of a query weigh more (with one lexeme N = df
//     and it is the constant 69, and tf alone ranks).
//
//     Both factors are integers on purpose: KeywordTF is at most 512, exact in the 9
//     significant bits any float keeps, and w × 2^b is exact in a float32, so Elasticsearch
//     computes the very same score as a sum of boosted boolean-similarity term queries (one
//     per set bit of KeywordTF, see indexer/elastic), in Lucene's float arithmetic (a sum in
//     float64, exact for integers, rounded once to float32 — which KeywordScore does too, a
//     no-op below 2^24), and can rank and page by it. The rounding of the logarithms makes
//     ties a little likelier than with real-valued factors; Compare breaks them.
//
//     The document frequencies are those of the candidate set, not of the whole tenant, on
//     purpose: both backends can count the candidates exactly (Bleve from its postings,
//     Elasticsearch with one count request), so the statistics are cheap and exactly equal.
//     Tenant-wide frequencies would need extra count requests, and Elasticsearch's index
//     statistics count deleted documents until segments merge, so the two backends would
//     disagree, sometimes. The consequence is that a score depends on the query's scope
//     (filters, content id) as well as the chunk, as Lucene scores depend on shard
//     statistics. There is no length normalisation: it would need every candidate's length
//     in words, which Bleve's term vectors do not give without loading and re-analysing the
//     text.
//   - Phrase: PhraseOccurrences, the number of times the phrase occurs in the chunk (an
//     integer score: more occurrences rank higher, equal counts fall to the tie-break),
//     counted in the text of the hits (Bleve from the positions of the phrase terms in its index; Elasticsearch ranks
//     by a phrase score monotone in the occurrence count and counts the occurrences of one
//     hit per distinct score, from _source).
//   - Field: every exact match scores FieldScore; the order is Compare's tie-break alone.
//
// Tenant-wide, a version's score is that of its best chunk (Collapse). Equal scores are
// ordered by Compare.

// FieldScore is the Score of every field search hit: an exact match has no degrees.
const FieldScore = 1.0

// TermCounts returns, for each of lexemes, the number of words of text whose lexeme it is
// (mappings/analysis.Tokens; stop words never count): the term frequencies KeywordScores
// takes. A backend that has the chunk's text calls it; one whose index was built with the
// same analysis chain may count the term positions it reports instead, which gives the
// same numbers.
func TermCounts(text string, lexemes []string) []int {
	out := make([]int, len(lexemes))
	if len(lexemes) == 0 {
		return out
	}
	at := make(map[string]int, len(lexemes))
	for i, l := range lexemes {
		if _, dup := at[l]; !dup {
			at[l] = i
		}
	}
	for _, t := range analysis.Tokens(text) {
		if t.Stop {
			continue
		}
		if i, ok := at[t.Term]; ok {
			out[i]++
		}
	}
	return out
}

// KeywordIDF returns the weight w of each of a keyword query's lexemes (see the formula
// above), an integer held in a float64: candidates is the number of candidate chunks (every
// chunk the query may find that holds at least one lexeme, before the rule that a version
// must hold all of them removes any), df[j] the number of candidates holding lexeme j. A
// lexeme no candidate holds gets 0.
func KeywordIDF(candidates int, df []int) []float64 {
	idf := make([]float64, len(df))
	for j, d := range df {
		if d > 0 {
			idf[j] = math.Round(100 * math.Log1p(float64(candidates)/float64(d)))
		}
	}
	return idf
}

// MaxKeywordTF is the largest term frequency KeywordTF tells apart; KeywordTF(MaxKeywordTF)
// is 512, so every KeywordTF fits in KeywordTFBits bits.
const MaxKeywordTF = 255

// KeywordTFBits is the number of bits of a KeywordTF value.
const KeywordTFBits = 10

// KeywordTF returns the integer term frequency factor of the keyword score (see the formula
// above): round(64 × log2(1 + min(tf, MaxKeywordTF))), 0 for tf ≤ 0.
func KeywordTF(tf int) int {
	if tf <= 0 {
		return 0
	}
	return int(math.Round(64 * math.Log2(1+float64(min(tf, MaxKeywordTF)))))
}

// KeywordScore returns the keyword score of a chunk whose term frequencies of the query's
// lexemes are tf (TermCounts), given their weights (KeywordIDF): Σ w × KeywordTF(tf), summed
// in float64 (exact: integers) and rounded to float32 as Lucene rounds its scores, so every
// backend gets the same bits from the same numbers.
func KeywordScore(tf []int, idf []float64) float64 {
	var s float64
	for j, n := range tf {
		if n > 0 && j < len(idf) {
			s += idf[j] * float64(KeywordTF(n))
		}
	}
	return float64(float32(s))
}

// KeywordScores returns the keyword score of every candidate chunk of a keyword query (see
// KeywordIDF for the candidates) from their term frequencies: counts[i][j] is the term
// frequency of lexeme j in candidate i. The candidates may come in any order; their scores do
// not depend on it. Backends that can tell whether a candidate holds a lexeme more cheaply
// than counting how often (Elasticsearch's matched queries) use KeywordIDF and KeywordScore,
// and count only in the candidates they keep.
func KeywordScores(counts [][]int) []float64 {
	n := 0
	for _, c := range counts {
		n = max(n, len(c))
	}
	df := make([]int, n)
	for _, c := range counts {
		for j, tf := range c {
			if tf > 0 {
				df[j]++
			}
		}
	}
	idf := KeywordIDF(len(counts), df)
	out := make([]float64, len(counts))
	for i, c := range counts {
		out[i] = KeywordScore(c, idf)
	}
	return out
}

// PhraseOccurrences returns the number of places where terms (mappings/analysis.PhraseTerms
// of a phrase query) occur in text, adjacent and in order: a lexeme matches a word with that
// lexeme, analysis.StopPlaceholder any stop word. Overlapping occurrences count separately.
// It is the Score of a phrase search hit.
func PhraseOccurrences(text string, terms []string) int {
	if len(terms) == 0 {
		return 0
	}
	toks := analysis.Tokens(text)
	n := 0
	for i := 0; i+len(terms) <= len(toks); i++ {
		ok := true
		for j, term := range terms {
			t := toks[i+j]
			if term == analysis.StopPlaceholder {
				ok = t.Stop
			} else {
				ok = !t.Stop && t.Term == term
			}
			if !ok {
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}
