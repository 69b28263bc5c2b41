// Package scorm parses SCORM 1.1, 1.2 and 2004 (2nd, 3rd and 4th edition) content packages
// into the course model: it reads imsmanifest.xml at the package root, detects the standard
// from the manifest's content, builds one activity tree per organization with resolved launch
// URLs, SCORM 1.x item data and SCORM 2004 sequencing, and reports non-fatal oddities as
// warnings (the import's parserWarnings).
//
// Fatal problems are returned as errors wrapping course.ErrInvalidPackage; everything that
// still lets the course run is a warning, because rejecting a package the learner could
// have taken is worse than importing it with a note.
package scorm

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/lectern-lms/lectern/course"
)

// ManifestName is the manifest's file name; the spec requires it at the package root.
const ManifestName = "imsmanifest.xml"

// maxFileWarnings bounds the per-file "missing" warnings: a package that lists hundreds of
// absent files needs one clear message, not hundreds.
const maxFileWarnings = 20

// maxWalk bounds how many entries the package walk looks at; larger packages still parse,
// they just get file existence checked with fs.Stat instead of the index.
const maxWalk = 200000

// Detect reports whether fsys looks like a SCORM package: an imsmanifest.xml at its root.
// The name is matched case-insensitively because packages zipped on case-insensitive file
// systems often carry "IMSManifest.xml"; Parse accepts those with a warning.
func Detect(fsys fs.FS) bool {
	_, ok := findRootManifest(fsys)
	return ok
}

// RootManifest returns the name of the manifest at the root of fsys as Parse finds it (the
// exact name preferred, otherwise any capitalisation), or "" when there is none.
func RootManifest(fsys fs.FS) string {
	name, _ := findRootManifest(fsys)
	return name
}

// findRootManifest returns the root manifest's actual name, exact match preferred.
func findRootManifest(fsys fs.FS) (string, bool) {
	if st, err := fs.Stat(fsys, ManifestName); err == nil && !st.IsDir() {
		return ManifestName, true
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return "", false
	}
	for _, e := range entries {
		if !e.IsDir() && strings.EqualFold(e.Name(), ManifestName) {
			return e.Name(), true
		}
	}
	return "", false
}

// resource is a manifest <resource> with its launch location already resolved.
type resource struct {
	id        string
	launch    string // resolved href (xml:base applied), "" when the resource has no href
	scormType string
}

// parser holds the state of one Parse call.
type parser struct {
	fsys       fs.FS
	std        course.Standard
	warnings   []string
	index      map[string]bool   // files found in fsys (nil when the walk failed)
	lower      map[string]string // lower-cased path → actual path, for case-mismatch hints
	ids        map[string]bool   // activity identifiers seen so far
	resources  map[string]*resource
	seqColl    map[string]*course.Sequencing
	files      []string
	fileSeen   map[string]bool
	missing    int // missing declared files beyond maxFileWarnings
	fileWarned int // missing declared files warned about
	reported   map[string]bool
}

func (p *parser) warnf(format string, args ...any) {
	p.warnings = append(p.warnings, fmt.Sprintf(format, args...))
}

// Parse reads the SCORM package in fsys (a *zip.Reader, os.DirFS, fstest.MapFS, ...) and
// returns its course model. The returned error wraps course.ErrInvalidPackage for every
// problem in the package itself.
func Parse(fsys fs.FS) (*course.Package, error) {
	p := &parser{
		fsys:      fsys,
		ids:       map[string]bool{},
		resources: map[string]*resource{},
		seqColl:   map[string]*course.Sequencing{},
		fileSeen:  map[string]bool{},
		reported:  map[string]bool{},
	}
	subManifests, junk := p.walk()

	name, ok := findRootManifest(fsys)
	if !ok {
		if len(subManifests) > 0 {
			return nil, course.Invalid("%s found only at %s; it must be at the package root", ManifestName, subManifests[0])
		}
		return nil, course.Invalid("no %s at the package root; a SCORM package must have one", ManifestName)
	}
	if name != ManifestName {
		p.warnf("the manifest is named %s; SCORM requires the exact name %s (file names are case-sensitive)", name, ManifestName)
	}
	if len(junk) > 0 {
		p.warnf("the package contains macOS metadata (%s); it is not course content and is ignored", strings.Join(junk, ", "))
	}

	data, err := readCapped(fsys, name)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, course.Invalid("%s is larger than %d bytes", name, MaxManifestBytes)
		}
		return nil, fmt.Errorf("%w: %s could not be read: %w", course.ErrInvalidPackage, name, err)
	}
	doc, err := parseXML(data)
	if err != nil {
		return nil, course.Invalid("%s is not valid XML: %s", name, strings.TrimPrefix(err.Error(), "xml: "))
	}
	root := doc.root
	if !root.is("manifest") {
		return nil, course.Invalid("%s: the root element is <%s>, expected <manifest>", name, root.name.Local)
	}
	return p.manifest(root, doc.namespaces)
}

var errTooLarge = errors.New("file too large")

// readCapped reads a file of at most MaxManifestBytes; the limit is enforced on the bytes
// actually read because a zip entry's declared size can lie.
func readCapped(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > MaxManifestBytes {
		return nil, errTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxManifestBytes {
		return nil, errTooLarge
	}
	return data, nil
}

// walk indexes the package's files once: for file existence checks, case-mismatch hints,
// macOS junk and manifests misplaced in a subfolder (the usual "zipped the folder, not its
// contents" mistake). Failures leave the index nil and checks fall back to fs.Stat.
func (p *parser) walk() (subManifests, junk []string) {
	index := map[string]bool{}
	lower := map[string]string{}
	var macosx, dsStore bool
	count := 0
	err := fs.WalkDir(p.fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == "." {
				return err
			}
			return nil // an unreadable subtree only loses its index entries
		}
		count++
		if count > maxWalk {
			return fs.SkipAll
		}
		base := path.Base(name)
		if d.IsDir() {
			if base == "__MACOSX" {
				macosx = true
				return fs.SkipDir
			}
			return nil
		}
		if base == ".DS_Store" {
			dsStore = true
		}
		index[name] = true
		lower[strings.ToLower(name)] = name
		if strings.EqualFold(base, ManifestName) && strings.Contains(name, "/") {
			subManifests = append(subManifests, name)
		}
		return nil
	})
	if err == nil && count <= maxWalk {
		p.index, p.lower = index, lower
	}
	// The shallowest misplaced manifest is the one the author meant.
	sort.SliceStable(subManifests, func(i, j int) bool {
		di, dj := strings.Count(subManifests[i], "/"), strings.Count(subManifests[j], "/")
		if di != dj {
			return di < dj
		}
		return subManifests[i] < subManifests[j]
	})
	if macosx {
		junk = append(junk, "__MACOSX/")
	}
	if dsStore {
		junk = append(junk, ".DS_Store")
	}
	return subManifests, junk
}

// exists reports whether a package-relative file exists, and a differently-cased match.
func (p *parser) exists(name string) (bool, string) {
	if name == "" {
		return false, ""
	}
	if p.index != nil && p.index[name] {
		return true, ""
	}
	if fs.ValidPath(name) {
		if st, err := fs.Stat(p.fsys, name); err == nil && !st.IsDir() {
			return true, ""
		}
	}
	if p.lower != nil {
		if alt, ok := p.lower[strings.ToLower(name)]; ok {
			return false, alt
		}
	}
	return false, ""
}

// caseHint formats the "differs in case" note for a missing-file warning.
func caseHint(alt string) string {
	if alt == "" {
		return ""
	}
	return fmt.Sprintf(" (%s exists, but names are case-sensitive)", alt)
}

// standard detection ---------------------------------------------------------------------

// schemaVersions maps the metadata schemaversion values SCORM defines to standards.
var schemaVersions = map[string]course.Standard{
	"1.1":              course.SCORM11,
	"1.2":              course.SCORM12,
	"cam 1.3":          course.SCORM2004v2,
	"2004 3rd edition": course.SCORM2004v3,
	"2004 4th edition": course.SCORM2004v4,
}

// detectStandard decides the standard from the schemaversion and the declared namespaces,
// never from file names. A known schemaversion wins because it is the only thing that
// tells the 2004 editions apart; namespaces decide when it is absent or unknown.
func (p *parser) detectStandard(schemaVersion string, namespaces []string) course.Standard {
	var ns11, ns12, ns2004 bool
	for _, ns := range namespaces {
		l := strings.ToLower(ns)
		switch {
		case strings.Contains(l, "adlcp_rootv1p2"):
			ns12 = true
		case strings.Contains(l, "adlcp_rootv1p1"):
			ns11 = true
		case strings.Contains(l, "adlcp_v1p3"), strings.Contains(l, "adlseq_v1p3"),
			strings.Contains(l, "adlnav_v1p3"), strings.Contains(l, "imsglobal.org/xsd/imsss"):
			ns2004 = true
		}
	}
	key := strings.ToLower(strings.Join(strings.Fields(schemaVersion), " "))
	if std, ok := schemaVersions[key]; ok {
		switch {
		case std.IsSCORM2004() && !ns2004 && (ns12 || ns11):
			p.warnf("schemaversion %q says SCORM 2004 but the manifest uses the SCORM 1.x adlcp namespace; treated as %s", schemaVersion, std)
		case !std.IsSCORM2004() && ns2004 && !ns12 && !ns11:
			p.warnf("schemaversion %q says SCORM 1.x but the manifest uses SCORM 2004 namespaces; treated as %s", schemaVersion, std)
		}
		return std
	}
	if schemaVersion != "" {
		p.warnf("unknown schemaversion %q; the standard is taken from the manifest's namespaces", schemaVersion)
	}
	switch {
	case ns2004:
		p.warnf("SCORM 2004 edition not stated by schemaversion (expected \"CAM 1.3\", \"2004 3rd Edition\" or \"2004 4th Edition\"); assuming 3rd edition")
		return course.SCORM2004v3
	case ns12:
		return course.SCORM12
	case ns11:
		return course.SCORM11
	}
	p.warnf("neither a SCORM schemaversion nor an ADL namespace found; treated as SCORM 1.2")
	return course.SCORM12
}

// manifest ----------------------------------------------------------------------------------

func (p *parser) manifest(m *node, namespaces []string) (*course.Package, error) {
	pkg := &course.Package{
		Identifier: m.attrS("identifier"),
		Version:    m.attrS("version"),
		Warnings:   []string{},
	}
	md := m.child("metadata")
	if md != nil {
		pkg.SchemaVersion = md.textOf("schemaversion")
	}
	p.std = p.detectStandard(pkg.SchemaVersion, namespaces)
	pkg.Standard = p.std
	if pkg.Identifier == "" {
		p.warnf("<manifest> has no identifier")
	}
	pkg.Metadata = p.metadata(md, "manifest metadata")

	if err := p.readResources(m); err != nil {
		return nil, err
	}
	if sc := m.child("sequencingCollection"); sc != nil {
		p.readCollection(sc)
	}

	orgs := m.child("organizations")
	var orgNodes []*node
	if orgs != nil {
		orgNodes = orgs.all("organization")
	}
	if len(orgNodes) == 0 {
		return nil, course.Invalid("%s has no <organization>; a SCORM package needs at least one to build its activity tree", ManifestName)
	}
	defaultID := ""
	if orgs != nil {
		defaultID = orgs.attrS("default")
	}
	for i, o := range orgNodes {
		act, err := p.organization(o, i)
		if err != nil {
			return nil, err
		}
		pkg.Organizations = append(pkg.Organizations, act)
		if act.ID == defaultID && pkg.Root == nil {
			pkg.Root = act
		}
	}
	if pkg.Root == nil {
		if defaultID != "" {
			p.warnf("<organizations default=%q> names no organization; using the first one, %q", defaultID, pkg.Organizations[0].ID)
		}
		pkg.Root = pkg.Organizations[0]
	}

	switch {
	case pkg.Root.Title != "":
		pkg.Title = pkg.Root.Title
	case pkg.Metadata != nil && pkg.Metadata.Title != "":
		pkg.Title = pkg.Metadata.Title
	default:
		pkg.Title = pkg.Identifier
	}
	for _, o := range pkg.Organizations {
		if o.Title == "" {
			o.Title = pkg.Title
		}
	}
	if p.missing > 0 {
		p.warnf("%d more declared files are missing from the package", p.missing)
	}
	if len(p.seqColl) > 0 {
		pkg.SequencingCollection = p.seqColl
	}
	pkg.Files = p.files
	pkg.Warnings = append(pkg.Warnings, p.warnings...)
	return pkg, nil
}

// baseDir resolves an xml:base against its parent's base and makes it a directory. A value
// without a trailing slash is treated as a directory too: RFC 3986 would drop its last
// segment, but authors who write xml:base="content" always mean the folder, and following the
// RFC would silently point every launch at the wrong place.
func (p *parser) baseDir(parent, xmlBase, where string) string {
	if xmlBase == "" {
		return parent
	}
	if !strings.HasSuffix(xmlBase, "/") {
		p.warnf("%s: xml:base %q does not end with \"/\"; treated as a folder", where, xmlBase)
		xmlBase += "/"
	}
	b, esc := resolveRef(parent, xmlBase)
	if esc {
		p.warnf("%s: xml:base %q climbs above the package root; the extra \"..\" is ignored", where, xmlBase)
	}
	return b
}

// readResources reads <resources>, resolving each resource's base through the three xml:base
// levels (manifest, resources, resource), each relative to the one before.
func (p *parser) readResources(m *node) error {
	manifestBase := p.baseDir("", m.xmlBase(), "<manifest>")
	rs := m.child("resources")
	if rs == nil {
		return nil
	}
	resourcesBase := p.baseDir(manifestBase, rs.xmlBase(), "<resources>")
	var deps [][2]string
	for _, r := range rs.all("resource") {
		id := r.attrS("identifier")
		if id == "" {
			p.warnf("a <resource> without identifier is ignored (href %q)", r.attrS("href"))
			continue
		}
		if _, dup := p.resources[id]; dup {
			return course.Invalid("%s: duplicate resource identifier %q", ManifestName, id)
		}
		where := fmt.Sprintf("resource %q", id)
		base := p.baseDir(resourcesBase, r.xmlBase(), where)
		res := &resource{id: id}
		st, hasType := r.attr("scormType")
		res.scormType = strings.ToLower(strings.TrimSpace(st))
		switch {
		case !hasType:
			// adlcp:scormType is mandatory for SCORM resources; content without it has no
			// runtime contract, which is what an asset is.
			res.scormType = "asset"
			if r.attrS("href") != "" {
				p.warnf("%s has no adlcp:scormType; treated as an asset", where)
			}
		case res.scormType != "sco" && res.scormType != "asset":
			p.warnf("%s: adlcp:scormType %q is neither \"sco\" nor \"asset\"; treated as an asset", where, st)
			res.scormType = "asset"
		}
		if href := r.attrS("href"); href != "" {
			href = p.slashes(href, where)
			launch, esc := resolveRef(base, href)
			if esc {
				p.warnf("%s: href %q climbs above the package root; the extra \"..\" is ignored", where, href)
			}
			res.launch = launch
			if !isAbsURL(launch) {
				fp := filePath(launch)
				p.reported[fp] = true
				if ok, alt := p.exists(fp); !ok {
					p.warnf("%s: launch file %s is missing from the package%s", where, fp, caseHint(alt))
				}
			}
		}
		for _, f := range r.all("file") {
			href := f.attrS("href")
			if href == "" {
				continue
			}
			href = p.slashes(href, where)
			full, _ := resolveRef(base, href)
			if isAbsURL(full) {
				continue
			}
			fp := filePath(full)
			if fp == "" || p.fileSeen[fp] {
				continue
			}
			p.fileSeen[fp] = true
			p.files = append(p.files, fp)
			if ok, alt := p.exists(fp); !ok && !p.reported[fp] {
				p.reported[fp] = true
				if p.countMissing() {
					p.warnf("%s: listed file %s is missing from the package%s", where, fp, caseHint(alt))
				}
			}
		}
		for _, d := range r.all("dependency") {
			deps = append(deps, [2]string{id, d.attrS("identifierref")})
		}
		p.resources[id] = res
	}
	for _, d := range deps {
		if _, ok := p.resources[d[1]]; !ok {
			p.warnf("resource %q: dependency %q names no resource", d[0], d[1])
		}
	}
	return nil
}

// countMissing reports whether another missing-file warning may be written, counting the
// ones beyond the cap for the summary warning.
func (p *parser) countMissing() bool {
	if p.fileWarned < maxFileWarnings {
		p.fileWarned++
		return true
	}
	p.missing++
	return false
}

// slashes turns Windows backslashes into URL slashes: a backslash is never meaningful in a
// package path and authoring tools on Windows still emit them.
func (p *parser) slashes(href, where string) string {
	if strings.Contains(href, `\`) && !isAbsURL(href) {
		p.warnf("%s: href %q uses backslashes; read as forward slashes", where, href)
		return strings.ReplaceAll(href, `\`, "/")
	}
	return href
}

// readCollection reads imsss:sequencingCollection: shared definitions referenced by IDRef.
func (p *parser) readCollection(sc *node) {
	for _, s := range sc.all("sequencing") {
		id := s.attrS("ID")
		if id == "" {
			p.warnf("a sequencing definition in <sequencingCollection> has no ID and cannot be referenced; ignored")
			continue
		}
		if _, dup := p.seqColl[id]; dup {
			p.warnf("sequencingCollection: duplicate ID %q; the first definition is used", id)
			continue
		}
		p.seqColl[id] = p.sequencing(s, fmt.Sprintf("sequencingCollection %q", id))
	}
}

// claimID registers an activity identifier, failing on duplicates: identifiers key the
// runtime data, so two activities sharing one would share (and corrupt) learner records.
func (p *parser) claimID(id, kind string) error {
	if p.ids[id] {
		return course.Invalid("%s: duplicate identifier %q (on an %s); identifiers must be unique", ManifestName, id, kind)
	}
	p.ids[id] = true
	return nil
}

// organization builds the root activity of one organization.
func (p *parser) organization(o *node, index int) (*course.Activity, error) {
	id := o.attrS("identifier")
	if id == "" {
		return nil, course.Invalid("%s: organization #%d has no identifier", ManifestName, index+1)
	}
	if err := p.claimID(id, "organization"); err != nil {
		return nil, err
	}
	act := &course.Activity{ID: id, Title: o.textOf("title"), Visible: true}
	where := fmt.Sprintf("organization %q", id)
	act.Metadata = p.metadata(o.child("metadata"), where)
	p.readSequencing(o, act, where)
	if p.std.IsSCORM2004() {
		og := p.boolAttr(o, "objectivesGlobalToSystem", where)
		sd := p.boolAttr(o, "sharedDataGlobalToSystem", where)
		if og != nil || sd != nil {
			act.Extra = &course.ActivityExt{ObjectivesGlobalToSystem: og, SharedDataGlobalToSystem: sd}
		}
	}
	items := o.all("item")
	if len(items) == 0 {
		return nil, course.Invalid("%s: organization %q has no items", ManifestName, id)
	}
	for _, it := range items {
		c, err := p.item(it, id)
		if err != nil {
			return nil, err
		}
		act.Children = append(act.Children, c)
	}
	return act, nil
}

// item builds an activity from an <item> and its descendants.
func (p *parser) item(n *node, org string) (*course.Activity, error) {
	id := n.attrS("identifier")
	if id == "" {
		return nil, course.Invalid("%s: an item in organization %q has no identifier (title %q)", ManifestName, org, n.textOf("title"))
	}
	if err := p.claimID(id, "item"); err != nil {
		return nil, err
	}
	where := fmt.Sprintf("item %q", id)
	act := &course.Activity{ID: id, Title: n.textOf("title"), Visible: true}
	if act.Title == "" {
		p.warnf("%s has no title; its identifier is shown instead", where)
		act.Title = id
	}
	if v, ok := n.attr("isvisible"); ok {
		if b, ok := parseBool(v); ok {
			act.Visible = b
		} else {
			p.warnf("%s: isvisible=%q is not a boolean; the item stays visible", where, v)
		}
	}
	children := n.all("item")
	if ref := n.attrS("identifierref"); ref != "" {
		res, ok := p.resources[ref]
		if !ok {
			return nil, course.Invalid("%s: item %q references resource %q, which is not declared in <resources>", ManifestName, id, ref)
		}
		act.ResourceID = res.id
		act.ScormType = res.scormType
		if len(children) > 0 && p.std.IsSCORM2004() {
			p.warnf("%s has child items and also references a resource; SCORM 2004 allows resources only on leaf items", where)
		}
		if res.launch == "" {
			p.warnf("%s references resource %q, which has no href; the item cannot be launched", where, ref)
		} else {
			if !launchable(res.launch) {
				return nil, course.Invalid("%s: item %q launches %q; only package files and http(s) URLs can be launched", ManifestName, id, res.launch)
			}
			act.LaunchURL = applyParameters(res.launch, n.attrS("parameters"))
		}
	} else if len(children) == 0 {
		p.warnf("%s is a leaf without identifierref; it has nothing to launch", where)
	}

	p.itemData(n, act, where)
	act.Metadata = p.metadata(n.child("metadata"), where)
	p.readSequencing(n, act, where)

	for _, c := range children {
		ca, err := p.item(c, org)
		if err != nil {
			return nil, err
		}
		act.Children = append(act.Children, ca)
	}
	return act, nil
}

// launchable refuses absolute URLs other than http(s): a javascript:, data: or file: launch
// URL would run in, or read from, the player's origin.
func launchable(u string) bool {
	if !isAbsURL(u) || strings.HasPrefix(u, "//") {
		return true
	}
	scheme := strings.ToLower(u[:strings.Index(u, ":")])
	return scheme == "http" || scheme == "https"
}

// itemData reads the adlcp extensions of an item. Element names are matched without regard
// to case, so the 1.2 spellings (datafromlms) and the 2004 ones (dataFromLMS) share code;
// elements that belong to the other generation are reported and ignored.
func (p *parser) itemData(n *node, act *course.Activity, where string) {
	is2004 := p.std.IsSCORM2004()
	act.DataFromLMS = n.textOf("dataFromLMS")
	act.TimeLimitAction = n.textOf("timeLimitAction")
	act.MaxTimeAllowed = n.textOf("maxTimeAllowed")
	if pr := n.child("prerequisites"); pr != nil {
		if is2004 {
			p.warnf("%s: adlcp:prerequisites is SCORM 1.2; SCORM 2004 expresses it with sequencing rules; ignored", where)
		} else {
			act.Prerequisites = strings.TrimSpace(pr.text)
		}
	}
	if ms := n.child("masteryscore"); ms != nil {
		if is2004 {
			p.warnf("%s: adlcp:masteryscore is SCORM 1.2; SCORM 2004 uses imsss:minNormalizedMeasure; ignored", where)
		} else if v := strings.TrimSpace(ms.text); v != "" {
			if f := p.parseFloat(v, "adlcp:masteryscore", where); f != nil {
				if *f < 0 || *f > 100 {
					p.warnf("%s: adlcp:masteryscore %v is outside 0-100; ignored", where, *f)
				} else {
					act.MasteryScore = f
				}
			}
		}
	}
	if d := n.child("data"); d != nil && d.inNS("adlcp") {
		if !is2004 {
			p.warnf("%s: adlcp:data is SCORM 2004 4th edition; ignored in %s", where, p.std)
		} else {
			for _, m := range d.all("map") {
				target := m.attrS("targetID")
				if target == "" {
					p.warnf("%s: adlcp:map without targetID ignored", where)
					continue
				}
				act.SharedData = append(act.SharedData, course.SharedDataMap{
					TargetID:        target,
					ReadSharedData:  p.boolAttr(m, "readSharedData", where),
					WriteSharedData: p.boolAttr(m, "writeSharedData", where),
				})
			}
		}
	}
	if pr := n.child("presentation"); pr != nil {
		if ni := pr.child("navigationInterface"); ni != nil {
			for _, h := range ni.all("hideLMSUI") {
				v := strings.TrimSpace(h.text)
				switch {
				case !is2004:
					p.warnf("%s: adlnav:hideLMSUI is SCORM 2004; ignored in %s", where, p.std)
				case !hideLMSUIValues[v]:
					p.warnf("%s: adlnav:hideLMSUI %q is not one of previous, continue, exit, exitAll, abandon, abandonAll, suspendAll; ignored", where, v)
				case !slices.Contains(act.HideLMSUI, v):
					act.HideLMSUI = append(act.HideLMSUI, v)
				}
			}
		}
	}
	if ct := n.child("completionThreshold"); ct != nil {
		if !is2004 {
			p.warnf("%s: adlcp:completionThreshold is SCORM 2004; ignored in %s", where, p.std)
		} else {
			act.CompletionThreshold = p.completionThreshold(ct, where)
		}
	}
}

// completionThreshold reads both forms of adlcp:completionThreshold. The 4th edition form
// carries attributes (defaults: completedByMeasure false, minProgressMeasure 1.0,
// progressWeight 1.0). The 3rd edition form is a decimal text value; it is recorded as
// CompletedByMeasure true because in 3rd edition a threshold, when present, is what turns
// cmi.progress_measure into the completion status.
func (p *parser) completionThreshold(ct *node, where string) *course.CompletionThreshold {
	_, a1 := ct.attr("completedByMeasure")
	_, a2 := ct.attr("minProgressMeasure")
	_, a3 := ct.attr("progressWeight")
	text := strings.TrimSpace(ct.text)
	if a1 || a2 || a3 || (text == "" && p.std == course.SCORM2004v4) {
		c := &course.CompletionThreshold{MinProgressMeasure: 1, ProgressWeight: 1}
		if b := p.boolAttr(ct, "completedByMeasure", where); b != nil {
			c.CompletedByMeasure = *b
		}
		if f := p.floatAttr(ct, "minProgressMeasure", where); f != nil {
			if *f < 0 || *f > 1 {
				p.warnf("%s: minProgressMeasure %v is outside 0-1; 1.0 is used", where, *f)
			} else {
				c.MinProgressMeasure = *f
			}
		}
		if f := p.floatAttr(ct, "progressWeight", where); f != nil {
			if *f < 0 || *f > 1 {
				p.warnf("%s: progressWeight %v is outside 0-1; 1.0 is used", where, *f)
			} else {
				c.ProgressWeight = *f
			}
		}
		return c
	}
	if text == "" {
		p.warnf("%s: empty adlcp:completionThreshold ignored", where)
		return nil
	}
	f := p.parseFloat(text, "adlcp:completionThreshold", where)
	if f == nil {
		return nil
	}
	if *f < 0 || *f > 1 {
		p.warnf("%s: adlcp:completionThreshold %v is outside 0-1; ignored", where, *f)
		return nil
	}
	return &course.CompletionThreshold{CompletedByMeasure: true, MinProgressMeasure: *f, ProgressWeight: 1}
}

// readSequencing reads imsss:sequencing of an item or organization and derives the
// activity's objectives and mastery score. The effective objectives are the activity's own
// or, when it defines none, those of the collection entry it references, because IMS SS
// merges a referenced definition under the local one.
func (p *parser) readSequencing(n *node, act *course.Activity, where string) {
	var sn *node
	for _, c := range n.children {
		if c.is("sequencing") && !c.inNS("adlseq") {
			sn = c
			break
		}
	}
	if sn == nil {
		return
	}
	if !p.std.IsSCORM2004() {
		p.warnf("%s: imsss:sequencing is SCORM 2004; ignored in %s", where, p.std)
		return
	}
	s := p.sequencing(sn, where)
	act.Sequencing = s
	objs := s.Objectives
	if s.IDRef != "" {
		ref, ok := p.seqColl[s.IDRef]
		if !ok {
			p.warnf("%s: sequencing IDRef %q names nothing in <sequencingCollection>", where, s.IDRef)
		} else if len(objs) == 0 {
			objs = ref.Objectives
		}
	}
	if len(objs) == 0 {
		return
	}
	// A deep copy, so a consumer adjusting Activity.Objectives cannot alter the recorded
	// sequencing definition (or a shared collection entry).
	for _, o := range objs {
		if o.MinNormalizedMeasure != nil {
			v := *o.MinNormalizedMeasure
			o.MinNormalizedMeasure = &v
		}
		o.Maps = append([]course.ObjectiveMap(nil), o.Maps...)
		act.Objectives = append(act.Objectives, o)
	}
	for _, o := range objs {
		if o.Primary && o.SatisfiedByMeasure {
			ms := 1.0 // IMS SS default minNormalizedMeasure
			if o.MinNormalizedMeasure != nil {
				ms = *o.MinNormalizedMeasure
			}
			act.MasteryScore = &ms
		}
	}
}

// hideLMSUIValues are the values of adlnav:hideLMSUI (SCORM 2004 CAM, the hideLMSUI
// vocabulary).
var hideLMSUIValues = map[string]bool{"previous": true, "continue": true, "exit": true, "exitAll": true,
	"abandon": true, "abandonAll": true, "suspendAll": true}
