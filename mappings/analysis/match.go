package analysis

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/mappings"
)

// Regex building blocks. They use only syntax that Go (RE2), PCRE, Java and JavaScript (with
// the u flag) read alike, because the regex is returned to API clients.
const (
	// wordClass matches one character of a word.
	wordClass = `[\p{L}\p{M}\p{N}]`
	// separator matches what lies between two adjacent words: spaces, punctuation, and the
	// apostrophe inside a split contraction ("don't" is "don" + "t").
	separator = `[^\p{L}\p{M}\p{N}]+`
)

// stopAlternation matches any stop word; longest first, so that a regex engine that takes
// the first alternative that fits ("our" before "ourselves") still matches whole words.
var stopAlternation = func() string {
	words := slices.Clone(mappings.EnglishStopWords)
	slices.SortFunc(words, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return "(?:" + strings.Join(words, "|") + ")"
}()

// MatchRegex returns the regex that finds a phrase search's matches in original text, for
// the "match" of a phrase search with return_match: case-insensitive, words in the phrase's
// order separated by anything that is not a word, each content word written as the forms
// that share its lexeme's start (the word itself and its stem, each followed by any word
// characters: "jumped" gives (?:jumped|jump)[\p{L}\p{M}\p{N}]*), and each stop word as
// any stop word, so interchangeable stop words and split contractions ("don't" is the two
// stop words "don" and "t") match as the search does. Surrounding double quotes are ignored.
// A phrase without words gives "".
//
// The regex can match slightly more than the search (a word that merely starts like a
// lexeme); it is for highlighting text that the search already selected.
func MatchRegex(phrase string) string {
	toks := Tokens(phrase)
	if len(toks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("(?i)")
	for i, t := range toks {
		if i > 0 {
			b.WriteString(separator)
		}
		if t.Stop {
			// A stop word needs a boundary on the left only at the start (elsewhere a
			// separator precedes it) and on the right only at the end.
			if i == 0 {
				b.WriteString(`\b`)
			}
			b.WriteString(stopAlternation)
			if i == len(toks)-1 {
				b.WriteString(`\b`)
			}
			continue
		}
		surface := strings.ToLower(phrase[t.Start:t.End])
		if i == 0 && isASCIIWordStart(surface) {
			// \b is ASCII-only in several engines, so it is used only before an ASCII letter
			// or digit, where every engine agrees.
			b.WriteString(`\b`)
		}
		// The stem alone when the word starts with it ("jump" for "jumped"), else both
		// ("happy" and "happi", for "happiness").
		forms := []string{regexp.QuoteMeta(t.Term)}
		if !strings.HasPrefix(surface, t.Term) {
			forms = append(forms, regexp.QuoteMeta(surface))
		}
		if len(forms) == 1 {
			b.WriteString(forms[0])
		} else {
			b.WriteString("(?:" + strings.Join(forms, "|") + ")")
		}
		b.WriteString(wordClass + "*")
	}
	return b.String()
}

func isASCIIWordStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
}

// MatchedTerms returns the words of text whose lexeme is one of lexemes, as they appear in
// the text (original case; a part of a split contraction is the part alone), each distinct
// form once, in order of first appearance: the "match" of a keyword search.
func MatchedTerms(text string, lexemes []string) []string {
	want := make(map[string]bool, len(lexemes))
	for _, l := range lexemes {
		want[l] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range Tokens(text) {
		if t.Stop || !want[t.Term] {
			continue
		}
		s := text[t.Start:t.End]
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
