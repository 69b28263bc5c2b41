package extract

import (
	"bytes"
	"encoding/base64"
	"io/fs"
	"path"
	"regexp"
	"sort"
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
	slVersionJSON   = regexp.MustCompile(`"version"\s*:\s*"([0-9]+(?:\.[0-9]+)+)"`)
	slVersionCmt    = regexp.MustCompile(`(?i)version:\s*([0-9]+(?:\.[0-9]+)+)`)
	captivateVer    = regexp.MustCompile(`(?i)Adobe Captivate\s*(?:version\s*)?([0-9][0-9.]*(?:\s*\([0-9.]+\))?)`)
	ispringVer      = regexp.MustCompile(`(?i)iSpring\s*(?:Suite|Presenter|QuizMaker|Pro|Free|Cam)?\s*(?:version\s*)?([0-9]+(?:\.[0-9]+)*)`)
	lectoraVer      = regexp.MustCompile(`(?i)Lectora(?:\s+(?:Inspire|Publisher|Online|Desktop|Professional))?\s*(?:v(?:ersion)?\.?\s*)?([0-9]+(?:\.[0-9]+)*)`)
	riseCourseData  = regexp.MustCompile(`(?:courseData\s*=\s*|deserialize\(\s*)["']([A-Za-z0-9+/=_-]{16,})["']`)
	captivateSlides = regexp.MustCompile(`\bslides\s*:\s*['"]([A-Za-z0-9_,]+)['"]`)
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
	for _, n := range []string{"index.html", "index_lms.html", "scormcontent/index.html", "story.html"} {
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
	case files.has("assets/js/cpm.js") || files.has("assets/js/cpxhrloader.js") || bytes.Contains(lh, []byte("adobe captivate")):
		t := &tool{name: "Adobe Captivate", content: ContentCaptivate, countKey: "slides", extract: captivate}
		v := ""
		if m := captivateVer.FindSubmatch(heads); m != nil {
			v = string(m[1])
		} else if m := captivateVer.FindSubmatch(e.probe(fsys, files, "assets/js/CPM.js")); m != nil {
			v = string(m[1])
		}
		t.version = versionOr(v)
		return t
	case bytes.Contains(lh, []byte("ispring")) || files.anyContains("ispring"):
		t := &tool{name: "iSpring", content: ContentISpring, countKey: "slides", extract: ispring}
		v := ""
		if m := ispringVer.FindSubmatch(heads); m != nil {
			v = string(m[1])
		}
		t.version = versionOr(v)
		return t
	case bytes.Contains(lh, []byte("lectora")) || files.anyContains("trivantis"):
		t := &tool{name: "Lectora", content: ContentLectora, countKey: "pages", extract: lectora}
		v := ""
		if m := lectoraVer.FindSubmatch(heads); m != nil {
			v = string(m[1])
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
			e.add(sceneTitle+" > "+title, strings.Join(parts, "\n"))
			if len(parts) == 0 {
				// A slide with no readable text still has a title worth finding.
				e.add(sceneTitle+" > "+title, title)
			}
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
		loc := title
		if section != "" {
			loc = section + " > " + title
		}
		var parts []string
		collectText(lesson["description"], &parts, map[string]bool{}, 0)
		if d := stripTags(str(lesson, "description")); d != "" {
			parts = append(parts, d)
		}
		collectText(lesson["items"], &parts, map[string]bool{title: true}, 0)
		e.add(loc, strings.Join(parts, "\n"))
		e.findQuestions(lesson["items"], 0)
	}
	t.setCount(lessons)
}

// captivate reads the project model in assets/js/CPM.js. It is a JavaScript object literal,
// not JSON, so it is read with patterns rather than decoded: the project's slide list
// (slides:'Slide1,Slide2', which holds only the slides that play, so hidden slides are not
// counted) and each slide's label (lb:'…') and accessibility text (accstr:'…'), which
// Captivate fills with the visible caption text. Question data is not read.
func captivate(e *extractor, fsys fs.FS, files *pkgFiles, t *tool) {
	real, ok := files.real("assets/js/CPM.js")
	if !ok {
		e.warn("Captivate CPM.js not found; slide structure not read")
		return
	}
	raw, err := e.readFile(fsys, real)
	if err != nil {
		e.warn("Captivate %s: %v", real, err)
		return
	}
	m := captivateSlides.FindSubmatch(raw)
	if m == nil {
		e.warn("Captivate %s: slide list not found", real)
		return
	}
	ids := strings.Split(string(m[1]), ",")
	count := 0
	for i, id := range ids {
		if id == "" {
			continue
		}
		count++
		// The slide's own object runs from "id:{" to the next slide's.
		start := bytes.Index(raw, []byte(id+":{"))
		if start < 0 {
			continue
		}
		end := len(raw)
		if i+1 < len(ids) {
			if n := bytes.Index(raw[start+1:], []byte(ids[i+1]+":{")); n >= 0 {
				end = start + 1 + n
			}
		}
		block := raw[start:end]
		label := jsField(block, "lb")
		if label == "" {
			label = id
		}
		var parts []string
		for _, s := range jsFields(block, "accstr", 500) {
			if s = stripTags(s); s != "" && s != label {
				parts = append(parts, s)
			}
		}
		e.add(label, strings.Join(append([]string{label}, parts...), "\n"))
	}
	t.setCount(count)
}

// jsField returns the first string value of key in a JS object literal.
func jsField(b []byte, key string) string {
	s := jsFields(b, key, 1)
	if len(s) == 0 {
		return ""
	}
	return stripTags(s[0])
}

// jsFields returns up to n string values of key:'…' or "key":"…" in b.
func jsFields(b []byte, key string, n int) []string {
	var out []string
	for _, pat := range [][]byte{[]byte(key + ":"), []byte(`"` + key + `":`)} {
		rest := b
		for len(out) < n {
			i := bytes.Index(rest, pat)
			if i < 0 {
				break
			}
			// The key must start a property, not end another name (tlb:, xlb:).
			if i > 0 && isIdentByte(rest[i-1]) && pat[0] != '"' {
				rest = rest[i+len(pat):]
				continue
			}
			rest = bytes.TrimLeft(rest[i+len(pat):], " ")
			if len(rest) > 0 && (rest[0] == '\'' || rest[0] == '"') {
				if s, k, ok := jsString(rest); ok {
					out = append(out, s)
					rest = rest[k:]
					continue
				}
			}
		}
	}
	return out
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

var ispringSlideFile = regexp.MustCompile(`(?i)^(?:.*/)?data/slide([0-9]+)\.(?:js|json)$`)

// ispring reads iSpring's per-slide data files (data/slideN.js or .json, JSON possibly
// behind an assignment or function call): one section per slide file ("Slide N", or the
// slide's title), questions from any question-shaped objects in them. Visible slides are the
// slide files not marked hidden. Without such files only the launch page's text is read.
func ispring(e *extractor, fsys fs.FS, files *pkgFiles, t *tool) {
	type sf struct {
		n    int
		path string
	}
	var slides []sf
	for _, p := range files.paths {
		if m := ispringSlideFile.FindStringSubmatch(p); m != nil {
			n := 0
			for _, c := range m[1] {
				n = n*10 + int(c-'0')
				if n > 1e6 {
					break
				}
			}
			slides = append(slides, sf{n, p})
		}
	}
	if len(slides) == 0 {
		e.warn("iSpring slide data not found; slide count not read")
		return
	}
	sort.Slice(slides, func(i, j int) bool { return slides[i].n < slides[j].n })
	count := 0
	for _, s := range slides {
		raw, err := e.readFile(fsys, s.path)
		if err != nil {
			e.warn("iSpring %s: %v", s.path, err)
			continue
		}
		v, ok := jsonIn(raw)
		m, _ := v.(map[string]any)
		if !ok || m == nil {
			count++
			continue
		}
		if truthy(m["hidden"]) {
			continue
		}
		count++
		title := stripTags(str(m, "title"))
		loc := "Slide " + itoa(s.n)
		if title != "" {
			loc = title
		}
		var parts []string
		collectText(m, &parts, map[string]bool{}, 0)
		e.add(loc, strings.Join(parts, "\n"))
		e.findQuestions(m, 0)
	}
	t.setCount(count)
}

// jsonIn finds the JSON value in a data script: the file itself, or what follows the first
// "=" or "(".
func jsonIn(raw []byte) (any, bool) {
	if v, ok := parseJSON(raw); ok {
		return v, true
	}
	for _, sep := range []byte{'=', '('} {
		if i := bytes.IndexByte(raw, sep); i >= 0 {
			rest := bytes.TrimLeft(raw[i+1:], " \t\r\n")
			if v, ok := jsValue(rest); ok {
				return v, true
			}
		}
	}
	return nil, false
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

// lectoraPage matches Lectora's published page files, a001_title.html, a002….
var lectoraPage = regexp.MustCompile(`(?i)^(?:.*/)?a[0-9]{3,}[a-z0-9_]*\.html?$`)

// lectora reads every published page: Lectora writes one HTML file per page (a001….html),
// with real text in the markup, so each page's text is located by its <title>. Pages count
// as visible when published; Lectora does not publish pages hidden from learners as files.
func lectora(e *extractor, fsys fs.FS, files *pkgFiles, t *tool) {
	count := 0
	for _, p := range files.paths {
		if !lectoraPage.MatchString(p) {
			continue
		}
		if e.ctx.Err() != nil {
			return
		}
		raw, err := e.readFile(fsys, p)
		if err != nil {
			e.warn("Lectora page %s: %v", p, err)
			continue
		}
		count++
		info := parseHTML(decodeText(raw))
		loc := info.Title
		if loc == "" {
			loc = path.Base(p)
		}
		e.add(loc, info.Text())
	}
	if count > 0 {
		t.setCount(count)
	} else {
		e.warn("Lectora page files not found; page count not read")
	}
}

// elucidat reads the project JSON of an Elucidat export (any .json file holding a "pages"
// list): one section per page, "Chapter > Page" when the page names its chapter. Hidden
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
			loc := title
			if ch := stripTags(str(page, "chapter", "section")); ch != "" {
				loc = ch + " > " + title
			}
			var parts []string
			collectText(page, &parts, map[string]bool{title: true}, 0)
			e.add(loc, strings.Join(parts, "\n"))
			e.findQuestions(page, 0)
		}
		t.setCount(count)
		return
	}
	e.warn("Elucidat project data not found; page count not read")
}
