// Package tincan parses xAPI ("Tin Can") packages described by a tincan.xml launch file at the
// package root, in the format Rustici defined for packaged xAPI content:
//
//	<tincan xmlns="http://projecttincan.com/tincan.xsd">
//	  <activities>
//	    <activity id="IRI" type="http://adlnet.gov/expapi/activities/course">
//	      <name lang="und">…</name><description lang="en-US">…</description>
//	      <launch lang="und">index.html</launch>
//	    </activity>
//	    …
//
// The course activity becomes the tree's root; every other activity with a <launch> becomes a
// child of it, in document order. Activities without a launch (objectives, interactions,
// modules described only for reporting) are not part of the tree.
package tincan

import (
	"encoding/xml"
	"fmt"
	"github.com/lectern-lms/lectern/course/internal/pkgfs"
	"io/fs"
	"net/url"
	"strings"

	"github.com/lectern-lms/lectern/course"
)

// FileName is the launch file's name; xAPI packages have it at the root.
const FileName = "tincan.xml"

// CourseType is the xAPI activity type that marks the course activity.
const CourseType = "http://adlnet.gov/expapi/activities/course"

type xmlTincan struct {
	XMLName    xml.Name      `xml:"tincan"`
	Activities []xmlActivity `xml:"activities>activity"`
}

type xmlActivity struct {
	ID           string     `xml:"id,attr"`
	Type         string     `xml:"type,attr"`
	Names        []langText `xml:"name"`
	Descriptions []langText `xml:"description"`
	Launches     []langText `xml:"launch"`
}

// langText matches both lang="…" and xml:lang="…", since packages use either.
type langText struct {
	Lang string `xml:"lang,attr"`
	Text string `xml:",chardata"`
}

// pickLang chooses the language-neutral value ("und" or no lang at all), else the first one,
// the way Rustici's importer does: a tincan.xml rarely has more than one language, and when it
// does the neutral one is meant for every learner.
func pickLang(vals []langText) string {
	for _, v := range vals {
		l := strings.ToLower(strings.TrimSpace(v.Lang))
		if (l == "" || l == "und") && strings.TrimSpace(v.Text) != "" {
			return strings.TrimSpace(v.Text)
		}
	}
	for _, v := range vals {
		if t := strings.TrimSpace(v.Text); t != "" {
			return t
		}
	}
	return ""
}

// Detect reports whether fsys has a tincan.xml at its root.
func Detect(fsys fs.FS) bool {
	fi, err := fs.Stat(fsys, FileName)
	return err == nil && !fi.IsDir()
}

// Parse reads tincan.xml at the root of fsys. Fatal problems (malformed XML, entity
// declarations, no activities, duplicate or missing ids, no launchable activity) return an
// error wrapping course.ErrInvalidPackage; the rest become Package.Warnings.
func Parse(fsys fs.FS) (*course.Package, error) {
	data, err := pkgfs.ReadCapped(fsys, FileName)
	if err != nil {
		return nil, err
	}
	if err := pkgfs.CheckXML(FileName, data); err != nil {
		return nil, err
	}
	var doc xmlTincan
	if err := pkgfs.NewDecoder(data).Decode(&doc); err != nil {
		return nil, course.Invalid("%s: %v", FileName, err)
	}
	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	warnings = append(warnings, pkgfs.JunkWarnings(fsys)...)

	if len(doc.Activities) == 0 {
		return nil, course.Invalid("%s: no <activity> elements", FileName)
	}
	seen := map[string]int{}
	courseIdx := -1
	for i := range doc.Activities {
		a := &doc.Activities[i]
		a.ID, a.Type = strings.TrimSpace(a.ID), strings.TrimSpace(a.Type)
		if a.ID == "" {
			return nil, course.Invalid("%s: activity #%d has no id", FileName, i+1)
		}
		if prev, dup := seen[a.ID]; dup {
			return nil, course.Invalid("%s: activity id %q is used by activities #%d and #%d", FileName, a.ID, prev+1, i+1)
		}
		seen[a.ID] = i
		if !isIRI(a.ID) {
			warn("%s: activity id %q is not an absolute IRI; xAPI statements about it will be rejected by strict LRSs", FileName, a.ID)
		}
		if a.Type == CourseType {
			if courseIdx < 0 {
				courseIdx = i
			} else {
				warn("%s: more than one course activity; %q is the course, %q is treated as a plain activity",
					FileName, doc.Activities[courseIdx].ID, a.ID)
			}
		}
	}
	if courseIdx < 0 {
		courseIdx = 0
		warn("%s: no activity has type %s; the first activity %q is used as the course", FileName, CourseType, doc.Activities[0].ID)
	}

	build := func(a *xmlActivity) (*course.Activity, error) {
		act := &course.Activity{
			ID:      a.ID,
			Title:   pickLang(a.Names),
			Visible: true,
			Extra:   &course.ActivityExt{ActivityType: a.Type, XAPIActivityID: a.ID},
		}
		if act.Title == "" {
			warn("%s: activity %q has no name; using its id", FileName, a.ID)
			act.Title = a.ID
		}
		if d := pickLang(a.Descriptions); d != "" {
			act.Metadata = &course.Metadata{Description: d}
		}
		if ref := pickLang(a.Launches); ref != "" {
			launch, file, notes, err := pkgfs.ResolveLaunch(ref)
			if err != nil {
				return nil, course.Invalid("%s: activity %q launch %q: %v", FileName, a.ID, ref, err)
			}
			for _, n := range notes {
				warn("%s: activity %q launch %q: %s", FileName, a.ID, ref, n)
			}
			if file != "" && !pkgfs.FileExists(fsys, file) {
				warn("%s: activity %q launch file %q is not in the package", FileName, a.ID, file)
			}
			act.LaunchURL = launch
		} else if len(a.Launches) > 0 {
			warn("%s: activity %q has an empty <launch>; ignored", FileName, a.ID)
		}
		return act, nil
	}

	root, err := build(&doc.Activities[courseIdx])
	if err != nil {
		return nil, err
	}
	for i := range doc.Activities {
		if i == courseIdx || len(doc.Activities[i].Launches) == 0 {
			continue
		}
		child, err := build(&doc.Activities[i])
		if err != nil {
			return nil, err
		}
		if child.LaunchURL != "" {
			root.Children = append(root.Children, child)
		}
	}
	pkg := &course.Package{
		Standard:       course.XAPI,
		Identifier:     root.ID,
		Title:          root.Title,
		XAPIActivityID: root.ID,
		Root:           root,
		Warnings:       warnings,
	}
	pkg.Metadata = &course.Metadata{Title: root.Title}
	if root.Metadata != nil {
		pkg.Metadata.Description = root.Metadata.Description
	}
	launchable := pkg.Launchable()
	if len(launchable) == 0 {
		return nil, course.Invalid("%s: no activity has a <launch> location", FileName)
	}
	for _, a := range launchable {
		if _, f, _, err := pkgfs.ResolveLaunch(a.LaunchURL); err == nil && f != "" {
			pkg.Files = append(pkg.Files, f)
		}
	}
	if pkg.Warnings == nil {
		pkg.Warnings = []string{}
	}
	return pkg, nil
}

// isIRI reports whether s is an absolute IRI: a scheme and something after it, no spaces.
func isIRI(s string) bool {
	if strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && (u.Opaque != "" || u.Host != "" || u.Path != "")
}
