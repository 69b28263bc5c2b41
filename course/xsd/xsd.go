// Package xsd checks course structure files (imsmanifest.xml, cmi5.xml) against the XML Schemas
// of their standard. The validation itself is github.com/jacoelho/xsd, a pure-Go XSD 1.0
// validator, so the embedded build keeps needing nothing but Go; this package decides which
// schemas apply and where they come from:
//
//   - the copies a package ships, named by the document's xsi:schemaLocation hints (relative
//     paths inside the package), which match the edition the author built against;
//   - otherwise an operator's schema directory (LECTERN_SCHEMA_DIR), searched by the file names
//     the hints give and by the well-known file name of each standard namespace.
//
// Lectern never ships schemas itself and never fetches one from the network: a document whose
// root namespace has a schema in neither place is reported as not validated, never as valid.
package xsd

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	jxsd "github.com/jacoelho/xsd"
	jerrors "github.com/jacoelho/xsd/errors"

	"github.com/lectern-lms/lectern/course/internal/pkgfs"
)

// Namespaces of the schemas Lectern knows by name, so that a document without usable
// xsi:schemaLocation hints still finds its schema in the directory.
const (
	NSCMI5     = "https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd"
	NSIMSCP    = "http://www.imsglobal.org/xsd/imscp_v1p1"
	NSADLCP    = "http://www.adlnet.org/xsd/adlcp_v1p3"
	NSADLSeq   = "http://www.adlnet.org/xsd/adlseq_v1p3"
	NSADLNav   = "http://www.adlnet.org/xsd/adlnav_v1p3"
	NSIMSSS    = "http://www.imsglobal.org/xsd/imsss"
	NSIMSCP12  = "http://www.imsproject.org/xsd/imscp_rootv1p1p2"
	NSADLCP12  = "http://www.adlnet.org/xsd/adlcp_rootv1p2"
	nsXSI      = "http://www.w3.org/2001/XMLSchema-instance"
	nsXML      = "http://www.w3.org/XML/1998/namespace"
	nsXMLNS    = "xmlns"
	maxSchemas = 32 // hints per document; more is not a real manifest
	// maxSchemaBytes bounds what one compilation reads, includes and imports together: the
	// standards' schema sets are under 1 MiB, and a package's own copies are hostile input.
	maxSchemaBytes = 8 << 20
)

// known maps a namespace to the file name its standard gives its schema. LOM metadata is left
// out on purpose: manifests carry it under lax wildcards, and the IEEE LOM schema set declares
// its identity constraints twice, which a conforming XSD 1.0 processor must refuse to compile.
var known = map[string]string{
	NSCMI5:    "CourseStructure.xsd",
	NSIMSCP:   "imscp_v1p1.xsd",
	NSADLCP:   "adlcp_v1p3.xsd",
	NSADLSeq:  "adlseq_v1p3.xsd",
	NSADLNav:  "adlnav_v1p3.xsd",
	NSIMSSS:   "imsss_v1p0.xsd",
	NSIMSCP12: "imscp_rootv1p1p2.xsd",
	NSADLCP12: "adlcp_rootv1p2.xsd",
}

// Validator finds and compiles schemas and validates documents with them. It is safe for
// concurrent use; schemas from the directory are compiled once per combination and kept.
type Validator struct {
	dir   fs.FS
	index map[string]string // schema file name → path in dir (the shallowest wins)
	// schemaBytes is the byte budget of one compilation (maxSchemaBytes; tests lower it).
	schemaBytes int64

	mu    sync.Mutex
	cache map[string]*compiled
}

type compiled struct {
	schema *jxsd.Schema
	err    error
}

// New returns a validator whose directory is dir; nil means there is none, and only the
// schemas packages ship are used. The directory is indexed once, here.
func New(dir fs.FS) *Validator {
	v := &Validator{dir: dir, index: map[string]string{}, cache: map[string]*compiled{}, schemaBytes: maxSchemaBytes}
	if dir == nil {
		return v
	}
	_ = fs.WalkDir(dir, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder only hides its own schemas
		}
		if d.IsDir() && strings.Count(p, "/") >= 3 {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".xsd") {
			if _, dup := v.index[d.Name()]; !dup {
				v.index[d.Name()] = p
			}
		}
		return nil
	})
	return v
}

// HasDir reports whether the validator has a schema directory.
func (v *Validator) HasDir() bool { return v != nil && v.dir != nil }

// Violation is one way a document breaks its schema.
type Violation struct {
	// Line is the document line (1-based), 0 when unknown.
	Line int
	// Message names the element or attribute and the rule, e.g. `element <url> is not
	// allowed here in <au>; expected <title>`.
	Message string
}

// String formats a violation for a message: "line 28: …".
func (v Violation) String() string {
	if v.Line > 0 {
		return fmt.Sprintf("line %d: %s", v.Line, v.Message)
	}
	return v.Message
}

// Report is the outcome of Validate.
type Report struct {
	// Validated is true when the document was checked against a schema for its root
	// namespace; Violations then lists what is wrong (none: the document is valid).
	Validated  bool
	Violations []Violation
	// Unchecked says why the document was not validated, when Validated is false.
	Unchecked string
	// Sources names where each schema used came from ("package:imscp_v1p1.xsd",
	// "directory:scorm2004-4th/imscp_v1p1.xsd"), for messages and tests.
	Sources []string
}

// root is a schema document to compile: a file in a file system.
type root struct {
	fsys   fs.FS
	loc    string
	origin string // "package" or "directory"
}

// Validate checks doc, a structure file at the root of the package pkg (nil when there is no
// package, as for a bare cmi5.xml upload), against the schemas of the namespaces it uses.
// It never returns an error: a document it cannot check gets Validated false and a reason.
func (v *Validator) Validate(pkg fs.FS, doc []byte) Report {
	rootNS, hints, used, err := scan(doc)
	if err != nil {
		return Report{Unchecked: "the document cannot be read: " + err.Error()}
	}
	if rootNS == "" {
		return Report{Unchecked: "its root element has no namespace, so no schema applies"}
	}
	var fromPkg, fromDir []root
	for _, ns := range used {
		hint := hints[ns]
		if r, ok := v.inPackage(pkg, hint); ok {
			fromPkg = append(fromPkg, r)
			continue
		}
		if r, ok := v.inDir(ns, hint); ok {
			fromDir = append(fromDir, r)
		} else if ns == rootNS {
			return Report{Unchecked: v.missing(pkg, rootNS)}
		}
	}
	if len(fromPkg) == 0 && len(fromDir) == 0 {
		return Report{Unchecked: v.missing(pkg, rootNS)}
	}
	roots := append(fromPkg, fromDir...)
	schema, err := v.compile(roots)
	if err != nil && len(fromPkg) > 0 {
		// The package's own copies may be broken or incomplete; the directory's may do.
		var alt []root
		for _, ns := range used {
			if r, ok := v.inDir(ns, hints[ns]); ok {
				alt = append(alt, r)
			}
		}
		if len(alt) > 0 {
			if s, err2 := v.compile(alt); err2 == nil {
				schema, err, roots = s, nil, alt
			}
		}
	}
	if err != nil {
		return Report{Unchecked: "its schemas cannot be compiled: " + shorten(err.Error())}
	}
	rep := Report{Validated: true}
	for _, r := range roots {
		rep.Sources = append(rep.Sources, r.origin+":"+r.loc)
	}
	doc = utf8Doc(doc)
	if err := schema.Validate(bytes.NewReader(doc)); err != nil {
		var list jerrors.ValidationList
		if !errors.As(err, &list) {
			return Report{Unchecked: "validation stopped: " + shorten(err.Error())}
		}
		list.Sort()
		for _, e := range list {
			rep.Violations = append(rep.Violations, Violation{Line: e.Line, Message: describe(e, doc)})
		}
	}
	return rep
}

func (v *Validator) missing(pkg fs.FS, ns string) string {
	switch {
	case pkg == nil && v.HasDir():
		return fmt.Sprintf("the schema directory has no schema for namespace %s", ns)
	case pkg == nil:
		return fmt.Sprintf("no schema directory is configured to hold the schema for namespace %s", ns)
	case v.HasDir():
		return fmt.Sprintf("no schema for namespace %s, neither in the package nor in the schema directory", ns)
	}
	return fmt.Sprintf("no schema for namespace %s in the package, and no schema directory is configured", ns)
}

// inPackage finds a schemaLocation hint in the package: relative, inside it, a file.
func (v *Validator) inPackage(pkg fs.FS, hint string) (root, bool) {
	if pkg == nil || hint == "" || strings.Contains(hint, ":") || strings.HasPrefix(hint, "/") || strings.Contains(hint, `\`) {
		return root{}, false
	}
	if i := strings.IndexAny(hint, "?#"); i >= 0 {
		hint = hint[:i]
	}
	p := path.Clean(hint)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || !fs.ValidPath(p) {
		return root{}, false
	}
	if !pkgfs.FileExists(pkg, p) {
		return root{}, false
	}
	return root{fsys: pkg, loc: p, origin: "package"}, true
}

// inDir finds a namespace's schema in the directory: by the hint's file name, then by the
// standard's file name.
func (v *Validator) inDir(ns, hint string) (root, bool) {
	if !v.HasDir() {
		return root{}, false
	}
	for _, name := range []string{path.Base(hint), known[ns]} {
		if name == "" || name == "." || name == "/" {
			continue
		}
		if p, ok := v.index[name]; ok {
			return root{fsys: v.dir, loc: p, origin: "directory"}, true
		}
	}
	return root{}, false
}

// compile builds one schema from roots; directory-only combinations are cached, package
// schemas are compiled for each import (they change with every package).
func (v *Validator) compile(roots []root) (*jxsd.Schema, error) {
	key := ""
	for _, r := range roots {
		if r.origin != "directory" {
			key = ""
			break
		}
		key += r.loc + "\n"
	}
	if key != "" {
		v.mu.Lock()
		c, ok := v.cache[key]
		v.mu.Unlock()
		if ok {
			return c.schema, c.err
		}
	}
	set := jxsd.NewSchemaSet(jxsd.NewLoadOptions().WithAllowMissingImportLocations(true))
	seen := map[string]bool{}
	budget := v.schemaBytes
	var err error
	for _, r := range roots {
		if seen[r.origin+r.loc] {
			continue
		}
		seen[r.origin+r.loc] = true
		if err = set.AddFS(localFS{FS: r.fsys, budget: &budget}, r.loc); err != nil {
			break
		}
	}
	var s *jxsd.Schema
	if err == nil {
		s, err = set.Compile()
	}
	if key != "" {
		v.mu.Lock()
		v.cache[key] = &compiled{schema: s, err: err}
		v.mu.Unlock()
	}
	return s, err
}

// scan reads the namespaces a document uses (elements and attributes, in order of first use,
// the root's first) and its xsi:schemaLocation hints.
func scan(doc []byte) (rootNS string, hints map[string]string, used []string, err error) {
	d := pkgfs.NewDecoder(doc)
	hints = map[string]string{}
	seen := map[string]bool{}
	add := func(ns string) {
		if ns != "" && ns != nsXSI && ns != nsXML && ns != nsXMLNS && ns != "xml" && !seen[ns] && len(used) < maxSchemas {
			seen[ns] = true
			used = append(used, ns)
		}
	}
	first := true
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, nil, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if first {
			rootNS, first = se.Name.Space, false
		}
		add(se.Name.Space)
		for _, a := range se.Attr {
			add(a.Name.Space)
			if a.Name.Space == nsXSI && a.Name.Local == "schemaLocation" {
				f := strings.Fields(a.Value)
				for i := 0; i+1 < len(f) && len(hints) < maxSchemas; i += 2 {
					if _, dup := hints[f[i]]; !dup {
						hints[f[i]] = f[i+1]
					}
				}
			}
		}
	}
	return rootNS, hints, used, nil
}

// utf8Doc re-encodes a Latin-1/Windows-1252 document as UTF-8 (the validator reads UTF-8
// only) and drops its encoding declaration accordingly.
var encodingDecl = regexp.MustCompile(`^(\s*<\?xml[^>]*?)\s+encoding\s*=\s*["']([^"']*)["']`)

func utf8Doc(doc []byte) []byte {
	m := encodingDecl.FindSubmatchIndex(doc)
	if m == nil {
		return doc
	}
	enc := strings.ToLower(string(doc[m[4]:m[5]]))
	switch enc {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return doc
	}
	r, err := pkgfs.CharsetReader(enc, bytes.NewReader(doc[m[1]:]))
	if err != nil {
		return doc
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		return doc
	}
	return append(slices.Clone(doc[:m[3]]), rest...)
}

// describe turns a validator error into a sentence that names the element (and, through the
// quoted start tag, the attribute) and the rule, with the XSD constraint code at the end.
func describe(e jerrors.Validation, doc []byte) string {
	where := elementPath(e.Path)
	msg := e.Message
	expected := func() string {
		names := make([]string, 0, len(e.Expected))
		for _, x := range e.Expected {
			names = append(names, "<"+localName(x)+">")
		}
		return strings.Join(names, " or ")
	}
	switch {
	case e.Actual != "" && len(e.Expected) > 0:
		msg = fmt.Sprintf("element <%s> is not allowed here; expected %s", localName(e.Actual), expected())
	case e.Actual != "":
		msg = fmt.Sprintf("element <%s> is not allowed here", localName(e.Actual))
	case len(e.Expected) > 0:
		msg = "a required element is missing; expected " + expected()
	default:
		// Attribute and value errors carry no name; the start tag at the reported position
		// shows which element and attribute are meant.
		if tag := tagAt(doc, e.Line, e.Column); tag != "" {
			where = tag
		}
	}
	if where != "" {
		msg = where + ": " + msg
	}
	return fmt.Sprintf("%s [%s]", msg, e.Code)
}

// tagAt returns the start tag around a line/column position (both 1-based), shortened.
func tagAt(doc []byte, line, col int) string {
	if line <= 0 || col <= 0 {
		return ""
	}
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(doc[off:], '\n')
		if i < 0 {
			return ""
		}
		off += i + 1
	}
	// The column is that of the element's '<'; search from there backwards in case it is not.
	off += col
	if off > len(doc) {
		off = len(doc)
	}
	start := bytes.LastIndexByte(doc[:off], '<')
	for start >= 0 && start+1 < len(doc) && (doc[start+1] == '/' || doc[start+1] == '!' || doc[start+1] == '?') {
		start = bytes.LastIndexByte(doc[:start], '<')
	}
	if start < 0 {
		return ""
	}
	end := bytes.IndexByte(doc[start:], '>')
	if end < 0 {
		return ""
	}
	tag := strings.Join(strings.Fields(string(doc[start:start+end+1])), " ")
	// Namespace declarations and schema hints only hide the attribute that is wrong.
	tag = declAttr.ReplaceAllString(tag, "")
	if len(tag) > 240 {
		tag = tag[:237] + "...>"
	}
	return tag
}

var declAttr = regexp.MustCompile(`\s+(xmlns(:[\w.-]+)?|xsi:schemaLocation|xsi:noNamespaceSchemaLocation)\s*=\s*("[^"]*"|'[^']*')`)

// elementPath turns "/{ns}courseStructure/{ns}au" into "<courseStructure>/<au>".
func elementPath(p string) string {
	if p == "" {
		return ""
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	out := make([]string, 0, len(parts))
	// The path's steps may contain '/' inside {namespace}; rebuild steps by braces.
	var cur strings.Builder
	depth := 0
	for i, part := range parts {
		if i > 0 && depth > 0 {
			cur.WriteByte('/')
		}
		cur.WriteString(part)
		depth += strings.Count(part, "{") - strings.Count(part, "}")
		if depth <= 0 {
			out = append(out, "<"+localName(cur.String())+">")
			cur.Reset()
			depth = 0
		}
	}
	return strings.Join(out, "/")
}

func localName(q string) string {
	if i := strings.LastIndex(q, "}"); i >= 0 {
		q = q[i+1:]
	}
	if i := strings.LastIndex(q, ":"); i >= 0 && !strings.Contains(q, "/") {
		q = q[i+1:]
	}
	return q
}

func shorten(s string) string {
	// Multi-line compiler reports ("failed:\n  - a\n  - b") become one line.
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimPrefix(strings.TrimSpace(lines[i]), "- ")
	}
	s = strings.Join(lines, " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// localFS serves schema documents with their absolute schemaLocation references (such as
// imscp_v1p1.xsd's import of http://www.w3.org/2001/xml.xsd) turned into the file name in the
// same folder: Lectern never fetches a schema, and the directory and packages keep such files
// beside the ones that name them. An import whose file is absent is then skipped.
// It also counts the bytes read against the compilation's budget.
type localFS struct {
	fs.FS
	budget *int64
}

var absLocation = regexp.MustCompile(`(schemaLocation\s*=\s*)(["'])[A-Za-z][A-Za-z0-9+.-]*://[^"']*?([^/"']+)["']`)

// Open implements fs.FS.
func (l localFS) Open(name string) (fs.File, error) {
	if !strings.HasSuffix(name, ".xsd") {
		return l.FS.Open(name)
	}
	data, err := pkgfs.ReadCapped(l.FS, name)
	if err != nil {
		if _, statErr := fs.Stat(l.FS, name); errors.Is(statErr, fs.ErrNotExist) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return nil, err
	}
	if *l.budget -= int64(len(data)); *l.budget < 0 {
		return nil, errors.New("the schemas are too large to compile")
	}
	data = absLocation.ReplaceAll(data, []byte(`$1$2$3$2`))
	return &memFile{name: path.Base(name), r: bytes.NewReader(data), size: int64(len(data))}, nil
}

type memFile struct {
	name string
	r    *bytes.Reader
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f, nil }
func (f *memFile) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *memFile) Close() error               { return nil }
func (f *memFile) Name() string               { return f.name }
func (f *memFile) Size() int64                { return f.size }
func (f *memFile) Mode() fs.FileMode          { return 0o444 }
func (f *memFile) ModTime() time.Time         { return time.Time{} }
func (f *memFile) IsDir() bool                { return false }
func (f *memFile) Sys() any                   { return nil }
