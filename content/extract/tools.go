package extract

import (
	"io"
	"io/fs"

	"github.com/lectern-lms/lectern/content/extract/tools"
	"github.com/lectern-lms/lectern/course"
)

// toolHost is the extractor as the authoring-tool readers (content/extract/tools) see it:
// one package's files, read within the item's limits, and the item's result.
type toolHost struct {
	e     *extractor
	fsys  fs.FS
	files *tools.Files
}

var _ tools.Host = (*toolHost)(nil)

func (h *toolHost) ReadFile(name string) ([]byte, error) { return h.e.readFile(h.fsys, name) }

func (h *toolHost) Probe(name string) []byte { return h.e.probe(h.fsys, h.files, name) }

// Inflate holds an embedded payload to the limits of a stream and of a file, since the
// payload stands in for a file the tool could have written, and charges it to the item.
func (h *toolHost) Inflate(what string, r io.Reader) ([]byte, bool) {
	e := h.e
	limit := min(e.lim.MaxStreamBytes, e.lim.MaxFileBytes)
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if e.charge(int64(len(raw))) != nil || err != nil {
		return nil, false
	}
	if int64(len(raw)) > limit {
		e.warn("%s decompresses to more than %s; not read", what, sizeString(limit))
		return nil, false
	}
	return raw, true
}

func (h *toolHost) PageText(raw []byte) (title, text string) {
	info := parseHTML(decodeText(raw))
	return info.Title, info.Text()
}

func (h *toolHost) Warn(format string, args ...any) { h.e.warn(format, args...) }

func (h *toolHost) AddSection(loc, heading, text string) { h.e.addHeaded(loc, heading, text) }

func (h *toolHost) AddInteraction(in Interaction) bool {
	h.e.addInteraction(in)
	return len(h.e.res.Details.Interactions) < h.e.lim.MaxInteractions
}

// launchFiles names the package files of the first launchable activities, whose pages carry
// the generator tags and version comments tool detection reads.
func launchFiles(p *course.Package) []string {
	var out []string
	for i, a := range p.Launchable() {
		if i >= 8 {
			break
		}
		if f, ok := localFile(a.LaunchURL); ok {
			out = append(out, f)
		}
	}
	return out
}

// maxProbe caps how much of one file tool detection looks at: generator tags and version
// comments sit at the top of the file.
const maxProbe = 64 << 10

// probe reads up to maxProbe bytes of a file, or nil.
func (e *extractor) probe(fsys fs.FS, files *tools.Files, name string) []byte {
	real, ok := files.Real(name)
	if !ok {
		return nil
	}
	f, err := fsys.Open(real)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, maxProbe)
	n, _ := readFull(f, buf)
	if e.charge(int64(n)) != nil {
		return nil
	}
	return buf[:n]
}

func readFull(f fs.File, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
