package extract

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/content/extract/extracttest"
)

func extractBytes(t *testing.T, kind Kind, data []byte, opts Options) (*Result, error) {
	t.Helper()
	return Extract(context.Background(), kind, Source{ReaderAt: bytes.NewReader(data), Size: int64(len(data))}, opts)
}

// Each hostile PDF fails on its own, quickly and with a message naming what is wrong,
// instead of looping forever or inflating gigabytes.
func TestHostilePDFs(t *testing.T) {
	for _, c := range []struct {
		doc  extracttest.Doc
		is   error
		want string
	}{
		{extracttest.SelfReferencingPageTree(), ErrInvalid, "page tree refers to itself"},
		{extracttest.SelfParentPage(), ErrInvalid, "parents refer to themselves"},
		{extracttest.RatioPDF(128 << 20), ErrLimit, "more than 16 MiB (the limit per stream)"},
		{extracttest.NestedFlatePDF(3, 1<<30), ErrLimit, "more than 16 MiB (the limit per stream)"},
		{extracttest.SlowPDF(200), ErrLimit, "more than 8 MiB in all"},
	} {
		t.Run(c.doc.Name, func(t *testing.T) {
			// The per-item budget is lowered so the repeated stream is caught after 8 pages.
			_, err := extractBytes(t, KindPDF, c.doc.Data, Options{Limits: Limits{MaxDecodedBytes: 8 << 20}})
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s (%d bytes): err = %v, want %v naming %q", c.doc.What, len(c.doc.Data), err, c.is, c.want)
			}
		})
	}
}

// Pages that repeat one big text stream stop being read once the text limit is reached,
// instead of being parsed to the end for nothing.
func TestPDFStopsAtTextLimit(t *testing.T) {
	res, err := extractBytes(t, KindPDF, extracttest.ManyPagesSameStreamPDF(2000, 1<<20).Data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sections) > 9 || !strings.Contains(strings.Join(res.Warnings, "\n"), "text limit reached") {
		t.Errorf("%d sections, warnings %q", len(res.Sections), res.Warnings)
	}
}

// The limits are settings, not constants: a document within them is read whole.
func TestStreamLimitIsOptional(t *testing.T) {
	doc := extracttest.RatioPDF(2 << 20)
	if _, err := extractBytes(t, KindPDF, doc.Data, Options{Limits: Limits{MaxStreamBytes: 1 << 20}}); !errors.Is(err, ErrLimit) {
		t.Fatalf("1 MiB stream limit: err = %v", err)
	}
	res, err := extractBytes(t, KindPDF, doc.Data, Options{Limits: Limits{MaxStreamBytes: 4 << 20}})
	if err != nil {
		t.Fatalf("4 MiB stream limit: %v", err)
	}
	if len(res.Sections) != 1 || !strings.HasPrefix(res.Sections[0].Text, "AAAA") {
		t.Errorf("sections %q", locs(res))
	}
}

// A PDF nested deeper than the library allows and deep HTML are read without a crash.
func TestDeepNesting(t *testing.T) {
	if _, err := extractBytes(t, KindPDF, extracttest.DeepNestingPDF(1<<20).Data, Options{}); err != nil && !errors.Is(err, ErrInvalid) {
		t.Errorf("deep PDF: %v", err)
	}
	res, err := extractBytes(t, KindHTML, extracttest.DeepHTML(200_000).Data, Options{})
	if err != nil || !strings.Contains(res.Sections[0].Text, "deep text") {
		t.Errorf("deep HTML: %v %+v", err, res)
	}
}

// A package whose files add up to more than the per-item budget fails, even though each
// file is under the per-file limit.
func TestPackageDecodedBudget(t *testing.T) {
	files := map[string]string{"imsmanifest.xml": single("Big", "index.html"), "index.html": "<p>hi</p>"}
	page := `<assessmentItem identifier="q">` + strings.Repeat("<p>x</p>", (1<<20)/8) + `</assessmentItem>`
	for i := range 40 {
		files["items/q"+strconv.Itoa(i)+".xml"] = page
	}
	_, err := Extract(context.Background(), KindPackage, Source{FS: mapFS(files)}, Options{Limits: Limits{MaxDecodedBytes: 16 << 20}})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "more than 16 MiB in all") {
		t.Fatalf("err = %v", err)
	}
}
