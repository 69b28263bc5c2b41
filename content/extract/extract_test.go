package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// Every fixture in these tests is written here by hand; nothing is downloaded.

func run(t *testing.T, kind Kind, content string) *Result {
	t.Helper()
	res, err := Extract(context.Background(), kind, Source{FS: fstest.MapFS{"f": {Data: []byte(content)}}, Name: "f"}, Options{})
	if err != nil {
		t.Fatalf("Extract(%s): %v", kind, err)
	}
	return res
}

func locs(r *Result) []string {
	var out []string
	for _, s := range r.Sections {
		out = append(out, s.Location)
	}
	return out
}

func section(t *testing.T, r *Result, loc string) string {
	t.Helper()
	return sectionOf(t, r, loc).Text
}

func sectionOf(t *testing.T, r *Result, loc string) Section {
	t.Helper()
	for _, s := range r.Sections {
		if s.Location == loc {
			return s
		}
	}
	t.Fatalf("no section %q; have %q", loc, locs(r))
	return Section{}
}

func wantMeta(t *testing.T, r *Result, want map[string]any) {
	t.Helper()
	got, _ := json.Marshal(r.Details.ExistingMetadata)
	w, _ := json.Marshal(want)
	if !bytes.Equal(got, w) {
		t.Errorf("existing_metadata = %s, want %s", got, w)
	}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		name, head string
		want       Kind
	}{
		{"a.pdf", "%PDF-1.7\n...", KindPDF},
		{"notes.txt", "%PDF-1.4 mislabelled", KindPDF},
		{"c.zip", "PK\x03\x04rest", KindPackage},
		{"x.bin", "WEBVTT\n\n00:00.000 --> 00:01.000\nhi", KindVTT},
		{"x", "\xef\xbb\xbfWEBVTT - title\n", KindVTT},
		{"x", "1\n00:00:01,000 --> 00:00:02,000\nHello\n", KindSRT},
		{"x", "<!DOCTYPE html><html><p>x</p>", KindHTML},
		{"x", "  <html lang=en>", KindHTML},
		{"page.html", "just words", KindHTML},
		{"readme.md", "just words", KindMarkdown},
		{"x", "# Title\n\nSome [link](http://x).\n", KindMarkdown},
		{"x", "Plain words.\n\nMore words.", KindText},
		{"x", "\x00\x01\x02binary", KindUnknown},
		{"WEBVTTX.txt", "WEBVTTX not a header", KindText},
		{"x.srt", "", KindSRT},
	}
	for _, c := range cases {
		if got := Detect(c.name, []byte(c.head)); got != c.want {
			t.Errorf("Detect(%q, %q) = %q, want %q", c.name, c.head, got, c.want)
		}
	}
}

func TestPlainText(t *testing.T) {
	long := strings.Repeat("word ", 500) // 2,500 bytes: its own section
	r := run(t, KindText, "First  para\nline two.\n\n\n"+long+"\n\nThird.\r\n\r\nFourth.")
	if got := locs(r); fmt.Sprint(got) != "[Paragraph 1 Paragraph 2 Paragraph 3]" {
		t.Fatalf("locations %q", got)
	}
	if got := section(t, r, "Paragraph 1"); got != "First para\nline two." {
		t.Errorf("paragraph 1 = %q", got)
	}
	if got := section(t, r, "Paragraph 3"); got != "Third.\n\nFourth." {
		t.Errorf("paragraph 3 = %q", got)
	}
	if r.Details.ContentType != ContentText {
		t.Errorf("content type %q", r.Details.ContentType)
	}
	wantMeta(t, r, map[string]any{})
}

func TestPlainTextLegacyEncoding(t *testing.T) {
	// Windows-1252 "café – naïve" is not valid UTF-8.
	r := run(t, KindText, "caf\xe9 \x96 na\xefve")
	if got := r.Sections[0].Text; got != "café – naïve" {
		t.Errorf("got %q", got)
	}
}

func TestMarkdown(t *testing.T) {
	src := "---\ntitle: \"Front\"\n---\nIntro text.\n\n# Safety\n\nWear **gloves**; see [the guide](http://x/g).\n\n" +
		"## Gloves\n\n- Nitrile ![a glove](g.png)\n- Latex\n\n```\n# not a heading\nrm -rf\n```\n\n" +
		"Fire\n----\n\nUse the `extinguisher`.\n\n### Classes ###\n\n| A | B |\n|---|---|\n| wood | oil |\n"
	r := run(t, KindMarkdown, src)
	if r.Title != "Front" {
		t.Errorf("title %q", r.Title)
	}
	want := []string{"Front", "Safety", "Safety > Gloves", "Safety > Fire", "Safety > Fire > Classes"}
	if got := locs(r); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("locations %q, want %q", got, want)
	}
	if got := section(t, r, "Safety"); got != "Wear gloves; see the guide." {
		t.Errorf("Safety = %q", got)
	}
	g := section(t, r, "Safety > Gloves")
	if !strings.Contains(g, "Nitrile a glove") || !strings.Contains(g, "# not a heading") {
		t.Errorf("Gloves = %q", g)
	}
	if got := section(t, r, "Safety > Fire > Classes"); got != "A B\nwood oil" {
		t.Errorf("Classes = %q", got)
	}
}

func TestHTML(t *testing.T) {
	src := `<!doctype html><html><head><title>Fire &amp; Safety</title>
<meta name="generator" content="Hand">
<style>h1{color:red}</style><script>var secret = "<h1>nope</h1>";</script></head>
<body><p>Welcome <b>W</b>orld.</p>
<h1>Basics</h1><p>Keep calm.</p><div hidden><p>Hidden answer key</p></div>
<h2>Exits <small>(all)</small></h2><ul><li>Front</li><li>Back</li></ul>
<span style="display: none">invisible</span><p aria-hidden="true">decor</p>
<img alt="Exit sign map" src="m.png"><noscript>enable js</noscript>
<h2>Alarms</h2><p>Press &lt;red&gt; button</p>
<h1>Next</h1><table><tr><td>a</td><td>b</td></tr></table>
<template><p>tpl</p></template></body></html>`
	r := run(t, KindHTML, src)
	if r.Title != "Fire & Safety" {
		t.Errorf("title %q", r.Title)
	}
	want := []string{"Fire & Safety", "Basics", "Basics > Exits (all)", "Basics > Alarms", "Next"}
	if got := locs(r); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("locations %q, want %q", got, want)
	}
	if got := section(t, r, "Fire & Safety"); got != "Welcome World." {
		t.Errorf("intro = %q", got)
	}
	if got := section(t, r, "Basics"); got != "Keep calm." {
		t.Errorf("Basics = %q", got)
	}
	if got := section(t, r, "Basics > Exits (all)"); got != "Front\nBack\nExit sign map" {
		t.Errorf("Exits = %q", got)
	}
	if got := section(t, r, "Basics > Alarms"); got != "Press <red> button" {
		t.Errorf("Alarms = %q", got)
	}
	for _, s := range r.Sections {
		for _, bad := range []string{"secret", "nope", "Hidden", "invisible", "decor", "enable js", "tpl", "color"} {
			if strings.Contains(s.Text, bad) {
				t.Errorf("section %q leaks %q: %q", s.Location, bad, s.Text)
			}
		}
	}
	wantMeta(t, r, map[string]any{"web_pages": 1})
}

func TestVTT(t *testing.T) {
	src := "WEBVTT - lecture\n\nNOTE written by hand\n\nSTYLE\n::cue { color: red }\n\n" +
		"intro\n00:00:01.000 --> 00:00:04.000 align:start\n<v Ann>Hello <i>there</i>.</v>\n\n" +
		"00:05.000 --> 00:09.500\nFire &amp; safety\ntoday.\n\n" +
		"00:00:09.500 --> 00:00:12.000\nFire &amp; safety\ntoday.\n\n" + // roll-up repeat
		"00:00:40.250 --> 00:00:45.000\nSecond window.\n\n" +
		"00:01:23.000 --> 00:01:30.750\n<c.yellow>Third</c> <00:01:25.000>window.\n\n" +
		"bad --> timing\nskipped\n"
	r := run(t, KindVTT, src)
	want := []string{"00:00:01", "00:00:40", "00:01:23"}
	if got := locs(r); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("locations %q, want %q", got, want)
	}
	if got := section(t, r, "00:00:01"); got != "Hello there.\nFire & safety today." {
		t.Errorf("first window = %q", got)
	}
	if got := section(t, r, "00:01:23"); got != "Third window." {
		t.Errorf("third window = %q", got)
	}
	wantMeta(t, r, map[string]any{"transcript_duration": "00:01:30.750"})
	if r.Details.ContentType != ContentVTT || len(r.Warnings) != 1 {
		t.Errorf("content type %q, warnings %q", r.Details.ContentType, r.Warnings)
	}
}

func TestSRT(t *testing.T) {
	src := "1\r\n00:00:00,500 --> 00:00:02,000\r\n<i>Welcome</i>\r\n\r\n2\r\n00:00:31,000 --> 00:00:33,000\r\nLine one\r\nline two\r\n\r\n" +
		"3\r\n01:00:00,000 --> 01:00:02,345 X1:1 X2:2\r\nAn hour in.\r\n"
	r := run(t, KindSRT, src)
	want := []string{"00:00:00", "00:00:31", "01:00:00"}
	if got := locs(r); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("locations %q, want %q", got, want)
	}
	if got := section(t, r, "00:00:31"); got != "Line one line two" {
		t.Errorf("cue 2 = %q", got)
	}
	wantMeta(t, r, map[string]any{"transcript_duration": "01:00:02.345"})
}

func TestTranscriptWindowOption(t *testing.T) {
	src := "WEBVTT\n\n00:00.000 --> 00:01.000\na\n\n00:05.000 --> 00:06.000\nb\n\n00:10.000 --> 00:11.000\nc\n"
	res, err := Extract(context.Background(), KindVTT, Source{ReaderAt: strings.NewReader(src), Size: int64(len(src))},
		Options{TranscriptWindowSeconds: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := locs(res); fmt.Sprint(got) != "[00:00:00 00:00:05 00:00:10]" {
		t.Errorf("locations %q", got)
	}
}

func TestLocationsUnique(t *testing.T) {
	r := run(t, KindMarkdown, "# A\nx\n# A\ny\n# A (2)\nz\n")
	if got := locs(r); fmt.Sprint(got) != "[A A (2) A (2) (2)]" && fmt.Sprint(got) != "[A A (2) A (2) (3)]" {
		t.Errorf("locations %q", got)
	}
	seen := map[string]bool{}
	for _, l := range locs(r) {
		if seen[l] {
			t.Errorf("duplicate location %q", l)
		}
		seen[l] = true
	}
}

func TestTextLimit(t *testing.T) {
	src := strings.Repeat("para graph text here\n\n", 10000)
	res, err := Extract(context.Background(), KindText, Source{ReaderAt: strings.NewReader(src), Size: int64(len(src))},
		Options{Limits: Limits{MaxTextBytes: 5000}})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range res.Sections {
		total += len(s.Text)
	}
	if total > 5000 || total < 4000 {
		t.Errorf("kept %d bytes of text", total)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "limit") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestFileLimit(t *testing.T) {
	src := strings.Repeat("x", 2000)
	_, err := Extract(context.Background(), KindHTML, Source{ReaderAt: strings.NewReader(src), Size: 2000},
		Options{Limits: Limits{MaxFileBytes: 1000}})
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
}

func TestUnsupported(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		src  Source
	}{{KindUnknown, Source{}}, {"exe", Source{}}, {KindPackage, Source{}}, {KindHTML, Source{}}} {
		if _, err := Extract(context.Background(), c.kind, c.src, Options{}); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%q: err = %v", c.kind, err)
		}
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Extract(ctx, KindText, Source{ReaderAt: strings.NewReader("x"), Size: 1}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestJSONShape(t *testing.T) {
	r := run(t, KindText, "x")
	b, _ := json.Marshal(r.Details)
	if string(b) != `{"content_type":"text","existing_metadata":{},"interactions":[]}` {
		t.Errorf("details = %s", b)
	}
	cat := "fruit"
	b, _ = json.Marshal(Interaction{Question: "q", Choices: []Choice{{Text: "a", IsCorrect: true, Category: &cat}, {Text: "b"}},
		Feedback: []string{}, Type: "choice"})
	want := `{"question":"q","choices":[{"text":"a","is_correct":true,"category":"fruit"},{"text":"b","is_correct":false,"category":null}],"feedback":[],"type":"choice","range":null}`
	if string(b) != want {
		t.Errorf("interaction = %s", b)
	}
}
