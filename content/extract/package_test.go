package extract

import (
	"bytes"
	"compress/zlib"
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

// captivateCPM is shaped like a Classic Captivate assets/js/CPM.js (see tools/captivate.go
// for the public packages it follows; tools' fuzz tests start from a copy): the model literal
// first, with player references (cp.fd, cp.ch) among the data, then the runtime. Slide303 is
// not in project_main.slides, so it does not play; Slide202 is a multiple-choice question
// slide whose right answer is named both ways Captivate does (ic on one answer, cal listing
// another's aid); Slide404 is a blank to fill.
const captivateCPM = `if(!window.cp)window.cp = function(str){return document.getElementById(str)};` +
	`cp.CPProjInit = function(){if(cp && cp.model && cp.model.data) return; cp.model = {}; cp.D = cp.model.data = {pref:{acc:1,rkt:0},` +
	`Text_Caption_1:{type:19,from:1,to:90,mdi:'Text_Caption_1c',apsn:'Slide101',vt:'<div><span class="cp-actualText">Welcome to <b>valve</b> safety</span></div>',` +
	`rpvt:{1024:{vt:'<div>x</div>',text:'Welcome to valve safety'}},chfn:cp.ch},Text_Caption_1c:{b:[0,0,1,1],dn:'Text_Caption_1',visible:1,accstr:'Welcome to valve safety '},` +
	`Image_2:{type:15,mdi:'Image_2c',apsn:'Slide101'},Image_2c:{sr:cp.fd,ip:'dr/1.png',dn:'Image_2',visible:1,accstr:'Image '},` +
	`Hint_3:{type:19,mdi:'Hint_3c',apsn:'Slide101',vt:'<div>Hidden hint</div>'},Hint_3c:{dn:'Hint_3',visible:0,accstr:'Hidden hint '},` +
	`Slide101:{lb:'Introduction',id:101,st:'Normal Slide',si:[{n:'Text_Caption_1',t:19},{n:'Image_2',t:15},{n:'Hint_3',t:19}],qs:''},Slide101c:{dn:'Slide101',visible:'1'},` +
	`Slide303:{lb:'Cut slide',si:[{n:'Cut_1',t:19}],qs:''},Cut_1:{type:19,mdi:'Cut_1c'},Cut_1c:{visible:1,accstr:'never shown'},` +
	`Q_text:{type:79,mdi:'Q_textc',apsn:'Slide202'},Q_textc:{dn:'Q_text',visible:1,accstr:'Which valve is red? '},` +
	`A1:{type:80,mdi:'A1c',apsn:'Slide202'},A1c:{dn:'A1',visible:1,aid:'A',at:10082,atxtlms:'The blue one ',ic:false,accstr:'The blue one  '},` +
	`A2:{type:80,mdi:'A2c',apsn:'Slide202'},A2c:{dn:'A2',visible:1,aid:'B',at:10082,atxtlms:'The red one ',ic:false,accstr:'The red one  '},` +
	`A3:{type:80,mdi:'A3c',apsn:'Slide202'},A3c:{dn:'A3',visible:1,aid:'C',at:10082,atxtlms:'Both ',ic:true,accstr:'Both  '},` +
	`Ok:{type:10166,mdi:'Okc'},Okc:{dn:'Ok',visible:0,accstr:'Correct - Click anywhere to continue. '},` +
	`No:{type:10168,mdi:'Noc'},Noc:{dn:'No',visible:0,accstr:'Incorrect - try the next one. '},` +
	`Slide202:{lb:'',id:202,st:'Question Slide',si:[{n:'Q_text',t:79},{n:'A1',t:80},{n:'A2',t:80},{n:'A3',t:80},{n:'Ok',t:10166},{n:'No',t:10168}],qs:'Slide202q0',qnq:0},` +
	`Slide202q0:{noa:1,qt:'Stale question text',it:true,is:false,ikc:false,sn:'Slide202',itp:'choice',cal:['B'],qtp:'MCQ',ao:['A1c:0','A2c:1','A3c:2'],qtc:'Q_textc',osc:'Ok',ifc:['No'],oca:'cp.jumpToNextSlide();'},` +
	`Slide404:{lb:'Blanks',st:'Question Slide',si:[],qs:'Slide404q1'},` +
	`Slide404q1:{qt:'Fill in: the valve is ___',itp:'fill-in',cal:[],qtp:'FIB',ao:['B1_mcfib:0','B2_mcfib:1']},` +
	`B1_mcfib:{sac:false,aid:0,cs:false,capN:'Cap',correctAnswers:['shut ','closed'],type:'fib'},B2_mcfib:{aid:1,correctAnswers:['shut'],type:'fib'},` +
	`project:{fps:30,w:1024,h:627},project_main:{from:1,to:400,slides:'Slide101,Slide202,Slide404',questions:'Slide202q0,Slide404q1'},` +
	`quizzingData:{passedScoreFeedback:'Congratulations, you passed the quiz!'}};};cp.CPProjInit();function cpInit(){var a=cp.D[cp.D.project_main.slides.split(',')[0]];}`

func TestCaptivate(t *testing.T) {
	r := runPkg(t, map[string]string{
		"imsmanifest.xml":          single("Cap", "index_scorm.html"),
		"index_scorm.html":         `<!DOCTYPE html><html lang="en"><head><title></title></head><body onload="onBodyLoad()"></body></html>`,
		"project.txt":              `{"metadata":{"generator":"Captivate","generatorVersion":"11.5.5","schemaVersion":"","title":"","totalSlides":3,"launchFile":"index.html"},"contentStructure":[]}`,
		"assets/js/CPM.js":         captivateCPM,
		"assets/js/CPXHRLoader.js": "",
		"dr/imgmd.json":            "{}",
	})
	if r.Tool != "Adobe Captivate" || r.Details.ContentType != ContentCaptivate {
		t.Fatalf("tool %q type %q", r.Tool, r.Details.ContentType)
	}
	wantMeta(t, r, map[string]any{"authoring_tool_version": "11.5.5", "slides": 3})
	// The caption's text, not the picture's default label nor the hidden hint; the slide's
	// label is its heading.
	if got := sectionOf(t, r, "Introduction"); got.Heading != "Introduction" || got.Text != "Welcome to valve safety" {
		t.Errorf("introduction = %+v", got)
	}
	// An unlabelled slide is named by its place, a name that is not its text; the answers
	// are slide text too, the hidden feedback captions are not.
	if got := sectionOf(t, r, "Slide 2"); got.Heading != "" || got.Text != "Which valve is red?\nThe blue one\nThe red one\nBoth" {
		t.Errorf("question slide = %+v", got)
	}
	for _, l := range locs(r) {
		if strings.Contains(l, "Cut") {
			t.Errorf("slide that does not play listed: %q", l)
		}
	}
	if len(r.Details.Interactions) != 2 {
		t.Fatalf("interactions %+v", r.Details.Interactions)
	}
	mc, fib := r.Details.Interactions[0], r.Details.Interactions[1]
	if mc.Question != "Which valve is red?" || mc.Type != "choice" || len(mc.Choices) != 3 ||
		mc.Choices[0].IsCorrect || !mc.Choices[1].IsCorrect || !mc.Choices[2].IsCorrect || mc.Choices[1].Text != "The red one" ||
		fmt.Sprint(mc.Feedback) != "[Correct - Click anywhere to continue. Incorrect - try the next one.]" {
		t.Errorf("multiple choice %+v", mc)
	}
	if fib.Question != "Fill in: the valve is ___" || fib.Type != "fill-in" || len(fib.Choices) != 2 ||
		fib.Choices[0].Text != "shut" || fib.Choices[1].Text != "closed" || !fib.Choices[0].IsCorrect || !fib.Choices[1].IsCorrect {
		t.Errorf("fill-in %+v", fib)
	}
}

func TestCaptivateVersionUndetected(t *testing.T) {
	// No project.txt: Captivate is recognised by its runtime files, but its version is not said.
	r := runPkg(t, map[string]string{
		"imsmanifest.xml":  single("Cap", "index.html"),
		"index.html":       "<html><body></body></html>",
		"assets/js/CPM.js": captivateCPM,
	})
	wantMeta(t, r, map[string]any{"authoring_tool_version": Undetected, "slides": 3})
}

// zlibB64 packs JSON as iSpring packs presInfo: zlib, then base64.
func zlibB64(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// ispringQuizJSON is shaped like iSpring's quiz data (see tools/ispring.go for the public
// packages it follows; tools' fuzz tests start from a copy): one group of a multiple-choice,
// a type-in and a matching question, a hidden question, and a result slide that is no
// question.
const ispringQuizJSON = `{"d":{"T":"Check","sl":{"g":[{"i":"g1","T":"Question Group","s":{"rs":-1,"st":"allQuestions","up":true},"S":[
 {"i":"q1","tp":"MultipleChoice","D":{"h":"<p style=\"x\">Is dust harmful?</p>","a":"<p>Is dust harmful?</p>","r":[],"d":["Is dust harmful?"]},"v":true,
  "C":{"chs":[{"i":"c1","t":{"h":"<p>Yes</p>","d":["Yes"]},"c":true},{"i":"c2","t":{"h":"<p>No</p>","d":["No"]}}]},
  "s":{"F":{"c":{"v":{"d":["That's right!"]}},"i":{"v":{"d":["Not quite."]}},"at":{"v":{"d":["Try again."]}}}}},
 {"i":"q2","tp":"TypeIn","D":{"d":["I ____ here for 3 years. (work)"]},"v":true,"C":{"chs":[{"i":"c3","t":"have worked"},{"i":"c4","t":"'ve worked"}]}},
 {"i":"q3","tp":"Matching","D":{"d":["Match the tool"]},"v":true,"C":{"m":[{"p":{"i":"p1","t":{"d":["Broom"]}},"r":{"i":"r1","t":{"d":["Floor"]}}}]}},
 {"i":"q4","tp":"MultipleChoice","D":{"d":["Draft question"]},"v":false,"C":{"chs":[{"t":{"d":["a"]},"c":true}]}}]}],
 "r":{"g":[{"i":"r","tp":"ResultSlide","D":{"d":["Congratulations, you passed!"]}}]}}}}`

func TestISpring(t *testing.T) {
	pres := `{"i":"{CC3F}","ct":"Spring Cleaning","w":963,"h":538,"ui":"isfree_11.2.3_9020;","s":[
	 {"t":"Opening","I":"{D479}","s":"data/slide1.js","c":"data/slide1.css","d":false,"x":"Opening\r\nSpring cleaning rules\rStart at the top"},
	 {"st":"q","qt":true,"pp":"data/quizplayer.js","t":"","I":"{CC35}","s":"data/quiz1.js","d":false},
	 {"t":"","I":"{B8EF}","s":"data/slide4.js","x":"Wrap up\r\n4 |"}]}`
	quizJS := "(function(){\n\tvar loadHandler=window['q_{CC3F}'];\n\tvar quizInfo = \"" +
		base64.StdEncoding.EncodeToString([]byte(ispringQuizJSON)) + "\";\n\tvar skinSettings = {};\n\tloadHandler&&loadHandler(2, 'id', quizInfo, skinSettings, '');\n\t})();"
	r := runPkg(t, map[string]string{
		"imsmanifest.xml": single("Spring", "index.html"),
		"index.html": "<!DOCTYPE html>\n<!-- Created with iSpring --><!-- 979 682 --><!--version 11.2.3.9020 --><!--type html --><!--mainFolder ./ -->\n" +
			`<html><head><title>Spring Cleaning</title></head><body><div id="preloader"></div><script>var presInfo = "` + zlibB64(t, pres) + `";` +
			`var preloader = document.getElementById("preloader");</script></body></html>`,
		"data/player.js":     "",
		"data/slide1.js":     `(function(){var loadHandler=window['sl_{CC3F}'];loadHandler&&loadHandler(1, '<div id="spr0"></div>');})();`,
		"data/quiz1.js":      quizJS,
		"data/quizplayer.js": "",
	})
	if r.Tool != "iSpring" || r.Details.ContentType != ContentISpring {
		t.Fatalf("tool %q", r.Tool)
	}
	// Three slides in the player, the quiz one of them.
	wantMeta(t, r, map[string]any{"authoring_tool_version": "11.2.3.9020", "slides": 3})
	if got := section(t, r, "Opening"); got != "Opening\nSpring cleaning rules\nStart at the top" {
		t.Errorf("slide 1 = %q", got)
	}
	if got := section(t, r, "Slide 3"); got != "Wrap up\n4 |" {
		t.Errorf("slide 3 = %q", got)
	}
	section(t, r, "Slide 2 > Question 1")
	in := r.Details.Interactions
	if len(in) != 3 {
		t.Fatalf("interactions %+v", in)
	}
	if in[0].Question != "Is dust harmful?" || in[0].Type != "choice" || !in[0].Choices[0].IsCorrect || in[0].Choices[1].IsCorrect ||
		fmt.Sprint(in[0].Feedback) != "[That's right! Not quite.]" {
		t.Errorf("multiple choice %+v", in[0])
	}
	if in[1].Type != "fill-in" || len(in[1].Choices) != 2 || !in[1].Choices[1].IsCorrect || in[1].Choices[1].Text != "'ve worked" {
		t.Errorf("type-in %+v", in[1])
	}
	if in[2].Type != "matching" || in[2].Choices[0].Text != "Broom" || in[2].Choices[0].Category == nil || *in[2].Choices[0].Category != "Floor" {
		t.Errorf("matching %+v", in[2])
	}
}

func TestISpringQuizMaker(t *testing.T) {
	// A QuizMaker quiz published alone keeps its data in index.html; its slides are the
	// questions a learner sees (the hidden one is not).
	r := runPkg(t, map[string]string{
		"imsmanifest.xml": single("Quiz", "index.html"),
		"index.html": "<!DOCTYPE html>\n<!-- Created with iSpring --><!-- 1524 979 --><!--version 11.3.0.4 --><!--type html --><!--mainFolder  --><!--content quiz -->\n" +
			`<html><head></head><body><script>var data = "` + base64.StdEncoding.EncodeToString([]byte(ispringQuizJSON)) + `";</script></body></html>`,
		"data/player.js": "",
	})
	wantMeta(t, r, map[string]any{"authoring_tool_version": "11.3.0.4", "slides": 3})
	if len(r.Details.Interactions) != 3 {
		t.Errorf("interactions %+v", r.Details.Interactions)
	}
	section(t, r, "Check > Question 2")
}

// lectoraHead is the head every Lectora file starts with (see lectora.go for the public
// packages it follows).
const lectoraHead = "<!DOCTYPE html>\n<html lang=\"en\">\n<!--GENERATED BY:  Lectora Inspire v.16.2.2(10710) (http://www.trivantis.com) -->\n\n\n<head>\n"

func lectoraPageHTML(title, script, body string) string {
	return lectoraHead + `<title>` + title + `</title><link rel="stylesheet" href="trivantis.css" type="text/css" />` +
		`<script src="trivantis.js"></script><script src="trivantis-pagetracking.js"></script><script>` + script + `</script></head>` +
		`<body><div class="pageDIV">` + body + `</div></body></html>`
}

func TestLectora(t *testing.T) {
	question := lectoraPageHTML("Quiz - Page 2",
		"VarQuestion_0001 = new Variable( 'VarQuestion_0001', '', 0, 0, null, null, 'c', false )\n"+
			"function checkQuestions( bFeedback ) {\n  var ans_VarQuestion_0001 = VarQuestion_0001.getValue()\n"+
			"    if( ans_VarQuestion_0001 == '\\u0053\\u0068\\u0075\\u0074 \\u0069\\u0074' ) { action1915_1(f); }\n"+
			"    else if( ans_VarQuestion_0001 != '\\u0053\\u0068\\u0075\\u0074 \\u0069\\u0074' && ans_VarQuestion_0001 != '~~~null~~~' ) { action1915_2(f); }\n}\n"+
			"function action1915_1(fn) { if(!document.getElementById(\"DLG_Div_1915\"))trivAlert( 'action1915_1', 'Valves', 'Correct!', fn ); }\n"+
			"function action1915_2(fn) { if(!document.getElementById(\"DLG_Div_1915\"))trivAlert( 'action1915_2', 'Valves', 'You answered the question incorrectly.', fn ); }\n"+
			"qu1915 = new ObjInline('qu1915',null,140,200,801,242,1,0)\nqu1915.ansVar=VarQuestion_0001;\nqu1915.build()\n",
		`<fieldset style="border:0;"><div id="qu1915"></div><legend><div id="text1917"><p><span class="text1917Font1">What do you do with a leaking valve?</span></p></div></legend>`+
			`<div id="text1918"><label for="radio1919id"><p><span>Shut it</span></p></label></div>`+
			`<div id="radio1919"><input type="radio" name="qu1915" id="radio1919id" value="Shut it" onClick="VarQuestion_0001.set(this.value);"></div>`+
			`<div id="text1920"><label for="radio1921id"><p><span>Leave it &amp; go</span></p></label></div>`+
			`<div id="radio1921"><input type="radio" name="qu1915" id="radio1921id" value="Leave it &amp; go" onClick="VarQuestion_0001.set(this.value);"></div></fieldset>`)
	r := runPkg(t, map[string]string{
		"imsmanifest.xml":           single("Lec", "a001index.html"),
		"a001index.html":            lectoraHead + `<title>Valves</title><script>var bIsTitleManagerIndexFile = true;</script></head><frameset rows="0,*"></frameset></html>`,
		"a001content.html":          lectoraHead + `<title>Valves</title><script>var bIsTitleManagerIndexFile = true;</script></head><body></body></html>`,
		"a001titlemgr.html":         lectoraHead + `<title>Title Manager</title></head><body></body></html>`,
		"a001_intro_page_1.html":    lectoraPageHTML("Intro - Page 1", "", `<p>Valves control flow.</p>`),
		"a001_quiz_page_2.html":     question,
		"trivantis.js":              "",
		"trivantis-pagetracking.js": "",
	})
	if r.Tool != "Lectora" || r.Details.ContentType != ContentLectora {
		t.Fatalf("tool %q", r.Tool)
	}
	// Two pages; the frame, content and title-manager files are not pages.
	wantMeta(t, r, map[string]any{"authoring_tool_version": "16.2.2(10710)", "pages": 2})
	if got := section(t, r, "Intro - Page 1"); got != "Valves control flow." {
		t.Errorf("intro = %q", got)
	}
	if len(r.Details.Interactions) != 1 {
		t.Fatalf("interactions %+v", r.Details.Interactions)
	}
	in := r.Details.Interactions[0]
	if in.Question != "What do you do with a leaking valve?" || in.Type != "choice" || len(in.Choices) != 2 ||
		!in.Choices[0].IsCorrect || in.Choices[1].IsCorrect || in.Choices[1].Text != "Leave it & go" ||
		fmt.Sprint(in.Feedback) != "[Correct! You answered the question incorrectly.]" {
		t.Errorf("question %+v", in)
	}
}

func TestLectoraUndetected(t *testing.T) {
	// Trivantis runtime files but no generator comment: Lectora, version not said.
	r := runPkg(t, map[string]string{
		"imsmanifest.xml":           single("Lec", "page_1.html"),
		"page_1.html":               `<html><head><title>Page 1</title><script src="trivantis-pagetracking.js"></script></head><body><p>Start</p></body></html>`,
		"trivantis.js":              "",
		"trivantis-pagetracking.js": "",
	})
	wantMeta(t, r, map[string]any{"authoring_tool_version": Undetected, "pages": 1})
}

func TestLectoraScriptText(t *testing.T) {
	// Lectora 17 writes a page's text boxes in script (modelled on page_1.html of
	// ndungly/ZK_merkbeleving_quiz_test, Lectora Publisher 17.1.7).
	page := "<!DOCTYPE html>\n<html lang=\"en\">\n<!--GENERATED BY:  Lectora Publisher v.17.1.7(11468) (http://www.trivantis.com) -->\n" +
		`<head><title>Page 1</title><script src="trivantis-pagetracking.js"></script><script>` +
		`text835 = new ObjText('text835',null,266,348,200,31,1,7,null,'div',null,0 )` + "\n" +
		`text835.addInnerText('<div id=\"text835\"><p  style=\"margin-left:0px;\" >\n<span class=\"text835Font1\"  >Answer one\n</span ><span><script type=\"text/javascript\" /> try{document.write(Varscore.getValue());}catch(e){} </script></span></p >\n</div>\n');` + "\n" +
		`text835.build()</script></head><body><div class="pageDIV"></div></body></html>`
	r := runPkg(t, map[string]string{
		"imsmanifest.xml":           single("Lec", "page_1.html"),
		"index.html":                "<!DOCTYPE html>\n<html lang=\"en\">\n<!--GENERATED BY:  Lectora Publisher v.17.1.7(11468) (http://www.trivantis.com) -->\n<head></head></html>",
		"page_1.html":               page,
		"trivantis-pagetracking.js": "",
	})
	wantMeta(t, r, map[string]any{"authoring_tool_version": "17.1.7(11468)", "pages": 1})
	if got := section(t, r, "Page 1"); got != "Answer one" {
		t.Errorf("page = %q", got)
	}
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

func TestToolNamesInTextAreNotTools(t *testing.T) {
	// A course about authoring tools names them in its text, its comments and its file
	// names; none of that is the structure a tool publishes, so this stays a plain package.
	r := runPkg(t, map[string]string{
		"imsmanifest.xml": manifest12("Choosing a tool", []string{"Tools", "Compare", "compare.html", "Notes", "notes.html"}),
		"compare.html": `<html><head><title>Compare</title><!-- notes on iSpring and Lectora --></head><body>` +
			`<h1>Compare</h1><p>This page was created with iSpring Suite? No: it compares iSpring, Lectora, Elucidat and Rise 360.</p></body></html>`,
		"notes.html":                 `<p>Trivantis made Lectora; Elucidat is hosted at elucidat.com.</p>`,
		"media/ispring-logo.png":     "png",
		"media/elucidat-review.pdf":  "pdf",
		"media/trivantis-slides.pdf": "pdf",
	})
	if r.Tool != "" || r.Details.ContentType != ContentPackage {
		t.Fatalf("tool %q type %q, want a plain course package", r.Tool, r.Details.ContentType)
	}
	wantMeta(t, r, map[string]any{"web_pages": 2})
	if got := section(t, r, "Choosing a tool > Tools > Compare"); !strings.Contains(got, "iSpring, Lectora") {
		t.Errorf("page text %q", got)
	}
}
