package extract

import (
	"encoding/base64"
	"fmt"
	"testing"
)

// headed lists each section as "location | heading | text" for comparing whole results.
func headed(r *Result) []string {
	var out []string
	for _, s := range r.Sections {
		out = append(out, s.Location+" | "+s.Heading+" | "+s.Text)
	}
	return out
}

func wantSections(t *testing.T, r *Result, want ...string) {
	t.Helper()
	if got := headed(r); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("sections\n got %q\nwant %q", got, want)
	}
}

func TestMarkdownHeadingsAreText(t *testing.T) {
	// The guide's only "managing" is a heading; an h1 without text of its own opens the
	// first section under it; a heading with nothing under it is a section of its own,
	// whether a sibling, a higher heading or the end of the document follows.
	src := "# Public speaking\n\n## Managing nerves\n\nBreathe slowly before you begin.\n\n" +
		"## Eye *contact*\n\nLook at one listener at a time.\n\n### Checklist\n\n## Pauses\n\nStop after each point.\n\n" +
		"# Questions\n\n## Taking questions\n\nRepeat the question.\n\n## Closing\n"
	r := run(t, KindMarkdown, src)
	if r.Title != "Public speaking" {
		t.Errorf("title %q", r.Title)
	}
	wantSections(t, r,
		"Public speaking > Managing nerves | Public speaking\nManaging nerves | Breathe slowly before you begin.",
		"Public speaking > Eye contact | Eye contact | Look at one listener at a time.",
		"Public speaking > Eye contact > Checklist | Checklist | ",
		"Public speaking > Pauses | Pauses | Stop after each point.",
		"Questions > Taking questions | Questions\nTaking questions | Repeat the question.",
		"Questions > Closing | Closing | ",
	)
}

func TestMarkdownHeadingWithText(t *testing.T) {
	// A heading with text of its own opens that text, and its subsections open with their
	// own heading only; text before the first heading has no heading.
	r := run(t, KindMarkdown, "Preface.\n\nSafety\n======\n\nWear gloves.\n\nFire\n----\n\nUse the extinguisher.\n")
	wantSections(t, r,
		"Introduction |  | Preface.",
		"Safety | Safety | Wear gloves.",
		"Safety > Fire | Fire | Use the extinguisher.",
	)
}

func TestHTMLHeadingsAreText(t *testing.T) {
	src := `<html><head><title>Ergonomics</title></head><body><p>Intro.</p>
<h1>Workplace ergonomics</h1>
<h2>Adjusting <em>monitors</em></h2><p>Set the top of the screen at eye level.</p>
<h2>Chairs</h2>
<h2>Breaks</h2><p>Stand up every hour.</p>
<h2 hidden>Secret</h2><p>Visible.</p>
<h3>Last words</h3></body></html>`
	r := run(t, KindHTML, src)
	wantSections(t, r,
		"Ergonomics |  | Intro.",
		"Workplace ergonomics > Adjusting monitors | Workplace ergonomics\nAdjusting monitors | Set the top of the screen at eye level.",
		"Workplace ergonomics > Chairs | Chairs | ",
		"Workplace ergonomics > Breaks | Breaks | Stand up every hour.\nVisible.",
		"Workplace ergonomics > Breaks > Last words | Last words | ",
	)
	// A package page's text holds its headings, each once.
	if got := parseHTML(src).Text(); got != "Intro.\nWorkplace ergonomics\nAdjusting monitors\nSet the top of the screen at eye level.\n"+
		"Chairs\nBreaks\nStand up every hour.\nVisible.\nLast words" {
		t.Errorf("page text %q", got)
	}
}

func TestPackagePageTitlesAreText(t *testing.T) {
	// Navigation titles open the first page under them; a page's <h1> repeating its title
	// does not give it twice; a page with no text is still its title.
	r := runPkg(t, map[string]string{
		"imsmanifest.xml": manifest12("Safety Course",
			[]string{"Module 1", "Intro", "m1/intro.html", "Reporting hazards", "m1/report.html"},
			[]string{"Module 2", "Wrap up", "m2/end.html"}),
		"m1/intro.html":  "<h1>Intro</h1><p>Exits are green.</p>",
		"m1/report.html": "<p>Tell your supervisor.</p>",
		"m2/end.html":    "<script>start()</script>",
	})
	wantSections(t, r,
		"Safety Course > Module 1 > Intro | Safety Course\nModule 1 | Intro\nExits are green.",
		"Safety Course > Module 1 > Reporting hazards | Reporting hazards | Tell your supervisor.",
		"Safety Course > Module 2 > Wrap up | Module 2\nWrap up | ",
	)
}

func TestSlideTitlesAreText(t *testing.T) {
	t.Run("Storyline", func(t *testing.T) {
		slide1 := `window.globalProvideData('slide', '{"id":"s1","title":"Welcome","slideLayers":[{"objects":[{"kind":"textbox","accText":"Welcome to fire safety"}]}]}');`
		r := runPkg(t, map[string]string{
			"imsmanifest.xml":       single("Fire Safety", "index_lms.html"),
			"index_lms.html":        "<html><title>Fire Safety</title><body></body></html>",
			"story.html":            "<!-- Created using Storyline 360 - http://www.articulate.com -->\n<!-- version: 3.75.30269.0 -->",
			"html5/data/js/data.js": storylineData("3.75.30269.0"),
			"html5/data/js/s1.js":   slide1,
		})
		wantSections(t, r,
			"Getting Started > Welcome | Getting Started\nWelcome | Welcome to fire safety",
			"Getting Started > Exits | Exits | ",
		)
	})
	t.Run("StorylineUntitled", func(t *testing.T) {
		// Ids name untitled scenes and slides in locations, but are not text.
		data := `{"scenes":[{"kind":"scene","id":"6A","lmsId":"Scene1","slides":[{"kind":"slide","id":"6A.s4","lmsId":"Slide4"},{"kind":"slide","id":"6A.s5"}]}]}`
		r := runPkg(t, map[string]string{
			"imsmanifest.xml":       single("Boots", "index_lms.html"),
			"index_lms.html":        "<html><body></body></html>",
			"story.html":            "<!-- Created using Storyline 360 - http://www.articulate.com -->",
			"html5/data/js/data.js": `window.globalProvideData('data', '` + data + `');`,
			"html5/data/js/s4.js":   `window.globalProvideData('slide', '{"slideLayers":[{"objects":[{"accText":"Wear boots."}]}]}');`,
		})
		wantSections(t, r, "Scene1 > Slide4 |  | Wear boots.")
	})
	t.Run("Rise", func(t *testing.T) {
		course := `{"course":{"title":"Ladders","lessons":[{"type":"section","title":"Basics"},` +
			`{"type":"blocks","title":"Choosing a ladder","items":[{"type":"text","items":[{"paragraph":"<p>Check the rating.</p>"}]}]},` +
			`{"type":"blocks","title":"Climbing","items":[]}]}}`
		r := runPkg(t, map[string]string{
			"imsmanifest.xml":         single("Ladders", "scormcontent/index.html"),
			"scormcontent/index.html": `<html><script>window.courseData = "` + base64.StdEncoding.EncodeToString([]byte(course)) + `";</script></html>`,
		})
		wantSections(t, r,
			"Basics > Choosing a ladder | Basics\nChoosing a ladder | Check the rating.",
			"Basics > Climbing | Climbing | ",
		)
	})
	t.Run("iSpring", func(t *testing.T) {
		pres := `{"ct":"Hazards","s":[{"t":"Reporting hazards","s":"data/slide1.js","x":"Tell your supervisor at once."},` +
			`{"t":"Opening","s":"data/slide2.js","x":"Opening\r\nStart here"},{"t":"Summary","s":"data/slide3.js","x":""}]}`
		r := runPkg(t, map[string]string{
			"imsmanifest.xml": single("Hazards", "index.html"),
			"index.html": "<!DOCTYPE html>\n<!-- Created with iSpring --><!--version 11.2.3.9020 -->\n" +
				`<html><body><script>var presInfo = "` + zlibB64(t, pres) + `";</script></body></html>`,
			"data/player.js": "",
		})
		// A slide whose text opens with its title does not get it twice.
		wantSections(t, r,
			"Reporting hazards | Reporting hazards | Tell your supervisor at once.",
			"Opening |  | Opening\nStart here",
			"Summary | Summary | ",
		)
	})
	t.Run("Lectora", func(t *testing.T) {
		r := runPkg(t, map[string]string{
			"imsmanifest.xml":           single("Lec", "a001_intro_page_1.html"),
			"a001_intro_page_1.html":    lectoraPageHTML("Valve basics", "", `<p>Valves control flow.</p>`),
			"trivantis-pagetracking.js": "",
		})
		if got := sectionOf(t, r, "Valve basics"); got.Heading != "Valve basics" || got.Text != "Valves control flow." {
			t.Errorf("page %+v", got)
		}
	})
	t.Run("Elucidat", func(t *testing.T) {
		r := runPkg(t, map[string]string{
			"imsmanifest.xml":   single("Hygiene", "index.html"),
			"index.html":        `<html><head><script src="https://learning.elucidat.com/player.js"></script></head></html>`,
			"data/project.json": `{"pages":[{"name":"Welcome","chapter":"Basics","body":"<p>Wash hands.</p>"},{"name":"Drying","chapter":"Basics","body":"Use a towel."}]}`,
		})
		wantSections(t, r,
			"Basics > Welcome | Basics\nWelcome | Wash hands.",
			"Basics > Drying | Drying | Use a towel.",
		)
	})
}
