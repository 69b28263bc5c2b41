// Package textnorm holds the text rules every reader of content/extract applies, whether it
// reads a PDF, a web page or an authoring tool's data: how white space collapses, and which
// headings a section opens with. It is a package of its own so that the tool readers
// (content/extract/tools) and the JavaScript data readers (content/extract/jsdata) follow
// the same rules as extract's own readers without importing extract, which imports them.
package textnorm

import (
	"strings"
	"unicode"
)

// CollapseSpace replaces every run of white space (and control characters) by one space.
// Control characters go too because tool data and PDFs use them as separators, and the
// zero-width space because authors paste it in without seeing it.
func CollapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u200b' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// HeadingTrail gives each section of one document (or one tool's slide list) the heading
// text it opens with (extract's Section.Heading). Headings are text the learner reads, so
// they must be searchable, not only locations; but repeating every enclosing heading in
// every section would count a chapter title once per section. So a section opens with its
// own heading and with the enclosing headings that changed since the previous section:
// every heading is searchable once, in the first section under it, and the location keeps
// the full path. The zero value is ready to use; use one trail per document.
type HeadingTrail struct {
	prev []string // the previous section's heading path
}

// Next returns the heading text of a section at path (outermost first, its own heading
// last) whose text is body, and remembers path. Its own heading is always given, unless the
// body opens with the same words (a page whose <h1> repeats its navigation title, a slide
// whose text box repeats its title): said twice, it would weigh twice.
func (h *HeadingTrail) Next(path []string, body string) string {
	k := 0
	for k < len(path)-1 && k < len(h.prev) && path[k] == h.prev[k] {
		k++
	}
	h.prev = append(h.prev[:0], path...)
	lines := path[k:]
	if n := len(lines); n > 0 {
		first, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
		if strings.EqualFold(CollapseSpace(first), CollapseSpace(lines[n-1])) {
			lines = lines[:n-1]
		}
	}
	var out []string
	for _, l := range lines {
		if l = CollapseSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
