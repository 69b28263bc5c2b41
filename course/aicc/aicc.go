// Package aicc parses AICC HACP course packages (AICC CMI001, "CMI Guidelines for
// Interoperability", course structure files) into the shared course model.
//
// A package is a set of files at the root of the upload sharing one base name: the course
// description file (.crs, INI-like), the assignable units (.au), the descriptors (.des), the
// course structure (.cst) and, optionally, objectives relationships (.ort), prerequisites (.pre)
// and completion requirements (.cmp). The comma-separated files are matched by header name, in
// any column order.
//
// Identifiers: CMI001 says System_IDs are case-insensitive. Lectern trims them and compares
// them case-sensitively, as the import spec asks, because the ids become activity ids that are
// compared exactly everywhere downstream; two ids that differ only by case are reported as a
// warning so the author can see where the package relies on AICC's looser rule.
package aicc

import (
	"fmt"
	"github.com/lectern-lms/lectern/course/internal/pkgfs"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/course"
)

// Column names (normalized: lower case, '_' for spaces) this parser understands.
var (
	auColumns = []string{"system_id", "type", "command_line", "file_name", "max_score",
		"mastery_score", "max_time_allowed", "time_limit_action", "system_vendor",
		"core_vendor", "web_launch", "au_password"}
	desColumns = []string{"system_id", "developer_id", "title", "description"}
	cstColumns = []string{"block"}
	ortColumns = []string{"course_element"}
	preColumns = []string{"structure_element", "prerequisite"}
	cmpColumns = []string{"structure_element", "requirement", "status", "next_element",
		"prerequisite", "completion", "member"}
)

// rootBlock is the .cst block that holds the course's top-level members. It is a keyword, not
// an id, so it is matched case-insensitively.
const rootBlock = "ROOT"

// maxDepth bounds block nesting; real courses are a few levels deep, and the bound keeps a
// hostile chain of blocks from recursing without limit.
const maxDepth = 100

// fileSet names the package's structure files as they appear in the fs ("" when absent).
type fileSet struct {
	crs, au, des, cst, ort, pre, cmp string
	notes                            []string
}

// findFiles locates the structure files at the root. AppleDouble "._x.crs" copies are not
// files of the course and are skipped, or a Finder-made zip would look like two courses.
func findFiles(fsys fs.FS) (fileSet, error) {
	var fsn fileSet
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return fsn, course.Invalid("cannot list package root: %v", err)
	}
	byExt := map[string][]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, "._") {
			continue
		}
		i := strings.LastIndexByte(name, '.')
		if i <= 0 {
			continue
		}
		ext := strings.ToLower(name[i+1:])
		byExt[ext] = append(byExt[ext], name)
	}
	crs := byExt["crs"]
	switch len(crs) {
	case 0:
		return fsn, course.Invalid("no .crs course description file at the package root")
	case 1:
	default:
		sort.Strings(crs)
		return fsn, course.Invalid("%d .crs files at the package root (%s); an AICC package has exactly one",
			len(crs), strings.Join(crs, ", "))
	}
	fsn.crs = crs[0]
	base := fsn.crs[:strings.LastIndexByte(fsn.crs, '.')]
	pick := func(ext string) string {
		var folded string
		for _, n := range byExt[ext] {
			b := n[:strings.LastIndexByte(n, '.')]
			if b == base {
				return n
			}
			if folded == "" && strings.EqualFold(b, base) {
				folded = n
			}
		}
		if folded != "" {
			fsn.notes = append(fsn.notes, fmt.Sprintf("%s: base name differs in case from %s", folded, fsn.crs))
		}
		return folded
	}
	fsn.au, fsn.des, fsn.cst = pick("au"), pick("des"), pick("cst")
	fsn.ort, fsn.pre, fsn.cmp = pick("ort"), pick("pre"), pick("cmp")
	for _, req := range []struct{ name, ext, what string }{
		{fsn.au, "au", "assignable unit"}, {fsn.des, "des", "descriptor"}, {fsn.cst, "cst", "course structure"},
	} {
		if req.name == "" {
			return fsn, course.Invalid("%s.%s: missing (required AICC %s file for %s)", base, req.ext, req.what, fsn.crs)
		}
	}
	return fsn, nil
}

// Detect reports whether fsys holds an AICC package at its root: exactly one .crs file plus
// .au, .des and .cst files with the same base name (extensions in any case).
func Detect(fsys fs.FS) bool {
	_, err := findFiles(fsys)
	return err == nil
}

// parser carries the state of one Parse call.
type parser struct {
	fsys     fs.FS
	files    fileSet
	warnings []string
}

func (p *parser) warn(format string, args ...any) {
	p.warnings = append(p.warnings, fmt.Sprintf(format, args...))
}

func (p *parser) readText(name string) (string, error) {
	data, err := pkgfs.ReadCapped(p.fsys, name)
	if err != nil {
		return "", err
	}
	return decodeText(name, data, p.warn), nil
}

func (p *parser) readTable(name string, known, required []string) (*table, error) {
	text, err := p.readText(name)
	if err != nil {
		return nil, err
	}
	return parseTable(name, text, known, required, p.warn)
}

// Parse reads the AICC package at the root of fsys. Problems that make the course unusable
// (a missing required file, an AU named in the structure but not defined, malformed CSV)
// return an error wrapping course.ErrInvalidPackage; the rest become Package.Warnings.
func Parse(fsys fs.FS) (*course.Package, error) {
	files, err := findFiles(fsys)
	if err != nil {
		return nil, err
	}
	p := &parser{fsys: fsys, files: files}
	p.warnings = append(p.warnings, files.notes...)
	p.warnings = append(p.warnings, pkgfs.JunkWarnings(fsys)...)
	pkg, err := p.parse()
	if err != nil {
		return nil, err
	}
	pkg.Warnings = p.warnings
	if pkg.Warnings == nil {
		pkg.Warnings = []string{}
	}
	return pkg, nil
}

func (p *parser) parse() (*course.Package, error) {
	crsText, err := p.readText(p.files.crs)
	if err != nil {
		return nil, err
	}
	crs := parseCRS(crsText)
	courseID := crs.get("course", "course_id")
	if courseID == "" {
		return nil, course.Invalid("%s: [Course] has no Course_ID", p.files.crs)
	}
	title := crs.get("course", "course_title")
	if title == "" {
		p.warn("%s: [Course] has no Course_Title; using the Course_ID", p.files.crs)
		title = courseID
	}

	aus, auOrder, err := p.readAUs()
	if err != nil {
		return nil, err
	}
	des, desOrder, err := p.readDescriptors()
	if err != nil {
		return nil, err
	}
	cst, err := p.readStructure()
	if err != nil {
		return nil, err
	}

	b := &builder{p: p, aus: aus, des: des, cst: cst, placed: map[string]bool{}, onPath: map[string]bool{}}
	rootMembers, ok := cst.blocks[cst.rootKey]
	if !ok {
		return nil, course.Invalid("%s: no %q block; the course structure has no top level", p.files.cst, rootBlock)
	}
	if len(rootMembers) == 0 {
		return nil, course.Invalid("%s: block %q has no members", p.files.cst, rootBlock)
	}
	root := &course.Activity{ID: courseID, Title: title, Visible: true}
	b.onPath[cst.rootKey] = true
	if root.Children, err = b.members(cst.rootKey, rootMembers, 1); err != nil {
		return nil, err
	}
	for _, id := range auOrder {
		if !b.placed[id] {
			p.warn("%s: AU %q is not in the course structure (%s); ignored", p.files.au, id, p.files.cst)
		}
	}
	for _, id := range cst.order {
		if id != cst.rootKey && !b.placed[id] {
			p.warn("%s: block %q is not reachable from %s; ignored", p.files.cst, id, rootBlock)
		}
	}

	byID := map[string]*course.Activity{}
	root.Walk(func(a *course.Activity) { byID[a.ID] = a })
	// ROOT in .pre/.ort means the course itself.
	byID[cst.rootKey] = root
	if err := p.applyPrerequisites(byID); err != nil {
		return nil, err
	}
	objectiveIDs, err := p.applyObjectives(byID)
	if err != nil {
		return nil, err
	}
	if p.files.cmp != "" {
		if _, err := p.readTable(p.files.cmp, cmpColumns, nil); err != nil {
			return nil, err
		}
		// The course model has no field for AICC completion requirements yet.
		p.warn("%s: completion requirements are not supported; ignored", p.files.cmp)
	}

	p.checkCounts(crs, len(aus), len(cst.order)-1, len(objectiveIDs))
	ids := append(append(append(append([]string{}, auOrder...), cst.order...), objectiveIDs...), desOrder...)
	p.warnCaseCollisions(ids)
	isObjective := map[string]bool{}
	for _, id := range objectiveIDs {
		isObjective[id] = true
	}
	for _, id := range desOrder {
		if _, isAU := aus[id]; isAU {
			continue
		}
		if _, isBlock := cst.blocks[id]; isBlock {
			continue
		}
		if isObjective[id] {
			continue
		}
		p.warn("%s: descriptor for unknown element %q ignored", p.files.des, id)
	}

	pkg := &course.Package{
		Standard:      course.AICC,
		Identifier:    courseID,
		Title:         title,
		SchemaVersion: crs.get("course", "version"),
		Root:          root,
	}
	md := &course.Metadata{
		Title:       title,
		Description: crs.description,
		Author:      crs.get("course", "course_creator"),
	}
	pkg.Metadata = md
	for _, a := range pkg.Launchable() {
		if a.AICC != nil && a.AICC.FileName != "" {
			if _, f, _, err := pkgfs.ResolveLaunch(a.AICC.FileName); err == nil && f != "" {
				pkg.Files = append(pkg.Files, f)
			}
		}
	}
	return pkg, nil
}

// auRow is one .au row, kept until the structure places it.
type auRow struct {
	line     int
	activity *course.Activity
}

func (p *parser) readAUs() (map[string]auRow, []string, error) {
	t, err := p.readTable(p.files.au, auColumns, []string{"system_id", "file_name"})
	if err != nil {
		return nil, nil, err
	}
	aus := map[string]auRow{}
	var order []string
	for _, r := range t.rows {
		id := t.get(r, "system_id")
		if id == "" {
			return nil, nil, course.Invalid("%s: line %d: empty System_ID", t.file, r.line)
		}
		if prev, dup := aus[id]; dup {
			return nil, nil, course.Invalid("%s: line %d: duplicate System_ID %q (first on line %d)", t.file, r.line, id, prev.line)
		}
		unit := &course.AICCUnit{
			SystemID:        id,
			Type:            t.get(r, "type"),
			CommandLine:     t.get(r, "command_line"),
			FileName:        t.get(r, "file_name"),
			CoreVendor:      t.get(r, "core_vendor"),
			WebLaunch:       t.get(r, "web_launch"),
			AUPassword:      t.get(r, "au_password"),
			MaxScore:        t.get(r, "max_score"),
			TimeLimitAction: t.get(r, "time_limit_action"),
		}
		a := &course.Activity{
			ID:              id,
			Title:           id,
			Visible:         true,
			MaxTimeAllowed:  t.get(r, "max_time_allowed"),
			TimeLimitAction: unit.TimeLimitAction,
			// Core_Vendor is what SCORM 1.2 renamed launch data (adlcp:datafromlms).
			DataFromLMS: unit.CoreVendor,
			AICC:        unit,
		}
		if unit.FileName == "" {
			return nil, nil, course.Invalid("%s: line %d: AU %q has no File_Name", t.file, r.line, id)
		}
		launch, file, notes, err := pkgfs.ResolveLaunch(unit.FileName)
		if err != nil {
			return nil, nil, course.Invalid("%s: line %d: AU %q File_Name %q: %v", t.file, r.line, id, unit.FileName, err)
		}
		for _, n := range notes {
			p.warn("%s: AU %q File_Name %q: %s", t.file, id, unit.FileName, n)
		}
		if file != "" && !pkgfs.FileExists(p.fsys, file) {
			p.warn("%s: AU %q launch file %q is not in the package", t.file, id, file)
		}
		a.LaunchURL = p.withCommandLine(t.file, id, launch, unit.CommandLine)
		if ms := t.get(r, "mastery_score"); ms != "" {
			v, err := strconv.ParseFloat(ms, 64)
			switch {
			case err != nil || v != v:
				p.warn("%s: AU %q Mastery_Score %q is not a number; ignored", t.file, id, ms)
			case v < 0 || v > 100:
				p.warn("%s: AU %q Mastery_Score %q is outside 0-100; ignored", t.file, id, ms)
			default:
				a.MasteryScore = &v
			}
		}
		aus[id] = auRow{line: r.line, activity: a}
		order = append(order, id)
	}
	if len(order) == 0 {
		return nil, nil, course.Invalid("%s: no assignable units", t.file)
	}
	return aus, order, nil
}

// withCommandLine appends the AU's Command_Line to its launch URL as query parameters, which is
// how a web launch delivers what CMI001 passed on a command line.
func (p *parser) withCommandLine(file, id, launch, cmd string) string {
	cmd = strings.TrimLeft(strings.TrimSpace(cmd), "?&")
	if cmd == "" {
		return launch
	}
	if strings.ContainsAny(cmd, " \t#") {
		p.warn("%s: AU %q Command_Line %q is not a query string; appended escaped", file, id, cmd)
		cmd = "command_line=" + escapeQuery(cmd)
	}
	frag := ""
	if i := strings.IndexByte(launch, '#'); i >= 0 {
		launch, frag = launch[:i], launch[i:]
	}
	sep := "?"
	if strings.Contains(launch, "?") {
		sep = "&"
	}
	return launch + sep + cmd + frag
}

func escapeQuery(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, "%%%02X", c)
		}
	}
	return sb.String()
}

// descriptor is one .des row.
type descriptor struct {
	developerID, title, description string
}

func (p *parser) readDescriptors() (map[string]descriptor, []string, error) {
	t, err := p.readTable(p.files.des, desColumns, []string{"system_id"})
	if err != nil {
		return nil, nil, err
	}
	out := map[string]descriptor{}
	var order []string
	for _, r := range t.rows {
		id := t.get(r, "system_id")
		if id == "" {
			return nil, nil, course.Invalid("%s: line %d: empty System_ID", t.file, r.line)
		}
		if _, dup := out[id]; dup {
			p.warn("%s: line %d: second descriptor for %q ignored", t.file, r.line, id)
			continue
		}
		out[id] = descriptor{
			developerID: t.get(r, "developer_id"),
			title:       t.get(r, "title"),
			description: t.get(r, "description"),
		}
		order = append(order, id)
	}
	return out, order, nil
}

// structure is the parsed .cst: block id -> member ids. Rows with the same block are joined,
// because CMI001 continues a block on another row when it has more members than
// Max_Fields_CST columns.
type structure struct {
	blocks  map[string][]string
	order   []string // block ids in first-seen order
	rootKey string   // the ROOT block as spelled in the file
}

func (p *parser) readStructure() (*structure, error) {
	t, err := p.readTable(p.files.cst, cstColumns, []string{"block", "member"})
	if err != nil {
		return nil, err
	}
	s := &structure{blocks: map[string][]string{}, rootKey: rootBlock}
	for _, r := range t.rows {
		id := t.get(r, "block")
		if id == "" {
			return nil, course.Invalid("%s: line %d: empty Block", t.file, r.line)
		}
		if strings.EqualFold(id, rootBlock) {
			s.rootKey = id
		}
		if _, seen := s.blocks[id]; !seen {
			s.order = append(s.order, id)
		}
		s.blocks[id] = append(s.blocks[id], t.memberValues(r)...)
	}
	return s, nil
}

// builder turns the .cst block map into the activity tree.
type builder struct {
	p      *parser
	aus    map[string]auRow
	des    map[string]descriptor
	cst    *structure
	placed map[string]bool
	onPath map[string]bool
}

func (b *builder) members(block string, ids []string, depth int) ([]*course.Activity, error) {
	if depth > maxDepth {
		return nil, course.Invalid("%s: blocks nested deeper than %d levels at %q", b.p.files.cst, maxDepth, block)
	}
	var out []*course.Activity
	for _, id := range ids {
		if b.onPath[id] || strings.EqualFold(id, rootBlock) {
			return nil, course.Invalid("%s: block %q contains itself (cycle through %q)", b.p.files.cst, block, id)
		}
		if b.placed[id] {
			b.p.warn("%s: %q appears more than once in the course structure; later occurrence in block %q ignored",
				b.p.files.cst, id, block)
			continue
		}
		if sub, isBlock := b.cst.blocks[id]; isBlock {
			b.placed[id] = true
			a := &course.Activity{ID: id, Title: id, Visible: true}
			b.describe(a, "block")
			if len(sub) == 0 {
				b.p.warn("%s: block %q has no members", b.p.files.cst, id)
			}
			b.onPath[id] = true
			children, err := b.members(id, sub, depth+1)
			delete(b.onPath, id)
			if err != nil {
				return nil, err
			}
			a.Children = children
			out = append(out, a)
			continue
		}
		au, isAU := b.aus[id]
		if !isAU {
			hint := ""
			for other := range b.aus {
				if strings.EqualFold(other, id) {
					hint = fmt.Sprintf(" (%s defines %q; System_IDs are compared case-sensitively)", b.p.files.au, other)
					break
				}
			}
			return nil, course.Invalid("%s: block %q member %q is not an AU in %s nor a block%s",
				b.p.files.cst, block, id, b.p.files.au, hint)
		}
		b.placed[id] = true
		b.describe(au.activity, "AU")
		out = append(out, au.activity)
	}
	return out, nil
}

// describe applies the .des title and description to an AU or block.
func (b *builder) describe(a *course.Activity, kind string) {
	d, ok := b.des[a.ID]
	if !ok || d.title == "" {
		b.p.warn("%s: %s %q has no title; using its System_ID", b.p.files.des, kind, a.ID)
	}
	if !ok {
		return
	}
	if d.title != "" {
		a.Title = d.title
	}
	if d.description != "" {
		a.Metadata = &course.Metadata{Description: d.description}
	}
	if a.AICC != nil {
		a.AICC.DeveloperID = d.developerID
	}
}

func (p *parser) applyPrerequisites(byID map[string]*course.Activity) error {
	if p.files.pre == "" {
		return nil
	}
	t, err := p.readTable(p.files.pre, preColumns, preColumns)
	if err != nil {
		return err
	}
	// Several rows for one element must all hold; they are joined once at the end so a file
	// with many rows for one element stays linear.
	exprs := map[string][]string{}
	var order []string
	for _, r := range t.rows {
		id, expr := t.get(r, "structure_element"), t.get(r, "prerequisite")
		if _, ok := byID[id]; !ok {
			p.warn("%s: line %d: prerequisites for unknown element %q ignored", t.file, r.line, id)
			continue
		}
		if expr == "" {
			continue
		}
		if _, seen := exprs[id]; !seen {
			order = append(order, id)
		}
		exprs[id] = append(exprs[id], expr)
	}
	for _, id := range order {
		list := exprs[id]
		if len(list) == 1 {
			byID[id].Prerequisites = list[0]
			continue
		}
		byID[id].Prerequisites = "(" + strings.Join(list, ")&(") + ")"
	}
	return nil
}

func (p *parser) applyObjectives(byID map[string]*course.Activity) ([]string, error) {
	if p.files.ort == "" {
		return nil, nil
	}
	t, err := p.readTable(p.files.ort, ortColumns, []string{"course_element", "member"})
	if err != nil {
		return nil, err
	}
	var all []string
	seen := map[string]bool{}
	for _, r := range t.rows {
		id := t.get(r, "course_element")
		a, ok := byID[id]
		if !ok {
			p.warn("%s: line %d: objectives for unknown element %q ignored", t.file, r.line, id)
			continue
		}
		for _, obj := range t.memberValues(r) {
			a.Objectives = append(a.Objectives, course.Objective{ID: obj})
			if !seen[obj] {
				seen[obj] = true
				all = append(all, obj)
			}
		}
	}
	return all, nil
}

// checkCounts compares the .crs totals with what the files hold; a mismatch usually means a
// file was edited by hand or a row was lost, which the author should know about.
func (p *parser) checkCounts(crs *crsFile, aus, blocks, objectives int) {
	for _, c := range []struct {
		key  string
		have int
	}{{"total_aus", aus}, {"total_blocks", blocks}, {"total_objectives", objectives}} {
		v := crs.get("course", c.key)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			p.warn("%s: %s %q is not a number", p.files.crs, c.key, v)
			continue
		}
		if n != c.have {
			p.warn("%s: %s says %d but the package has %d", p.files.crs, c.key, n, c.have)
		}
	}
}

func (p *parser) warnCaseCollisions(ids []string) {
	first := map[string]string{}
	reported := map[string]bool{}
	for _, id := range ids {
		k := strings.ToLower(id)
		prev, ok := first[k]
		if !ok {
			first[k] = id
			continue
		}
		if prev != id && !reported[k] {
			reported[k] = true
			p.warn("System_IDs %q and %q differ only by case; AICC treats them as one, Lectern as two", prev, id)
		}
	}
}

// crsFile is the parsed INI-like .crs: sections of key=value lines, plus the free text of
// [Course_Description].
type crsFile struct {
	values      map[string]map[string]string
	description string
}

func (c *crsFile) get(section, key string) string {
	return c.values[section][key]
}

// parseCRS is lenient: section and key names are case-insensitive, ';' starts a comment line,
// and anything that is not key=value outside [Course_Description] is ignored.
func parseCRS(text string) *crsFile {
	c := &crsFile{values: map[string]map[string]string{}}
	section := ""
	var desc []string
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "[") && strings.HasSuffix(trimmed, "]") {
			section = normHeader(trimmed[1 : len(trimmed)-1])
			continue
		}
		if section == "course_description" {
			desc = append(desc, trimmed)
			continue
		}
		if trimmed == "" || strings.HasPrefix(trimmed, ";") {
			continue
		}
		k, v, ok := strings.Cut(trimmed, "=")
		if !ok {
			continue
		}
		if c.values[section] == nil {
			c.values[section] = map[string]string{}
		}
		c.values[section][normHeader(k)] = strings.Trim(strings.TrimSpace(v), `"`)
	}
	c.description = strings.TrimSpace(strings.Join(desc, "\n"))
	return c
}
