// Package extracttest builds hostile documents for tests and benchmarks of content
// extraction: PDFs whose page tree refers to itself, decompression bombs (one large-ratio
// deflate stream, deflate nested in deflate), deep nesting, and zip bombs in course
// packages. They are generated, never downloaded, and small on disk: what they cost is what
// a reader does with them.
package extracttest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"fmt"
	"io"
	"strings"
)

// Doc is one hostile (or normal) document: the file name it is uploaded under and its bytes.
type Doc struct {
	Name string
	Data []byte
	// What says what makes it hostile, for test and benchmark output.
	What string
}

// PDF writes a PDF from its objects, numbered from 1 in order: the catalog must be object
// 1. An object that is a Stream is written as a stream with its dictionary.
func PDF(objs ...any) []byte {
	var out bytes.Buffer
	out.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n", i+1)
		switch o := o.(type) {
		case Stream:
			fmt.Fprintf(&out, "<< %s /Length %d >>\nstream\n", o.Dict, len(o.Data))
			out.Write(o.Data)
			out.WriteString("\nendstream")
		default:
			fmt.Fprint(&out, o)
		}
		out.WriteString("\nendobj\n")
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return out.Bytes()
}

// Stream is a PDF stream object: extra dictionary entries (a /Filter) and its raw data.
type Stream struct {
	Dict string
	Data []byte
}

const font = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"

// TextPDF is a normal one-page PDF showing text.
func TextPDF(text string) []byte {
	return PDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		font,
		Stream{Data: []byte("BT /F1 12 Tf 72 720 Td (" + text + ") Tj ET")},
	)
}

// SelfReferencingPageTree is a PDF whose page tree lists itself as its only kid and claims
// a page: a reader that descends "to page 1" never gets there.
func SelfReferencingPageTree() Doc {
	return Doc{Name: "self-reference.pdf", What: "page tree that is its own kid", Data: PDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [2 0 R] /Count 1 >>",
	)}
}

// SelfParentPage is a PDF whose only page has no resources and is its own parent: a reader
// that looks up inherited resources through Parent never ends.
func SelfParentPage() Doc {
	return Doc{Name: "self-parent.pdf", What: "page that is its own parent", Data: PDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 3 0 R /Contents 4 0 R >>",
		Stream{Data: []byte("BT (hello) Tj ET")},
	)}
}

// deflateRepeat compresses n bytes that repeat unit with zlib at the best ratio, without
// holding them in memory.
func deflateRepeat(unit string, n int64) []byte {
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, flate.BestCompression)
	chunk := []byte(strings.Repeat(unit, (64<<10)/len(unit)))
	for n > 0 {
		m := min(int64(len(chunk)), n)
		_, _ = w.Write(chunk[:m])
		n -= m
	}
	_ = w.Close()
	return b.Bytes()
}

func zlibBytes(data []byte) []byte {
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, flate.BestCompression)
	_, _ = w.Write(data)
	_ = w.Close()
	return b.Bytes()
}

// bombContent is a page content stream of n bytes: one text string of n-14 bytes shown
// with Tj, which a reader that trusts the stream holds whole (and copies) as one token.
func bombContent(n int64) (head, unit, tail string, body int64) {
	return "BT (", "A", ") Tj ET", n - 11
}

// RatioPDF is a one-page PDF whose content stream is one FlateDecode layer that inflates
// to size bytes (about 1000:1: 128 MiB from ~128 KiB).
func RatioPDF(size int64) Doc {
	head, unit, tail, body := bombContent(size)
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, flate.BestCompression)
	_, _ = w.Write([]byte(head))
	chunk := []byte(strings.Repeat(unit, 64<<10))
	for n := body; n > 0; {
		m := min(int64(len(chunk)), n)
		_, _ = w.Write(chunk[:m])
		n -= m
	}
	_, _ = w.Write([]byte(tail))
	_ = w.Close()
	return Doc{Name: "ratio.pdf", What: fmt.Sprintf("one deflate stream, %d bytes to %d MiB", b.Len(), size>>20), Data: pagePDF(Stream{Dict: "/Filter /FlateDecode", Data: b.Bytes()})}
}

// NestedFlatePDF is a one-page PDF whose content stream is deflated layers times over
// (/Filter [/FlateDecode /FlateDecode …]) and inflates to size bytes in the end: each layer
// multiplies the ratio, so a file of a few KiB stands for gigabytes.
func NestedFlatePDF(layers int, size int64) Doc {
	head, unit, tail, body := bombContent(size)
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, flate.BestCompression)
	_, _ = w.Write([]byte(head))
	chunk := []byte(strings.Repeat(unit, 64<<10))
	for n := body; n > 0; {
		m := min(int64(len(chunk)), n)
		_, _ = w.Write(chunk[:m])
		n -= m
	}
	_, _ = w.Write([]byte(tail))
	_ = w.Close()
	data := b.Bytes()
	for i := 1; i < layers; i++ {
		data = zlibBytes(data)
	}
	filters := strings.TrimSpace(strings.Repeat("/FlateDecode ", layers))
	doc := pagePDF(Stream{Dict: "/Filter [" + filters + "]", Data: data})
	return Doc{Name: "nested-flate.pdf", What: fmt.Sprintf("%d nested deflate layers, %d bytes to %d MiB", layers, len(doc), size>>20), Data: doc}
}

// ManyOperandsPDF is a one-page PDF whose content stream (one deflate layer) is size bytes of
// numbers and no operator: a reader that stacks operands until the next operator holds
// them all.
func ManyOperandsPDF(size int64) Doc {
	data := deflateRepeat("1 ", size)
	return Doc{Name: "operands.pdf", What: fmt.Sprintf("%d MiB of operands without an operator", size>>20), Data: pagePDF(Stream{Dict: "/Filter /FlateDecode", Data: data})}
}

// DeepNestingPDF is a one-page PDF whose content stream opens depth arrays and never closes
// them.
func DeepNestingPDF(depth int) Doc {
	data := zlibBytes([]byte("BT " + strings.Repeat("[", depth) + " ET"))
	return Doc{Name: "deep.pdf", What: fmt.Sprintf("%d nested arrays", depth), Data: pagePDF(Stream{Dict: "/Filter /FlateDecode", Data: data})}
}

// ManyPagesSameStreamPDF is a PDF of pages pages that all show the same content stream of
// size bytes (one deflate layer): small on disk, size×pages to decode.
func ManyPagesSameStreamPDF(pages int, size int64) Doc {
	head, unit, tail, body := bombContent(size)
	data := zlibBytes([]byte(head + strings.Repeat(unit, int(body)) + tail))
	kids := strings.Repeat("3 0 R ", pages)
	doc := PDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids, pages),
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		font,
		Stream{Dict: "/Filter /FlateDecode", Data: data},
	)
	return Doc{Name: "repeated-stream.pdf", What: fmt.Sprintf("%d pages sharing one %d MiB stream", pages, size>>20), Data: doc}
}

// SlowPDF is a PDF of pages pages that all draw the same 1 MiB content stream of path
// operators (no text, nothing kept): every page costs a reader a full parse and nothing
// else, so reading it takes long in constant memory.
func SlowPDF(pages int) Doc {
	data := zlibBytes([]byte(strings.Repeat("0 0 m 1 1 l S\n", (1<<20)/14)))
	kids := strings.Repeat("3 0 R ", pages)
	doc := PDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids, pages),
		"<< /Type /Page /Parent 2 0 R /Resources << >> /Contents 4 0 R >>",
		Stream{Dict: "/Filter /FlateDecode", Data: data},
	)
	return Doc{Name: "slow.pdf", What: fmt.Sprintf("%d pages drawing one 1 MiB stream", pages), Data: doc}
}

func pagePDF(content Stream) []byte {
	return PDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		font,
		content,
	)
}

// Zip writes a zip of the given files (name → content, deflated).
func Zip(files map[string][]byte) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range files {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		_, _ = w.Write(data)
	}
	_ = zw.Close()
	return b.Bytes()
}

// manifest is a SCORM 1.2 manifest launching index.html.
const manifest = `<?xml version="1.0"?><manifest identifier="m" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" ` +
	`xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"><metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>` +
	`<organizations default="O"><organization identifier="O"><title>Bomb</title><item identifier="I1" identifierref="R1"><title>Page</title></item>` +
	`</organization></organizations><resources><resource identifier="R1" type="webcontent" adlcp:scormtype="sco" href="index.html">` +
	`<file href="index.html"/></resource></resources></manifest>`

// ZipBombPackage is a SCORM package whose launch page is size bytes of one repeated byte
// deflated (about 1000:1).
func ZipBombPackage(size int64) Doc {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "imsmanifest.xml", Method: zip.Deflate})
	_, _ = io.WriteString(w, manifest)
	w, _ = zw.CreateHeader(&zip.FileHeader{Name: "index.html", Method: zip.Deflate})
	chunk := bytes.Repeat([]byte{' '}, 64<<10)
	for n := size; n > 0; {
		m := min(int64(len(chunk)), n)
		_, _ = w.Write(chunk[:m])
		n -= m
	}
	_ = zw.Close()
	return Doc{Name: "zip-bomb.zip", What: fmt.Sprintf("SCORM package, a %d MiB page deflated to %d KiB", size>>20, b.Len()>>10), Data: b.Bytes()}
}

// ManyFilesPackage is a SCORM package of files question items of just under size bytes
// each: every one passes the archive's per-entry ratio check when size is at most its
// 1 MiB floor, and together they add up to files×size bytes to read.
func ManyFilesPackage(files int, size int64) Doc {
	m := map[string][]byte{"imsmanifest.xml": []byte(manifest), "index.html": []byte("<p>hello</p>")}
	// Question items (QTI) are read whole, as a real package's are.
	page := []byte(`<assessmentItem identifier="q">` + strings.Repeat("<p>x</p>", int(size-64)/8) + `</assessmentItem>`)
	for i := range files {
		m[fmt.Sprintf("data/q%d.xml", i)] = page
	}
	data := Zip(m)
	return Doc{Name: "many-files.zip", What: fmt.Sprintf("SCORM package, %d files of %d KiB", files, size>>10), Data: data}
}

// NestedZipPackage is a SCORM package that holds a zip bomb as one of its files.
func NestedZipPackage() Doc {
	inner := ZipBombPackage(64 << 20).Data
	data := Zip(map[string][]byte{"imsmanifest.xml": []byte(manifest), "index.html": []byte("<p>outer</p>"), "inner.zip": inner})
	return Doc{Name: "nested.zip", What: "SCORM package holding a zip bomb", Data: data}
}

// DeepHTML is an HTML page of depth nested elements.
func DeepHTML(depth int) Doc {
	return Doc{Name: "deep.html", What: fmt.Sprintf("%d nested elements", depth),
		Data: []byte("<html><body>" + strings.Repeat("<div>", depth) + "deep text" + strings.Repeat("</div>", depth) + "</body></html>")}
}

// HugeVTT is a WebVTT transcript of size bytes of cues.
func HugeVTT(size int64) Doc {
	var b strings.Builder
	b.WriteString("WEBVTT\n\n")
	for i := 0; int64(b.Len()) < size; i++ {
		fmt.Fprintf(&b, "%02d:%02d:%02d.000 --> %02d:%02d:%02d.500\nline %d of a very long transcript\n\n", i/3600%100, i/60%60, i%60, i/3600%100, i/60%60, i%60, i)
	}
	return Doc{Name: "huge.vtt", What: fmt.Sprintf("%d MiB transcript", size>>20), Data: []byte(b.String())}
}

// Set is the hostile set the benchmark imports and the tests run: every kind of attack
// above, sized as the issue reported them (a 128 KiB PDF for 128 MiB, a PDF of about a
// kilobyte for a gigabyte).
func Set() []Doc {
	return []Doc{
		SelfReferencingPageTree(),
		SelfParentPage(),
		RatioPDF(128 << 20),
		NestedFlatePDF(3, 1<<30),
		ManyOperandsPDF(15 << 20),
		DeepNestingPDF(1 << 20),
		ManyPagesSameStreamPDF(2000, 1<<20),
		SlowPDF(3000),
		ZipBombPackage(1 << 30),
		ManyFilesPackage(400, 1<<20),
		NestedZipPackage(),
		DeepHTML(200_000),
		HugeVTT(30 << 20),
	}
}
