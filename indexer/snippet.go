package indexer

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/mappings/analysis"
)

// Span is a byte range [Start, End) of a text.
type Span struct{ Start, End int }

// MatchSpans returns where a lexical term matches text, in order and without overlaps: for
// a keyword term every word whose lexeme is one of the term's (stop words never), for a
// phrase (the term in double quotes) every occurrence of the phrase as the search counts
// them (PhraseOccurrences), from its first word to its last, overlapping occurrences
// merged. These are the words the search matched, found by the same analysis, so a
// highlight never disagrees with the search.
func MatchSpans(text, term string) []Span {
	toks := analysis.Tokens(text)
	var out []Span
	add := func(s Span) {
		if n := len(out); n > 0 && s.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, s.End)
			return
		}
		out = append(out, s)
	}
	if phrase, ok := Phrase(term); ok {
		terms := analysis.PhraseTerms(phrase)
		if len(terms) == 0 {
			return nil
		}
		for i := 0; i+len(terms) <= len(toks); i++ {
			ok := true
			for j, pt := range terms {
				t := toks[i+j]
				if pt == analysis.StopPlaceholder {
					ok = t.Stop
				} else {
					ok = !t.Stop && t.Term == pt
				}
				if !ok {
					break
				}
			}
			if ok {
				add(Span{toks[i].Start, toks[i+len(terms)-1].End})
			}
		}
		return out
	}
	want := map[string]bool{}
	for _, l := range analysis.Lexemes(term) {
		want[l] = true
	}
	for _, t := range toks {
		if !t.Stop && want[t.Term] {
			add(Span{t.Start, t.End})
		}
	}
	return out
}

// Fragment is a piece of a snippet; Match marks a piece the search matched.
type Fragment struct {
	Text  string
	Match bool
}

// Ellipsis marks text a snippet leaves out at either end.
const Ellipsis = "…"

var spaces = regexp.MustCompile(`\s+`)

// Snippet returns an excerpt of text of about maxRunes characters, opening a little before
// the first span (at a word), cut into fragments at the spans (sorted, not overlapping),
// which become Match fragments. Runs of white space become one space; Ellipsis marks what
// is left out. Text without spans gives its beginning, without Match fragments.
func Snippet(text string, spans []Span, maxRunes int) []Fragment {
	start, end := 0, len(text)
	if utf8.RuneCountInString(text) > maxRunes {
		anchor := 0
		if len(spans) > 0 {
			anchor = spans[0].Start
		}
		// Open up to a quarter of the excerpt before the first match, at a word start.
		start = back(text, anchor, maxRunes/4)
		if prev, _ := utf8.DecodeLastRuneInString(text[:start]); start > 0 && !unicode.IsSpace(prev) {
			if i := strings.IndexFunc(text[start:anchor], unicode.IsSpace); i >= 0 {
				start += i
			} else {
				start = anchor
			}
		}
		end = forward(text, start, maxRunes)
		if end < len(text) {
			if i := strings.LastIndexFunc(text[start:end], unicode.IsSpace); i > 0 {
				end = start + i
			}
			if len(spans) > 0 && end < spans[0].End {
				end = spans[0].End
			}
		}
	}
	var out []Fragment
	add := func(s string, match bool) {
		s = spaces.ReplaceAllString(s, " ")
		if s == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Match == match {
			out[n-1].Text += s
			return
		}
		out = append(out, Fragment{Text: s, Match: match})
	}
	at := start
	for _, sp := range spans {
		s, e := max(sp.Start, at), min(sp.End, end)
		if s >= e {
			continue
		}
		add(text[at:s], false)
		add(text[s:e], true)
		at = e
	}
	add(text[at:end], false)
	// No white space at either end, and an ellipsis where text is left out.
	if len(out) > 0 && !out[0].Match {
		out[0].Text = strings.TrimLeftFunc(out[0].Text, unicode.IsSpace)
	}
	if n := len(out); n > 0 && !out[n-1].Match {
		out[n-1].Text = strings.TrimRightFunc(out[n-1].Text, unicode.IsSpace)
	}
	if start > 0 {
		if len(out) > 0 && !out[0].Match {
			out[0].Text = Ellipsis + " " + out[0].Text
		} else {
			out = append([]Fragment{{Text: Ellipsis + " "}}, out...)
		}
	}
	if end < len(text) {
		if n := len(out); n > 0 && !out[n-1].Match {
			out[n-1].Text += " " + Ellipsis
		} else {
			out = append(out, Fragment{Text: " " + Ellipsis})
		}
	}
	return out
}

// back returns the byte offset n runes before i in s (0 at most).
func back(s string, i, n int) int {
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}

// forward returns the byte offset n runes after i in s (len(s) at most).
func forward(s string, i, n int) int {
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}
