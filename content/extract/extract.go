// Package extract turns an imported content item into searchable text: a list of sections,
// each with the location it comes from inside the item, plus the spec's content_details
// (spec 001, "Content and content_details": content_type, existing_metadata, interactions).
// Its sections become indexer.Chunks through content.Chunks (Section.Location →
// Chunk.Location, Section.Heading and Section.Text → Chunk.Text; a long section is split).
//
// Kinds and their locations:
//
//   - course packages (SCORM, AICC, cmi5, xAPI): the navigation path of each launchable
//     page ("Org > Module > Page"), or for a recognised authoring tool its own structure
//     ("Scene > Slide", "Lesson", "Chapter > Page");
//   - PDF: "Page 3";
//   - HTML and Markdown: the heading path ("Safety > Gloves");
//   - WebVTT and SRT transcripts: the start timestamp of a window of cues ("00:01:23");
//   - plain text: the first paragraph of a run of paragraphs ("Paragraph 4").
//
// Everything here reads hostile input: every file read is capped (Limits.MaxFileBytes), every
// decompressed stream (Limits.MaxStreamBytes) and all the bytes one item decompresses or
// reads together (Limits.MaxDecodedBytes), the total text kept is capped
// (Limits.MaxTextBytes), structures that may refer to themselves (a PDF page tree) are walked
// with a depth and node budget, malformed input degrades to warnings, and no input makes the
// package panic (parsers run behind recover as a last line of defence, and fuzz tests look
// for the panics that recover would hide). A third-party parser cannot be interrupted
// mid-call, so callers that read untrusted uploads run Extract in a child process with a
// memory limit and a deadline (content/extract/sandbox).
//
// Sub-packages hold what is a unit of its own: content/extract/tools recognises and reads
// the authoring tools' formats, through a port (tools.Host) that keeps them within this
// package's limits; content/extract/jsdata reads the JSON and JavaScript data those tools
// embed; content/extract/textnorm holds the text rules every reader shares.
package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/content/extract/textnorm"
	"github.com/lectern-lms/lectern/content/extract/tools"
)

// Kind is the kind of a content item, which decides how its text is extracted.
type Kind string

// The kinds Extract handles.
const (
	KindUnknown  Kind = ""
	KindPackage  Kind = "package" // a course package (zip) opened as an fs.FS
	KindPDF      Kind = "pdf"
	KindHTML     Kind = "html"
	KindVTT      Kind = "vtt"
	KindSRT      Kind = "srt"
	KindMarkdown Kind = "markdown"
	KindText     Kind = "text"
)

// ErrUnsupported means the kind is unknown or the source does not fit the kind (a package
// without an fs.FS, a file without a name or reader).
var ErrUnsupported = errors.New("extract: unsupported content")

// ErrLimit means the content needs more than a limit allows (Limits.MaxStreamBytes,
// Limits.MaxDecodedBytes, or, in a sandbox, the memory and time it is given): a
// decompression bomb, or a document too big to read safely. The message names the limit.
var ErrLimit = errors.New("the content exceeds a limit")

// ErrInvalid wraps problems that make the content unreadable as a whole (a PDF without a
// cross-reference table, a package without a course manifest). Smaller problems are warnings.
var ErrInvalid = errors.New("extract: invalid content")

// Result is what Extract found in one content item.
type Result struct {
	// Title is the item's own title (package title, HTML <title>, first Markdown heading,
	// PDF Info title), or "" when it has none.
	Title string
	// Sections are the searchable pieces, in reading order, with unique non-empty
	// locations and a non-empty heading or text.
	Sections []Section
	// Details is the spec's content_details object.
	Details Details
	// Tool names the authoring tool a package was made with ("Articulate Storyline"), or "".
	Tool string
	// Warnings are non-fatal problems: unreadable pages, text cut at a limit, data files that
	// did not parse.
	Warnings []string
}

// Section is one searchable piece of the content: it becomes one indexer.Chunk.
type Section struct {
	// Location says where the text is: a navigation or heading path, "Page 3", "00:01:23".
	Location string
	// Heading is the heading text that opens the section, one heading a line: its own
	// heading (or slide, page or lesson title), after the enclosing headings that no earlier
	// section opened with. It is searchable text like Text; it is kept apart so that the
	// chunker can open every chunk of a long section with it and summaries are drawn from
	// the body. Location stays the full path either way.
	Heading string `json:",omitempty"`
	// Text is the plain text, whitespace collapsed within lines.
	Text string
}

// Details is the spec's content_details object.
type Details struct {
	// ContentType names the content kind (see the ContentType constants).
	ContentType string `json:"content_type"`
	// ExistingMetadata is metadata taken from the content; its keys depend on the kind:
	// pages (PDF), web_pages (HTML and packages of no known tool), transcript_duration
	// (transcripts), authoring_tool_version with slides, lessons or pages (authoring tools).
	ExistingMetadata map[string]any `json:"existing_metadata"`
	// Interactions is the question data found in the content; never nil, so it encodes as [].
	Interactions []Interaction `json:"interactions"`
}

// Content types: the value of Details.ContentType for each kind. Packages made with a
// recognised authoring tool are named after the tool, because their existing_metadata
// schema (slides, lessons, pages) depends on the tool, not on the packaging standard.
const (
	ContentPDF       = "pdf"
	ContentHTML      = "html"
	ContentVTT       = "webvtt"
	ContentSRT       = "srt"
	ContentMarkdown  = "markdown"
	ContentText      = "text"
	ContentPackage   = "course_package" // a package of no recognised authoring tool
	ContentStoryline = tools.ContentStoryline
	ContentRise      = tools.ContentRise
	ContentCaptivate = tools.ContentCaptivate
	ContentISpring   = tools.ContentISpring
	ContentLectora   = tools.ContentLectora
	ContentElucidat  = tools.ContentElucidat
)

// Undetected is the authoring_tool_version of a tool that normally states its version when
// the package does not say which one (spec: "the string undetected when detection fails").
const Undetected = tools.Undetected

// Interaction is one question found in the content, in the spec's shape. It is defined in
// content/extract/tools, whose readers build most of them without importing this package.
type Interaction = tools.Interaction

// Choice is one answer option of an Interaction.
type Choice = tools.Choice

// Range is a numeric interval; a nil bound is open.
type Range = tools.Range

// Limits bound the work and memory one Extract call may use. A zero field takes the value of
// DefaultLimits, so Limits{} is never "unlimited".
type Limits struct {
	// MaxFileBytes is the most bytes read from any one file (a PDF, a page, a data file).
	MaxFileBytes int64
	// MaxTextBytes is the most text kept in all sections together; the rest is dropped with
	// a warning.
	MaxTextBytes int
	// MaxFiles is the most files a package walk looks at (tool detection, data files).
	MaxFiles int
	// MaxSections is the most sections kept.
	MaxSections int
	// MaxPDFPages is the most PDF pages read.
	MaxPDFPages int
	// MaxInteractions is the most interactions kept.
	MaxInteractions int
	// MaxStreamBytes is the most bytes one compressed stream (a PDF stream through all its
	// filters, an embedded zlib payload) may decompress to; more fails the item (ErrLimit).
	MaxStreamBytes int64
	// MaxDecodedBytes is the most bytes one item may decompress and read in all: PDF
	// streams, package files, embedded payloads. More fails the item (ErrLimit).
	MaxDecodedBytes int64
}

// DefaultLimits returns limits sized for real content: the largest authoring-tool data files
// seen are a few MiB, and 8 MiB of text is far more than any course has to say while small
// enough for the import worker to hold several items at once. A page's content stream is
// rarely over 1 MiB (text pages are a few KiB, heavy vector drawings a few MiB), so 16 MiB
// per stream and 256 MiB in all leave room for real documents while a decompression bomb,
// which expands 1000:1 per deflate layer, stops after 16 MiB of output.
func DefaultLimits() Limits {
	return Limits{
		MaxFileBytes:    32 << 20,
		MaxTextBytes:    8 << 20,
		MaxFiles:        20_000,
		MaxSections:     20_000,
		MaxPDFPages:     5_000,
		MaxInteractions: 5_000,
		MaxStreamBytes:  16 << 20,
		MaxDecodedBytes: 256 << 20,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxTextBytes <= 0 {
		l.MaxTextBytes = d.MaxTextBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxSections <= 0 {
		l.MaxSections = d.MaxSections
	}
	if l.MaxPDFPages <= 0 {
		l.MaxPDFPages = d.MaxPDFPages
	}
	if l.MaxInteractions <= 0 {
		l.MaxInteractions = d.MaxInteractions
	}
	if l.MaxStreamBytes <= 0 {
		l.MaxStreamBytes = d.MaxStreamBytes
	}
	if l.MaxDecodedBytes <= 0 {
		l.MaxDecodedBytes = d.MaxDecodedBytes
	}
	return l
}

// Source is where the content is. A package needs FS (its root, e.g. archive.Archive.FS());
// a single file needs either FS and Name, or ReaderAt and Size (Name is then only a hint for
// messages).
type Source struct {
	FS       fs.FS
	Name     string
	ReaderAt io.ReaderAt
	Size     int64
}

// Options tune Extract. The zero value is ready to use.
type Options struct {
	Limits Limits
	// TranscriptWindowSeconds is how much transcript time one section covers (default 30 s; a
	// window also closes early at 2,000 characters), so a search hit points to a moment
	// close to where the words are said.
	TranscriptWindowSeconds int
}

// Extract reads the content item of the given kind from src. It returns an error wrapping
// ErrUnsupported or ErrInvalid when nothing can be extracted, or ctx's error when cancelled;
// otherwise a Result, with Warnings for what it had to skip.
func Extract(ctx context.Context, kind Kind, src Source, opts Options) (res *Result, err error) {
	e := &extractor{ctx: ctx, lim: opts.Limits.withDefaults(), window: opts.TranscriptWindowSeconds}
	if e.window <= 0 {
		e.window = 30
	}
	// A parser bug must not take the import worker down; the fuzz tests are what keeps
	// this from firing in practice.
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("%w: internal error while reading %s content: %v", ErrInvalid, kind, r)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch kind {
	case KindPackage:
		if src.FS == nil {
			return nil, fmt.Errorf("%w: a package needs an fs.FS", ErrUnsupported)
		}
		err = e.pkg(src.FS)
	case KindPDF:
		r, size, err2 := e.openReaderAt(src)
		if err2 != nil {
			return nil, err2
		}
		err = e.pdf(r, size)
	case KindHTML, KindVTT, KindSRT, KindMarkdown, KindText:
		data, err2 := e.readSource(src)
		if err2 != nil {
			return nil, err2
		}
		text := decodeText(data)
		switch kind {
		case KindHTML:
			e.htmlDoc(text)
		case KindVTT, KindSRT:
			e.transcript(text, kind)
		case KindMarkdown:
			e.markdown(text)
		default:
			e.plain(text)
		}
	default:
		return nil, fmt.Errorf("%w: kind %q", ErrUnsupported, kind)
	}
	if e.overBudget != nil {
		// Readers that only warn about a failed file still end the item here.
		err = e.overBudget
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.result(), nil
}

// extractor accumulates one Extract call's output and enforces its limits.
type extractor struct {
	ctx    context.Context
	lim    Limits
	window int

	res        Result
	decoded    int64 // bytes decompressed or read so far, against MaxDecodedBytes
	overBudget error // set once MaxDecodedBytes is passed; every later read fails with it
	textBytes  int
	truncated  bool
	seenLoc    map[string]int
}

func (e *extractor) warn(format string, args ...any) {
	// Warnings are bounded too: a package of 20,000 broken pages must not produce 20,000.
	if len(e.res.Warnings) < 200 {
		e.res.Warnings = append(e.res.Warnings, fmt.Sprintf(format, args...))
	} else if len(e.res.Warnings) == 200 {
		e.res.Warnings = append(e.res.Warnings, "further warnings omitted")
	}
}

// add appends a section without a heading of its own (see addHeaded).
func (e *extractor) add(loc, text string) { e.addHeaded(loc, "", text) }

// addHeaded appends a section, making its location unique ("Intro", "Intro (2)") because
// the index keys chunks by location, and enforcing the text limits, which count the heading
// too. A section with a heading and no text is kept: the heading is searchable on its own.
func (e *extractor) addHeaded(loc, heading, text string) {
	text = strings.TrimSpace(text)
	heading = strings.TrimSpace(heading)
	loc = strings.TrimSpace(textnorm.CollapseSpace(loc))
	if text == "" && heading == "" {
		return
	}
	if loc == "" {
		loc = "Content"
	}
	if len(e.res.Sections) >= e.lim.MaxSections || e.textBytes >= e.lim.MaxTextBytes {
		e.truncate()
		return
	}
	if room := e.lim.MaxTextBytes - e.textBytes; len(heading) > room {
		heading, text = cutUTF8(heading, room), ""
		e.truncate()
	} else if len(heading)+len(text) > room {
		text = cutUTF8(text, room-len(heading))
		e.truncate()
	}
	if text == "" && heading == "" {
		return
	}
	if e.seenLoc == nil {
		e.seenLoc = map[string]int{}
	}
	if n := e.seenLoc[loc]; n > 0 {
		// The suffixed name may itself be taken ("A (2)" written by the author), so count on.
		for {
			n++
			cand := loc + " (" + strconv.Itoa(n) + ")"
			if e.seenLoc[cand] == 0 {
				e.seenLoc[loc] = n
				loc = cand
				break
			}
		}
	}
	e.seenLoc[loc]++
	e.textBytes += len(heading) + len(text)
	e.res.Sections = append(e.res.Sections, Section{Location: loc, Heading: heading, Text: text})
}

func (e *extractor) truncate() {
	if !e.truncated {
		e.truncated = true
		e.warn("text limit reached (%d bytes or %d sections); the rest of the content is not searchable", e.lim.MaxTextBytes, e.lim.MaxSections)
	}
}

func (e *extractor) addInteraction(in Interaction) {
	if strings.TrimSpace(in.Question) == "" && len(in.Choices) == 0 {
		return
	}
	if len(e.res.Details.Interactions) >= e.lim.MaxInteractions {
		return
	}
	if in.Choices == nil {
		in.Choices = []Choice{}
	}
	if in.Feedback == nil {
		in.Feedback = []string{}
	}
	if in.Type == "" {
		in.Type = "other"
	}
	e.res.Details.Interactions = append(e.res.Details.Interactions, in)
}

func (e *extractor) meta(key string, v any) {
	if e.res.Details.ExistingMetadata == nil {
		e.res.Details.ExistingMetadata = map[string]any{}
	}
	e.res.Details.ExistingMetadata[key] = v
}

func (e *extractor) result() *Result {
	r := e.res
	if r.Details.ExistingMetadata == nil {
		r.Details.ExistingMetadata = map[string]any{}
	}
	if r.Details.Interactions == nil {
		r.Details.Interactions = []Interaction{}
	}
	if r.Sections == nil {
		r.Sections = []Section{}
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	return &r
}

// readSource reads a single-file source whole, capped at MaxFileBytes.
func (e *extractor) readSource(src Source) ([]byte, error) {
	switch {
	case src.ReaderAt != nil:
		return e.readCapped(io.NewSectionReader(src.ReaderAt, 0, max(src.Size, 0)), src.Name)
	case src.FS != nil && src.Name != "":
		return e.readFile(src.FS, src.Name)
	}
	return nil, fmt.Errorf("%w: a file needs FS and Name, or ReaderAt and Size", ErrUnsupported)
}

func (e *extractor) openReaderAt(src Source) (io.ReaderAt, int64, error) {
	if src.ReaderAt != nil {
		if src.Size > e.lim.MaxFileBytes {
			return nil, 0, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, nameOr(src.Name), e.lim.MaxFileBytes)
		}
		return src.ReaderAt, src.Size, nil
	}
	data, err := e.readSource(src)
	if err != nil {
		return nil, 0, err
	}
	return bytes.NewReader(data), int64(len(data)), nil
}

func nameOr(n string) string {
	if n == "" {
		return "the file"
	}
	return n
}

// readFile reads one file of fsys, capped at MaxFileBytes. The cap is checked while
// reading, not from Stat, because a zip entry's declared size can lie.
func (e *extractor) readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return e.readCapped(f, name)
}

func (e *extractor) readCapped(r io.Reader, name string) ([]byte, error) {
	if e.overBudget != nil {
		return nil, e.overBudget
	}
	// Never read past what the document may still decode: a package of many files just
	// under MaxFileBytes each is stopped as surely as one big file.
	room := min(e.lim.MaxFileBytes, e.lim.MaxDecodedBytes-e.decoded)
	data, err := io.ReadAll(io.LimitReader(r, room+1))
	if cerr := e.charge(int64(len(data))); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, nameOr(name), err)
	}
	if int64(len(data)) > e.lim.MaxFileBytes {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, nameOr(name), e.lim.MaxFileBytes)
	}
	return data, nil
}

// charge counts n decompressed or read bytes against MaxDecodedBytes; past it, the item
// fails (the error sticks, so readers that turn a failed read into a warning still stop).
func (e *extractor) charge(n int64) error {
	if e.overBudget != nil {
		return e.overBudget
	}
	e.decoded += n
	if e.decoded > e.lim.MaxDecodedBytes {
		e.overBudget = fmt.Errorf("%w: the content decompresses to more than %s in all (the limit per item)", ErrLimit, sizeString(e.lim.MaxDecodedBytes))
		return e.overBudget
	}
	return nil
}

// sizeString writes a byte count for a message: "16 MiB", or bytes when not whole MiB.
func sizeString(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Detect guesses the kind of a single uploaded file from its first bytes (at least 512 are
// best), using the file name only where the content is ambiguous: a ".md" file that is
// plain text is Markdown, but a PDF named "notes.txt" is still a PDF. A zip is KindPackage;
// the caller opens it (course/archive) and Extract checks it is really a course.
func Detect(name string, head []byte) Kind {
	ext := strings.ToLower(path.Ext(name))
	h := trimBOM(head)
	if len(h) >= 4 && string(h[:4]) == "PK\x03\x04" {
		return KindPackage
	}
	// PDF readers accept the header anywhere in the first KiB.
	if i := bytes.Index(h[:min(len(h), 1024)], []byte("%PDF-")); i >= 0 {
		return KindPDF
	}
	if isUTF16(head) {
		h = []byte(decodeText(head))
	}
	if !looksText(h) {
		return KindUnknown
	}
	t := bytes.TrimLeft(h, " \t\r\n")
	if bytes.HasPrefix(t, []byte("WEBVTT")) && (len(t) == 6 || t[6] == ' ' || t[6] == '\t' || t[6] == '\n' || t[6] == '\r') {
		return KindVTT
	}
	if looksSRT(t) {
		return KindSRT
	}
	if looksHTML(t) {
		return KindHTML
	}
	switch ext {
	case ".md", ".markdown", ".mdown", ".mkd":
		return KindMarkdown
	case ".vtt":
		return KindVTT
	case ".srt":
		return KindSRT
	case ".html", ".htm", ".xhtml":
		return KindHTML
	}
	if looksMarkdown(t) {
		return KindMarkdown
	}
	return KindText
}

func trimBOM(b []byte) []byte {
	return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
}

func isUTF16(b []byte) bool {
	return len(b) >= 2 && ((b[0] == 0xff && b[1] == 0xfe) || (b[0] == 0xfe && b[1] == 0xff))
}

// looksText reports whether b is text: no NUL bytes and few control characters. A cut
// multi-byte character at the end of the head is fine.
func looksText(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	ctrl := 0
	for _, c := range b {
		if c == 0 {
			return false
		}
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' {
			ctrl++
		}
	}
	return ctrl*100 <= len(b)
}

func looksHTML(t []byte) bool {
	l := bytes.ToLower(t[:min(len(t), 1024)])
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body", "<?xml version"} {
		if bytes.HasPrefix(l, []byte(p)) {
			// An XML prolog counts only if XHTML follows.
			return p != "<?xml version" || bytes.Contains(l, []byte("<html"))
		}
	}
	// A fragment starting with common block tags.
	for _, p := range []string{"<div", "<p>", "<p ", "<h1", "<h2", "<section", "<article", "<table", "<ul", "<!--"} {
		if bytes.HasPrefix(l, []byte(p)) {
			return bytes.Contains(l, []byte("</"))
		}
	}
	return false
}

// looksSRT: a cue number line then a "00:00:01,000 --> 00:00:02,000" line.
func looksSRT(t []byte) bool {
	lines := strings.SplitN(string(t[:min(len(t), 512)]), "\n", 3)
	if len(lines) < 2 {
		return false
	}
	if _, err := strconv.Atoi(strings.TrimSpace(lines[0])); err != nil {
		return false
	}
	s, _, ok := strings.Cut(lines[1], "-->")
	if !ok {
		return false
	}
	_, ok = parseTimestamp(strings.TrimSpace(s))
	return ok
}

func looksMarkdown(t []byte) bool {
	lines := strings.Split(string(t[:min(len(t), 4096)]), "\n")
	score := 0
	for _, l := range lines {
		l = strings.TrimRight(l, "\r")
		switch {
		case strings.HasPrefix(l, "```"):
			score += 2
		case len(l) > 1 && l[0] == '#':
			n := len(l) - len(strings.TrimLeft(l, "#"))
			if n <= 6 && len(l) > n && l[n] == ' ' {
				score += 2
			}
		case strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* "):
			score++
		}
		if strings.Contains(l, "](") {
			score++
		}
	}
	return score >= 2
}

// cutUTF8 cuts s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
