package extract

import (
	stdhtml "html"
	"strings"

	"github.com/lectern-lms/lectern/content/extract/textnorm"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func htmlUnescape(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	return stdhtml.UnescapeString(s)
}

// htmlInfo is what one HTML page holds for us.
type htmlInfo struct {
	Title string
	// Parts are the page's text split at headings, in order; Path is the heading path,
	// Heading the heading text the part opens with (see textnorm.HeadingTrail).
	Parts []htmlPart
	// Generators are the <meta name="generator"> values; Comments the page's comments
	// (capped), where authoring tools write their name and version.
	Generators []string
	Comments   []string
}

type htmlPart struct {
	Path    []string
	Heading string
	Text    string
}

// Text returns the whole page text, headings included, one paragraph a line.
func (h *htmlInfo) Text() string {
	var b strings.Builder
	for _, p := range h.Parts {
		for _, s := range []string{p.Heading, p.Text} {
			if s == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(s)
		}
	}
	return strings.TrimSpace(b.String())
}

// skipped elements hold no learner-visible text: scripts and styles, templates that pages
// fill in at run time, fallback content for old browsers, and embedded graphics markup.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Math: true, atom.Iframe: true, atom.Object: true, atom.Head: true,
	atom.Select: true, atom.Canvas: true, atom.Audio: true, atom.Video: true,
}

var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Br: true, atom.Li: true, atom.Tr: true, atom.Td: true,
	atom.Th: true, atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true,
	atom.Table: true, atom.Ul: true, atom.Ol: true, atom.Blockquote: true, atom.Pre: true,
	atom.Dt: true, atom.Dd: true, atom.Figcaption: true, atom.Hr: true, atom.Nav: true,
	atom.Aside: true, atom.Main: true, atom.Form: true, atom.Fieldset: true, atom.Legend: true,
	atom.Label: true, atom.Button: true, atom.Caption: true, atom.Dl: true, atom.Figure: true,
	atom.Details: true, atom.Summary: true, atom.Address: true, atom.Option: true,
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// maxOpen bounds the element stack: real pages nest a few dozen deep, and a page of 100,000
// unclosed <div>s must not cost 100,000 entries.
const maxOpen = 512

type openElem struct {
	a    atom.Atom
	name string
	skip bool // this element (hidden, script, …) hides its content
}

// parseHTML tokenizes an HTML page (never building a tree, so memory stays proportional to
// the text) and returns its visible text split at headings, each part opening with its
// heading; a heading with neither text nor subheadings under it is a part of its own, with
// no text. Hidden content (the hidden
// attribute, aria-hidden="true", inline display:none or visibility:hidden) is skipped:
// learners do not see it, and it is often a template or an answer key.
func parseHTML(src string) *htmlInfo {
	info := &htmlInfo{}
	z := html.NewTokenizer(strings.NewReader(src))
	z.SetMaxBuf(4 << 20)
	var stack []openElem
	skipDepth := 0 // how many open elements hide their content
	var heads [6]string
	var text, headText strings.Builder
	inHeading, inTitle := 0, false
	var title strings.Builder
	commentBytes := 0
	var trail textnorm.HeadingTrail
	// level is the innermost heading's level (0 before the first heading); opened reports
	// whether a part has opened with it yet.
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
	flush := func() {
		t := tidyLines(text.String())
		text.Reset()
		if t != "" {
			p := path()
			info.Parts = append(info.Parts, htmlPart{Path: p, Heading: trail.Next(p, t), Text: t})
			opened = true
		}
	}
	// closeEmpty ends the innermost heading before one of level next (0 at the end): if no
	// part opened with it and next is not its subheading, it becomes a part of its own.
	closeEmpty := func(next int) {
		if level > 0 && !opened && next <= level {
			p := path()
			info.Parts = append(info.Parts, htmlPart{Path: p, Heading: trail.Next(p, "")})
			opened = true
		}
	}
	pop := func(a atom.Atom, name string) {
		// Close the nearest matching element and everything opened inside it (what a browser
		// does for misnested tags); an end tag with no match is ignored.
		for i := len(stack) - 1; i >= 0 && i >= len(stack)-64; i-- {
			if stack[i].a == a && stack[i].name == name {
				for _, el := range stack[i:] {
					if el.skip {
						skipDepth--
					}
				}
				stack = stack[:i]
				return
			}
		}
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			flush()
			closeEmpty(0)
			info.Title = textnorm.CollapseSpace(title.String())
			return info
		case html.CommentToken:
			if commentBytes < 16<<10 {
				c := string(z.Text())
				if len(c) > 1024 {
					c = cutUTF8(c, 1024)
				}
				commentBytes += len(c)
				info.Comments = append(info.Comments, c)
			}
		case html.TextToken:
			if inTitle {
				title.Write(z.Text())
				continue
			}
			if skipDepth > 0 {
				continue
			}
			t := z.Text()
			if inHeading > 0 {
				headText.Write(t)
			} else {
				text.Write(t)
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			nameB, hasAttr := z.TagName()
			name := string(nameB)
			a := atom.Lookup(nameB)
			if tt == html.EndTagToken {
				if a == atom.Title {
					inTitle = false
				}
				if lvl := headingLevel(a); lvl > 0 && inHeading == lvl {
					inHeading = 0
					h := textnorm.CollapseSpace(headText.String())
					headText.Reset()
					if h != "" && skipDepth == 0 {
						closeEmpty(lvl)
						heads[lvl-1] = h
						for j := lvl; j < 6; j++ {
							heads[j] = ""
						}
						level, opened = lvl, false
					}
				}
				pop(a, name)
				if blocks[a] {
					text.WriteByte('\n')
				}
				continue
			}
			hide := skipped[a]
			var attrs map[string]string
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				if attrs == nil {
					attrs = map[string]string{}
				}
				if len(attrs) < 64 {
					attrs[string(k)] = string(v)
				}
			}
			if a == atom.Meta && strings.EqualFold(attrs["name"], "generator") && len(info.Generators) < 16 {
				info.Generators = append(info.Generators, attrs["content"])
			}
			if a == atom.Title && skipDepth <= 1 && title.Len() == 0 {
				inTitle = tt == html.StartTagToken
				continue
			}
			if _, ok := attrs["hidden"]; ok {
				hide = true
			}
			if strings.EqualFold(attrs["aria-hidden"], "true") {
				hide = true
			}
			if st := strings.ToLower(strings.ReplaceAll(attrs["style"], " ", "")); strings.Contains(st, "display:none") || strings.Contains(st, "visibility:hidden") {
				hide = true
			}
			if a == atom.Input && strings.EqualFold(attrs["type"], "hidden") {
				hide = true
			}
			if lvl := headingLevel(a); lvl > 0 && skipDepth == 0 && !hide && tt == html.StartTagToken {
				flush()
				inHeading = lvl
				headText.Reset()
			}
			if a == atom.Img && skipDepth == 0 && !hide {
				// Alt text is what a screen-reader learner hears; authoring tools often put
				// slide text in images and the words only in alt.
				if alt := textnorm.CollapseSpace(attrs["alt"]); len(alt) > 3 {
					text.WriteString(" " + alt + " ")
				}
			}
			// Inline elements add nothing: "<b>W</b>ord" is one word on screen.
			if blocks[a] {
				text.WriteByte('\n')
			}
			if tt == html.SelfClosingTagToken || isVoid(a) {
				continue
			}
			if len(stack) < maxOpen {
				stack = append(stack, openElem{a: a, name: name, skip: hide})
				if hide {
					skipDepth++
				}
			} else if hide {
				// Too deep to track: the tokenizer still treats <script> content as raw
				// text, so only hidden-attribute content may leak here, which is harmless.
				continue
			}
		}
	}
}

func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

// htmlDoc extracts a standalone HTML page: one section per heading path, opening with its
// heading. Text before the first heading is located by the page title ("Introduction"
// without one).
func (e *extractor) htmlDoc(src string) {
	e.res.Details.ContentType = ContentHTML
	info := parseHTML(src)
	e.res.Title = info.Title
	for _, p := range info.Parts {
		loc := strings.Join(p.Path, " > ")
		if loc == "" {
			loc = info.Title
		}
		if loc == "" {
			loc = "Introduction"
		}
		e.addHeaded(loc, p.Heading, p.Text)
	}
	e.meta("web_pages", 1)
}
