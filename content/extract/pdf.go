package extract

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"
)

// pdf extracts one section per page ("Page 3") with github.com/ledongthuc/pdf (BSD-3-Clause,
// pure Go, a maintained fork of rsc.io/pdf). That library panics on some malformed files, so
// every call into it runs behind recover and a bad page becomes a warning. Encrypted files
// are refused by the library unless the user password is empty, and scanned pages without a
// text layer yield no text (OCR is out of scope); both are reported.
//
// What it does not bound: the library inflates a page's content stream whole, so one page's
// memory is that stream's size. The file size is capped by Limits.MaxFileBytes, and deflate
// cannot expand more than about 1000:1, which bounds it in the worst case.
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
	n := 0
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("%w: PDF page tree: %v", ErrInvalid, p)
			}
		}()
		n = rd.NumPage()
		if t := pdfInfo(rd, "Title"); t != "" {
			e.res.Title = t
		}
	}()
	if err != nil {
		return err
	}
	e.meta("pages", n)
	if n > e.lim.MaxPDFPages {
		e.warn("the PDF has %d pages; only the first %d were read", n, e.lim.MaxPDFPages)
		n = e.lim.MaxPDFPages
	}
	empty, failed := 0, 0
	for i := 1; i <= n; i++ {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		text, perr := pdfPage(rd, i)
		if perr != nil {
			failed++
			if failed <= 5 {
				e.warn("PDF page %d: %v", i, perr)
			}
			continue
		}
		text = tidyLines(text)
		if text == "" {
			empty++
			continue
		}
		e.add("Page "+strconv.Itoa(i), text)
	}
	if empty > 0 {
		e.warn("%d of %d PDF pages have no text layer (scanned images are not read)", empty, n)
	}
	return nil
}

func pdfPage(rd *pdf.Reader, i int) (text string, err error) {
	defer func() {
		if p := recover(); p != nil {
			text, err = "", fmt.Errorf("unreadable: %v", p)
		}
	}()
	p := rd.Page(i)
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
	return strings.TrimSpace(collapseSpace(v.Text()))
}
