package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// minimalPDF writes a valid PDF by hand (no PDF tool is available to the tests): one page
// per string, Helvetica text, an Info dictionary with a title, and a correct xref table.
// An empty string makes a page with no text layer, as a scanned page has.
func minimalPDF(title string, pages ...string) []byte {
	var objs []string
	// 1: catalog, 2: page tree, 3: font, 4: info; then page/content pairs.
	kids := ""
	for i := range pages {
		kids += fmt.Sprintf("%d 0 R ", 5+2*i)
	}
	objs = append(objs,
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids, len(pages)),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Title (%s) /Producer (hand) >>", title))
	for i, p := range pages {
		var content string
		if p != "" {
			var b strings.Builder
			b.WriteString("BT /F1 12 Tf 72 720 Td ")
			for j, line := range strings.Split(p, "\n") {
				if j > 0 {
					b.WriteString("0 -14 Td ")
				}
				fmt.Fprintf(&b, "(%s) Tj ", line)
			}
			b.WriteString("ET")
			content = b.String()
		}
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 6+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
	}
	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return out.Bytes()
}

func TestPDF(t *testing.T) {
	data := minimalPDF("Fire Safety Handbook", "Fire safety basics\nKeep exits clear", "", "Extinguisher classes")
	if k := Detect("handbook.pdf", data[:64]); k != KindPDF {
		t.Fatalf("Detect = %q", k)
	}
	res, err := Extract(context.Background(), KindPDF, Source{ReaderAt: bytes.NewReader(data), Size: int64(len(data))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Title != "Fire Safety Handbook" {
		t.Errorf("title %q", res.Title)
	}
	if got := locs(res); fmt.Sprint(got) != "[Page 1 Page 3]" {
		t.Fatalf("locations %q", got)
	}
	if got := section(t, res, "Page 1"); !strings.Contains(got, "Fire safety basics") || !strings.Contains(got, "Keep exits clear") {
		t.Errorf("page 1 = %q", got)
	}
	if got := section(t, res, "Page 3"); got != "Extinguisher classes" {
		t.Errorf("page 3 = %q", got)
	}
	wantMeta(t, res, map[string]any{"pages": 3})
	if res.Details.ContentType != ContentPDF || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "no text layer") {
		t.Errorf("content type %q, warnings %q", res.Details.ContentType, res.Warnings)
	}
}

func TestPDFBroken(t *testing.T) {
	good := minimalPDF("T", "hello")
	for name, data := range map[string][]byte{
		"not a pdf":  []byte("%PDF-1.4\nnothing else"),
		"truncated":  good[:len(good)/2],
		"bad xref":   bytes.Replace(good, []byte("xref"), []byte("xqef"), 1),
		"empty":      nil,
		"only magic": []byte("%PDF-"),
	} {
		res, err := Extract(context.Background(), KindPDF, Source{ReaderAt: bytes.NewReader(data), Size: int64(len(data))}, Options{})
		if err == nil && len(res.Sections) > 0 && name != "bad xref" {
			t.Errorf("%s: got sections %q", name, locs(res))
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}
