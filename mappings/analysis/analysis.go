// Package analysis is Lectern's one text-analysis chain for content search, in pure Go.
//
// The chain (ARCHITECTURE.md, "Text analysis") is:
//
//  1. split into words on Unicode word boundaries (UAX #29, as Lucene's standard tokenizer
//     does) and then on apostrophes (' ’ ‘ ＇), so "don't" gives "don" + "t";
//  2. lowercase;
//  3. mark stop words (mappings.EnglishStopWords);
//  4. stem every other word with the Snowball English (Porter2) stemmer.
//
// It is the only analysis chain: the embedded (Bleve) backend indexes its terms through a
// Bleve analyzer that wraps it, and the distributed (Elasticsearch) backend sends its terms
// to Elasticsearch already made (whitespace-separated, for the built-in whitespace analyzer),
// so both backends find the same content and Elasticsearch needs no analysis plugin. Every
// search backend and every piece of code that needs lexemes (queries, matched terms, match
// regexes) goes through this package, never through a backend's own analyzer.
package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/segment"
	"github.com/kljensen/snowball/english"

	"github.com/lectern-lms/lectern/mappings"
)

// StopPlaceholder is the term that PhraseTerms puts where a stop word stands. It is upper
// case, and every real term is lower case, so no word of any text can ever produce it: a
// stop word in a phrase matches any stop word, and nothing else.
const StopPlaceholder = "_STOP_"

// maxTokenLength is the longest token, in UTF-16 code units, that Lucene's standard
// tokenizer emits (its default max_token_length); longer words are cut into pieces of this
// length. Mirrored so that pathological input analyses the same on both backends.
const maxTokenLength = 255

// Token is one word of a text after analysis.
type Token struct {
	// Term is the lexeme: the lowercased, stemmed word; for a stop word, the lowercased word.
	Term string
	// Start is the byte offset of the word's first byte in the analysed text.
	Start int
	// End is the byte offset one past the word's last byte.
	End int
	// Position is the word's index among the text's words, from 0; stop words count, as in
	// Elasticsearch, so phrase adjacency can be checked on positions.
	Position int
	// Stop reports that the word is a stop word (its Term is not stemmed).
	Stop bool
}

var stopWords = func() map[string]bool {
	m := make(map[string]bool, len(mappings.EnglishStopWords))
	for _, w := range mappings.EnglishStopWords {
		m[w] = true
	}
	return m
}()

// IsStopWord reports whether the lowercased word w is on the stop list.
func IsStopWord(w string) bool { return stopWords[w] }

// isApostrophe reports whether r is one of the apostrophes the chain splits words at: the
// ones UAX #29 lets join two letters into one word.
func isApostrophe(r rune) bool {
	return r == '\'' || r == '\u2018' || r == '\u2019' || r == '\uFF07'
}

// Tokens analyses text and returns its words in order, stop words included (marked Stop).
func Tokens(text string) []Token {
	var out []Token
	pos := 0
	for _, w := range words(text) {
		// Split at apostrophes; a part keeps its own byte span.
		start := w.start
		for i, r := range text[w.start:w.end] {
			if !isApostrophe(r) {
				continue
			}
			at := w.start + i
			if at > start {
				out = append(out, newToken(text[start:at], start, at, pos))
				pos++
			}
			start = at + utf8.RuneLen(r)
		}
		if w.end > start {
			out = append(out, newToken(text[start:w.end], start, w.end, pos))
			pos++
		}
	}
	return out
}

func newToken(word string, start, end, pos int) Token {
	lower := strings.ToLower(word)
	if stopWords[lower] {
		return Token{Term: lower, Start: start, End: end, Position: pos, Stop: true}
	}
	return Token{Term: Stem(lower), Start: start, End: end, Position: pos}
}

// Stem returns the Snowball English (Porter2) stem of a lowercased word, as Lucene's
// EnglishStemmer computes it.
func Stem(word string) string {
	// kljensen/snowball returns words of up to two bytes unchanged, as Snowball does for
	// words of up to two characters; it counts bytes, which only matters for non-ASCII
	// words, which the English rules do not change anyway.
	return english.Stem(word, true)
}

// Lexemes returns the distinct lexemes of text (stop words dropped), in order of first
// occurrence: what a keyword search looks for.
func Lexemes(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range Tokens(text) {
		if t.Stop || seen[t.Term] {
			continue
		}
		seen[t.Term] = true
		out = append(out, t.Term)
	}
	return out
}

// PhraseTerms returns the terms of text in order for phrase matching: lexemes, with
// StopPlaceholder for every stop word, so that a stop word matches any stop word at that
// position and nothing else.
func PhraseTerms(text string) []string {
	toks := Tokens(text)
	out := make([]string, len(toks))
	for i, t := range toks {
		if t.Stop {
			out[i] = StopPlaceholder
		} else {
			out[i] = t.Term
		}
	}
	return out
}

// span is a word of the text before the apostrophe split.
type span struct{ start, end int }

// words splits text on Unicode word boundaries and keeps the segments that Lucene's standard
// tokenizer turns into tokens (words with letters or digits, ideographs, kana), cutting
// over-long words as Lucene does.
func words(text string) []span {
	var out []span
	seg := segment.NewWordSegmenterDirect([]byte(text))
	off := 0
	gap := 0 // start of the current run of segments that are not words
	for seg.Segment() {
		b := seg.Bytes()
		start := off
		off += len(b)
		if seg.Type() == segment.None {
			continue
		}
		out = appendOther(out, text, gap, start)
		out = appendCut(out, text, start, off)
		gap = off
	}
	return appendOther(out, text, gap, off)
}

// appendOther appends the tokens Lucene's standard tokenizer finds where UAX #29 finds no
// word: runs of Southeast Asian letters (Thai, Lao, Myanmar, Khmer, which UAX #29 leaves to
// dictionaries and Lucene keeps whole) and emoji sequences (Lucene's <EMOJI> tokens).
func appendOther(out []span, text string, from, to int) []span {
	s := text[from:to]
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case isSoutheastAsian(r):
			j := i + n
			for j < len(s) {
				r, m := utf8.DecodeRuneInString(s[j:])
				if !isSoutheastAsian(r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Mc, r) {
					break
				}
				j += m
			}
			out = appendCut(out, text, from+i, from+j)
			i = j
		case r == '#' || r == '*':
			// A keycap emoji: # or * with an optional variation selector and U+20E3.
			j := emojiEnd(s, i+n)
			if strings.Contains(s[i:j], "\u20e3") {
				out = append(out, span{from + i, from + j})
			}
			i = max(j, i+n)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// Letters and digits newer than the segmenter's Unicode tables (such as
			// full-width digits, Numeric only in later versions): keep the run as a word.
			j := i + n
			for j < len(s) {
				r, m := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Mc, r) {
					break
				}
				j += m
			}
			out = appendCut(out, text, from+i, from+j)
			i = j
		case isRegionalIndicator(r):
			// A flag is a pair of regional indicators.
			j := i + n
			if r2, m := utf8.DecodeRuneInString(s[j:]); isRegionalIndicator(r2) {
				j += m
			}
			out = append(out, span{from + i, from + j})
			i = j
		case isPictographic(r):
			j := emojiEnd(s, i+n)
			// Join ZWJ sequences: ZWJ followed by another pictograph continues the emoji.
			for {
				z, m := utf8.DecodeRuneInString(s[j:])
				if z != '\u200d' {
					break
				}
				p, k := utf8.DecodeRuneInString(s[j+m:])
				if !isPictographic(p) {
					break
				}
				j = emojiEnd(s, j+m+k)
			}
			out = append(out, span{from + i, from + j})
			i = j
		default:
			i += n
		}
	}
	return out
}

// emojiEnd returns the end of the modifiers (variation selectors, skin tones, tags, keycap)
// that follow an emoji ending at i.
func emojiEnd(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != 0xFE0F && r != 0xFE0E && r != 0x20E3 && !(r >= 0x1F3FB && r <= 0x1F3FF) &&
			!(r >= 0xE0020 && r <= 0xE007F) {
			break
		}
		i += n
	}
	return i
}

func isRegionalIndicator(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// southeastAsian holds the scripts whose words Unicode leaves to dictionaries (line-break
// class SA); Lucene's standard tokenizer emits their runs as single tokens.
var southeastAsian = []*unicode.RangeTable{
	unicode.Thai, unicode.Lao, unicode.Myanmar, unicode.Khmer,
	unicode.Tai_Le, unicode.New_Tai_Lue, unicode.Tai_Tham, unicode.Tai_Viet,
}

func isSoutheastAsian(r rune) bool {
	return r >= 0x0E00 && unicode.IsOneOf(southeastAsian, r) && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// pictographic approximates Unicode's Extended_Pictographic property (emoji-data.txt),
// which Go's unicode package does not carry.
var pictographic = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x00A9, 0x00A9, 1}, {0x00AE, 0x00AE, 1}, {0x203C, 0x203C, 1}, {0x2049, 0x2049, 1},
		{0x2122, 0x2122, 1}, {0x2139, 0x2139, 1}, {0x2194, 0x2199, 1}, {0x21A9, 0x21AA, 1},
		{0x231A, 0x231B, 1}, {0x2328, 0x2328, 1}, {0x2388, 0x2388, 1}, {0x23CF, 0x23CF, 1},
		{0x23E9, 0x23F3, 1}, {0x23F8, 0x23FA, 1}, {0x24C2, 0x24C2, 1}, {0x25AA, 0x25AB, 1},
		{0x25B6, 0x25B6, 1}, {0x25C0, 0x25C0, 1}, {0x25FB, 0x25FE, 1}, {0x2600, 0x2605, 1},
		{0x2607, 0x2612, 1}, {0x2614, 0x2685, 1}, {0x2690, 0x2705, 1}, {0x2708, 0x2712, 1},
		{0x2714, 0x2714, 1}, {0x2716, 0x2716, 1}, {0x271D, 0x271D, 1}, {0x2721, 0x2721, 1},
		{0x2728, 0x2728, 1}, {0x2733, 0x2734, 1}, {0x2744, 0x2744, 1}, {0x2747, 0x2747, 1},
		{0x274C, 0x274C, 1}, {0x274E, 0x274E, 1}, {0x2753, 0x2755, 1}, {0x2757, 0x2757, 1},
		{0x2763, 0x2767, 1}, {0x2795, 0x2797, 1}, {0x27A1, 0x27A1, 1}, {0x27B0, 0x27B0, 1},
		{0x27BF, 0x27BF, 1}, {0x2934, 0x2935, 1}, {0x2B05, 0x2B07, 1}, {0x2B1B, 0x2B1C, 1},
		{0x2B50, 0x2B50, 1}, {0x2B55, 0x2B55, 1}, {0x3030, 0x3030, 1}, {0x303D, 0x303D, 1},
		{0x3297, 0x3297, 1}, {0x3299, 0x3299, 1},
	},
	R32: []unicode.Range32{
		{0x1F000, 0x1F0FF, 1}, {0x1F10D, 0x1F10F, 1}, {0x1F12F, 0x1F12F, 1},
		{0x1F16C, 0x1F171, 1}, {0x1F17E, 0x1F17F, 1}, {0x1F18E, 0x1F18E, 1},
		{0x1F191, 0x1F19A, 1}, {0x1F1AD, 0x1F1E5, 1}, {0x1F201, 0x1F20F, 1},
		{0x1F21A, 0x1F21A, 1}, {0x1F22F, 0x1F22F, 1}, {0x1F232, 0x1F23A, 1},
		{0x1F23C, 0x1F23F, 1}, {0x1F249, 0x1F3FA, 1}, {0x1F400, 0x1F53D, 1},
		{0x1F546, 0x1F64F, 1}, {0x1F680, 0x1F6FF, 1}, {0x1F774, 0x1F77F, 1},
		{0x1F7D5, 0x1F7FF, 1}, {0x1F80C, 0x1F80F, 1}, {0x1F848, 0x1F84F, 1},
		{0x1F85A, 0x1F85F, 1}, {0x1F888, 0x1F88F, 1}, {0x1F8AE, 0x1F8FF, 1},
		{0x1F90C, 0x1F93A, 1}, {0x1F93C, 0x1F945, 1}, {0x1F947, 0x1FAFF, 1},
		{0x1FC00, 0x1FFFD, 1},
	},
}

func isPictographic(r rune) bool { return unicode.Is(pictographic, r) }

// appendCut appends the word text[start:end], cut into pieces of at most maxTokenLength
// UTF-16 code units.
func appendCut(out []span, text string, start, end int) []span {
	units := 0
	from := start
	for i, r := range text[start:end] {
		n := 1
		if r > 0xFFFF {
			n = 2
		}
		if units+n > maxTokenLength {
			out = append(out, span{from, start + i})
			from, units = start+i, 0
		}
		units += n
	}
	return append(out, span{from, end})
}
