// Package pkgfs holds the file helpers the course parsers share: capped reads, legacy text
// encodings, junk detection, launch-path resolution and safe XML decoding.
package pkgfs

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"strings"

	"github.com/lectern-lms/lectern/course"
)

// MaxFileSize caps every structure file a parser reads. Real ones are kilobytes; anything this
// large is a mistake or an attack, and reading it whole would let one upload pin memory in the
// import worker.
const MaxFileSize = 10 << 20

// ReadCapped reads a whole file, refusing files over MaxFileSize. It checks the size while
// reading rather than trusting Stat, because a zip entry's declared size can lie.
func ReadCapped(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, course.Invalid("%s: cannot open: %v", name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, course.Invalid("%s: cannot read: %v", name, err)
	}
	if len(data) > MaxFileSize {
		return nil, course.Invalid("%s: file is larger than %d bytes", name, MaxFileSize)
	}
	return data, nil
}

// cp1252 maps bytes 0x80-0x9F; the rest of Windows-1252 coincides with Latin-1. Undefined
// positions map to U+FFFD.
var cp1252 = [32]rune{
	'€', '\uFFFD', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\uFFFD', 'Ž', '\uFFFD',
	'\uFFFD', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\uFFFD', 'ž', 'Ÿ',
}

func DecodeCP1252(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for _, c := range b {
		switch {
		case c < 0x80:
			sb.WriteByte(c)
		case c < 0xA0:
			sb.WriteRune(cp1252[c-0x80])
		default:
			sb.WriteRune(rune(c))
		}
	}
	return sb.String()
}

// JunkWarnings reports macOS archive litter. It is harmless to serve but tells the author the
// zip was built with Finder, which also explains stray "._name" files next to real ones.
func JunkWarnings(fsys fs.FS) []string {
	var macosx, dsStore, appleDouble bool
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable directory is not this check's business
		}
		name := d.Name()
		switch {
		case d.IsDir() && name == "__MACOSX":
			macosx = true
			return fs.SkipDir
		case name == ".DS_Store":
			dsStore = true
		case strings.HasPrefix(name, "._"):
			appleDouble = true
		}
		return nil
	})
	var out []string
	if macosx {
		out = append(out, "package contains macOS metadata folder __MACOSX/; ignored")
	}
	if dsStore {
		out = append(out, "package contains .DS_Store files; ignored")
	}
	if appleDouble {
		out = append(out, `package contains macOS "._" resource-fork files; ignored`)
	}
	return out
}

// ErrEscapes marks a launch path that climbs out of the package; it cannot be served.
var ErrEscapes = errors.New("launch path leaves the package root")

// ResolveLaunch turns a launch reference into Activity.LaunchURL. Absolute http(s) URLs stay as
// they are (the content is hosted elsewhere); anything else is a path relative to the package
// root, cleaned so the player can join it with the course's web path. file is the package path
// to check for existence ("" for absolute URLs).
func ResolveLaunch(ref string) (launch, file string, notes []string, err error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", "", nil, errors.New("empty launch location")
	}
	if strings.Contains(ref, `\`) {
		// Windows authoring tools write content\index.htm; browsers and zip paths want '/'.
		ref = strings.ReplaceAll(ref, `\`, "/")
		notes = append(notes, "backslashes converted to '/'")
	}
	if strings.HasPrefix(ref, "//") {
		return "", "", notes, fmt.Errorf("protocol-relative URL %q is not allowed; write the scheme", ref)
	}
	u, perr := url.Parse(ref)
	if perr == nil && u.Scheme != "" {
		switch strings.ToLower(u.Scheme) {
		case "http", "https":
			if u.Host == "" {
				return "", "", notes, fmt.Errorf("absolute URL %q has no host", ref)
			}
			return ref, "", notes, nil
		default:
			// javascript:, file:, data: and drive letters (C:/...) must never reach the player.
			return "", "", notes, fmt.Errorf("unsupported URL scheme in %q", ref)
		}
	}
	p, rest := ref, ""
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p, rest = p[:i], p[i:]
	}
	if strings.HasPrefix(p, "/") {
		notes = append(notes, "leading '/' dropped; launch paths are relative to the package root")
		p = strings.TrimLeft(p, "/")
	}
	if p == "" {
		return "", "", notes, fmt.Errorf("launch location %q names no file", ref)
	}
	p = path.Clean(p)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", "", notes, ErrEscapes
	}
	return p + rest, p, notes, nil
}

// FileExists reports whether a launch path is in the package, trying the percent-decoded form
// too because authors write my%20page.html for a file named "my page.html".
func FileExists(fsys fs.FS, p string) bool {
	if fi, err := fs.Stat(fsys, p); err == nil && !fi.IsDir() {
		return true
	}
	if un, err := url.PathUnescape(p); err == nil && un != p {
		if fi, err := fs.Stat(fsys, un); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// CheckXML rejects documents that are not well-formed or that declare entities. Go's decoder
// never fetches external entities, but an ENTITY declaration has no legitimate use in a launch
// file and is the signature of an XXE or billion-laughs attempt, so the upload is refused
// outright rather than parsed with the declaration silently ignored.
func CheckXML(name string, data []byte) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = CharsetReader
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return course.Invalid("%s: malformed XML: %v", name, err)
		}
		if dir, ok := tok.(xml.Directive); ok {
			if bytes.Contains(bytes.ToUpper(dir), []byte("ENTITY")) {
				return course.Invalid("%s: DOCTYPE with ENTITY declarations is not allowed", name)
			}
		}
	}
}

// CharsetReader accepts the encodings launch files are written in besides UTF-8.
func CharsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "latin1", "latin-1", "windows-1252", "cp1252":
		b, err := io.ReadAll(in)
		if err != nil {
			return nil, err
		}
		return strings.NewReader(DecodeCP1252(b)), nil
	}
	return nil, fmt.Errorf("unsupported encoding %q", label)
}

// NewDecoder returns a decoder configured like CheckXML's.
func NewDecoder(data []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = CharsetReader
	return d
}
