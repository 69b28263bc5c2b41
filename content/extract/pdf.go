package extract

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/content/extract/textnorm"
	"github.com/ledongthuc/pdf"
)

// pdf extracts one section per page ("Page 3") with github.com/ledongthuc/pdf (BSD-3-Clause,
// pure Go, a maintained fork of rsc.io/pdf). That library panics on some malformed files, so
// every call into it runs behind recover and a bad page becomes a warning. Encrypted files
// are refused by the library unless the user password is empty, and scanned pages without a
// text layer yield no text (OCR is out of scope); both are reported.
//
// The library trusts the file: it follows a page tree that refers to itself forever (its
// Page(n) and its inherited-attribute lookup loop on a cycle), and inflates every stream,
// however many filters are chained, without a bound. So before the library reads anything
// this walks the page tree itself, with a depth and node budget (pdfPages), checks each
// page's chain of parents, and decodes each stream the library will read (the page's
// content streams and its fonts' ToUnicode maps) into a counter first, failing the document
// when one stream decodes to more than Limits.MaxStreamBytes or all of them to more than
// Limits.MaxDecodedBytes. What that cannot bound (the library's own parsing of a stream
// within the cap, objects kept in compressed object streams, a page the library spends a
// long time on) is bounded by running extraction in a child process with a memory limit and
// a deadline (content/extract/sandbox).
func (e *extractor) pdf(r io.ReaderAt, size int64) (err error) {
	e.res.Details.ContentType = ContentPDF
	var rd *pdf.Reader
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("%w: PDF structure: %v", ErrInvalid, p)
			}
		}()
		rd, err = pdf.NewReader(r, size)
		if err != nil {
			err = fmt.Errorf("%w: PDF: %v", ErrInvalid, err)
		}
	}()
	if err != nil {
		return err
	}
	var pages []pdf.Value
	declared := 0
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("%w: PDF page tree: %v", ErrInvalid, p)
			}
		}()
		pages, err = e.pdfPages(rd)
		declared = rd.NumPage()
		if t := pdfInfo(rd, "Title"); t != "" {
			e.res.Title = t
		}
	}()
	if err != nil {
		return err
	}
	n := len(pages)
	if n < e.lim.MaxPDFPages || declared < n {
		// The walk saw the whole tree: what it found is the count, whatever Count says.
		declared = n
	}
	e.meta("pages", declared)
	if declared > n {
		e.warn("the PDF has %d pages; only the first %d were read", declared, n)
	}
	empty, failed := 0, 0
	for i, v := range pages {
		num := i + 1
		if err := e.ctx.Err(); err != nil {
			return err
		}
		if e.truncated {
			// Nothing more would be kept; the warning says the rest is not searchable.
			break
		}
		if err := e.pdfCheckPage(v, num); err != nil {
			return err
		}
		text, perr := pdfPage(pdf.Page{V: v})
		if perr != nil {
			failed++
			if failed <= 5 {
				e.warn("PDF page %d: %v", num, perr)
			}
			continue
		}
		text = tidyLines(text)
		if text == "" {
			empty++
			continue
		}
		e.add("Page "+strconv.Itoa(num), text)
	}
	if empty > 0 {
		e.warn("%d of %d PDF pages have no text layer (scanned images are not read)", empty, n)
	}
	return nil
}

// maxPDFDepth bounds the page tree's depth and a page's chain of parents. A balanced tree
// of 5,000 pages is a few levels deep; producers that nest one level per page section stay
// far below 64. A tree that refers to itself is infinitely deep, so this is also what
// detects the cycle without the object numbers the library keeps to itself.
const maxPDFDepth = 64

// pdfPages lists the leaves of the page tree in order, up to Limits.MaxPDFPages. Every node
// visited counts against a budget, so a tree whose kids repeat a subtree (a DAG that doubles
// at every level) ends as surely as one that refers to itself.
func (e *extractor) pdfPages(rd *pdf.Reader) ([]pdf.Value, error) {
	var pages []pdf.Value
	budget := 4*e.lim.MaxPDFPages + 1000
	var walk func(node pdf.Value, depth int) error
	walk = func(node pdf.Value, depth int) error {
		if depth > maxPDFDepth {
			return fmt.Errorf("%w: the PDF page tree refers to itself or is nested more than %d levels deep", ErrInvalid, maxPDFDepth)
		}
		if budget--; budget < 0 {
			return fmt.Errorf("%w: the PDF page tree has more than %d nodes (it may repeat itself)", ErrInvalid, 4*e.lim.MaxPDFPages+1000)
		}
		if err := e.ctx.Err(); err != nil {
			return err
		}
		switch node.Key("Type").Name() {
		case "Page":
			pages = append(pages, node)
		case "Pages":
			kids := node.Key("Kids")
			for i := 0; i < kids.Len() && len(pages) < e.lim.MaxPDFPages; i++ {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return pages, walk(rd.Trailer().Key("Root").Key("Pages"), 0)
}

// pdfCheckPage makes sure the library can read page num without looping or inflating
// without bound: its resources are found within maxPDFDepth parents (the library looks them
// up through Parent with no bound), and every stream the library decodes for its text stays
// within the stream and document limits.
func (e *extractor) pdfCheckPage(page pdf.Value, num int) (err error) {
	defer func() {
		// A malformed page panics in the library too, where pdfPage turns it into a
		// warning; only the limits matter here.
		if p := recover(); p != nil {
			err = nil
		}
	}()
	var res pdf.Value
	v := page
	for depth := 0; !v.IsNull(); depth++ {
		if depth > maxPDFDepth {
			return fmt.Errorf("%w: PDF page %d: its parents refer to themselves or are nested more than %d levels deep", ErrInvalid, num, maxPDFDepth)
		}
		if r := v.Key("Resources"); !r.IsNull() {
			res = r
			break
		}
		v = v.Key("Parent")
	}
	var streams []pdf.Value
	switch c := page.Key("Contents"); c.Kind() {
	case pdf.Stream:
		streams = append(streams, c)
	case pdf.Array:
		for i := 0; i < c.Len(); i++ {
			streams = append(streams, c.Index(i))
		}
	}
	fonts := res.Key("Font")
	for _, name := range fonts.Keys() {
		if tu := fonts.Key(name).Key("ToUnicode"); tu.Kind() == pdf.Stream {
			streams = append(streams, tu)
		}
	}
	for _, s := range streams {
		if err := e.pdfStream(s, num); err != nil {
			return err
		}
	}
	return nil
}

// pdfStream decodes one stream into a counter, through all its filters, and charges it to
// the document's budget.
func (e *extractor) pdfStream(s pdf.Value, num int) (err error) {
	defer func() {
		// A stream the library cannot decode (an unknown filter) panics there too, where
		// pdfPage turns it into a warning; the other streams are still checked.
		if p := recover(); p != nil {
			err = nil
		}
	}()
	if s.Kind() != pdf.Stream {
		return nil
	}
	rc := s.Reader()
	defer rc.Close()
	n, err := io.Copy(io.Discard, io.LimitReader(ctxReader{e, rc}, e.lim.MaxStreamBytes+1))
	if cerr := e.ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		return err
	}
	if n > e.lim.MaxStreamBytes {
		return fmt.Errorf("%w: PDF page %d: a stream decompresses to more than %s (the limit per stream)", ErrLimit, num, sizeString(e.lim.MaxStreamBytes))
	}
	return e.charge(n)
}

// ctxReader stops a long decode when the extraction is cancelled.
type ctxReader struct {
	e *extractor
	r io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.e.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func pdfPage(p pdf.Page) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("unreadable: %v", r)
		}
	}()
	if p.V.IsNull() {
		return "", nil
	}
	return p.GetPlainText(nil)
}

func pdfInfo(rd *pdf.Reader, key string) string {
	v := rd.Trailer().Key("Info").Key(key)
	if v.IsNull() {
		return ""
	}
	return strings.TrimSpace(textnorm.CollapseSpace(v.Text()))
}
