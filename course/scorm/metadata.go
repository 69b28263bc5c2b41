package scorm

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/lectern-lms/lectern/course"
)

// metadata reads a <metadata> element: inline LOM (IEEE LOM in 2004, imsmd in 1.2, both
// matched by local name) and, when no inline LOM is given, an adlcp:location file. Returns nil
// when nothing descriptive was found so empty objects do not clutter the model.
func (p *parser) metadata(n *node, where string) *course.Metadata {
	if n == nil {
		return nil
	}
	var md *course.Metadata
	if lom := n.child("lom"); lom != nil {
		md = lomMetadata(lom)
	}
	if loc := n.textOf("location"); loc != "" {
		ext := p.externalMetadata(loc, where)
		md = mergeMetadata(md, ext)
	}
	return md
}

// externalMetadata reads an adlcp:location metadata file. Its location is relative to the
// package root (where the manifest is). A missing or unreadable file is only a warning: the
// metadata is descriptive and the course runs without it.
func (p *parser) externalMetadata(loc, where string) *course.Metadata {
	if isAbsURL(loc) {
		p.warnf("%s: external metadata %q is a URL; not fetched", where, loc)
		return nil
	}
	name := filePath(loc)
	if name == "" || !fs.ValidPath(name) {
		p.warnf("%s: external metadata location %q is not a valid package path", where, loc)
		return nil
	}
	data, err := readCapped(p.fsys, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			p.warnf("%s: external metadata file %s (adlcp:location) is missing from the package", where, name)
		} else {
			p.warnf("%s: external metadata file %s could not be read: %v", where, name, err)
		}
		return nil
	}
	doc, err := parseXML(data)
	if err != nil {
		p.warnf("%s: external metadata file %s is not valid XML: %v", where, name, strings.TrimPrefix(err.Error(), "xml: "))
		return nil
	}
	lom := doc.root
	if !lom.is("lom") {
		lom = lom.child("lom")
	}
	if lom == nil {
		p.warnf("%s: external metadata file %s has no <lom> element", where, name)
		return nil
	}
	return lomMetadata(lom)
}

// lomMetadata extracts the few LOM fields the engine shows: general title, description,
// keywords and language, and the typical learning time.
func lomMetadata(lom *node) *course.Metadata {
	md := &course.Metadata{}
	if g := lom.child("general"); g != nil {
		md.Title = langString(g.child("title"))
		md.Description = langString(g.child("description"))
		for _, k := range g.all("keyword") {
			if s := langString(k); s != "" {
				md.Keywords = append(md.Keywords, s)
			}
		}
		md.Language = g.textOf("language")
	}
	if e := lom.child("educational"); e != nil {
		if tl := e.child("typicalLearningTime"); tl != nil {
			md.Duration = tl.textOf("duration")
			if md.Duration == "" {
				md.Duration = tl.textOf("datetime")
			}
		}
	}
	if lc := lom.child("lifeCycle"); lc != nil {
		for _, c := range lc.all("contribute") {
			if r := c.child("role"); r != nil && strings.EqualFold(langString(r.child("value")), "author") {
				md.Author = vcardName(c.textOf("entity"))
				if md.Author == "" {
					if cs := c.child("centity"); cs != nil {
						md.Author = vcardName(cs.textOf("vcard"))
					}
				}
				break
			}
		}
	}
	if md.Title == "" && md.Description == "" && len(md.Keywords) == 0 && md.Language == "" &&
		md.Duration == "" && md.Author == "" {
		return nil
	}
	return md
}

// langString returns the first non-empty <string> (LOM) or <langstring> (imsmd) of a
// multilingual element, or its own text when the author skipped the wrapper.
func langString(n *node) string {
	if n == nil {
		return ""
	}
	for _, c := range n.children {
		if c.is("string") || c.is("langstring") {
			if s := strings.TrimSpace(c.text); s != "" {
				return s
			}
		}
	}
	return strings.TrimSpace(n.text)
}

// vcardName takes the FN line of a vCard, or the text itself when it is not a vCard.
func vcardName(v string) string {
	for _, line := range strings.Split(v, "\n") {
		line = strings.TrimSpace(line)
		if len(line) > 3 && strings.EqualFold(line[:3], "FN:") {
			return strings.TrimSpace(line[3:])
		}
	}
	if strings.Contains(strings.ToUpper(v), "BEGIN:VCARD") {
		return ""
	}
	return strings.TrimSpace(v)
}

// mergeMetadata fills a's empty fields from b (inline metadata wins over the external file).
func mergeMetadata(a, b *course.Metadata) *course.Metadata {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	if a.Title == "" {
		a.Title = b.Title
	}
	if a.Description == "" {
		a.Description = b.Description
	}
	if len(a.Keywords) == 0 {
		a.Keywords = b.Keywords
	}
	if a.Language == "" {
		a.Language = b.Language
	}
	if a.Duration == "" {
		a.Duration = b.Duration
	}
	if a.Author == "" {
		a.Author = b.Author
	}
	return a
}
