package engineapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/coursetest"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// A SCORM 1.2 package that ships its own schema for the content-packaging namespace (written
// here for the test: organizations before resources) and names it in xsi:schemaLocation.
const shippedXSD = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  targetNamespace="http://www.imsproject.org/xsd/imscp_rootv1p1p2" elementFormDefault="qualified">
  <xs:complexType name="open"><xs:sequence><xs:any namespace="##any" processContents="lax" minOccurs="0" maxOccurs="unbounded"/></xs:sequence>
    <xs:anyAttribute namespace="##any" processContents="lax"/></xs:complexType>
  <xs:element name="manifest"><xs:complexType><xs:sequence>
    <xs:element name="metadata" type="open" minOccurs="0"/>
    <xs:element name="organizations" type="open"/>
    <xs:element name="resources" type="open"/>
  </xs:sequence><xs:attribute name="identifier" type="xs:ID" use="required"/><xs:anyAttribute namespace="##other" processContents="lax"/></xs:complexType></xs:element>
</xs:schema>`

func shippedSchemaPackage(t *testing.T, resourcesFirst bool) []byte {
	orgs := `<organizations default="O"><organization identifier="O"><title>Shipped</title>
      <item identifier="I" identifierref="R"><title>Page</title></item></organization></organizations>`
	res := `<resources><resource identifier="R" type="webcontent" adlcp:scormtype="sco" href="index.html"><file href="index.html"/></resource></resources>`
	body := orgs + res
	if resourcesFirst {
		body = res + orgs
	}
	manifest := `<?xml version="1.0"?>
<manifest identifier="shipped" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.imsproject.org/xsd/imscp_rootv1p1p2 schemas/cp.xsd">
  ` + body + `
</manifest>`
	return servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifest, "schemas/cp.xsd": shippedXSD, "index.html": "<html/>"})
}

// TestValidateManifestsUsingXsd shows the setting's effect through HTTP: with the default
// (true) a SCORM manifest that breaks its schema is refused with a message naming the
// violation, whether the schema comes from the schema directory (SCORM 2004, from
// shared/conformance/schemas) or from the package itself (SCORM 1.2); set to false, the same
// packages import. A valid manifest imports either way, validated.
func TestValidateManifestsUsingXsd(t *testing.T) {
	schemas := testenv.SharedConformance(t, "schemas")
	valid2004 := coursetest.Lookup("scorm2004_4th").Files
	invalid2004 := coursetest.Lookup("scorm2004_4th").Files
	invalid2004["imsmanifest.xml"] = strings.Replace(invalid2004["imsmanifest.xml"],
		`identifier="R_QUIZ" type="webcontent" adlcp:scormType="sco"`, `identifier="R_QUIZ" type="webcontent" adlcp:scormType="quiz"`, 1)
	if invalid2004["imsmanifest.xml"] == valid2004["imsmanifest.xml"] {
		t.Fatal("the fixture changed; the test no longer breaks its manifest")
	}
	zip2004 := func(files map[string]string) []byte { return servertest.ZipOf(t, files) }

	for name, cfg := range servertest.Modes(t) {
		t.Run(name, func(t *testing.T) {
			c := cfg(t)
			c.SchemaDir = schemas
			e := servertest.Start(t, c)
			e.CreateTenant("xsdyes", true)
			e.CreateTenant("xsdno", true)
			e.Expect(e.Do("PUT", "/engine/api/v1/xsdno/configuration/ValidateManifestsUsingXsd", servertest.Root, map[string]any{"value": "false"}),
				204, "turn XSD validation off")
			imp := func(tn, course string, pkg []byte) servertest.ImportResult {
				return e.WaitJob(tn, e.Upload(tn, "course="+url.QueryEscape(course), pkg, course+".zip"))
			}

			// YES (the default): the broken manifests are refused, naming the violation.
			res := imp("xsdyes", "bad2004", zip2004(invalid2004))
			if res.Status != "ERROR" {
				t.Fatalf("invalid SCORM 2004 manifest imported with validation on: %+v", res)
			}
			t.Logf("refused: %s", res.Message)
			for _, want := range []string{"imsmanifest.xml does not conform", `adlcp:scormType="quiz"`, "enumeration"} {
				if !strings.Contains(res.Message, want) {
					t.Errorf("message %q does not contain %q", res.Message, want)
				}
			}
			res = imp("xsdyes", "bad12", shippedSchemaPackage(t, true))
			if res.Status != "ERROR" || !strings.Contains(res.Message, "element <resources> is not allowed here; expected <metadata> or <organizations>") {
				t.Fatalf("SCORM 1.2 manifest against the schema it ships: %+v", res)
			}
			// Valid manifests import, and were validated (no "not validated" warning).
			for course, pkg := range map[string][]byte{"good2004": zip2004(valid2004), "good12": shippedSchemaPackage(t, false)} {
				res = imp("xsdyes", course, pkg)
				if res.Status != "COMPLETE" {
					t.Fatalf("%s: valid manifest refused: %+v", course, res)
				}
				for _, w := range res.ParserWarnings {
					if strings.Contains(w, "not validated") {
						t.Errorf("%s: %q", course, w)
					}
				}
			}

			// NO: the same broken manifests import.
			for course, pkg := range map[string][]byte{"bad2004": zip2004(invalid2004), "bad12": shippedSchemaPackage(t, true)} {
				if res := imp("xsdno", course, pkg); res.Status != "COMPLETE" {
					t.Errorf("%s with validation off: %+v", course, res)
				}
			}
		})
	}
}
