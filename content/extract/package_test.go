package extract

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// The packages below are synthetic: tiny files written by hand that mimic the layout and
// data shapes of each authoring tool's published output (file names, wrappers such as
// globalProvideData, key names), with made-up content. They are not real exports.

const ns12 = `xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"`

// manifest12 writes a SCORM 1.2 manifest: one organization "Org", a module per key of
// modules (in order), each with its pages (title → href).
func manifest12(org string, modules ...[]string) string {
	var items, res strings.Builder
	n := 0
	for mi, m := range modules {
		fmt.Fprintf(&items, `<item identifier="M%d"><title>%s</title>`, mi, m[0])
		for i := 1; i+1 < len(m); i += 2 {
			n++
			fmt.Fprintf(&items, `<item identifier="I%d" identifierref="R%d"><title>%s</title></item>`, n, n, m[i])
			fmt.Fprintf(&res, `<resource identifier="R%d" type="webcontent" adlcp:scormtype="sco" href="%s"><file href="%s"/></resource>`, n, m[i+1], m[i+1])
		}
		items.WriteString(`</item>`)
	}
	return `<?xml version="1.0"?><manifest identifier="m" ` + ns12 + `><metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>` +
		`<organizations default="O"><organization identifier="O"><title>` + org + `</title>` + items.String() +
		`</organization></organizations><resources>` + res.String() + `</resources></manifest>`
}

func single(title, href string) string { return manifest12(title, []string{title, title, href}) }

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for k, v := range files {
		m[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return m
}

func runPkg(t *testing.T, files map[string]string) *Result {
	t.Helper()
	res, err := Extract(context.Background(), KindPackage, Source{FS: mapFS(files)}, Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	return res
}

func TestGenericPackage(t *testing.T) {
	r := runPkg(t, map[string]string{
		"imsmanifest.xml": manifest12("Safety Course",
			[]string{"Module 1", "Intro", "m1/intro.html?x=1", "Quiz", "m1/quiz.html"},
			[]string{"Module 2", "Wrap up", "m2/end.html#top", "Again", "m1/intro.html"}),
		"m1/intro.html": "<html><title>t</title><script>x()</script><h1>Welcome</h1><p>Exits are green.</p></html>",
		"m1/quiz.html":  "<p>Question one</p>",
		"m2/end.html":   "<p>Goodbye</p>",
	})
	want := []string{"Safety Course > Module 1 > Intro", "Safety Course > Module 1 > Quiz", "Safety Course > Module 2 > Wrap up"}
	if got := locs(r); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("locations %q, want %q", got, want)
	}
	if got := section(t, r, want[0]); got != "Welcome\nExits are green." {
		t.Errorf("intro = %q", got)
	}
	if r.Title != "Safety Course" || r.Tool != "" || r.Details.ContentType != ContentPackage {
		t.Errorf("title %q tool %q type %q", r.Title, r.Tool, r.Details.ContentType)
	}
	wantMeta(t, r, map[string]any{"web_pages": 3})
}

func TestNotAPackage(t *testing.T) {
	_, err := Extract(context.Background(), KindPackage, Source{FS: mapFS(map[string]string{"a.html": "x"})}, Options{})
	if err == nil || !strings.Contains(err.Error(), "no course found") {
		t.Errorf("err = %v", err)
	}
}

// storylineData mimics html5/data/js/data.js: globalProvideData with the JSON as a quoted JS
// string, player prompt scenes, a hidden slide and a question-bank draw of 2 slides.
func storylineData(version string) string {
	data := `{"version":"` + version + `","scenes":[` +
		`{"kind":"scene","id":"MsgScene_1","slides":[{"kind":"slide","id":"MsgScene_1.Prompt","title":"Resume?"}]},` +
		`{"kind":"scene","id":"6A","title":"Getting Started","slides":[` +
		`{"kind":"slide","id":"6A.s1","title":"Welcome"},{"kind":"slide","id":"6A.s2","title":"Secret","hidden":true},` +
		`{"kind":"slide","id":"6A.s3","title":"Exits"}]},` +
		`{"kind":"scene","id":"6B","title":"Quiz","slides":[{"kind":"slidedraw","id":"6B.d1","bankId":"bank1","drawCount":2}]}],` +
		`"quizzes":[]}`
	js := strings.ReplaceAll(data, `"`, `\"`)
	return `window.globalProvideData('data', '` + strings.ReplaceAll(js, `\"`, `"`) + `');`
}

func TestStoryline(t *testing.T) {
	slide1 := `window.globalProvideData('slide', '{"id":"s1","title":"Welcome","slideLayers":[{"objects":[{"kind":"textbox","accText":"Welcome to fire safety\\nLet\\u2019s begin"}]}]}');`
	slide3 := `window.globalProvideData('slide', {"id":"s3","interactions":[{"kind":"interaction","type":"choice","title":"Which exit?",` +
		`"answers":[{"text":"Front door","status":"correct"},{"text":"Window","status":"incorrect"}],"feedback":{"correct":"Right.","incorrect":"No."}}]});`
	r := runPkg(t, map[string]string{
		"imsmanifest.xml":        single("Fire Safety", "index_lms.html"),
		"index_lms.html":         "<html><title>Fire Safety</title><body></body></html>",
		"story.html":             "<!-- Created using Storyline 360 - http://www.articulate.com -->\n<!-- version: 3.75.30269.0 -->",
		"html5/data/js/data.js":  storylineData("3.75.30269.0"),
		"html5/data/js/s1.js":    slide1,
		"html5/data/js/s3.js":    slide3,
		"story_content/user.js":  "",
		"html5/lib/scripts/a.js": "",
	})
	if r.Tool != "Articulate Storyline" || r.Details.ContentType != ContentStoryline {
		t.Fatalf("tool %q type %q", r.Tool, r.Details.ContentType)
	}
	// 2 visible slides + 2 drawn from the bank; the hidden slide and the prompt scene do not count.
	wantMeta(t, r, map[string]any{"authoring_tool_version": "3.75.30269.0", "slides": 4})
	if got := section(t, r, "Getting Started > Welcome"); got != "Welcome to fire safety Let’s begin" {
		t.Errorf("slide 1 = %q", got)
	}
	section(t, r, "Getting Started > Exits")
	for _, l := range locs(r) {
		if strings.Contains(l, "Secret") || strings.Contains(l, "Resume") {
			t.Errorf("hidden slide listed: %q", l)
		}
	}
	if len(r.Details.Interactions) != 1 {
		t.Fatalf("interactions %+v", r.Details.Interactions)
	}
	in := r.Details.Interactions[0]
	if in.Question != "Which exit?" || in.Type != "choice" || len(in.Choices) != 2 || !in.Choices[0].IsCorrect || in.Choices[1].IsCorrect ||
		fmt.Sprint(in.Feedback) != "[Right. No.]" {
		t.Errorf("interaction %+v", in)
	}
}

func TestStorylineVersionUndetected(t *testing.T) {
	r := runPkg(t, map[string]string{
		"imsmanifest.xml": single("C", "story.html"),
		"story.html":      "<html><p>Player</p></html>",
	})
	if r.Tool != "Articulate Storyline" {
		t.Fatalf("tool %q", r.Tool)
	}
	// The data file is missing: version undetected, no slide count published.
	wantMeta(t, r, map[string]any{"authoring_tool_version": Undetected})
}

func TestStorylineVersionFromComment(t *testing.T) {
	r := runPkg(t, map[string]string{
		"imsmanifest.xml": single("C", "story.html"),
		"story.html":      "<!-- Created using Storyline 360 -->\n<!-- version: 3.60.12345.0 --><html></html>",
	})
	if v := r.Details.ExistingMetadata["authoring_tool_version"]; v != "3.60.12345.0" {
		t.Errorf("version %v", v)
	}
}

func TestRise(t *testing.T) {
	course := `{"course":{"title":"Ladder Safety","lessons":[
	 {"id":"a","type":"section","title":"Part One"},
	 {"id":"b","type":"blocks","title":"Choosing a ladder","description":"<p>Pick well.</p>","items":[
	   {"type":"text","items":[{"heading":"<h2>Height</h2>","paragraph":"<p>Three points of &amp; contact.</p>"}]},
	   {"type":"knowledgeCheck","items":[{"type":"MULTIPLE_CHOICE","title":"<p>How many points?</p>",
	     "answers":[{"title":"Two","correct":false},{"title":"Three","correct":true}],"feedback":"<p>Three points.</p>"}]}]},
	 {"id":"c","type":"blocks","title":"Storage","items":[{"type":"text","items":[{"paragraph":"Keep dry."}]},
	   {"type":"knowledgeCheck","items":[{"type":"MATCHING","title":"Match","answers":[{"title":"Wood","matchTitle":"Dry","correct":true}]}]}]},
	 {"id":"d","type":"quiz","title":"Final quiz","items":[]}]}}`
	b64 := base64.StdEncoding.EncodeToString([]byte(course))
	r := runPkg(t, map[string]string{
		"imsmanifest.xml":         single("Ladder Safety", "scormcontent/index.html"),
		"scormcontent/index.html": `<html><head><script>window.courseData = "` + b64 + `";</script></head><body><div id="app"></div></body></html>`,
		"scormcontent/lib/a.js":   "",
	})
	if r.Tool != "Articulate Rise" || r.Details.ContentType != ContentRise {
		t.Fatalf("tool %q", r.Tool)
	}
	// Rise has no versions: null. The section header is not a lesson.
	wantMeta(t, r, map[string]any{"authoring_tool_version": nil, "lessons": 3})
	got := section(t, r, "Part One > Choosing a ladder")
	for _, w := range []string{"Pick well.", "Height", "Three points of & contact.", "How many points?"} {
		if !strings.Contains(got, w) {
			t.Errorf("lesson text %q lacks %q", got, w)
		}
	}
	if len(r.Details.Interactions) != 2 {
		t.Fatalf("interactions %+v", r.Details.Interactions)
	}
	mc, match := r.Details.Interactions[0], r.Details.Interactions[1]
	if mc.Question != "How many points?" || mc.Type != "choice" || !mc.Choices[1].IsCorrect || fmt.Sprint(mc.Feedback) != "[Three points.]" {
		t.Errorf("multiple choice %+v", mc)
	}
	if match.Type != "matching" || match.Choices[0].Category == nil || *match.Choices[0].Category != "Dry" {
		t.Errorf("matching %+v", match)
	}
}

func TestCaptivate(t *testing.T) {
	cpm := `cp.model.data={project:{v:'x'},project_main:{from:1,to:100,slides:'Slide101,Slide202'},` +
		`Slide101:{lb:'Introduction',si:[{n:'Text_1'}],accstr:'Welcome to the course',tlb:'no'},` +
		`Slide303:{lb:'Hidden slide',accstr:'never shown'},` +
		`Slide202:{lb:'Summary',accstr:'You are done. It\'s over.'}};`
	r := runPkg(t, map[string]string{
		"imsmanifest.xml":            single("Cap", "index_lms.html"),
		"index_lms.html":             `<html><head><meta name="generator" content="Adobe Captivate 2019 (11.5.1.499)"></head><body></body></html>`,
		"assets/js/CPM.js":           cpm,
		"assets/js/CPXHRLoader.js":   "",
		"dr/imgmd.json":              "{}",
		"assets/htmlimages/a.png":    "",
		"assets/js/jquery-1.11.3.js": "",
	})
	if r.Tool != "Adobe Captivate" {
		t.Fatalf("tool %q", r.Tool)
	}
	wantMeta(t, r, map[string]any{"authoring_tool_version": "2019 (11.5.1.499)", "slides": 2})
	if got := section(t, r, "Summary"); got != "Summary\nYou are done. It's over." {
		t.Errorf("summary = %q", got)
	}
	for _, l := range locs(r) {
		if strings.Contains(l, "Hidden") {
			t.Errorf("hidden slide listed")
		}
	}
}

func TestISpring(t *testing.T) {
	r := runPkg(t, map[string]string{
		"imsmanifest.xml": single("Spring", "index.html"),
		"index.html":      "<!-- Created with iSpring Suite 11.2.3 --><html><body></body></html>",
		"data/slide1.js":  `var slideData = {"title":"Opening","text":"Spring cleaning rules"};`,
		"data/slide2.js":  `var slideData = {"title":"Skipped","hidden":true};`,
		"data/slide10.js": `var slideData = {"title":"Check","question":"Is dust harmful?","answers":[{"text":"Yes","correct":true},{"text":"No","correct":false}]};`,
	})
	if r.Tool != "iSpring" {
		t.Fatalf("tool %q", r.Tool)
	}
	wantMeta(t, r, map[string]any{"authoring_tool_version": "11.2.3", "slides": 2})
	if got := section(t, r, "Opening"); got != "Opening\nSpring cleaning rules" {
		t.Errorf("slide 1 = %q", got)
	}
	if len(r.Details.Interactions) != 1 || r.Details.Interactions[0].Question != "Is dust harmful?" {
		t.Errorf("interactions %+v", r.Details.Interactions)
	}
}

func TestLectora(t *testing.T) {
	r := runPkg(t, map[string]string{
		"imsmanifest.xml":       single("Lec", "a001index.html"),
		"a001index.html":        `<html><head><meta name="GENERATOR" content="Lectora Inspire v18.1.2"><title>Home</title></head><body><p>Start here</p></body></html>`,
		"a002_rules.html":       `<html><head><title>Rules</title></head><body><p>Rule one</p></body></html>`,
		"trivantis-titlemgr.js": "",
	})
	if r.Tool != "Lectora" {
		t.Fatalf("tool %q", r.Tool)
	}
	wantMeta(t, r, map[string]any{"authoring_tool_version": "18.1.2", "pages": 2})
	if got := section(t, r, "Rules"); got != "Rule one" {
		t.Errorf("rules = %q", got)
	}
}

func TestLectoraUndetected(t *testing.T) {
	r := runPkg(t, map[string]string{
		"imsmanifest.xml":       single("Lec", "a001index.html"),
		"a001index.html":        `<html><body><p>Start</p></body></html>`,
		"trivantis-titlemgr.js": "",
	})
	wantMeta(t, r, map[string]any{"authoring_tool_version": Undetected, "pages": 1})
}

func TestElucidat(t *testing.T) {
	project := `{"name":"Hygiene","pages":[
	  {"name":"Welcome","chapter":"Basics","body":"<p>Wash hands.</p>"},
	  {"name":"Draft page","hidden":true,"body":"unfinished"},
	  {"name":"Pool","chapter":"Check","drawCount":5,"questions":[
	     {"question":"When to wash?","type":"multiple_response","options":[{"label":"Before eating","isCorrect":true},{"label":"Never","isCorrect":false}]}]}]}`
	r := runPkg(t, map[string]string{
		"imsmanifest.xml":    single("Hygiene", "index.html"),
		"index.html":         `<html><head><script src="https://learning.elucidat.com/player.js"></script></head></html>`,
		"data/project.json":  project,
		"data/settings.json": `{"theme":"blue"}`,
	})
	if r.Tool != "Elucidat" {
		t.Fatalf("tool %q", r.Tool)
	}
	// One page plus a pool drawing 5 questions; the hidden page does not count.
	wantMeta(t, r, map[string]any{"authoring_tool_version": nil, "pages": 6})
	if got := section(t, r, "Basics > Welcome"); got != "Wash hands." {
		t.Errorf("welcome = %q", got)
	}
	if len(r.Details.Interactions) != 1 || r.Details.Interactions[0].Type != "choice" || len(r.Details.Interactions[0].Choices) != 2 {
		t.Errorf("interactions %+v", r.Details.Interactions)
	}
}

func TestTincanInteractions(t *testing.T) {
	xml := `<?xml version="1.0"?><tincan xmlns="http://projecttincan.com/tincan.xsd"><activities>
 <activity id="http://x/course" type="http://adlnet.gov/expapi/activities/course"><name>Course</name><launch lang="und">index.html</launch></activity>
 <activity id="http://x/q1" type="http://adlnet.gov/expapi/activities/cmi.interaction"><name>Q1</name>
   <description lang="und">Pick the primes</description><interactionType>choice</interactionType>
   <correctResponsePatterns><correctResponsePattern>two[,]three</correctResponsePattern></correctResponsePatterns>
   <choices><component><id>two</id><description lang="und">2</description></component>
     <component><id>four</id><description lang="und">4</description></component>
     <component><id>three</id><description lang="und">3</description></component></choices></activity>
 <activity id="http://x/q2" type="http://adlnet.gov/expapi/activities/cmi.interaction"><name>Q2</name>
   <interactionType>numeric</interactionType><correctResponsePatterns><correctResponsePattern>4[:]6</correctResponsePattern></correctResponsePatterns></activity>
 <activity id="http://x/q3" type="http://adlnet.gov/expapi/activities/cmi.interaction"><description>Match</description>
   <interactionType>matching</interactionType><correctResponsePatterns><correctResponsePattern>a[.]x</correctResponsePattern></correctResponsePatterns>
   <source><component><id>a</id><description>Apple</description></component></source>
   <target><component><id>x</id><description>Fruit</description></component></target></activity>
 <activity id="http://x/q4" type="http://adlnet.gov/expapi/activities/cmi.interaction"><description>Sky is blue</description>
   <interactionType>true-false</interactionType><correctResponsePatterns><correctResponsePattern>true</correctResponsePattern></correctResponsePatterns></activity>
</activities></tincan>`
	r := runPkg(t, map[string]string{"tincan.xml": xml, "index.html": "<p>Course page</p>"})
	if len(r.Details.Interactions) != 4 {
		t.Fatalf("interactions %+v", r.Details.Interactions)
	}
	in := r.Details.Interactions
	if in[0].Question != "Pick the primes" || !in[0].Choices[0].IsCorrect || in[0].Choices[1].IsCorrect || !in[0].Choices[2].IsCorrect {
		t.Errorf("choice %+v", in[0])
	}
	if in[1].Type != "numeric" || in[1].Question != "Q2" || in[1].Range == nil || *in[1].Range.Min != 4 || *in[1].Range.Max != 6 {
		t.Errorf("numeric %+v", in[1])
	}
	if in[2].Type != "matching" || *in[2].Choices[0].Category != "Fruit" {
		t.Errorf("matching %+v", in[2])
	}
	if in[3].Type != "true-false" || !in[3].Choices[0].IsCorrect {
		t.Errorf("true-false %+v", in[3])
	}
	if got := section(t, r, "Course"); got != "Course page" {
		t.Errorf("page = %q", got)
	}
}

func TestQTI(t *testing.T) {
	item := `<?xml version="1.0"?><assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="i1" title="Colours">
<responseDeclaration identifier="RESPONSE" cardinality="single"><correctResponse><value>B</value></correctResponse></responseDeclaration>
<itemBody><div><choiceInteraction responseIdentifier="RESPONSE" maxChoices="1"><prompt>Which is <b>blue</b>?</prompt>
<simpleChoice identifier="A">Grass</simpleChoice><simpleChoice identifier="B">Sky</simpleChoice></choiceInteraction></div></itemBody>
<modalFeedback outcomeIdentifier="FEEDBACK" identifier="B">The sky.</modalFeedback></assessmentItem>`
	r := runPkg(t, map[string]string{
		"imsmanifest.xml": single("Q", "index.html"),
		"index.html":      "<p>x</p>",
		"items/i1.xml":    item,
	})
	if len(r.Details.Interactions) != 1 {
		t.Fatalf("interactions %+v", r.Details.Interactions)
	}
	in := r.Details.Interactions[0]
	if in.Question != "Which is blue?" || in.Choices[0].IsCorrect || !in.Choices[1].IsCorrect || fmt.Sprint(in.Feedback) != "[The sky.]" {
		t.Errorf("qti %+v", in)
	}
}
