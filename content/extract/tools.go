package extract

import (
	"bytes"
	"encoding/base64"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/lectern-lms/lectern/course"
)

// tool is an authoring tool recognised in a package.
type tool struct {
	name    string
	content string // Details.ContentType
	// version is nil for tools without versions (the SaaS tools Rise and Elucidat);
	// otherwise the version read, or Undetected.
	version *string
	// countKey names the visible-length field (slides, lessons, pages) and count its value;
	// counted is false when the tool's data could not be read, so no guess is published.
	countKey string
	count    int
	counted  bool
	extract  func(e *extractor, fsys fs.FS, files *pkgFiles, t *tool)
}

func (t *tool) setCount(n int) { t.count, t.counted = n, true }

func ptr(s string) *string { return &s }

// versionOr returns the version found, or Undetected.
func versionOr(v string) *string {
	if v = strings.TrimSpace(v); v == "" {
		return ptr(Undetected)
	}
	return ptr(v)
}

var (
	slVersionJSON  = regexp.MustCompile(`"version"\s*:\s*"([0-9]+(?:\.[0-9]+)+)"`)
	slVersionCmt   = regexp.MustCompile(`(?i)version:\s*([0-9]+(?:\.[0-9]+)+)`)
	riseCourseData = regexp.MustCompile(`(?:courseData\s*=\s*|deserialize\(\s*)["']([A-Za-z0-9+/=_-]{16,})["']`)
)

// maxProbe caps how much of one file tool detection looks at: generator tags and version
// comments sit at the top of the file.
const maxProbe = 64 << 10

// probe reads up to maxProbe bytes of a file, or nil.
func (e *extractor) probe(fsys fs.FS, files *pkgFiles, name string) []byte {
	real, ok := files.real(name)
	if !ok {
		return nil
	}
	f, err := fsys.Open(real)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, maxProbe)
	n, _ := readFull(f, buf)
	return buf[:n]
}

func readFull(f fs.File, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// detectTool recognises the authoring tool from the package's files: characteristic paths
// first (cheap and reliable), then generator tags and comments in the launch pages. The
// order matters where tools share traits: Rise and Storyline both come from Articulate and
// both have an index.html, but only Storyline has story_content.
func (e *extractor) detectTool(fsys fs.FS, files *pkgFiles, p *course.Package) *tool {
	// The launch pages' heads carry generator tags and version comments.
	var heads []byte
	for i, a := range p.Launchable() {
		if i >= 8 {
			break
		}
		if f, ok := localFile(a.LaunchURL); ok {
			heads = append(heads, e.probe(fsys, files, f)...)
		}
	}
	// index_scorm.html is Captivate's SCORM launch page, a001index.html Lectora's.
	for _, n := range []string{"index.html", "index_lms.html", "index_scorm.html", "a001index.html", "scormcontent/index.html", "story.html"} {
		heads = append(heads, e.probe(fsys, files, n)...)
	}
	lh := bytes.ToLower(heads)

	switch {
	case files.has("story_content/data.js") || files.has("html5/data/js/data.js") || files.has("story.html") ||
		files.has("story_html5.html") || files.anyContains("story_content/"):
		t := &tool{name: "Articulate Storyline", content: ContentStoryline, countKey: "slides", extract: storyline}
		v := ""
		for _, n := range []string{"html5/data/js/data.js", "story_content/data.js"} {
			if m := slVersionJSON.FindSubmatch(e.probe(fsys, files, n)); m != nil {
				v = string(m[1])
				break
			}
		}
		if v == "" {
			if m := slVersionCmt.FindSubmatch(e.probe(fsys, files, "story.html")); m != nil {
				v = string(m[1])
			}
		}
		t.version = versionOr(v)
		return t
	case riseCourseData.Match(heads) || bytes.Contains(lh, []byte("rise 360")) || files.has("scormcontent/lib/main.bundle.js"):
		// Rise 360 is a hosted service that publishes no version number.
		return &tool{name: "Articulate Rise", content: ContentRise, countKey: "lessons", extract: rise}
	case files.has("assets/js/cpm.js") || files.has("assets/js/cpxhrloader.js") || e.isCaptivateProject(fsys, files):
		t := &tool{name: "Adobe Captivate", content: ContentCaptivate, countKey: "slides", extract: captivate}
		t.version = versionOr(str(e.captivateProject(fsys, files), "generatorVersion"))
		return t
	case bytes.Contains(lh, []byte("created with ispring")) || bytes.Contains(lh, []byte("ispring")) || files.anyContains("ispring"):
		t := &tool{name: "iSpring", content: ContentISpring, countKey: "slides", extract: ispring}
		v := ""
		if m := ispringVersion.FindSubmatch(heads); m != nil {
			v = string(m[1])
		}
		t.version = versionOr(v)
		return t
	case bytes.Contains(lh, []byte("lectora")) || files.anyContains("trivantis"):
		t := &tool{name: "Lectora", content: ContentLectora, countKey: "pages", extract: lectora}
		v := ""
		if m := lectoraVersion.FindSubmatch(heads); m != nil {
			v = strings.Join(strings.Fields(string(m[1])), "")
		}
		t.version = versionOr(v)
		return t
	case bytes.Contains(lh, []byte("elucidat")) || files.anyContains("elucidat"):
		// Elucidat, like Rise, is hosted and has no versions.
		return &tool{name: "Elucidat", content: ContentElucidat, countKey: "pages", extract: elucidat}
	}
	return nil
}

// storyline reads Storyline's player data (html5/data/js/data.js, or story_content/data.js
// in older output): scenes and their slides, each slide's text from its own
// globalProvideData('slide', …) file named after the slide id, and quiz questions from it.
// Visible slides are those of learner scenes (the player's message and prompt scenes are
// not) that are not hidden; a question-bank draw counts the slides it draws, not the bank.
func storyline(e *extractor, fsys fs.FS, files *pkgFiles, t *tool) {
	var dataFile string
	for _, n := range []string{"html5/data/js/data.js", "story_content/data.js"} {
		if r, ok := files.real(n); ok {
			dataFile = r
			break
		}
	}
	if dataFile == "" {
		e.warn("Storyline data file not found; slide structure not read")
		return
	}
	raw, err := e.readFile(fsys, dataFile)
	if err != nil {
		e.warn("Storyline %s: %v", dataFile, err)
		return
	}
	v, ok := unwrapJSCall(raw, "globalProvideData")
	data, _ := v.(map[string]any)
	if !ok || data == nil {
		e.warn("Storyline %s: data not readable", dataFile)
		return
	}
	dir := path.Dir(dataFile)
	visible := 0
	var headings headingTrail
	for _, sc := range arr(data, "scenes") {
		scene, _ := sc.(map[string]any)
		if scene == nil {
			continue
		}
		sceneID := str(scene, "id")
		if strings.HasPrefix(sceneID, "MsgScene") || strings.HasPrefix(sceneID, "PromptScene") || truthy(scene["hidden"]) {
			continue
		}
		sceneTitle := stripTags(str(scene, "title", "lmsId", "id"))
		for _, sl := range arr(scene, "slides") {
			slide, _ := sl.(map[string]any)
			if slide == nil || truthy(slide["hidden"]) {
				continue
			}
			if k := str(slide, "kind"); k == "slidedraw" || k == "slidebankdraw" {
				n, _ := num(slide, "drawCount", "count")
				visible += n
				continue
			}
			visible++
			title := stripTags(str(slide, "title", "lmsId", "id"))
			var parts []string
			if id := str(slide, "id"); id != "" && !strings.ContainsAny(id, "/\\") {
				short := id[strings.LastIndexByte(id, '.')+1:]
				if sf, ok := files.real(path.Join(dir, short+".js")); ok {
					if sraw, err := e.readFile(fsys, sf); err == nil {
						if sv, ok := unwrapJSCall(sraw, "globalProvideData"); ok {
							collectText(sv, &parts, map[string]bool{title: true}, 0)
							e.findQuestions(sv, 0)
						}
					}
				}
			}
			// A slide with no readable text still has a title worth finding. Ids stand in for
			// missing titles in the location only: they are no headings.
			text := strings.Join(parts, "\n")
			heads := []string{stripTags(str(scene, "title")), stripTags(str(slide, "title"))}
			e.addHeaded(sceneTitle+" > "+title, headings.next(heads, text), text)
		}
	}
	// Quiz data kept in data.js itself (question banks) is searched for questions too.
	e.findQuestions(data["quizzes"], 0)
	t.setCount(visible)
}

// rise decodes the course JSON Rise embeds in its index.html (base64 in window.courseData or
// a deserialize("…") call) and extracts one section per lesson, "Section > Lesson" when the
// lesson follows a section header. Section headers are navigation, not lessons, so they are
// not counted; knowledge-check and quiz questions become interactions.
func rise(e *extractor, fsys fs.FS, files *pkgFiles, t *tool) {
	var course map[string]any
	for _, n := range []string{"scormcontent/index.html", "index.html", "content/index.html"} {
		real, ok := files.real(n)
		if !ok {
			continue
		}
		raw, err := e.readFile(fsys, real)
		if err != nil {
			continue
		}
		m := riseCourseData.FindSubmatch(raw)
		if m == nil {
			continue
		}
		dec, err := base64.StdEncoding.DecodeString(string(m[1]))
		if err != nil {
			dec, err = base64.URLEncoding.DecodeString(string(m[1]))
		}
		if err != nil {
			e.warn("Rise %s: course data is not base64", real)
			continue
		}
		v, ok := parseJSON(dec)
		if !ok {
			e.warn("Rise %s: course data is not JSON", real)
			continue
		}
		root, _ := v.(map[string]any)
		if c, ok := root["course"].(map[string]any); ok {
			root = c
		}
		course = root
		break
	}
	if course == nil {
		e.warn("Rise course data not found; lessons not read")
		return
	}
	if t := stripTags(str(course, "title")); t != "" && e.res.Title == "" {
		e.res.Title = t
	}
	lessons, section := 0, ""
	var headings headingTrail
	for _, l := range arr(course, "lessons") {
		lesson, _ := l.(map[string]any)
		if lesson == nil {
			continue
		}
		title := stripTags(str(lesson, "title"))
		if str(lesson, "type") == "section" {
			section = title
			continue
		}
		if truthy(lesson["hidden"]) {
			continue
		}
		lessons++
		loc, heads := title, []string{title}
		if section != "" {
			loc, heads = section+" > "+title, []string{section, title}
		}
		var parts []string
		collectText(lesson["description"], &parts, map[string]bool{}, 0)
		if d := stripTags(str(lesson, "description")); d != "" {
			parts = append(parts, d)
		}
		collectText(lesson["items"], &parts, map[string]bool{title: true}, 0)
		text := strings.Join(parts, "\n")
		e.addHeaded(loc, headings.next(heads, text), text)
		e.findQuestions(lesson["items"], 0)
	}
	t.setCount(lessons)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// elucidat reads the project JSON of an Elucidat export. This is a best guess: no published
// Elucidat package was found in public repositories to model it on (only courses hosted at
// learning.elucidat.com, whose page ids look like pa_5c9126fe3b767_p15577f075e9), so the file
// layout and keys below are unconfirmed.
//
// It reads any .json file holding a "pages" list: one section per page, "Chapter > Page" when the page names its chapter. Hidden
// pages and pages marked as excluded are not counted; a question pool page that draws n of
// its questions counts n pages.
func elucidat(e *extractor, fsys fs.FS, files *pkgFiles, t *tool) {
	for _, p := range files.paths {
		if !strings.HasSuffix(strings.ToLower(p), ".json") {
			continue
		}
		raw, err := e.readFile(fsys, p)
		if err != nil {
			continue
		}
		v, ok := parseJSON(raw)
		root, _ := v.(map[string]any)
		if !ok || root == nil {
			continue
		}
		pages := arr(root, "pages")
		if pages == nil {
			continue
		}
		count := 0
		var headings headingTrail
		for _, pg := range pages {
			page, _ := pg.(map[string]any)
			if page == nil || truthy(page["hidden"]) || truthy(page["excluded"]) {
				continue
			}
			if n, ok := num(page, "draw", "drawCount"); ok {
				count += n
			} else {
				count++
			}
			title := stripTags(str(page, "name", "title"))
			loc, heads := title, []string{title}
			if ch := stripTags(str(page, "chapter", "section")); ch != "" {
				loc, heads = ch+" > "+title, []string{ch, title}
			}
			var parts []string
			collectText(page, &parts, map[string]bool{title: true}, 0)
			text := strings.Join(parts, "\n")
			e.addHeaded(loc, headings.next(heads, text), text)
			e.findQuestions(page, 0)
		}
		t.setCount(count)
		return
	}
	e.warn("Elucidat project data not found; page count not read")
}
