package extract

import (
	"context"
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
