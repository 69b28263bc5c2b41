package tools

import (
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/content/extract/jsdata"
)

// The fuzz targets call the readers directly with testHost, not through content/extract,
// because Extract's recover would turn a panic into an error and hide the bug the fuzzer is
// looking for. The limits extract enforces on what the readers find (text size, unique
// locations) are extract's to test; testHost checks what the readers themselves owe:
// valid UTF-8 and no empty question.

// testHost is a Host over an in-memory package that records what the readers find.
type testHost struct {
	t         *testing.T
	fsys      fstest.MapFS
	maxStream int64 // the largest payload Inflate reads; 0 means 1 MiB
	maxQs     int   // the most interactions kept; 0 means 5,000
	sections  []string
	questions []Interaction
	warnings  []string
}

func (h *testHost) ReadFile(name string) ([]byte, error) { return fs.ReadFile(h.fsys, name) }

func (h *testHost) Probe(name string) []byte {
	b, _ := fs.ReadFile(h.fsys, name)
	return b[:min(len(b), 64<<10)]
}

func (h *testHost) Inflate(what string, r io.Reader) ([]byte, bool) {
	limit := h.maxStream
	if limit == 0 {
		limit = 1 << 20
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false
	}
	if int64(len(b)) > limit {
		h.Warn("%s decompresses to more than %d bytes; not read", what, limit)
		return nil, false
	}
	return b, true
}

func (h *testHost) PageText(raw []byte) (string, string) { return "", jsdata.StripTags(string(raw)) }

func (h *testHost) Warn(format string, args ...any) {
	h.warnings = append(h.warnings, fmt.Sprintf(format, args...))
}

func (h *testHost) AddSection(loc, heading, text string) {
	h.t.Helper()
	if !utf8.ValidString(loc) || !utf8.ValidString(heading) || !utf8.ValidString(text) {
		h.t.Fatalf("invalid UTF-8 in section %q", loc)
	}
	h.sections = append(h.sections, loc+" | "+heading+" | "+text)
}

func (h *testHost) AddInteraction(in Interaction) bool {
	h.t.Helper()
	if in.Question == "" && len(in.Choices) == 0 {
		h.t.Fatalf("empty interaction %+v", in)
	}
	max := h.maxQs
	if max == 0 {
		max = 5000
	}
	if len(h.questions) < max {
		h.questions = append(h.questions, in)
	}
	return len(h.questions) < max
}

// captivateCPM is shaped like a Classic Captivate assets/js/CPM.js (see captivate.go for the
// public packages it follows; content/extract's package tests read a copy of it through
// Extract): the model literal first, with player references (cp.fd, cp.ch) among the data,
// then the runtime. Slide303 is not in project_main.slides, so it does not
// play; Slide202 is a multiple-choice question slide whose right answer is named both ways
// Captivate does (ic on one answer, cal listing another's aid); Slide404 is a blank to fill.
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

// ispringQuizJSON is shaped like iSpring's quiz data (see ispring.go for the public packages
// it follows; content/extract's package tests read a copy of it through Extract): one group
// of a multiple-choice, a type-in and a matching question, a hidden question, and a result
// slide that is no question.
const ispringQuizJSON = `{"d":{"T":"Check","sl":{"g":[{"i":"g1","T":"Question Group","s":{"rs":-1,"st":"allQuestions","up":true},"S":[
 {"i":"q1","tp":"MultipleChoice","D":{"h":"<p style=\"x\">Is dust harmful?</p>","a":"<p>Is dust harmful?</p>","r":[],"d":["Is dust harmful?"]},"v":true,
  "C":{"chs":[{"i":"c1","t":{"h":"<p>Yes</p>","d":["Yes"]},"c":true},{"i":"c2","t":{"h":"<p>No</p>","d":["No"]}}]},
  "s":{"F":{"c":{"v":{"d":["That's right!"]}},"i":{"v":{"d":["Not quite."]}},"at":{"v":{"d":["Try again."]}}}}},
 {"i":"q2","tp":"TypeIn","D":{"d":["I ____ here for 3 years. (work)"]},"v":true,"C":{"chs":[{"i":"c3","t":"have worked"},{"i":"c4","t":"'ve worked"}]}},
 {"i":"q3","tp":"Matching","D":{"d":["Match the tool"]},"v":true,"C":{"m":[{"p":{"i":"p1","t":{"d":["Broom"]}},"r":{"i":"r1","t":{"d":["Floor"]}}}]}},
 {"i":"q4","tp":"MultipleChoice","D":{"d":["Draft question"]},"v":false,"C":{"chs":[{"t":{"d":["a"]},"c":true}]}}]}],
 "r":{"g":[{"i":"r","tp":"ResultSlide","D":{"d":["Congratulations, you passed!"]}}]}}}}`

// FuzzQuestions covers the walk for question-shaped objects in unwrapped tool data.
func FuzzQuestions(f *testing.F) {
	f.Add(`window.globalProvideData('data', '{"a":"\u00e9\ud83d\ude00\x41\u{1F600}"}');`)
	f.Add(`globalProvideData('data', {"question":"q","answers":[{"title":"a","correct":true,"matchTitle":"m"}],"feedback":{"a":"b"}});`)
	f.Fuzz(func(t *testing.T, src string) {
		if v, ok := jsdata.UnwrapCall([]byte(src), "globalProvideData"); ok {
			findQuestions(&testHost{t: t, maxQs: 50}, v, 0)
		}
	})
}

// FuzzCaptivate covers the Captivate model walk on top of the object-literal reader: any
// input, complete or cut short, must read without panicking.
func FuzzCaptivate(f *testing.F) {
	f.Add(captivateCPM)
	f.Add(`{a:{b:[1,'x',cp.fd,-2.5e3,{c:"\u00e9"}],d:true},e:new X()}`)
	f.Add(`{project_main:{slides:'S,S,'},S:{si:[{n:'S'}],qs:'S'},Sc:{accstr:'$$x$$'}}`)
	f.Add(`{/*c*/ 'k' : [ , , ] // x` + "\n" + `}`)
	f.Fuzz(func(t *testing.T, src string) {
		b := []byte(src)
		v, _ := jsdata.Literal(b)
		d, _ := v.(map[string]any)
		cp := cpModel(d)
		for k := range d {
			_ = cp.text(k)
			_, _ = cp.question(k)
		}
		findQuestions(&testHost{t: t, maxQs: 50}, v, 0)
		if loc := captivateData.FindIndex(b); loc != nil {
			_, _ = jsdata.Literal(b[loc[1]-1:])
		}
	})
}

// FuzzISpring covers the decoding of iSpring's packed data and the quiz walk: a payload that
// inflates far beyond its size must stop at the limit.
func FuzzISpring(f *testing.F) {
	f.Add([]byte(ispringQuizJSON))
	f.Add([]byte(`{"d":{"sl":{"g":[{"s":{"st":"random","rs":1},"S":[{"tp":"Matching","C":{"m":[{"p":{},"r":"x"}]}},{"tp":"X","D":"q","C":{"chs":[{"t":{"d":[1]}}]}}]}]}}}`))
	f.Add([]byte("x\x9c\x03\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, payload := range [][]byte{data, []byte(base64.StdEncoding.EncodeToString(data))} {
			h := &testHost{t: t, maxStream: 1 << 16}
			m, _ := ispringDecode(h, payload)
			ispringQuiz(h, m, "")
		}
		if v, ok := jsdata.Parse(data); ok {
			if m, ok := v.(map[string]any); ok {
				ispringQuiz(&testHost{t: t}, m, "Quiz")
				_, _ = ispringQuestion(m)
			}
		}
	})
}

// FuzzLectora covers the reading of Lectora question pages.
func FuzzLectora(f *testing.F) {
	f.Add(`qu1.ansVar=V;<fieldset><legend>Q</legend><input type="radio" name="qu1" value="a&amp;b"><input type='checkbox' name=qu1 value='c'></fieldset>if( ans_V == '\u0061&b,c' ) trivAlert( 'action1_1', 't', 'ok\'d', fn );`)
	f.Add(`ans_V ==`)
	f.Add(`t1.addInnerText('<div id=\"t1\"><p><span>Antwoord 1\n</span></p></div>\n');t2.addInnerText("`)
	f.Add(`trivAlert( 'actionqu7_2', '', "`)
	f.Fuzz(func(t *testing.T, src string) {
		for _, in := range lectoraQuestions([]byte(src)) {
			if in.Choices == nil && in.Question == "" {
				t.Fatalf("empty interaction kept")
			}
		}
		_ = lectoraIsPage([]byte(src))
		for _, s := range lectoraInnerText([]byte(src)) {
			if s == "" {
				t.Fatalf("empty text kept")
			}
		}
	})
}
