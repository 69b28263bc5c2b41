package scorm

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/coursetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenFixtures maps each golden file in testdata/golden (its name without .json) to the
// well-formed coursetest package whose whole parse it holds.
var goldenFixtures = map[string]string{
	"scorm12_single": "scorm12_single",
	"scorm12_multi":  "scorm12_multi",
	"scorm11":        "scorm11",
	"scorm2004_2nd":  "scorm2004_2nd",
	"scorm2004_3rd":  "scorm2004_3rd",
	"scorm2004_4th":  "scorm2004_4th",
	"xmlbase":        "scorm2004_xmlbase",
	"multi_org":      "scorm12_multi_org",
	"nested":         "scorm12_nested",
	"oddities":       "scorm2004_oddities",
}

// manifest11 is the SCORM 1.1 manifest of coursetest's scorm11, the base of the encoding and
// detection cases.
var manifest11 = coursetest.Lookup("scorm11").Files["imsmanifest.xml"]

func mustParse(t *testing.T, fsys fstest.MapFS) *course.Package {
	t.Helper()
	pkg, err := Parse(fsys)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return pkg
}

// find returns the activity with the id anywhere in the package's organizations.
func find(t *testing.T, pkg *course.Package, id string) *course.Activity {
	t.Helper()
	var found *course.Activity
	for _, o := range pkg.Organizations {
		o.Walk(func(a *course.Activity) {
			if a.ID == id {
				found = a
			}
		})
	}
	if found == nil {
		t.Fatalf("activity %q not found", id)
	}
	return found
}

func hasWarning(pkg *course.Package, substr string) bool {
	for _, w := range pkg.Warnings {
		if strings.Contains(w, substr) {
			return true
		}
	}
	return false
}

// TestGolden compares each fixture's whole parse (the package with every organization's
// activity tree, warnings and declared files) with testdata/golden/<name>.json.
func TestGolden(t *testing.T) {
	for name, fixture := range goldenFixtures {
		t.Run(name, func(t *testing.T) {
			pkg := mustParse(t, coursetest.FS(fixture))
			// Root is one of Organizations, so the golden names it instead of repeating the
			// tree; HTML escaping is off so launch URLs read as written ("a?x=1&y=2").
			view := struct {
				*course.Package
				Root  string   `json:"root"`
				Files []string `json:"files"`
			}{pkg, pkg.Root.ID, pkg.Files}
			coursetest.GoldenJSON(t, filepath.Join("testdata", "golden", name+".json"), view, *update)
		})
	}
}

func TestStandards(t *testing.T) {
	want := map[string]course.Standard{
		"scorm12_single": course.SCORM12,
		"scorm12_multi":  course.SCORM12,
		"scorm11":        course.SCORM11,
		"scorm2004_2nd":  course.SCORM2004v2,
		"scorm2004_3rd":  course.SCORM2004v3,
		"scorm2004_4th":  course.SCORM2004v4,
		"xmlbase":        course.SCORM2004v4,
		"multi_org":      course.SCORM12,
		"nested":         course.SCORM12,
		"oddities":       course.SCORM2004v3, // unknown schemaversion: namespaces → 3rd edition
	}
	for name, fixture := range goldenFixtures {
		if got := mustParse(t, coursetest.FS(fixture)).Standard; got != want[name] {
			t.Errorf("%s: standard %s, want %s", name, got, want[name])
		}
	}
}

// TestStandardFromNamespaces covers manifests without a (known) schemaversion.
func TestStandardFromNamespaces(t *testing.T) {
	body := `<organizations default="o"><organization identifier="o"><title>T</title>
	  <item identifier="i" identifierref="r"><title>I</title></item></organization></organizations>
	  <resources><resource identifier="r" type="webcontent" href="a.html" %s="sco"/></resources></manifest>`
	cases := []struct {
		name, head, attr string
		want             course.Standard
		warn             string
	}{
		{"1.2 namespace, no schemaversion", `<manifest identifier="m" ` + coursetest.NS12 + `>`, "adlcp:scormtype", course.SCORM12, ""},
		{"1.1 namespace", `<manifest identifier="m" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p1">`, "adlcp:scormtype", course.SCORM11, ""},
		{"2004 namespace, no schemaversion", `<manifest identifier="m" ` + coursetest.NS2004 + `>`, "adlcp:scormType", course.SCORM2004v3, "assuming 3rd edition"},
		{"nothing at all", `<manifest identifier="m" xmlns:adlcp="urn:x">`, "adlcp:scormtype", course.SCORM12, "treated as SCORM 1.2"},
		{"schemaversion with odd spacing", `<manifest identifier="m" ` + coursetest.NS2004 + `><metadata><schemaversion> 2004   4th edition </schemaversion></metadata>`, "adlcp:scormType", course.SCORM2004v4, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.head + strings.Replace(body, "%s", c.attr, 1)
			pkg := mustParse(t, coursetest.SCORMFS(m, "a.html"))
			if pkg.Standard != c.want {
				t.Errorf("standard %s, want %s", pkg.Standard, c.want)
			}
			if c.warn != "" && !hasWarning(pkg, c.warn) {
				t.Errorf("no warning containing %q in %q", c.warn, pkg.Warnings)
			}
			if c.warn == "" && len(pkg.Warnings) > 0 {
				t.Errorf("unexpected warnings %q", pkg.Warnings)
			}
		})
	}
}

func TestSCORM12(t *testing.T) {
	pkg := mustParse(t, coursetest.FS("scorm12_single"))
	if pkg.Title != "Fire Safety" || pkg.Identifier != "com.example.single12" || pkg.Version != "1.3" {
		t.Errorf("title/identifier/version = %q/%q/%q", pkg.Title, pkg.Identifier, pkg.Version)
	}
	if pkg.Metadata == nil || pkg.Metadata.Title != "Fire Safety (metadata)" || len(pkg.Metadata.Keywords) != 2 || pkg.Metadata.Language != "en-US" {
		t.Errorf("metadata %+v", pkg.Metadata)
	}
	sco := find(t, pkg, "ITEM-1") // identifier is trimmed
	if sco.LaunchURL != "index.html" || sco.ScormType != "sco" || sco.ResourceID != "RES-1" {
		t.Errorf("sco %+v", sco)
	}
	if got := strings.Join(pkg.Files, ","); got != "index.html,images/logo.png,scripts/api.js" {
		t.Errorf("files %s", got)
	}
	if !hasWarning(pkg, "images/logo.png is missing") || len(pkg.Warnings) != 1 {
		t.Errorf("warnings %q", pkg.Warnings)
	}

	pkg = mustParse(t, coursetest.FS("scorm12_multi"))
	l1 := find(t, pkg, "lesson1")
	if l1.MasteryScore == nil || *l1.MasteryScore != 80 || l1.MaxTimeAllowed != "00:30:00" ||
		l1.TimeLimitAction != "exit,message" || l1.Prerequisites != "intro" {
		t.Errorf("lesson1 %+v", l1)
	}
	if l1.LaunchURL != "lesson1/index.html?mode=normal&chapter=1" {
		t.Errorf("lesson1 launch %q", l1.LaunchURL)
	}
	if q := find(t, pkg, "quiz"); q.MasteryScore == nil || *q.MasteryScore != 70.5 || q.Prerequisites != "intro&lesson1" {
		t.Errorf("quiz %+v", q)
	}
	if g := find(t, pkg, "glossary"); g.Visible || g.ScormType != "asset" {
		t.Errorf("glossary %+v", g)
	}
	if in := find(t, pkg, "intro"); in.DataFromLMS != "lang=en" {
		t.Errorf("intro %+v", in)
	}
	if pkg.Metadata == nil || pkg.Metadata.Author != "Ada Lovelace" || pkg.Metadata.Duration != "PT1H" {
		t.Errorf("external metadata %+v", pkg.Metadata)
	}
	if !hasWarning(pkg, "meta/missing.xml (adlcp:location) is missing") {
		t.Errorf("warnings %q", pkg.Warnings)
	}
}

func TestSCORM2004(t *testing.T) {
	pkg := mustParse(t, coursetest.FS("scorm2004_2nd"))
	sco1 := find(t, pkg, "SCO1")
	if ct := sco1.CompletionThreshold; ct == nil || !ct.CompletedByMeasure || ct.MinProgressMeasure != 0.75 || ct.ProgressWeight != 1 {
		t.Errorf("text completionThreshold %+v", ct)
	}
	if sco1.DataFromLMS != "level=1" || sco1.TimeLimitAction != "continue,no message" {
		t.Errorf("sco1 %+v", sco1)
	}
	mod := find(t, pkg, "MOD1")
	if cm := mod.Sequencing.ControlMode; cm == nil || *cm.Choice || !*cm.Flow || !*cm.ForwardOnly || cm.ChoiceExit != nil {
		t.Errorf("control mode %+v", cm)
	}
	rules := find(t, pkg, "SCO2").Sequencing
	if len(rules.PreConditionRules) != 1 || rules.PreConditionRules[0].Action != "disabled" ||
		len(rules.PreConditionRules[0].Conditions) != 2 || rules.PreConditionRules[0].Conditions[0].Operator != "not" ||
		len(rules.PostConditionRules) != 1 {
		t.Errorf("rules %+v", rules)
	}

	pkg = mustParse(t, coursetest.FS("scorm2004_3rd"))
	if pkg.Title != "Golf Explained - Sequencing" || pkg.Metadata.Title != "Golf Explained" || pkg.Metadata.Duration != "PT45M" {
		t.Errorf("title %q metadata %+v", pkg.Title, pkg.Metadata)
	}
	playing := find(t, pkg, "playing_sco")
	if len(playing.Objectives) != 2 || !playing.Objectives[0].Primary || playing.Objectives[0].ID != "playing_satisfied" {
		t.Errorf("objectives %+v", playing.Objectives)
	}
	if playing.MasteryScore == nil || *playing.MasteryScore != 0.8 {
		t.Errorf("mastery from minNormalizedMeasure: %v", playing.MasteryScore)
	}
	m := playing.Objectives[0].Maps[0]
	if m.TargetObjectiveID != "com.example.golf.playing" || !m.ReadSatisfiedStatus || !m.WriteSatisfiedStatus || !m.WriteNormalizedMeasure {
		t.Errorf("map %+v", m)
	}
	if m2 := playing.Objectives[1].Maps[0]; m2.ReadNormalizedMeasure || !m2.ReadSatisfiedStatus {
		t.Errorf("secondary map %+v", m2)
	}
	if lc := playing.Sequencing.LimitConditions; lc == nil || *lc.AttemptLimit != 3 || lc.AttemptAbsoluteDurationLimit != "PT1H" {
		t.Errorf("limit %+v", lc)
	}
	// etiquette defines no objectives: the referenced collection entry supplies them, and
	// satisfiedByMeasure without minNormalizedMeasure means the IMS SS default 1.0.
	et := find(t, pkg, "etiquette_sco")
	if et.Sequencing.IDRef != "content_seq" || len(et.Objectives) != 1 || et.MasteryScore == nil || *et.MasteryScore != 1 {
		t.Errorf("etiquette %+v", et)
	}
	if pkg.SequencingCollection["content_seq"] == nil {
		t.Errorf("collection %+v", pkg.SequencingCollection)
	}
	s := find(t, pkg, "playing").Sequencing
	if s.RollupRules == nil || len(s.RollupRules.Rules) != 2 || *s.RollupRules.Rules[0].MinimumCount != 1 ||
		*s.RollupRules.Rules[1].MinimumPercent != 0.5 || *s.RollupRules.ObjectiveMeasureWeight != 0.5 {
		t.Errorf("rollup %+v", s.RollupRules)
	}
	if s.RandomizationControls == nil || *s.RandomizationControls.SelectCount != 1 || !*s.RandomizationControls.ReorderChildren {
		t.Errorf("randomization %+v", s.RandomizationControls)
	}
	if s.PreventActivation == nil || !*s.PreventActivation || *s.ConstrainChoice || s.RequiredForSatisfied != "ifNotSkipped" ||
		s.MeasureSatisfactionIfActive == nil || *s.MeasureSatisfactionIfActive {
		t.Errorf("adlseq %+v", s)
	}
	if pkg.Root.Sequencing == nil || pkg.Root.Sequencing.ControlMode == nil {
		t.Errorf("organization sequencing missing")
	}
	if len(pkg.Warnings) != 0 {
		t.Errorf("warnings %q", pkg.Warnings)
	}

	pkg = mustParse(t, coursetest.FS("scorm2004_4th"))
	u1 := find(t, pkg, "u1_sco")
	if ct := u1.CompletionThreshold; ct == nil || !ct.CompletedByMeasure || ct.MinProgressMeasure != 0.8 || ct.ProgressWeight != 0.5 {
		t.Errorf("attribute completionThreshold %+v", ct)
	}
	if len(u1.Objectives) != 1 || u1.MasteryScore == nil || *u1.MasteryScore != 1 {
		t.Errorf("adlseq:objectives must not be read as imsss objectives: %+v", u1.Objectives)
	}
	if ex := u1.Sequencing.ExitConditionRules; len(ex) != 1 || *ex[0].Conditions[0].MeasureThreshold != 0.6 {
		t.Errorf("exit rules %+v", ex)
	}
	if ct := find(t, pkg, "u1_quiz").CompletionThreshold; ct == nil || ct.CompletedByMeasure || ct.MinProgressMeasure != 1 {
		t.Errorf("empty 4th-ed completionThreshold %+v", ct)
	}
	if ct := find(t, pkg, "unit2").CompletionThreshold; ct == nil || ct.CompletedByMeasure || ct.MinProgressMeasure != 0.6 || ct.ProgressWeight != 1 {
		t.Errorf("partial completionThreshold %+v", ct)
	}
	if q := find(t, pkg, "u1_quiz"); q.LaunchURL != "u1/quiz.html#question1" {
		t.Errorf("quiz launch %q", q.LaunchURL)
	}
}

func TestXMLBase(t *testing.T) {
	pkg := mustParse(t, coursetest.FS("scorm2004_xmlbase"))
	want := map[string]string{
		"plain":   "content/modules/m1/start.html",
		"q":       "content/modules/m1/start.html?a=1&b=2",
		"amp":     "content/modules/m2/start.html?lang=en&c=3",
		"hash":    "content/modules/m1/start.html#page5",
		"hash2":   "content/modules/m3/page.html#intro",
		"qfrag":   "content/modules/m3/page.html?x=1#intro",
		"up":      "content/modules/m5/launch.html",
		"abs":     "https://cdn.example.com/video/player.html?id=7&lang=fr",
		"absbase": "https://cdn.example.com/shared/index.html",
		"rooted":  "top.html",
	}
	for id, url := range want {
		if got := find(t, pkg, id).LaunchURL; got != url {
			t.Errorf("%s: launch %q, want %q", id, got, url)
		}
	}
	if len(pkg.Warnings) != 0 {
		t.Errorf("warnings %q", pkg.Warnings)
	}
}

func TestOrganizations(t *testing.T) {
	pkg := mustParse(t, coursetest.FS("scorm12_multi_org"))
	if len(pkg.Organizations) != 2 || pkg.Root != pkg.Organizations[1] || pkg.Root.ID != "full" || pkg.Title != "Full Path" {
		t.Errorf("root %q of %d organizations", pkg.Root.ID, len(pkg.Organizations))
	}
	if n := len(pkg.Launchable()); n != 2 {
		t.Errorf("launchable %d", n)
	}

	pkg = mustParse(t, coursetest.FS("scorm12_nested"))
	sco1 := pkg.Root.Children[0].Children[0].Children[0].Children[0]
	if sco1.ID != "sco1" || sco1.LaunchURL != "p.html" {
		t.Errorf("deep item %+v", sco1)
	}
	if got := find(t, pkg, "sco3").LaunchURL; got != "p.html?page=3" {
		t.Errorf("sco3 %q", got)
	}
	var ids []string
	for _, a := range pkg.Launchable() {
		ids = append(ids, a.ID)
	}
	if strings.Join(ids, ",") != "sco1,sco2,ch2,sco3" {
		t.Errorf("document order %v", ids)
	}
}

func TestWarnings(t *testing.T) {
	pkg := mustParse(t, coursetest.FS("scorm2004_oddities"))
	if pkg.Root.ID != "first" || pkg.Title != "odd" {
		t.Errorf("root %q title %q", pkg.Root.ID, pkg.Title)
	}
	for _, w := range []string{
		"named IMSManifest.xml",
		"macOS metadata (__MACOSX/, .DS_Store)",
		`unknown schemaversion "2004 5th Edition"`,
		"assuming 3rd edition",
		`default="nowhere"`,
		"missing.html is missing",
		`item "b" is a leaf without identifierref`,
		`adlseq:objective "nowhere" names no imsss objective`,
		`adlcp:map without targetID ignored`,
	} {
		if !hasWarning(pkg, w) {
			t.Errorf("no warning containing %q in\n%s", w, strings.Join(pkg.Warnings, "\n"))
		}
	}
	// Stable order: parsing twice yields the same list.
	again := mustParse(t, coursetest.FS("scorm2004_oddities"))
	if strings.Join(again.Warnings, "\n") != strings.Join(pkg.Warnings, "\n") {
		t.Error("warnings are not in a stable order")
	}
}

func TestMissingFileWarningsAreCapped(t *testing.T) {
	var files strings.Builder
	for i := range 50 {
		files.WriteString(`<file href="f` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `.js"/>`)
	}
	m := `<manifest identifier="m" ` + coursetest.NS12 + `><metadata><schemaversion>1.2</schemaversion></metadata>
	<organizations default="o"><organization identifier="o"><title>T</title>
	<item identifier="i" identifierref="r"><title>I</title></item></organization></organizations>
	<resources><resource identifier="r" type="webcontent" adlcp:scormtype="sco" href="a.html">` + files.String() + `</resource></resources></manifest>`
	pkg := mustParse(t, coursetest.SCORMFS(m, "a.html"))
	if len(pkg.Warnings) != maxFileWarnings+1 || !strings.Contains(pkg.Warnings[maxFileWarnings], "30 more declared files") {
		t.Errorf("%d warnings, last %q", len(pkg.Warnings), pkg.Warnings[len(pkg.Warnings)-1])
	}
	if len(pkg.Files) != 50 {
		t.Errorf("files %d", len(pkg.Files))
	}
}

func TestDetect(t *testing.T) {
	if !Detect(coursetest.SCORMFS(manifest11)) {
		t.Error("root manifest not detected")
	}
	if !Detect(fstest.MapFS{"ImsManifest.XML": {Data: []byte("x")}}) {
		t.Error("case-different manifest name not detected")
	}
	if Detect(fstest.MapFS{"course/imsmanifest.xml": {Data: []byte("x")}}) {
		t.Error("manifest in a subfolder must not be detected")
	}
	if Detect(fstest.MapFS{"index.html": {Data: []byte("x")}}) {
		t.Error("no manifest detected")
	}
}

// TestZip runs a fixture through archive/zip, the FS the import job actually uses.
func TestZip(t *testing.T) {
	zr := coursetest.ZipReader(t, coursetest.Lookup("scorm12_single").Files)
	if !Detect(zr) {
		t.Fatal("zip not detected")
	}
	pkg, err := Parse(zr)
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Root.Children[0].LaunchURL != "index.html" || len(pkg.Warnings) != 1 {
		t.Errorf("zip parse %+v %q", pkg.Root.Children[0], pkg.Warnings)
	}
}

func TestEncodings(t *testing.T) {
	latin := strings.Replace(manifest11, `<?xml version="1.0"?>`, `<?xml version="1.0" encoding="ISO-8859-1"?>`, 1)
	latin = strings.Replace(latin, "Legacy Course", "Cours d'\xe9t\xe9", 1)
	if pkg := mustParse(t, coursetest.SCORMFS(latin, "lesson.htm")); pkg.Title != "Cours d'été" {
		t.Errorf("latin-1 title %q", pkg.Title)
	}
	// UTF-16 LE with BOM, as Windows tools write it.
	src := strings.Replace(manifest11, `<?xml version="1.0"?>`, `<?xml version="1.0" encoding="UTF-16"?>`, 1)
	u16 := []byte{0xFF, 0xFE}
	for _, r := range src {
		u16 = append(u16, byte(r), byte(r>>8))
	}
	if pkg := mustParse(t, coursetest.SCORMFS(string(u16), "lesson.htm")); pkg.Title != "Legacy Course" {
		t.Errorf("utf-16 title %q", pkg.Title)
	}
	bom := "\xEF\xBB\xBF" + manifest11
	mustParse(t, coursetest.SCORMFS(bom, "lesson.htm"))
}

// TestFatal checks that every fatal problem wraps course.ErrInvalidPackage and names it.
func TestFatal(t *testing.T) {
	item := func(orgs, res string) string {
		return `<manifest identifier="m" ` + coursetest.NS12 + `><metadata><schemaversion>1.2</schemaversion></metadata>` +
			orgs + `<resources>` + res + `</resources></manifest>`
	}
	r1 := `<resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="a.html"/>`
	deep := strings.Repeat("<item identifier='x'>", MaxDepth+1)
	cases := []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"bad XML", coursetest.SCORMFS(`<manifest identifier="m"><organizations></manifest>`), "imsmanifest.xml is not valid XML"},
		{"not XML at all", coursetest.SCORMFS("PK\x03\x04 this is a zip"), "imsmanifest.xml is not valid XML"},
		{"empty manifest file", coursetest.SCORMFS(""), "no root element"},
		{"wrong root", coursetest.SCORMFS(`<html/>`), "root element is <html>, expected <manifest>"},
		{"no manifest", fstest.MapFS{"index.html": {Data: []byte(coursetest.Page)}}, "no imsmanifest.xml at the package root"},
		{"manifest only in a subfolder", fstest.MapFS{
			"course/imsmanifest.xml":          {Data: []byte(manifest11)},
			"course/deeper/x/imsmanifest.xml": {Data: []byte(manifest11)},
			"__MACOSX/._imsmanifest.xml":      {Data: []byte("junk")},
		}, "imsmanifest.xml found only at course/imsmanifest.xml; it must be at the package root"},
		{"no organizations element", coursetest.SCORMFS(item(``, r1)), "has no <organization>"},
		{"empty organizations", coursetest.SCORMFS(item(`<organizations default="o"/>`, r1)), "has no <organization>"},
		{"organization without items", coursetest.SCORMFS(item(`<organizations default="o"><organization identifier="o"><title>T</title></organization></organizations>`, r1)),
			`organization "o" has no items`},
		{"item references missing resource", coursetest.SCORMFS(item(`<organizations><organization identifier="o">
			<item identifier="i1" identifierref="nope"><title>x</title></item></organization></organizations>`, r1)),
			`item "i1" references resource "nope", which is not declared`},
		{"duplicate item ids", coursetest.SCORMFS(item(`<organizations><organization identifier="o">
			<item identifier="i1" identifierref="r1"><title>x</title></item>
			<item identifier="i1 " identifierref="r1"><title>y</title></item></organization></organizations>`, r1)),
			`duplicate identifier "i1"`},
		{"item id equals organization id", coursetest.SCORMFS(item(`<organizations><organization identifier="o">
			<item identifier="o" identifierref="r1"><title>x</title></item></organization></organizations>`, r1)),
			`duplicate identifier "o"`},
		{"duplicate resource ids", coursetest.SCORMFS(item(`<organizations><organization identifier="o">
			<item identifier="i1" identifierref="r1"><title>x</title></item></organization></organizations>`, r1+r1)),
			`duplicate resource identifier "r1"`},
		{"item without identifier", coursetest.SCORMFS(item(`<organizations><organization identifier="o">
			<item identifierref="r1"><title>Lost</title></item></organization></organizations>`, r1)),
			`has no identifier (title "Lost")`},
		{"XXE doctype", coursetest.SCORMFS(`<?xml version="1.0"?><!DOCTYPE manifest [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><manifest identifier="&xxe;"/>`),
			"DOCTYPE declares entities"},
		{"billion laughs", coursetest.SCORMFS(`<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><manifest identifier="&lol2;"/>`),
			"DOCTYPE declares entities"},
		{"undeclared entity", coursetest.SCORMFS(`<manifest identifier="&foo;"/>`), "not valid XML"},
		{"too deep", coursetest.SCORMFS(`<manifest identifier="m"><organizations><organization identifier="o">` + deep), "nested deeper than 200"},
		{"too large", coursetest.SCORMFS(`<manifest identifier="m">` + strings.Repeat(" ", MaxManifestBytes) + `</manifest>`), "larger than 10485760 bytes"},
		{"javascript launch", coursetest.SCORMFS(item(`<organizations><organization identifier="o">
			<item identifier="i1" identifierref="r1"><title>x</title></item></organization></organizations>`,
			`<resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="javascript:alert(1)"/>`)),
			`only package files and http(s) URLs can be launched`},
		{"unsupported encoding", coursetest.SCORMFS(`<?xml version="1.0" encoding="EBCDIC"?><manifest/>`), "unsupported character encoding"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.fsys)
			coursetest.WantInvalid(t, err, c.want)
		})
	}
}

// TestPlainDoctypeAllowed: a DOCTYPE without entity declarations is harmless and accepted.
func TestPlainDoctypeAllowed(t *testing.T) {
	m := strings.Replace(manifest11, `<?xml version="1.0"?>`, `<?xml version="1.0"?><!DOCTYPE manifest>`, 1)
	mustParse(t, coursetest.SCORMFS(m, "lesson.htm"))
}

func TestApplyParameters(t *testing.T) {
	cases := []struct{ url, params, want string }{
		{"a.html", "", "a.html"},
		{"a.html", "x=1", "a.html?x=1"},
		{"a.html", "?x=1", "a.html?x=1"},
		{"a.html", "&x=1", "a.html?x=1"},
		{"a.html", "?&x=1", "a.html?x=1"},
		{"a.html?y=2", "x=1", "a.html?y=2&x=1"},
		{"a.html?y=2", "?x=1", "a.html?y=2&x=1"},
		{"a.html?", "x=1", "a.html?x=1"},
		{"a.html", "#p2", "a.html#p2"},
		{"a.html#p1", "#p2", "a.html#p1"},
		{"a.html#p1", "x=1", "a.html?x=1#p1"},
		{"a.html", "x=1#p3", "a.html?x=1#p3"},
		{"https://h/x?q=1", "?r=2", "https://h/x?q=1&r=2"},
	}
	for _, c := range cases {
		if got := applyParameters(c.url, c.params); got != c.want {
			t.Errorf("applyParameters(%q, %q) = %q, want %q", c.url, c.params, got, c.want)
		}
	}
}

func TestResolveRef(t *testing.T) {
	cases := []struct {
		base, ref, want string
		escaped         bool
	}{
		{"", "index.html", "index.html", false},
		{"content/", "a/b.html", "content/a/b.html", false},
		{"content/", "../x.html", "x.html", false},
		{"content/", "../../x.html", "x.html", true},
		{"content/", "/root.html", "root.html", false},
		{"content/", "a//b/./c.html?x=1#f", "content/a/b/c.html?x=1#f", false},
		{"content/", "http://h/a.html", "http://h/a.html", false},
		{"content/", "//cdn.example.com/a.js", "//cdn.example.com/a.js", false},
		{"https://h/c/", "../d/e.html", "https://h/d/e.html", false},
		{"", "C:/course/a.html", "C:/course/a.html", false},
		{"content/", "%2e%2e/%2E%2e/x.html", "x.html", true},
		{"content/", ".%2e/a%2e%2e/x.html", "a%2e%2e/x.html", false},
	}
	for _, c := range cases {
		got, esc := resolveRef(c.base, c.ref)
		if got != c.want || esc != c.escaped {
			t.Errorf("resolveRef(%q, %q) = %q, %v; want %q, %v", c.base, c.ref, got, esc, c.want, c.escaped)
		}
	}
}

func TestLenientInput(t *testing.T) {
	m := `<manifest identifier="m" ` + coursetest.NS12 + `><metadata><schemaversion>1.2</schemaversion></metadata>
	<organizations default="o"><organization identifier="o"><title>T</title>
	<item identifier="i" identifierref="r" isvisible="yes"><title>I</title><adlcp:masteryscore>high</adlcp:masteryscore></item></organization></organizations>
	<resources xml:base="content"><resource identifier="r" type="webcontent" adlcp:ScormType="SCO" href="sub\page.html"><file href="sub\page.html"/></resource></resources></manifest>`
	pkg := mustParse(t, coursetest.SCORMFS(m, "content/sub/page.html"))
	it := find(t, pkg, "i")
	if it.LaunchURL != "content/sub/page.html" || it.ScormType != "sco" || !it.Visible || it.MasteryScore != nil {
		t.Errorf("item %+v", it)
	}
	for _, w := range []string{`xml:base "content" does not end with "/"`, "backslashes", `isvisible="yes"`, `masteryscore "high" is not a number`} {
		if !hasWarning(pkg, w) {
			t.Errorf("no warning %q in %q", w, pkg.Warnings)
		}
	}
	if hasWarning(pkg, "missing") {
		t.Errorf("file wrongly reported missing: %q", pkg.Warnings)
	}
}

func TestCaseMismatchHint(t *testing.T) {
	pkg := mustParse(t, coursetest.SCORMFS(manifest11, "Lesson.htm"))
	if !hasWarning(pkg, "Lesson.htm exists, but names are case-sensitive") {
		t.Errorf("warnings %q", pkg.Warnings)
	}
}

// TestObjectiveIDWhitespace checks that objective identifiers (anyURI) are compared as ADL's
// LMS compares them: %20 decoded, trimmed, inner whitespace collapsed (ADL OB-02a, OB-12a).
func TestObjectiveIDWhitespace(t *testing.T) {
	tests := []struct{ in, want string }{
		{"obj1", "obj1"},
		{" ob%20j%201     ", "ob j 1"},
		{"    ob%20%20%20j%20%201  ", "ob j 1"},
		{"  %20obj%20%201%20  ", "obj 1"},
		{"gObj\t-\n OB02b", "gObj - OB02b"},
		{"urn:x%2Fy", "urn:x%2Fy"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := collapseID(tt.in); got != tt.want {
			t.Errorf("collapseID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	m := `<manifest identifier="m" ` + coursetest.NS2004 + `><metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
	<organizations default="o"><organization identifier="o"><title>T</title>
	<item identifier="i" identifierref="r"><title>I</title><imsss:sequencing>
	<imsss:sequencingRules><imsss:preConditionRule><imsss:ruleConditions><imsss:ruleCondition condition="satisfied" referencedObjective="  ob%20%20j " /></imsss:ruleConditions><imsss:ruleAction action="skip"/></imsss:preConditionRule></imsss:sequencingRules>
	<imsss:objectives><imsss:primaryObjective/><imsss:objective objectiveID=" ob%20j  "><imsss:mapInfo targetObjectiveID=" g%20%20one "/></imsss:objective></imsss:objectives>
	</imsss:sequencing></item></organization></organizations>
	<resources><resource identifier="r" type="webcontent" adlcp:scormType="sco" href="a.html"><file href="a.html"/></resource></resources></manifest>`
	seq := find(t, mustParse(t, coursetest.SCORMFS(m, "a.html")), "i").Sequencing
	if seq == nil || len(seq.Objectives) == 0 {
		t.Fatalf("sequencing %+v", seq)
	}
	var ids []string
	for _, o := range seq.Objectives {
		ids = append(ids, o.ID)
		for _, mi := range o.Maps {
			ids = append(ids, mi.TargetObjectiveID)
		}
	}
	ids = append(ids, seq.PreConditionRules[0].Conditions[0].ReferencedObjective)
	if got := strings.Join(ids, "|"); !strings.Contains(got, "ob j|g one|ob j") {
		t.Errorf("objective ids %q, want ob j, g one, ob j", got)
	}
}
