package extract

import (
	"context"
	"encoding/base64"
	"testing"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/content/extract/jsdata"
)

// The fuzz targets call the extractors directly, not through Extract, because Extract's
// recover would turn a panic into an error and hide the bug the fuzzer is looking for.

func newTestExtractor(lim Limits) *extractor {
	return &extractor{ctx: context.Background(), lim: lim.withDefaults(), window: 30}
}

// checkResult holds for every input: unique non-empty locations, valid UTF-8, a non-empty
// heading or text, and the text limit (headings included) respected.
func checkResult(t *testing.T, e *extractor) {
	t.Helper()
	seen := map[string]bool{}
	total := 0
	for _, s := range e.res.Sections {
		if s.Location == "" || (s.Text == "" && s.Heading == "") {
			t.Fatalf("empty location or text: %+v", s)
		}
		if seen[s.Location] {
			t.Fatalf("duplicate location %q", s.Location)
		}
		seen[s.Location] = true
		if !utf8.ValidString(s.Text) || !utf8.ValidString(s.Heading) || !utf8.ValidString(s.Location) {
			t.Fatalf("invalid UTF-8 in %q", s.Location)
		}
		total += len(s.Heading) + len(s.Text)
	}
	if total > e.lim.MaxTextBytes {
		t.Fatalf("kept %d bytes, limit %d", total, e.lim.MaxTextBytes)
	}
}

func FuzzHTML(f *testing.F) {
	for _, s := range []string{
		"<!doctype html><title>T</title><h1>A</h1><p>x</p><h2>B</h2><p>y</p>",
		"<h1><h2>nested</h1></h2><div hidden><h3>z</h3>w</div>",
		"<script>document.write('<h1>')</script><style>p{}</style><p>after",
		"<svg><title>t</title><text>s</text></svg><img alt='alt text'>",
		"<p style='display:none'>x<p>y</p>",
		"<<<>>><!-- c --><!DOCTYPE><h1 hidden>h</h1>&amp;&#0;&#x110000;",
		"\xff\xfe<\x00h\x001\x00>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e := newTestExtractor(Limits{MaxTextBytes: 4096, MaxSections: 50})
		e.htmlDoc(decodeText([]byte(src)))
		checkResult(t, e)
		// The same page as a package launch page and as Markdown must not panic either.
		_ = parseHTML(src).Text()
		e2 := newTestExtractor(Limits{MaxTextBytes: 4096, MaxSections: 50})
		e2.markdown(src)
		checkResult(t, e2)
		_ = jsdata.StripTags(src)
	})
}

func FuzzVTT(f *testing.F) {
	for _, s := range []string{
		"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHello\n\n00:01.000 --> 00:03.000 align:start\n<v A>Hi</v>\n",
		"1\n00:00:01,000 --> 00:00:02,000\nA\n\n2\n00:00:03,000 --> 00:00:01,000\nbackwards\n",
		"WEBVTT\n\nNOTE x\n\n99999:59:59.999 --> 99999:59:59.999\nlong\n",
		"-->\n-->\n\n00:00 --> \n\n1:2:3.4 --> 5:6:7.8\n<00:00:01.000>x",
		"WEBVTT\r\n\r\n00:00.000 --> 00:00.001\r\n&amp;&lt;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, k := range []Kind{KindVTT, KindSRT} {
			e := newTestExtractor(Limits{MaxTextBytes: 4096, MaxSections: 50})
			e.transcript(decodeText([]byte(src)), k)
			checkResult(t, e)
			if d, ok := e.res.Details.ExistingMetadata["transcript_duration"].(string); ok {
				if _, ok := parseTimestamp(d); !ok {
					t.Fatalf("transcript_duration %q does not parse", d)
				}
			}
		}
		e := newTestExtractor(Limits{MaxTextBytes: 4096, MaxSections: 50})
		e.plain(src)
		checkResult(t, e)
		_ = Detect("x", []byte(src))
	})
}

// FuzzJS covers the JavaScript string and data unwrapping the tool extractors share.
func FuzzJS(f *testing.F) {
	f.Add(`window.globalProvideData('data', '{"a":"\u00e9\ud83d\ude00\x41\u{1F600}"}');`)
	f.Add(`var d = {"question":"q","answers":[{"title":"a","correct":true,"matchTitle":"m"}],"feedback":{"a":"b"}};`)
	f.Fuzz(func(t *testing.T, src string) {
		b := []byte(src)
		if v, ok := jsdata.UnwrapCall(b, "globalProvideData"); ok {
			e := newTestExtractor(Limits{})
			e.findQuestions(v, 0)
			var parts []string
			jsdata.CollectText(v, &parts, map[string]bool{})
		}
		if len(b) > 0 {
			_, _, _ = jsdata.Unquote(b)
		}
	})
}

// FuzzCaptivate covers the JavaScript object-literal reader and the Captivate model walk on
// top of it: any input, complete or cut short, must read without panicking.
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
		e := newTestExtractor(Limits{MaxTextBytes: 4096, MaxSections: 50})
		e.findQuestions(v, 0)
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
			e := newTestExtractor(Limits{MaxTextBytes: 4096, MaxSections: 50, MaxStreamBytes: 1 << 16})
			m, _ := e.ispringDecode(payload)
			e.ispringQuiz(m, "")
			checkResult(t, e)
		}
		if v, ok := jsdata.Parse(data); ok {
			if m, ok := v.(map[string]any); ok {
				e := newTestExtractor(Limits{MaxTextBytes: 4096, MaxSections: 50})
				e.ispringQuiz(m, "Quiz")
				checkResult(t, e)
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
