package parse

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lectern-lms/lectern/course/coursetest"
	"github.com/lectern-lms/lectern/course/xsd"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// A cmi5.xml whose AU has its url before its title, which CourseStructure.xsd forbids, and a
// package that brings a schema of its own accepting anything, named by xsi:schemaLocation.
const laxCMI5 = `<courseStructure xmlns="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd lax.xsd">
  <course id="https://x.org/c"><title><langstring>C</langstring></title><description><langstring>D</langstring></description></course>
  <au id="https://x.org/a"><url>index.html</url><title><langstring>A</langstring></title><description><langstring>D</langstring></description></au>
</courseStructure>`

const laxXSD = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd">
  <xs:element name="courseStructure"><xs:complexType><xs:sequence>
    <xs:any processContents="skip" minOccurs="0" maxOccurs="unbounded"/></xs:sequence><xs:anyAttribute processContents="skip"/></xs:complexType></xs:element>
</xs:schema>`

func TestPackageWithSchemas(t *testing.T) {
	schemas := xsd.New(os.DirFS(testenv.SharedConformance(t, "schemas")))
	pkg := fstest.MapFS{"cmi5.xml": {Data: []byte(laxCMI5)}, "lax.xsd": {Data: []byte(laxXSD)}, "index.html": {Data: []byte("x")}}

	// cmi5.xml is held to the official schema whatever the package ships and whatever the
	// SCORM setting says.
	_, err := PackageWith(pkg, Options{Schemas: schemas})
	coursetest.WantInvalid(t, err, "cmi5.xml does not conform", "13.2.0.0-1", "element <url> is not allowed here; expected <title>")
	// Without schemas, the parser's own checks accept it.
	if _, err := Package(pkg); err != nil {
		t.Fatalf("without schemas: %v", err)
	}

	// SCORM manifests are validated only when ValidateManifests is set.
	fx := coursetest.Lookup("scorm2004_4th").Files
	fx["imsmanifest.xml"] = strings.Replace(fx["imsmanifest.xml"], `adlcp:scormType="sco"`, `adlcp:scormType="lesson"`, 1)
	_, err = PackageWith(coursetest.MapFS(fx), Options{Schemas: schemas, ValidateManifests: true})
	coursetest.WantInvalid(t, err, "imsmanifest.xml does not conform", `adlcp:scormType="lesson"`)
	p, err := PackageWith(coursetest.MapFS(fx), Options{Schemas: schemas})
	if err != nil {
		t.Fatalf("validation off: %v", err)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "validated") {
			t.Errorf("validation off, but a warning about it: %q", w)
		}
	}
}
