package extract

import "strings"

// headingTrail gives each section of one document (or one tool's slide list) the heading
// text it opens with (Section.Heading). Headings are text the learner reads, so they must be
// searchable, not only locations; but repeating every enclosing heading in every section
// would count a chapter title once per section. So a section opens with its own heading
// and with the enclosing headings that changed since the previous section: every heading
// is searchable once, in the first section under it, and the location keeps the full path.
type headingTrail struct {
	prev []string // the previous section's heading path
}

// next returns the heading text of a section at path (outermost first, its own heading
// last) whose text is body, and remembers path. Its own heading is always given, unless the
// body opens with the same words (a page whose <h1> repeats its navigation title, a slide
// whose text box repeats its title): said twice, it would weigh twice.
func (h *headingTrail) next(path []string, body string) string {
	k := 0
	for k < len(path)-1 && k < len(h.prev) && path[k] == h.prev[k] {
		k++
	}
	h.prev = append(h.prev[:0], path...)
	lines := path[k:]
	if n := len(lines); n > 0 {
		first, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
		if strings.EqualFold(collapseSpace(first), collapseSpace(lines[n-1])) {
			lines = lines[:n-1]
		}
	}
	var out []string
	for _, l := range lines {
		if l = collapseSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
