package contentapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// speakingGuide's only "managing" (and only "nerves") is the heading of its second section.
const speakingGuide = `# Public speaking

Advice for people who give talks at work.

## Managing nerves

Take three slow breaths and remember that the audience wants you to succeed.

## Eye contact

Look at one listener at a time and hold their gaze for a sentence.
`

// ergonomicsPage's only "adjusting" and "monitors" are an <h2>.
const ergonomicsPage = `<!DOCTYPE html><html><head><title>Desk Setup</title></head><body>
<h1>Workplace ergonomics</h1><p>A good desk setup prevents back pain.</p>
<h2>Adjusting monitors</h2><p>Set the top of the screen at eye level, an arm's length away.</p>
<h2>Chairs</h2><p>Keep your feet flat on the floor.</p>
</body></html>`

// hazardsStoryline is a Storyline package (the player's data.js and one data file per
// slide, as Storyline publishes them) whose only "reporting" and "hazards" are a slide title.
func hazardsStoryline(t *testing.T) []byte {
	data := `{"version":"3.75.30269.0","scenes":[{"kind":"scene","id":"6A","title":"Safety basics","slides":[` +
		`{"kind":"slide","id":"6A.s1","title":"Welcome"},{"kind":"slide","id":"6A.s2","title":"Reporting hazards"}]}]}`
	slide := func(id, text string) string {
		return `window.globalProvideData('slide', '{"id":"` + id + `","slideLayers":[{"objects":[{"kind":"textbox","accText":"` + text + `"}]}]}');`
	}
	return servertest.ZipOf(t, map[string]string{
		"imsmanifest.xml": `<?xml version="1.0"?><manifest identifier="m" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">` +
			`<metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>` +
			`<organizations default="O"><organization identifier="O"><title>Site Safety</title><item identifier="I1" identifierref="R1"><title>Site Safety</title></item></organization></organizations>` +
			`<resources><resource identifier="R1" type="webcontent" adlcp:scormtype="sco" href="index_lms.html"><file href="index_lms.html"/></resource></resources></manifest>`,
		"index_lms.html":        `<html><head><title>Site Safety</title></head><body></body></html>`,
		"story.html":            "<!-- Created using Storyline 360 - http://www.articulate.com -->\n<!-- version: 3.75.30269.0 -->\n<html></html>",
		"html5/data/js/data.js": `window.globalProvideData('data', '` + data + `');`,
		"html5/data/js/s1.js":   slide("s1", "Welcome to the site safety course."),
		"html5/data/js/s2.js":   slide("s2", "Tell your supervisor at once and write it in the site log."),
		"story_content/user.js": "",
	})
}

// TestContentHeadingsAreText: a word that appears only in a Markdown heading, an HTML <h2>
// or a slide title is found by keyword and phrase search, located at that heading, and the
// section's embedding is of its heading and text together.
func TestContentHeadingsAreText(t *testing.T) {
	modelDir, haveModel := servertest.TestModelDir(t)
	servertest.ForEachModeWithModel(t, modelDir, func(t *testing.T, e *servertest.Env) {
		const ten = "headings"
		e.CreateTenant(ten, true)
		for _, c := range []struct {
			id, file string
			body     []byte
		}{
			{"guide", "guide.md", []byte(speakingGuide)},
			{"desk", "desk.html", []byte(ergonomicsPage)},
			{"hazards", "hazards.zip", hazardsStoryline(t)},
		} {
			if id, _ := e.ImportContent(ten, "content_id="+c.id, c.body, c.file); id != c.id {
				t.Fatalf("%s imported as %s", c.file, id)
			}
		}
		lex := func(term string, kv ...string) []map[string]any {
			return e.SearchContent(ten, servertest.SQ(append([]string{"search_type", "LEXICAL", "term", term}, kv...)...))
		}
		locations := func(hits []map[string]any) string {
			var out []string
			for _, h := range hits {
				out = append(out, fmt.Sprint(h["location"]))
			}
			return strings.Join(out, "; ")
		}
		for _, c := range []struct{ id, keyword, phrase, location string }{
			{"guide", "managing", `"managing nerves"`, "Public speaking > Managing nerves"},
			{"desk", "adjusting", `"adjusting monitors"`, "Workplace ergonomics > Adjusting monitors"},
			{"hazards", "reporting", `"reporting hazards"`, "Safety basics > Reporting hazards"},
		} {
			for _, term := range []string{c.keyword, c.phrase} {
				if got := sortedIDs(lex(term)); got != c.id+":1" {
					t.Errorf("%s: tenant-wide hits %q, want %s:1", term, got, c.id)
				}
				if got := locations(lex(term, "content_id", c.id, "version", "1")); got != c.location {
					t.Errorf("%s in %s: locations %q, want %q", term, c.id, got, c.location)
				}
			}
		}
		// A heading is found once, where it is: the guide's h1 has text of its own, so the
		// sections under it do not repeat it.
		if got := locations(lex("speaking", "content_id", "guide", "version", "1")); got != "Public speaking" {
			t.Errorf("speaking: locations %q", got)
		}
		// The summary is still drawn from the text, not from the headings.
		summary := "Advice for people who give talks at work. Take three slow breaths and remember that the audience wants you to succeed."
		if got := sortedIDs(e.SearchContent(ten, servertest.SQ("search_type", "FIELD", "term", summary, "field", "SUMMARY"))); got != "guide:1" {
			t.Errorf("the guide's summary is not its first two sentences: %q", got)
		}

		if !haveModel {
			t.Log("no embedding model installed: semantic check skipped (run `make model`)")
			return
		}
		// The section as a learner reads it, heading and text, is what was embedded: a query
		// of the same words matches it exactly.
		hits := e.SearchContent(ten, servertest.SQ("search_type", "SEMANTIC", "content_id", "guide", "version", "1",
			"term", "Managing nerves Take three slow breaths and remember that the audience wants you to succeed."))
		if len(hits) == 0 || hits[0]["location"] != "Public speaking > Managing nerves" {
			t.Fatalf("semantic: %v", hits)
		}
		if s, _ := hits[0]["match_strength"].(float64); s < 0.999 {
			t.Errorf("semantic match of heading and text: %v, want 1 (the heading was not embedded with its text)", s)
		}
	})
}
