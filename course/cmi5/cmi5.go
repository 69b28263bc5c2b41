// Package cmi5 parses cmi5 course packages: a cmi5.xml course structure at the package root
// (cmi5 specification, section 13, and its CourseStructure.xsd) into the shared course model.
//
// The whole document is validated against CourseStructure.xsd by course/parse when the schema
// is available (course/xsd). The parser itself enforces what the schema cannot express and
// what matters for running the course even without the schema: the root element and
// namespace, the order course → objectives → au|block, ids that are fully qualified IRIs
// (requirement 3.0.0.0-1) and unique across course, blocks and AUs (13.1.2.0-1, 13.1.4.0-1),
// unique objective ids, AU urls that are valid URLs (13.1.4.0-2) whose query string does not
// use a launch parameter's name (8.1.0.0-6), that are absolute when the course structure came
// on its own (14.2.0.0-1) and that name a file of the package when relative (14.1.0.0-4), the
// moveOn and launchMethod enumerations, masteryScore as an xs:decimal in 0..1, and blocks that
// contain at least one AU or block. Any violation is fatal and names the element and the
// requirement. Elements in other namespaces are extensions the schema allows, and are ignored.
package cmi5

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/internal/pkgfs"
)

// FileName is the course structure's name; the spec requires exactly this name at the root.
const FileName = "cmi5.xml"

// Namespace is the cmi5 course structure namespace.
const Namespace = "https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd"

// The moveOn and launchMethod values the schema allows, and the defaults it gives when the
// attribute is absent. The defaults are written into CMI5AU so that the runtime never has to
// know them.
var (
	moveOnValues       = []string{"NotApplicable", "Passed", "Completed", "CompletedAndPassed", "CompletedOrPassed"}
	launchMethodValues = []string{"AnyWindow", "OwnWindow"}
)

const (
	defaultMoveOn       = "NotApplicable"
	defaultLaunchMethod = "AnyWindow"
)

// Source says where the AU files of a course structure are, which decides how relative AU
// urls are checked (cmi5 section 14).
type Source int

const (
	// InPackage: cmi5.xml came in a zip; a relative url names a file of the zip, which must be
	// there (requirement 14.1.0.0-4).
	InPackage Source = iota
	// Bare: cmi5.xml was imported on its own; every AU url must be absolute (14.2.0.0-1).
	Bare
	// Hosted: the course structure was fetched on its own and the content stays on the web
	// server it came from; relative urls are resolved there at launch and not checked here.
	Hosted
)

// Options tune ParseWith.
type Options struct {
	// Source says where the AU files are; the zero value is InPackage.
	Source Source
}

// launchParams are the query string names the LMS adds when it launches an AU (cmi5 section
// 8.1); an AU url that uses one of them would collide with the LMS's (8.1.0.0-6).
var launchParams = []string{"endpoint", "fetch", "actor", "registration", "activityId"}

// maxDepth bounds block nesting so a hostile file cannot recurse without limit.
const maxDepth = 100

// decimalRE is the lexical space of xs:decimal: no exponent, no Inf/NaN, no hex, which
// strconv.ParseFloat would all accept.
var decimalRE = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)

// node is a generic element, so that au and block children keep their document order.
type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []node     `xml:",any"`
}

// attr returns an unqualified attribute's trimmed value; qualified ones are extensions.
func (n *node) attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name.Space == "" && a.Name.Local == name {
			return strings.TrimSpace(a.Value), true
		}
	}
	return "", false
}

// IsCourseStructure reports whether head, the beginning of an upload, is an XML document whose
// root element is <courseStructure>: a cmi5 course structure uploaded on its own, which cmi5
// section 14 requires an LMS to import like a package. Only the prolog and the root's start
// tag need to be in head.
func IsCourseStructure(head []byte) bool {
	d := pkgfs.NewDecoder(bytes.TrimPrefix(head, []byte("\ufeff")))
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t.Name.Local == "courseStructure"
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return false
			}
		}
	}
}

// Detect reports whether fsys has a cmi5.xml at its root.
func Detect(fsys fs.FS) bool {
	fi, err := fs.Stat(fsys, FileName)
	return err == nil && !fi.IsDir()
}

type parser struct {
	fsys       fs.FS
	source     Source
	ns         string
	ids        map[string]string // id -> what used it ("course", "block", "AU")
	objectives map[string]bool
	warnings   []string
}

func (p *parser) warn(format string, args ...any) {
	p.warnings = append(p.warnings, fmt.Sprintf(format, args...))
}

// ours reports whether an element is in the course structure's namespace.
func (p *parser) ours(n *node) bool { return n.XMLName.Space == p.ns }

// Parse reads cmi5.xml at the root of the zip package fsys (ParseWith with default Options).
func Parse(fsys fs.FS) (*course.Package, error) { return ParseWith(fsys, Options{}) }

// WithNamespace returns a cmi5.xml whose root <courseStructure> has no namespace with the cmi5
// namespace declared on it, so that the rest of a document the parser accepts with a warning
// can still be validated against the schema; any other document is returned as it is.
func WithNamespace(data []byte) []byte {
	d := pkgfs.NewDecoder(data)
	for {
		tok, err := d.Token()
		if err != nil {
			return data
		}
		if cd, ok := tok.(xml.CharData); ok && len(bytes.TrimSpace(bytes.TrimPrefix(cd, []byte("\ufeff")))) > 0 {
			return data // text before the root: not a document to mend (as IsCourseStructure says)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if se.Name.Space != "" || se.Name.Local != "courseStructure" {
			return data
		}
		end := int(d.InputOffset())
		if end > len(data) {
			return data
		}
		i := bytes.LastIndex(data[:end], []byte("<courseStructure"))
		if i < 0 {
			return data
		}
		i += len("<courseStructure")
		out := make([]byte, 0, len(data)+len(Namespace)+10)
		out = append(out, data[:i]...)
		out = append(out, ` xmlns="`+Namespace+`"`...)
		return append(out, data[i:]...)
	}
}

// ParseWith reads cmi5.xml at the root of fsys. Schema violations, malformed XML and entity
// declarations return an error wrapping course.ErrInvalidPackage; oddities that do not stop the
// course from running become Package.Warnings.
func ParseWith(fsys fs.FS, o Options) (*course.Package, error) {
	data, err := pkgfs.ReadCapped(fsys, FileName)
	if err != nil {
		return nil, err
	}
	if err := pkgfs.CheckXML(FileName, data); err != nil {
		return nil, err
	}
	var doc node
	if err := pkgfs.NewDecoder(data).Decode(&doc); err != nil {
		return nil, course.Invalid("%s: %v", FileName, err)
	}
	p := &parser{fsys: fsys, source: o.Source, ids: map[string]string{}, objectives: map[string]bool{}}
	p.warnings = append(p.warnings, pkgfs.JunkWarnings(fsys)...)
	if doc.XMLName.Local != "courseStructure" {
		return nil, course.Invalid("%s: root element is <%s>, want <courseStructure>", FileName, doc.XMLName.Local)
	}
	switch doc.XMLName.Space {
	case Namespace:
	case "":
		// Hand-written files often forget the namespace; everything else about them can still be
		// checked, so this is not worth refusing the course for.
		p.warn("%s: <courseStructure> has no namespace; expected %s", FileName, Namespace)
	default:
		return nil, course.Invalid("%s: <courseStructure> namespace is %q, want %q", FileName, doc.XMLName.Space, Namespace)
	}
	p.ns = doc.XMLName.Space
	pkg, err := p.parse(&doc)
	if err != nil {
		return nil, err
	}
	pkg.Warnings = p.warnings
	if pkg.Warnings == nil {
		pkg.Warnings = []string{}
	}
	return pkg, nil
}

func (p *parser) parse(doc *node) (*course.Package, error) {
	var root *course.Activity
	stage := 0 // 0: want course, 1: after course, 2: after objectives, 3: in au|block
	for i := range doc.Children {
		c := &doc.Children[i]
		if !p.ours(c) {
			continue
		}
		switch c.XMLName.Local {
		case "course":
			if stage != 0 {
				return nil, course.Invalid("%s: <course> must appear once, first in <courseStructure>", FileName)
			}
			var err error
			if root, err = p.course(c); err != nil {
				return nil, err
			}
			stage = 1
		case "objectives":
			if stage != 1 {
				return nil, course.Invalid("%s: <objectives> must follow <course> and precede every au and block", FileName)
			}
			if err := p.objectiveDefs(c); err != nil {
				return nil, err
			}
			stage = 2
		case "au", "block":
			if stage == 0 {
				return nil, course.Invalid("%s: <%s> before <course>", FileName, c.XMLName.Local)
			}
			stage = 3
			a, err := p.member(c, 1)
			if err != nil {
				return nil, err
			}
			root.Children = append(root.Children, a)
		default:
			p.warn("%s: unknown element <%s> in <courseStructure> ignored", FileName, c.XMLName.Local)
		}
	}
	if root == nil {
		return nil, course.Invalid("%s: no <course> element", FileName)
	}
	if len(root.Children) == 0 {
		return nil, course.Invalid("%s: the course has no au or block", FileName)
	}
	pkg := &course.Package{
		Standard:       course.CMI5,
		Identifier:     root.ID,
		Title:          root.Title,
		XAPIActivityID: root.ID,
		Root:           root,
		Metadata:       &course.Metadata{Title: root.Title},
	}
	if root.Metadata != nil {
		pkg.Metadata.Description = root.Metadata.Description
	}
	for _, a := range pkg.Launchable() {
		if _, f, _, err := pkgfs.ResolveLaunch(a.LaunchURL); err == nil && f != "" {
			pkg.Files = append(pkg.Files, f)
		}
	}
	return pkg, nil
}

// id reads and checks an element's required id attribute: present, an absolute IRI (cmi5 §3:
// IRIs must be fully qualified) and unique in the course structure.
func (p *parser) id(n *node, kind string) (string, error) {
	id, ok := n.attr("id")
	if !ok || id == "" {
		return "", course.Invalid("%s: <%s> has no id", FileName, n.XMLName.Local)
	}
	if !isIRI(id) {
		return "", course.Invalid("%s: %s id %q is not a fully qualified IRI (cmi5 requirement 3.0.0.0-1)", FileName, kind, id)
	}
	if prev, dup := p.ids[id]; dup {
		rule := "13.1.2.0-1"
		if kind == "AU" {
			rule = "13.1.4.0-1"
		}
		return "", course.Invalid("%s: duplicate id %q (used by a %s and a %s); ids must be unique in the course structure (cmi5 requirement %s)", FileName, id, prev, kind, rule)
	}
	p.ids[id] = kind
	return id, nil
}

// texts returns an element's title and description, warning when the schema's required
// elements are missing rather than refusing a course over a label.
func (p *parser) texts(n *node, kind, id string) (title, desc string) {
	var haveTitle, haveDesc bool
	for i := range n.Children {
		c := &n.Children[i]
		if !p.ours(c) {
			continue
		}
		switch c.XMLName.Local {
		case "title":
			haveTitle, title = true, p.langstring(c)
		case "description":
			haveDesc, desc = true, p.langstring(c)
		}
	}
	if !haveTitle || title == "" {
		p.warn("%s: %s %q has no title; using its id", FileName, kind, id)
		title = id
	}
	if !haveDesc {
		p.warn("%s: %s %q has no <description> (required by the cmi5 schema)", FileName, kind, id)
	}
	return title, desc
}

// langstring picks English ("en" or "en-US") when present, since Lectern's UI default is
// English, and otherwise the first non-empty langstring.
func (p *parser) langstring(n *node) string {
	var first string
	sawLangstring := false
	for i := range n.Children {
		c := &n.Children[i]
		if !p.ours(c) || c.XMLName.Local != "langstring" {
			continue
		}
		sawLangstring = true
		v := strings.TrimSpace(c.Text)
		if v == "" {
			continue
		}
		lang, _ := c.attr("lang")
		if lang == "" {
			for _, a := range c.Attrs {
				if a.Name.Local == "lang" {
					lang = strings.TrimSpace(a.Value)
				}
			}
		}
		if strings.EqualFold(lang, "en") || strings.EqualFold(lang, "en-US") {
			return v
		}
		if first == "" {
			first = v
		}
	}
	if !sawLangstring {
		// <title>Plain text</title> is not schema-valid but its meaning is obvious.
		return strings.TrimSpace(n.Text)
	}
	return first
}

func (p *parser) course(n *node) (*course.Activity, error) {
	id, err := p.id(n, "course")
	if err != nil {
		return nil, err
	}
	title, desc := p.texts(n, "course", id)
	a := &course.Activity{
		ID: id, Title: title, Visible: true,
		Extra: &course.ActivityExt{XAPIActivityID: id},
	}
	if desc != "" {
		a.Metadata = &course.Metadata{Description: desc}
	}
	return a, nil
}

func (p *parser) objectiveDefs(n *node) error {
	for i := range n.Children {
		c := &n.Children[i]
		if !p.ours(c) || c.XMLName.Local != "objective" {
			continue
		}
		id, ok := c.attr("id")
		if !ok || id == "" {
			return course.Invalid("%s: <objective> #%d in <objectives> has no id", FileName, i+1)
		}
		if !isIRI(id) {
			return course.Invalid("%s: objective id %q is not a fully qualified IRI (cmi5 requirement 3.0.0.0-1)", FileName, id)
		}
		if p.objectives[id] {
			return course.Invalid("%s: duplicate objective id %q; objective ids must be unique (cmi5 requirement 13.1.2.0-1)", FileName, id)
		}
		p.objectives[id] = true
	}
	return nil
}

// objectiveRefs reads an au's or block's <objectives><objective idref=…/></objectives>.
func (p *parser) objectiveRefs(n *node, kind, id string) []course.Objective {
	var out []course.Objective
	for i := range n.Children {
		c := &n.Children[i]
		if !p.ours(c) || c.XMLName.Local != "objectives" {
			continue
		}
		for j := range c.Children {
			o := &c.Children[j]
			if !p.ours(o) || o.XMLName.Local != "objective" {
				continue
			}
			ref, _ := o.attr("idref")
			if ref == "" {
				p.warn("%s: %s %q has an <objective> without idref; ignored", FileName, kind, id)
				continue
			}
			if !p.objectives[ref] {
				p.warn("%s: %s %q refers to objective %q, which <objectives> does not define", FileName, kind, id, ref)
			}
			out = append(out, course.Objective{ID: ref})
		}
	}
	return out
}

// member builds an au or a block.
func (p *parser) member(n *node, depth int) (*course.Activity, error) {
	if depth > maxDepth {
		return nil, course.Invalid("%s: blocks nested deeper than %d levels", FileName, maxDepth)
	}
	if n.XMLName.Local == "au" {
		return p.au(n)
	}
	id, err := p.id(n, "block")
	if err != nil {
		return nil, err
	}
	title, desc := p.texts(n, "block", id)
	a := &course.Activity{
		ID: id, Title: title, Visible: true,
		Objectives: p.objectiveRefs(n, "block", id),
		CMI5:       &course.CMI5AU{ID: id, Block: true},
		Extra:      &course.ActivityExt{XAPIActivityID: id},
	}
	if desc != "" {
		a.Metadata = &course.Metadata{Description: desc}
	}
	for i := range n.Children {
		c := &n.Children[i]
		if !p.ours(c) || (c.XMLName.Local != "au" && c.XMLName.Local != "block") {
			continue
		}
		child, err := p.member(c, depth+1)
		if err != nil {
			return nil, err
		}
		a.Children = append(a.Children, child)
	}
	if len(a.Children) == 0 {
		return nil, course.Invalid("%s: block %q contains no au or block", FileName, id)
	}
	return a, nil
}

func (p *parser) au(n *node) (*course.Activity, error) {
	id, err := p.id(n, "AU")
	if err != nil {
		return nil, err
	}
	au := &course.CMI5AU{ID: id, MoveOn: defaultMoveOn, LaunchMethod: defaultLaunchMethod}
	if v, ok := n.attr("moveOn"); ok {
		if !oneOf(v, moveOnValues) {
			return nil, course.Invalid("%s: AU %q moveOn %q is not one of %s", FileName, id, v, strings.Join(moveOnValues, ", "))
		}
		au.MoveOn = v
	}
	if v, ok := n.attr("launchMethod"); ok {
		if !oneOf(v, launchMethodValues) {
			return nil, course.Invalid("%s: AU %q launchMethod %q is not one of %s", FileName, id, v, strings.Join(launchMethodValues, ", "))
		}
		au.LaunchMethod = v
	}
	if v, ok := n.attr("masteryScore"); ok {
		f, err := strconv.ParseFloat(v, 64)
		if !decimalRE.MatchString(v) || err != nil || f < 0 || f > 1 {
			return nil, course.Invalid("%s: AU %q masteryScore %q is not a decimal between 0 and 1", FileName, id, v)
		}
		au.MasteryScore = &f
	}
	if v, ok := n.attr("activityType"); ok {
		au.ActivityType = v
	}
	if au.MoveOn == "Passed" || au.MoveOn == "CompletedAndPassed" || au.MoveOn == "CompletedOrPassed" {
		if au.MasteryScore == nil {
			// Legal: the AU judges passing itself. Worth a note because authors often forget it.
			p.warn("%s: AU %q moveOn %s has no masteryScore; the AU decides pass/fail itself", FileName, id, au.MoveOn)
		}
	}
	title, desc := p.texts(n, "AU", id)
	a := &course.Activity{
		ID: id, Title: title, Visible: true,
		MasteryScore: au.MasteryScore,
		Objectives:   p.objectiveRefs(n, "AU", id),
		CMI5:         au,
		Extra:        &course.ActivityExt{XAPIActivityID: id, ActivityType: au.ActivityType},
	}
	if desc != "" {
		a.Metadata = &course.Metadata{Description: desc}
	}
	var rawURL string
	var haveURL bool
	for i := range n.Children {
		c := &n.Children[i]
		if !p.ours(c) {
			continue
		}
		switch c.XMLName.Local {
		case "url":
			haveURL, rawURL = true, strings.TrimSpace(c.Text)
		case "launchParameters":
			au.LaunchParameters = strings.TrimSpace(c.Text)
		case "entitlementKey":
			au.EntitlementKey = strings.TrimSpace(c.Text)
		}
	}
	if !haveURL || rawURL == "" {
		return nil, course.Invalid("%s: AU %q has no <url>", FileName, id)
	}
	launch, err := p.launchURL(id, rawURL)
	if err != nil {
		return nil, err
	}
	a.LaunchURL = launch
	return a, nil
}

// launchURL checks an AU url as cmi5 sections 8.1, 13.1.4 and 14 require and resolves it
// into Activity.LaunchURL.
func (p *parser) launchURL(id, raw string) (string, error) {
	bad := func(rule, format string, args ...any) error {
		return course.Invalid("%s: AU %q url %q %s (cmi5 requirement %s)", FileName, id, raw, fmt.Sprintf(format, args...), rule)
	}
	// A URL has no spaces or controls (RFC 3986); "http://example.com index.html" must not
	// turn into a file name.
	if strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", bad("13.1.4.0-2", "is not a valid URL: it contains white space or control characters")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", bad("13.1.4.0-2", "is not a valid URL: %v", errors.Unwrap(err))
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", bad("13.1.4.0-2", "has a malformed query string: %v", err)
	}
	for _, name := range launchParams {
		if q.Has(name) {
			return "", bad("8.1.0.0-6", "uses the launch parameter name %q in its query string, which the LMS adds at launch", name)
		}
	}
	absolute := u.Scheme != ""
	if !absolute && p.source == Bare {
		return "", bad("14.2.0.0-1", "is relative, but a course structure imported without a package must give every AU an absolute URL")
	}
	launch, file, notes, err := pkgfs.ResolveLaunch(raw)
	if err != nil {
		return "", bad("13.1.4.0-2", "cannot be launched: %v", err)
	}
	for _, note := range notes {
		p.warn("%s: AU %q url %q: %s", FileName, id, raw, note)
	}
	if file != "" && p.source == InPackage && !pkgfs.FileExists(p.fsys, file) {
		return "", bad("14.1.0.0-4", "names %q, which is not in the package", file)
	}
	return launch, nil
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// isIRI reports whether s is an absolute IRI: a scheme and something after it, no spaces.
func isIRI(s string) bool {
	if strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && (u.Opaque != "" || u.Host != "" || u.Path != "")
}
