// Package tools recognises the authoring tool a course package was made with (Articulate
// Storyline and Rise, Adobe Captivate, iSpring, Lectora, Elucidat) and reads the structure
// the tool publishes: slides, lessons or pages with their text, the questions it keeps, its
// version and the count of what a learner sees. Each tool's layout is documented beside its
// reader, with the public packages it was modelled on.
//
// It is separate from content/extract because each tool's format is knowledge of its own
// that changes when the tools do, while extract's package walk, limits and result do not.
// The readers reach extract only through Host, so every byte they read is counted against
// the item's limits and every section they find goes through extract's text limits.
package tools

import (
	"context"
	"encoding/base64"
	"io"
	"path"
	"regexp"
	"strings"

	"github.com/lectern-lms/lectern/content/extract/jsdata"
	"github.com/lectern-lms/lectern/content/extract/textnorm"
)

// Host is what the readers need of the extraction that runs them (content/extract): the
// package's files, read within the item's limits, and a place for what they find. Sections
// and questions go to the host as they are found, not returned at the end, so that its
// limits stop a hostile package early and its warnings keep their order.
type Host interface {
	// ReadFile reads a whole package file by its real path (see Files.Real).
	ReadFile(name string) ([]byte, error)
	// Probe reads the head of a file, named in any case, or returns nil: detection only
	// needs the generator comments and version strings at the top.
	Probe(name string) []byte
	// Inflate reads a decompressing stream whole, within the limits for one stream and for
	// the item, and reports whether it could; when the stream is too large it warns,
	// naming the data by what.
	Inflate(what string, r io.Reader) ([]byte, bool)
	// PageText reads a published HTML page as the host reads any web page, so that a tool
	// whose pages are plain HTML (Lectora) gets the same text: its title and its text.
	PageText(raw []byte) (title, text string)
	// Warn records a problem that did not stop the read.
	Warn(format string, args ...any)
	// AddSection keeps one section: its location, the heading text it opens with (see
	// textnorm.HeadingTrail) and its text.
	AddSection(loc, heading, text string)
	// AddInteraction keeps one question and reports whether there is room for more, so
	// that a walk looking for questions can stop when there is not.
	AddInteraction(in Interaction) bool
}

// Tool is an authoring tool recognised in a package (Detect), and after Read what its data
// said about the package.
type Tool struct {
	// Name is the tool's name as users know it ("Articulate Storyline").
	Name string
	// ContentType is the content_type of a package made with it (the Content constants):
	// the tool, not the packaging standard, decides the shape of its metadata.
	ContentType string
	// Version is nil for tools without versions (the hosted tools Rise and Elucidat);
	// otherwise the version read, or Undetected.
	Version *string
	// CountKey names the visible-length field (slides, lessons, pages) and Count its value;
	// Counted is false when the tool's data could not be read, so that no guess is
	// published.
	CountKey string
	Count    int
	Counted  bool
	// Title is the course title the tool's data gives, or "": the package manifest's own
	// title, when it has one, comes first.
	Title string

	read func(ctx context.Context, h Host, files *Files, t *Tool)
}

// Read reads the tool's data from the package: sections and questions go to h, the title
// and count to t. It stops early when ctx is done.
func (t *Tool) Read(ctx context.Context, h Host, files *Files) {
	if t.read != nil {
		t.read(ctx, h, files, t)
	}
}

func (t *Tool) setCount(n int) { t.Count, t.Counted = n, true }

// Content types of packages made with the tools (Tool.ContentType); content/extract
// publishes them with its own.
const (
	ContentStoryline = "articulate_storyline"
	ContentRise      = "articulate_rise"
	ContentCaptivate = "adobe_captivate"
	ContentISpring   = "ispring"
	ContentLectora   = "lectora"
	ContentElucidat  = "elucidat"
)

// Undetected is the version of a tool that normally states its version when the package
// does not say which one (spec: "the string undetected when detection fails").
const Undetected = "undetected"

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
	// Generator comments as the tools write them, inside an HTML comment: the same words
	// in the page's text are not a comment.
	ispringGenerator = regexp.MustCompile(`<!--\s*Created with iSpring`)
	lectoraGenerator = regexp.MustCompile(`<!--\s*GENERATED BY:\s*Lectora`)
	// Elucidat's player is loaded from its own host by a script element.
	elucidatPlayer = regexp.MustCompile(`(?i)<script\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?//(?:[a-z0-9-]+\.)*elucidat\.com/`)
)

// isTrivantisScript matches Lectora's runtime scripts (trivantis.js,
// trivantis-pagetracking.js, …), named after its maker Trivantis.
func isTrivantisScript(base string) bool {
	return strings.HasPrefix(base, "trivantis") && strings.HasSuffix(base, ".js")
}

// Detect recognises the authoring tool from the package's structure only: player and
// runtime files at the paths the tool publishes, generator comments in the HTML comments it
// writes at the top of its pages, and the data it embeds in its launch page. A product
// name in the text, in a comment of the author's own or in a media file's name decides
// nothing: a course about iSpring is not an iSpring course. The signatures, with the public
// packages they were read from, are listed in docs/authoring-tools.md. The order matters
// where tools share traits: Rise and Storyline both come from Articulate and both have an
// index.html, but only Storyline has story_content.
//
// launch names the package files of its first launchable activities, whose heads carry
// generator tags and version comments. It returns nil when no tool is recognised.
func Detect(h Host, files *Files, launch []string) *Tool {
	var heads []byte
	for _, f := range launch {
		heads = append(heads, h.Probe(f)...)
	}
	// index_scorm.html is Captivate's SCORM launch page, a001index.html Lectora's.
	for _, n := range []string{"index.html", "index_lms.html", "index_scorm.html", "a001index.html", "scormcontent/index.html", "story.html"} {
		heads = append(heads, h.Probe(n)...)
	}

	switch {
	case files.has("story_content/data.js") || files.has("html5/data/js/data.js") || files.has("story.html") ||
		files.has("story_html5.html") || files.anyContains("story_content/"):
		t := &Tool{Name: "Articulate Storyline", ContentType: ContentStoryline, CountKey: "slides", read: storyline}
		v := ""
		for _, n := range []string{"html5/data/js/data.js", "story_content/data.js"} {
			if m := slVersionJSON.FindSubmatch(h.Probe(n)); m != nil {
				v = string(m[1])
				break
			}
		}
		if v == "" {
			if m := slVersionCmt.FindSubmatch(h.Probe("story.html")); m != nil {
				v = string(m[1])
			}
		}
		t.Version = versionOr(v)
		return t
	case riseCourseData.Match(heads) || files.has("scormcontent/lib/main.bundle.js"):
		// Rise 360 is a hosted service that publishes no version number.
		return &Tool{Name: "Articulate Rise", ContentType: ContentRise, CountKey: "lessons", read: rise}
	case files.has("assets/js/cpm.js") || files.has("assets/js/cpxhrloader.js") || isCaptivateProject(h, files):
		t := &Tool{Name: "Adobe Captivate", ContentType: ContentCaptivate, CountKey: "slides", read: captivate}
		t.Version = versionOr(jsdata.Str(captivateProject(h, files), "generatorVersion"))
		return t
	case ispringGenerator.Match(heads) || ispringPresInfo.Match(heads):
		t := &Tool{Name: "iSpring", ContentType: ContentISpring, CountKey: "slides", read: ispring}
		v := ""
		if m := ispringVersion.FindSubmatch(heads); m != nil {
			v = string(m[1])
		}
		t.Version = versionOr(v)
		return t
	case lectoraGenerator.Match(heads) || files.anyBase(isTrivantisScript):
		t := &Tool{Name: "Lectora", ContentType: ContentLectora, CountKey: "pages", read: lectora}
		v := ""
		if m := lectoraVersion.FindSubmatch(heads); m != nil {
			v = strings.Join(strings.Fields(string(m[1])), "")
		}
		t.Version = versionOr(v)
		return t
	case elucidatPlayer.Match(heads):
		// Elucidat, like Rise, is hosted and has no versions.
		return &Tool{Name: "Elucidat", ContentType: ContentElucidat, CountKey: "pages", read: elucidat}
	}
	return nil
}

// storyline reads Storyline's player data (html5/data/js/data.js, or story_content/data.js
// in older output): scenes and their slides, each slide's text from its own
// globalProvideData('slide', …) file named after the slide id, and quiz questions from it.
// Visible slides are those of learner scenes (the player's message and prompt scenes are
// not) that are not hidden; a question-bank draw counts the slides it draws, not the bank.
func storyline(ctx context.Context, h Host, files *Files, t *Tool) {
	var dataFile string
	for _, n := range []string{"html5/data/js/data.js", "story_content/data.js"} {
		if r, ok := files.Real(n); ok {
			dataFile = r
			break
		}
	}
	if dataFile == "" {
		h.Warn("Storyline data file not found; slide structure not read")
		return
	}
	raw, err := h.ReadFile(dataFile)
	if err != nil {
		h.Warn("Storyline %s: %v", dataFile, err)
		return
	}
	v, ok := jsdata.UnwrapCall(raw, "globalProvideData")
	data, _ := v.(map[string]any)
	if !ok || data == nil {
		h.Warn("Storyline %s: data not readable", dataFile)
		return
	}
	dir := path.Dir(dataFile)
	visible := 0
	var headings textnorm.HeadingTrail
	for _, sc := range jsdata.Arr(data, "scenes") {
		scene, _ := sc.(map[string]any)
		if scene == nil {
			continue
		}
		sceneID := jsdata.Str(scene, "id")
		if strings.HasPrefix(sceneID, "MsgScene") || strings.HasPrefix(sceneID, "PromptScene") || jsdata.Truthy(scene["hidden"]) {
			continue
		}
		sceneTitle := jsdata.StripTags(jsdata.Str(scene, "title", "lmsId", "id"))
		for _, sl := range jsdata.Arr(scene, "slides") {
			slide, _ := sl.(map[string]any)
			if slide == nil || jsdata.Truthy(slide["hidden"]) {
				continue
			}
			if k := jsdata.Str(slide, "kind"); k == "slidedraw" || k == "slidebankdraw" {
				n, _ := jsdata.Num(slide, "drawCount", "count")
				visible += n
				continue
			}
			visible++
			title := jsdata.StripTags(jsdata.Str(slide, "title", "lmsId", "id"))
			var parts []string
			if id := jsdata.Str(slide, "id"); id != "" && !strings.ContainsAny(id, "/\\") {
				short := id[strings.LastIndexByte(id, '.')+1:]
				if sf, ok := files.Real(path.Join(dir, short+".js")); ok {
					if sraw, err := h.ReadFile(sf); err == nil {
						if sv, ok := jsdata.UnwrapCall(sraw, "globalProvideData"); ok {
							jsdata.CollectText(sv, &parts, map[string]bool{title: true})
							findQuestions(h, sv, 0)
						}
					}
				}
			}
			// A slide with no readable text still has a title worth finding. Ids stand in for
			// missing titles in the location only: they are no headings.
			text := strings.Join(parts, "\n")
			heads := []string{jsdata.StripTags(jsdata.Str(scene, "title")), jsdata.StripTags(jsdata.Str(slide, "title"))}
			h.AddSection(sceneTitle+" > "+title, headings.Next(heads, text), text)
		}
	}
	// Quiz data kept in data.js itself (question banks) is searched for questions too.
	findQuestions(h, data["quizzes"], 0)
	t.setCount(visible)
}

// rise decodes the course JSON Rise embeds in its index.html (base64 in window.courseData or
// a deserialize("…") call) and extracts one section per lesson, "Section > Lesson" when the
// lesson follows a section header. Section headers are navigation, not lessons, so they are
// not counted; knowledge-check and quiz questions become interactions.
func rise(ctx context.Context, h Host, files *Files, t *Tool) {
	var course map[string]any
	for _, n := range []string{"scormcontent/index.html", "index.html", "content/index.html"} {
		real, ok := files.Real(n)
		if !ok {
			continue
		}
		raw, err := h.ReadFile(real)
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
			h.Warn("Rise %s: course data is not base64", real)
			continue
		}
		v, ok := jsdata.Parse(dec)
		if !ok {
			h.Warn("Rise %s: course data is not JSON", real)
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
		h.Warn("Rise course data not found; lessons not read")
		return
	}
	t.Title = jsdata.StripTags(jsdata.Str(course, "title"))
	lessons, section := 0, ""
	var headings textnorm.HeadingTrail
	for _, l := range jsdata.Arr(course, "lessons") {
		lesson, _ := l.(map[string]any)
		if lesson == nil {
			continue
		}
		title := jsdata.StripTags(jsdata.Str(lesson, "title"))
		if jsdata.Str(lesson, "type") == "section" {
			section = title
			continue
		}
		if jsdata.Truthy(lesson["hidden"]) {
			continue
		}
		lessons++
		loc, heads := title, []string{title}
		if section != "" {
			loc, heads = section+" > "+title, []string{section, title}
		}
		var parts []string
		jsdata.CollectText(lesson["description"], &parts, map[string]bool{})
		if d := jsdata.StripTags(jsdata.Str(lesson, "description")); d != "" {
			parts = append(parts, d)
		}
		jsdata.CollectText(lesson["items"], &parts, map[string]bool{title: true})
		text := strings.Join(parts, "\n")
		h.AddSection(loc, headings.Next(heads, text), text)
		findQuestions(h, lesson["items"], 0)
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
func elucidat(ctx context.Context, h Host, files *Files, t *Tool) {
	for _, p := range files.paths {
		if !strings.HasSuffix(strings.ToLower(p), ".json") {
			continue
		}
		raw, err := h.ReadFile(p)
		if err != nil {
			continue
		}
		v, ok := jsdata.Parse(raw)
		root, _ := v.(map[string]any)
		if !ok || root == nil {
			continue
		}
		pages := jsdata.Arr(root, "pages")
		if pages == nil {
			continue
		}
		count := 0
		var headings textnorm.HeadingTrail
		for _, pg := range pages {
			page, _ := pg.(map[string]any)
			if page == nil || jsdata.Truthy(page["hidden"]) || jsdata.Truthy(page["excluded"]) {
				continue
			}
			if n, ok := jsdata.Num(page, "draw", "drawCount"); ok {
				count += n
			} else {
				count++
			}
			title := jsdata.StripTags(jsdata.Str(page, "name", "title"))
			loc, heads := title, []string{title}
			if ch := jsdata.StripTags(jsdata.Str(page, "chapter", "section")); ch != "" {
				loc, heads = ch+" > "+title, []string{ch, title}
			}
			var parts []string
			jsdata.CollectText(page, &parts, map[string]bool{title: true})
			text := strings.Join(parts, "\n")
			h.AddSection(loc, headings.Next(heads, text), text)
			findQuestions(h, page, 0)
		}
		t.setCount(count)
		return
	}
	h.Warn("Elucidat project data not found; page count not read")
}
