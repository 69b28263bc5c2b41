package content

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/content/extract"
)

// Generated metadata field types (spec 001: TITLE and SUMMARY occur; the set is open).
const (
	FieldTitle   = "TITLE"
	FieldSummary = "SUMMARY"
)

// GeneratedField is one generated metadata value of a content version.
type GeneratedField struct {
	Type  string
	Value string
}

// SummarySentences and SummaryMaxChars bound the placeholder summary.
const (
	SummarySentences = 2
	SummaryMaxChars  = 400
)

// Fields generates the metadata fields of a version: TITLE is the title, SUMMARY the first
// sentences of its text. The summary is a placeholder generator (the first
// SummarySentences sentences, at most SummaryMaxChars characters, cut at a word) until a real
// summariser is wired in; it is honest about what it is: an extract, not an abstract.
func Fields(title string, sections []extract.Section) []GeneratedField {
	var out []GeneratedField
	if t := strings.TrimSpace(title); t != "" {
		out = append(out, GeneratedField{Type: FieldTitle, Value: t})
	}
	if s := Summary(sections); s != "" {
		out = append(out, GeneratedField{Type: FieldSummary, Value: s})
	}
	return out
}

// Summary returns the first sentences of the sections' text (see Fields).
func Summary(sections []extract.Section) string {
	var b strings.Builder
	n := 0
	for _, s := range sections {
		for _, sent := range sentences(s.Text) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(sent)
			n++
			if n >= SummarySentences || b.Len() >= SummaryMaxChars {
				return cut(b.String(), SummaryMaxChars)
			}
		}
	}
	return cut(b.String(), SummaryMaxChars)
}

// sentences splits text after '.', '!' or '?' followed by a space, and at line breaks.
func sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		start := 0
		rs := []rune(line)
		for i, r := range rs {
			if (r == '.' || r == '!' || r == '?') && (i+1 == len(rs) || unicode.IsSpace(rs[i+1])) {
				if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(string(rs[start:])); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// cut shortens s to at most max characters, at a word boundary when there is one.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)[:max]
	if i := strings.LastIndexFunc(string(r), unicode.IsSpace); i > max/2 {
		return strings.TrimSpace(string(r)[:i])
	}
	return string(r)
}

// ChunkChars is the target size of one search chunk: sections longer than this are split at
// line, sentence or word boundaries, so a chunk fits the embedding model's window (256
// tokens, roughly 1,000 to 1,200 characters of English) and a hit points close to its words.
const ChunkChars = 1200

// Piece is one search chunk of a section.
type Piece struct {
	Location string
	Text     string
}

// Chunks splits sections into search chunks. A section that fits is one chunk with the
// section's location; a longer one becomes several, located "<location> (part N)". Locations
// stay unique within the version. Every chunk of a section opens with the section's heading
// (extract.Section.Heading), so that the words of a heading are found and phrase-matched
// like any other text, at the heading's location, and the chunk's embedding knows what the
// section is about; a heading too long to repeat opens only the first chunk.
func Chunks(sections []extract.Section) []Piece {
	var out []Piece
	seen := map[string]bool{}
	unique := func(loc string) string {
		l := loc
		for i := 2; seen[l]; i++ {
			l = fmt.Sprintf("%s (%d)", loc, i)
		}
		seen[l] = true
		return l
	}
	for _, s := range sections {
		parts := sectionParts(strings.TrimSpace(s.Heading), strings.TrimSpace(s.Text))
		for i, p := range parts {
			loc := s.Location
			if len(parts) > 1 && i > 0 {
				loc = fmt.Sprintf("%s (part %d)", s.Location, i+1)
			}
			if loc == "" {
				loc = fmt.Sprintf("Section %d", len(out)+1)
			}
			out = append(out, Piece{Location: unique(loc), Text: p})
		}
	}
	return out
}

// maxRepeatedHeading is the longest heading (in runes) that opens every chunk of its section:
// real headings are a few words, and a longer one would crowd the section's own text out
// of its chunks.
const maxRepeatedHeading = ChunkChars / 4

// sectionParts is the chunk texts of one section: its text split to fit ChunkChars, each
// piece opening with the heading.
func sectionParts(heading, text string) []string {
	switch n := utf8.RuneCountInString(heading); {
	case heading == "" && text == "":
		return nil
	case heading == "":
		return split(text, ChunkChars)
	case text == "":
		return split(heading, ChunkChars)
	case n > maxRepeatedHeading:
		return split(heading+"\n"+text, ChunkChars)
	default:
		parts := split(text, ChunkChars-n-1)
		for i, p := range parts {
			parts[i] = heading + "\n" + p
		}
		return parts
	}
}

// split cuts text into pieces of at most max runes, preferring line breaks, then sentence
// ends, then spaces.
func split(text string, max int) []string {
	var out []string
	for utf8.RuneCountInString(text) > max {
		r := []rune(text)
		window := string(r[:max])
		at := -1
		for _, sep := range []string{"\n", ". ", "? ", "! ", " "} {
			if i := strings.LastIndex(window, sep); i > len(window)/3 {
				at = i + len(sep)
				break
			}
		}
		if at < 0 {
			at = len(window)
		}
		if p := strings.TrimSpace(text[:at]); p != "" {
			out = append(out, p)
		}
		text = strings.TrimSpace(text[at:])
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}
