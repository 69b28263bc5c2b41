package extract

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/content/extract/textnorm"
	"golang.org/x/text/encoding/charmap"
	xunicode "golang.org/x/text/encoding/unicode"
)

// decodeText turns file bytes into a Go string: UTF-8 (BOM dropped), UTF-16 with a BOM, and
// anything that is not valid UTF-8 read as Windows-1252, the encoding older Windows
// authoring tools and text editors wrote. Invalid bytes never reach the index.
func decodeText(b []byte) string {
	switch {
	case len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf:
		b = b[3:]
	case isUTF16(b):
		if out, err := xunicode.UTF16(xunicode.LittleEndian, xunicode.UseBOM).NewDecoder().Bytes(b); err == nil {
			return strings.ToValidUTF8(string(out), "\uFFFD")
		}
	}
	if utf8.Valid(b) {
		return string(b)
	}
	if out, err := charmap.Windows1252.NewDecoder().Bytes(b); err == nil {
		return string(out)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// tidyLines collapses spaces within lines, drops empty lines, and joins with "\n"; sections
// keep line breaks so paragraphs stay apart for the snippet and summary code.
func tidyLines(s string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if l = textnorm.CollapseSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// plainChunk is the size a run of paragraphs grows to before it becomes its own section:
// small enough that a hit points near the words, large enough to keep context.
const plainChunk = 2000

// plain splits plain text into paragraphs (blank-line separated) and groups consecutive
// paragraphs into sections located by their first paragraph's number.
func (e *extractor) plain(text string) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var cur []string
	curLen, first, n := 0, 0, 0
	flush := func() {
		if len(cur) > 0 {
			e.add("Paragraph "+strconv.Itoa(first), strings.Join(cur, "\n\n"))
		}
		cur, curLen = nil, 0
	}
	for para := range strings.SplitSeq(text, "\n\n") {
		if e.ctx.Err() != nil {
			return
		}
		p := tidyLines(para)
		if p == "" {
			continue
		}
		n++
		if curLen > 0 && curLen+len(p) > plainChunk {
			flush()
		}
		if len(cur) == 0 {
			first = n
		}
		cur = append(cur, p)
		curLen += len(p)
	}
	flush()
	// The spec defines no existing_metadata fields for plain text, so none are invented.
	e.res.Details.ContentType = ContentText
}
