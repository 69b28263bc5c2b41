package extract

import (
	"regexp"
	"strings"

	"github.com/lectern-lms/lectern/content/extract/textnorm"
)

var (
	mdImage    = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdRefLink  = regexp.MustCompile(`\[([^\]]+)\]\[[^\]]*\]`)
	mdLinkDef  = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*\S+`)
	mdEmphasis = regexp.MustCompile("(\\*\\*|__|\\*|`|~~)")
	mdTag      = regexp.MustCompile(`</?[A-Za-z][^>]{0,200}>`)
	mdAutolink = regexp.MustCompile(`<((?:https?|mailto):[^>\s]+)>`)
)

// markdown splits Markdown into sections at ATX ("## Title") and setext (underlined)
// headings, located by heading path and opening with their heading (see textnorm.HeadingTrail); a
// heading with neither text nor subheadings under it is a section of its own. Code blocks
// keep their text (a learner may search for a command) but a "#" inside them is not a
// heading. Inline markup is reduced to its text.
func (e *extractor) markdown(text string) {
	e.res.Details.ContentType = ContentMarkdown
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	// A YAML front matter block is metadata, not prose; take a title from it if present.
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines) && i < 200; i++ {
			l := strings.TrimSpace(lines[i])
			if l == "---" || l == "..." {
				for _, fm := range lines[1:i] {
					if k, v, ok := strings.Cut(fm, ":"); ok && strings.TrimSpace(k) == "title" {
						e.res.Title = strings.Trim(strings.TrimSpace(v), `"'`)
					}
				}
				lines = lines[i+1:]
				break
			}
		}
	}
	var heads [6]string
	var body []string
	var trail textnorm.HeadingTrail
	// level is the innermost heading's level (0 before the first heading); opened reports
	// whether a section has opened with it yet.
	level, opened := 0, false
	path := func() []string {
		var p []string
		for _, h := range heads {
			if h != "" {
				p = append(p, h)
			}
		}
		return p
	}
	loc := func() string {
		p := path()
		if len(p) == 0 {
			if e.res.Title != "" {
				return e.res.Title
			}
			return "Introduction"
		}
		return strings.Join(p, " > ")
	}
	flush := func() {
		text := tidyLines(strings.Join(body, "\n"))
		body = body[:0]
		if text != "" {
			e.addHeaded(loc(), trail.Next(path(), text), text)
			opened = true
		}
	}
	// closeEmpty ends the innermost heading before one of level next (0 at the end): if no
	// section opened with it and next is not its subheading, it becomes a section of its own.
	closeEmpty := func(next int) {
		if level > 0 && !opened && next <= level {
			e.addHeaded(loc(), trail.Next(path(), ""), "")
			opened = true
		}
	}
	setHeading := func(lvl int, title string) {
		flush()
		title = textnorm.CollapseSpace(mdInline(title))
		closeEmpty(lvl)
		heads[lvl-1] = title
		for j := lvl; j < 6; j++ {
			heads[j] = ""
		}
		level, opened = lvl, false
		if title == "" {
			// Nothing to open a section with (a heading of only an image without alt text).
			opened = true
		}
		if e.res.Title == "" && lvl == 1 {
			e.res.Title = title
		}
	}
	fence := ""
	for i := 0; i < len(lines); i++ {
		if i%1024 == 0 && e.ctx.Err() != nil {
			return
		}
		l := lines[i]
		t := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
				continue
			}
			body = append(body, l)
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		if lvl, title, ok := atxHeading(l); ok {
			setHeading(lvl, title)
			continue
		}
		// Setext: a text line underlined by === (h1) or --- (h2). A lone "---" after a
		// blank line is a thematic break instead.
		if i+1 < len(lines) && t != "" {
			u := strings.TrimSpace(lines[i+1])
			if len(u) >= 2 && strings.Trim(u, "=") == "" {
				setHeading(1, t)
				i++
				continue
			}
			if len(u) >= 2 && strings.Trim(u, "-") == "" && !strings.HasPrefix(t, "- ") && !strings.HasPrefix(t, "|") {
				setHeading(2, t)
				i++
				continue
			}
		}
		if mdLinkDef.MatchString(l) {
			continue
		}
		body = append(body, mdInline(mdListMarker(t)))
	}
	flush()
	closeEmpty(0)
}

// atxHeading parses "## Title ##".
func atxHeading(l string) (int, string, bool) {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 || !strings.HasPrefix(t, "#") {
		return 0, "", false
	}
	n := len(t) - len(strings.TrimLeft(t, "#"))
	if n > 6 || (len(t) > n && t[n] != ' ' && t[n] != '\t') {
		return 0, "", false
	}
	title := strings.TrimSpace(t[n:])
	title = strings.TrimSpace(strings.TrimRight(title, "#"))
	if title == "" {
		return 0, "", false
	}
	return n, title, true
}

func mdListMarker(t string) string {
	for _, p := range []string{"- ", "* ", "+ ", "> "} {
		if strings.HasPrefix(t, p) {
			return strings.TrimPrefix(t, p)
		}
	}
	// "1. item" / "1) item"
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
		return t[i+2:]
	}
	if strings.Trim(t, "-*_ ") == "" {
		return "" // thematic break
	}
	return t
}

// mdInline reduces inline Markdown to its text: images to their alt text, links to their
// label, emphasis and code marks and inline HTML tags removed, table pipes to spaces.
func mdInline(s string) string {
	s = mdImage.ReplaceAllString(s, "$1")
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdRefLink.ReplaceAllString(s, "$1")
	s = mdAutolink.ReplaceAllString(s, "$1")
	s = mdTag.ReplaceAllString(s, " ")
	s = mdEmphasis.ReplaceAllString(s, "")
	if strings.HasPrefix(strings.TrimSpace(s), "|") {
		s = strings.ReplaceAll(s, "|", " ")
		if strings.Trim(s, " -:") == "" {
			return ""
		}
	}
	return htmlUnescape(s)
}
