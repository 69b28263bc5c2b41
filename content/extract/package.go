package extract

import (
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"strings"

	"github.com/lectern-lms/lectern/content/extract/textnorm"
	"github.com/lectern-lms/lectern/content/extract/tools"
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/parse"
)

// listFiles lists the package's files, up to MaxFiles, leaving out the folders that hold no
// course (macOS resource forks, hidden folders).
func (e *extractor) listFiles(fsys fs.FS) *tools.Files {
	var paths []string
	n := 0
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.ctx.Err() != nil {
			return fs.SkipAll
		}
		n++
		if n > e.lim.MaxFiles {
			e.warn("the package has more than %d files; only the first were looked at", e.lim.MaxFiles)
			return fs.SkipAll
		}
		if d.IsDir() {
			if base := d.Name(); base == "__MACOSX" || (strings.HasPrefix(base, ".") && p != ".") {
				return fs.SkipDir
			}
			return nil
		}
		paths = append(paths, p)
		return nil
	})
	return tools.NewFiles(paths)
}

// pkg extracts a course package: the standard's parser (course/parse) gives the activity
// tree; a recognised authoring tool's data files give its own structure and questions; and
// every launchable page is read as HTML in any case, so a tool whose data we cannot read
// (or a tool we do not know) still yields its visible page text.
func (e *extractor) pkg(fsys fs.FS) error {
	p, err := parse.Package(fsys)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	e.res.Title = p.Title
	files := e.listFiles(fsys)
	host := &toolHost{e: e, fsys: fsys, files: files}
	tool := tools.Detect(host, files, launchFiles(p))

	pages := e.launchPages(fsys, p, tool != nil)
	if tool != nil {
		e.res.Tool = tool.Name
		e.res.Details.ContentType = tool.ContentType
		tool.Read(e.ctx, host, files)
		if e.res.Title == "" {
			e.res.Title = tool.Title
		}
		if tool.Version == nil {
			e.meta("authoring_tool_version", nil)
		} else {
			e.meta("authoring_tool_version", *tool.Version)
		}
		if tool.Counted {
			e.meta(tool.CountKey, tool.Count)
		}
	} else {
		e.res.Details.ContentType = ContentPackage
		e.meta("web_pages", pages)
	}
	e.tincanInteractions(fsys, files)
	e.qtiInteractions(fsys, files)
	return e.ctx.Err()
}

// launchPages reads each launchable activity's page as HTML, located by its navigation
// path and opening with its navigation titles (see textnorm.HeadingTrail), and returns how many pages
// it read. A page launched by several activities (every SCO of a Storyline course opens
// story.html) is read once. With a known tool the launch page is usually an empty player
// shell; its text, if any, still goes in.
func (e *extractor) launchPages(fsys fs.FS, p *course.Package, haveTool bool) int {
	seen := map[string]bool{}
	read := 0
	var headings textnorm.HeadingTrail
	// trail names the activities for the location, titles are the words a learner sees
	// (an untitled activity is named by its id, which is no heading).
	var walk func(a *course.Activity, trail, titles []string)
	walk = func(a *course.Activity, trail, titles []string) {
		if a == nil || e.ctx.Err() != nil {
			return
		}
		title := textnorm.CollapseSpace(a.Title)
		titles = append(titles[:len(titles):len(titles)], title)
		if title == "" {
			title = a.ID
		}
		trail = append(trail[:len(trail):len(trail)], title)
		if a.LaunchURL != "" {
			if file, ok := localFile(a.LaunchURL); ok && !seen[strings.ToLower(file)] {
				seen[strings.ToLower(file)] = true
				if e.launchPage(fsys, file, strings.Join(trail, " > "), titles, &headings, haveTool) {
					read++
				}
			}
		}
		for _, c := range a.Children {
			walk(c, trail, titles)
		}
	}
	walk(p.Root, nil, nil)
	return read
}

// launchPage reads one launch page. Without a tool (quiet false) a page with no text of
// its own is still a section: its navigation title is what the learner sees of it.
func (e *extractor) launchPage(fsys fs.FS, file, loc string, titles []string, headings *textnorm.HeadingTrail, quiet bool) bool {
	data, err := e.readFile(fsys, file)
	if err != nil {
		if !quiet {
			e.warn("launch page %s: %v", file, err)
		}
		return false
	}
	if k := Detect(file, data[:min(len(data), 1024)]); k != KindHTML && k != KindText {
		e.warn("launch file %s is not an HTML page (%s); its text was not read", file, k)
		return false
	}
	info := parseHTML(decodeText(data))
	if text := info.Text(); text != "" || !quiet {
		e.addHeaded(loc, headings.Next(titles, text), text)
	}
	return true
}

// localFile turns a launch URL into a package path: query and fragment dropped, escapes
// decoded; absolute URLs (content hosted elsewhere) are not in the package.
func localFile(launch string) (string, bool) {
	u, err := url.Parse(launch)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "", false
	}
	p := strings.TrimPrefix(path.Clean("/"+u.Path), "/")
	if p == "" || p == "." {
		return "", false
	}
	return p, true
}
