package xsd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lectern-lms/lectern/course/coursetest"
	"github.com/lectern-lms/lectern/internal/testenv"
)

const testNS = "urn:lectern:test"

// testSchema uses the constructs the standards' schemas use: sequence and choice with
// min/maxOccurs, element refs, simple types with enumerations, patterns and bounds, required
// and optional attributes, an import of another namespace by an absolute URL (resolved to the
// file beside it) and lax and skip wildcards.
const testSchema = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns="urn:lectern:test" xmlns:o="urn:lectern:other"
  targetNamespace="urn:lectern:test" elementFormDefault="qualified">
  <xs:import namespace="urn:lectern:other" schemaLocation="https://schemas.example.com/v1/other.xsd"/>
  <xs:element name="title" type="xs:string"/>
  <xs:simpleType name="kind"><xs:restriction base="xs:token">
    <xs:enumeration value="sco"/><xs:enumeration value="asset"/></xs:restriction></xs:simpleType>
  <xs:simpleType name="code"><xs:restriction base="xs:string"><xs:pattern value="[A-Z]{3}-[0-9]+"/></xs:restriction></xs:simpleType>
  <xs:simpleType name="score"><xs:restriction base="xs:decimal"><xs:minInclusive value="0"/><xs:maxInclusive value="1"/></xs:restriction></xs:simpleType>
  <xs:element name="root"><xs:complexType><xs:sequence>
    <xs:element ref="title"/>
    <xs:element name="code" type="code" minOccurs="0"/>
    <xs:choice minOccurs="1" maxOccurs="2">
      <xs:element name="a"/>
      <xs:element name="b"/>
    </xs:choice>
    <xs:element ref="o:note" minOccurs="0"/>
    <xs:any namespace="urn:elsewhere" processContents="lax" minOccurs="0" maxOccurs="unbounded"/>
  </xs:sequence>
  <xs:attribute name="id" type="xs:ID" use="required"/>
  <xs:attribute name="kind" type="kind"/>
  <xs:attribute name="score" type="score"/>
  <xs:anyAttribute namespace="##other" processContents="skip"/>
  </xs:complexType></xs:element>
</xs:schema>`

const otherSchema = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:lectern:other" elementFormDefault="qualified">
  <xs:element name="note"><xs:complexType><xs:attribute name="level" use="required"><xs:simpleType>
    <xs:restriction base="xs:string"><xs:enumeration value="low"/><xs:enumeration value="high"/></xs:restriction>
  </xs:simpleType></xs:attribute></xs:complexType></xs:element>
</xs:schema>`

func doc(attrs, body string) string {
	return `<root xmlns="urn:lectern:test" xmlns:o="urn:lectern:other" xmlns:x="urn:elsewhere"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="urn:lectern:test schemas/test.xsd" ` +
		attrs + `>` + body + `</root>`
}

func testPackage(d string) fstest.MapFS {
	return fstest.MapFS{
		"manifest.xml":      &fstest.MapFile{Data: []byte(d)},
		"schemas/test.xsd":  &fstest.MapFile{Data: []byte(testSchema)},
		"schemas/other.xsd": &fstest.MapFile{Data: []byte(otherSchema)},
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string // substrings of the violations; none: valid
	}{
		{"valid minimal", doc(`id="r"`, `<title>T</title><a/>`), nil},
		{"valid full", doc(`id="r" kind="asset" score="0.5" x:free="anything"`,
			`<title>T</title><code>ABC-12</code><a/><b/><o:note level="high"/><x:ext><x:deep/></x:ext>`), nil},
		{"order", doc(`id="r"`, `<a/><title>T</title>`), []string{"element <a> is not allowed here; expected <title>", "cvc-complex-type"}},
		{"required element", doc(`id="r"`, `<title>T</title>`), []string{"<root>", "missing", "<a> or <b>"}},
		{"maxOccurs", doc(`id="r"`, `<title>T</title><a/><b/><a/>`), []string{"element <a> is not allowed here"}},
		{"enumeration", doc(`id="r" kind="lesson"`, `<title>T</title><a/>`), []string{`kind="lesson"`, "enumeration"}},
		{"pattern", doc(`id="r"`, `<title>T</title><code>abc</code><a/>`), []string{"cvc-"}},
		{"bound", doc(`id="r" score="1.5"`, `<title>T</title><a/>`), []string{`score="1.5"`}},
		{"required attribute", doc(``, `<title>T</title><a/>`), []string{"<root ", "required attribute"}},
		{"imported namespace", doc(`id="r"`, `<title>T</title><a/><o:note level="loud"/>`), []string{`<o:note level="loud"/>`, "enumeration"}},
		{"undeclared attribute", doc(`id="r" colour="red"`, `<title>T</title><a/>`), []string{`colour="red"`}},
	}
	v := New(nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := v.Validate(testPackage(c.doc), []byte(c.doc))
			if !rep.Validated {
				t.Fatalf("not validated: %s", rep.Unchecked)
			}
			if len(rep.Sources) != 1 || rep.Sources[0] != "package:schemas/test.xsd" {
				t.Errorf("sources = %q", rep.Sources)
			}
			var got []string
			for _, x := range rep.Violations {
				got = append(got, x.String())
			}
			all := strings.Join(got, "\n")
			if c.want == nil && len(got) > 0 {
				t.Fatalf("valid document got violations:\n%s", all)
			}
			if c.want != nil && len(got) == 0 {
				t.Fatal("no violation reported")
			}
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("violations do not contain %q:\n%s", w, all)
				}
			}
		})
	}
}

func TestUnchecked(t *testing.T) {
	d := doc(`id="r"`, `<title>T</title><a/>`)
	// No copy in the package and no directory: not validated, and the reason names the namespace.
	rep := New(nil).Validate(fstest.MapFS{"manifest.xml": &fstest.MapFile{Data: []byte(d)}}, []byte(d))
	if rep.Validated || !strings.Contains(rep.Unchecked, testNS) || !strings.Contains(rep.Unchecked, "no schema directory") {
		t.Errorf("report = %+v", rep)
	}
	dir := fstest.MapFS{"unrelated.xsd": &fstest.MapFile{Data: []byte(otherSchema)}}
	rep = New(dir).Validate(fstest.MapFS{}, []byte(d))
	if rep.Validated || !strings.Contains(rep.Unchecked, "neither in the package nor in the schema directory") {
		t.Errorf("report = %+v", rep)
	}
	rep = New(dir).Validate(nil, []byte(d))
	if rep.Validated || !strings.Contains(rep.Unchecked, "the schema directory has no schema for namespace "+testNS) {
		t.Errorf("report = %+v", rep)
	}
	rep = New(nil).Validate(nil, []byte(d))
	if rep.Validated || !strings.Contains(rep.Unchecked, "no schema directory is configured") {
		t.Errorf("report = %+v", rep)
	}
	rep = New(nil).Validate(nil, []byte(`<root/>`))
	if rep.Validated || !strings.Contains(rep.Unchecked, "no namespace") {
		t.Errorf("report = %+v", rep)
	}
	rep = New(nil).Validate(nil, []byte(`<root`))
	if rep.Validated || !strings.Contains(rep.Unchecked, "cannot be read") {
		t.Errorf("report = %+v", rep)
	}
	// Hints that leave the package or name a URL are never followed.
	for _, hint := range []string{"../test.xsd", "/schemas/test.xsd", "https://example.com/test.xsd", `schemas\test.xsd`} {
		d := strings.Replace(d, "schemas/test.xsd", hint, 1)
		if rep := New(nil).Validate(testPackage(d), []byte(d)); rep.Validated {
			t.Errorf("hint %q was followed: %+v", hint, rep)
		}
	}
}

// TestDirectory finds schemas in a directory by the hint's file name, and falls back to it
// when a package's own copy cannot be compiled. Compiled directory schemas are reused.
func TestDirectory(t *testing.T) {
	dir := fstest.MapFS{
		"lectern/test.xsd":  &fstest.MapFile{Data: []byte(testSchema)},
		"lectern/other.xsd": &fstest.MapFile{Data: []byte(otherSchema)},
	}
	v := New(dir)
	d := doc(`id="r" kind="lesson"`, `<title>T</title><a/>`)
	for _, pkg := range []fstest.MapFS{
		nil,
		{"schemas/test.xsd": &fstest.MapFile{Data: []byte(`<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:bogus/></xs:schema>`)}},
	} {
		rep := v.Validate(pkg, []byte(d))
		if !rep.Validated || len(rep.Violations) != 1 || rep.Sources[0] != "directory:lectern/test.xsd" {
			t.Errorf("report = %+v", rep)
		}
	}
	if len(v.cache) != 1 {
		t.Errorf("%d compiled combinations cached, want 1", len(v.cache))
	}
}

// TestStandardSchemas validates real documents against the standards' schemas in
// shared/conformance/schemas: the cmi5 LMS test suite's course structures (only 207-1 breaks
// the schema) and the SCORM 2004 fixtures.
func TestStandardSchemas(t *testing.T) {
	v := New(os.DirFS(testenv.SharedConformance(t, "schemas")))
	src := testenv.SharedConformance(t, "cmi5-lts/lts/pkg/src")
	files, _ := filepath.Glob(filepath.Join(src, "*.xml"))
	more, _ := filepath.Glob(filepath.Join(src, "*", "cmi5.xml"))
	files = append(files, more...)
	if len(files) < 20 {
		t.Fatalf("only %d course structures in %s", len(files), src)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rep := v.Validate(nil, data)
		if !rep.Validated {
			t.Fatalf("%s: not validated: %s", f, rep.Unchecked)
		}
		invalid := strings.Contains(f, "207-1-invalid-courseStructure")
		switch {
		case invalid && (len(rep.Violations) == 0 || !strings.Contains(rep.Violations[0].String(),
			"line 28: <courseStructure>/<au>: element <url> is not allowed here; expected <title>")):
			t.Errorf("%s: violations %v", f, rep.Violations)
		case !invalid && len(rep.Violations) > 0:
			t.Errorf("%s: valid course structure got %v", f, rep.Violations)
		}
	}
	for _, name := range []string{"scorm2004_2nd", "scorm2004_3rd", "scorm2004_4th", "scorm2004_4th_deep", "scorm2004_xmlbase"} {
		fx := coursetest.Lookup(name)
		rep := v.Validate(coursetest.MapFS(fx.Files), []byte(fx.Files["imsmanifest.xml"]))
		if !rep.Validated || len(rep.Violations) > 0 || !strings.HasPrefix(rep.Sources[0], "directory:") {
			t.Errorf("%s: %+v", name, rep)
		}
	}
	// The oddities fixture's default organization names nothing: an IDREF the schema refuses.
	fx := coursetest.Lookup("scorm2004_oddities")
	if rep := v.Validate(nil, []byte(fx.Files["IMSManifest.xml"])); len(rep.Violations) == 0 {
		t.Errorf("scorm2004_oddities: %+v", rep)
	}
}

// TestSchemaBudget refuses a package whose schemas, includes counted, add up to more than
// the compilation's byte budget, reporting the document as not validated.
func TestSchemaBudget(t *testing.T) {
	pkg := testPackage(doc(`id="r"`, `<title>T</title><a/>`))
	v := New(nil)
	v.schemaBytes = int64(len(testSchema) + len(otherSchema) + 10)
	if rep := v.Validate(pkg, pkg["manifest.xml"].Data); !rep.Validated {
		t.Fatalf("within the budget: %+v", rep)
	}
	v.schemaBytes = int64(len(testSchema) + len(otherSchema) - 10)
	if rep := v.Validate(pkg, pkg["manifest.xml"].Data); rep.Validated || !strings.Contains(rep.Unchecked, "too large") {
		t.Errorf("over the budget: %+v", rep)
	}
}

func TestUTF8Doc(t *testing.T) {
	in := []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><r>caf\xe9</r>")
	if got := string(utf8Doc(in)); got != `<?xml version="1.0"?><r>café</r>` {
		t.Errorf("got %q", got)
	}
	same := []byte(`<?xml version="1.0" encoding="UTF-8"?><r/>`)
	if got := utf8Doc(same); string(got) != string(same) {
		t.Errorf("got %q", got)
	}
}

func FuzzValidate(f *testing.F) {
	f.Add(doc(`id="r"`, `<title>T</title><a/>`))
	f.Add(doc(`id="r" kind="x"`, `<a/><title>T</title><o:note/>`))
	f.Add(`<?xml version="1.0" encoding="windows-1252"?>` + doc(``, ``))
	f.Add(`<root xmlns="urn:lectern:test" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="urn:lectern:test ../../x.xsd a b c"/>`)
	v := New(nil)
	f.Fuzz(func(t *testing.T, d string) {
		rep := v.Validate(testPackage(d), []byte(d))
		if rep.Validated == (rep.Unchecked != "") {
			t.Fatalf("inconsistent report %+v", rep)
		}
		for _, x := range rep.Violations {
			if x.Message == "" {
				t.Fatalf("violation without a message: %+v", rep)
			}
		}
	})
}
