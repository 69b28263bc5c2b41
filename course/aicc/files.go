package aicc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/course"
)

// MaxFileSize caps every structure file the parser reads. Course structure files are a few
// kilobytes; anything this large is a mistake or an attack, and reading it whole would let one
// upload pin memory in the import worker.
const MaxFileSize = 10 << 20

// readCapped reads a whole file, refusing files over MaxFileSize. It checks the size while
// reading rather than trusting Stat, because a zip entry's declared size can lie.
func readCapped(fsys fs.FS, name string) ([]byte, error) {
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

// decodeText turns a structure file into UTF-8 text. AICC predates UTF-8 everywhere: authoring
// tools on Windows write UTF-16 ("Unicode") or Windows-1252, so both are accepted, with a
// warning for the legacy code page because the guess can be wrong.
func decodeText(name string, data []byte, warn func(string, ...any)) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return decodeUTF16(data[2:], false)
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return decodeUTF16(data[2:], true)
	}
	if utf8.Valid(data) {
		return string(data)
	}
	warn("%s: not valid UTF-8; read as Windows-1252", name)
	return decodeCP1252(data)
}

func decodeUTF16(b []byte, bigEndian bool) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		if bigEndian {
			u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
		} else {
			u = append(u, uint16(b[i+1])<<8|uint16(b[i]))
		}
	}
	return string(utf16.Decode(u))
}

// cp1252 maps bytes 0x80-0x9F; the rest of Windows-1252 coincides with Latin-1. Undefined
// positions map to U+FFFD.
var cp1252 = [32]rune{
	'€', '\uFFFD', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\uFFFD', 'Ž', '\uFFFD',
	'\uFFFD', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\uFFFD', 'ž', 'Ÿ',
}

func decodeCP1252(b []byte) string {
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

// junkWarnings reports macOS archive litter. It is harmless to serve but tells the author the
// zip was built with Finder, which also explains stray "._name" files next to real ones.
func junkWarnings(fsys fs.FS) []string {
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

// errEscapes marks a launch path that climbs out of the package; it cannot be served.
var errEscapes = errors.New("launch path leaves the package root")

// resolveLaunch turns a launch reference into Activity.LaunchURL. Absolute http(s) URLs stay as
// they are (the content is hosted elsewhere); anything else is a path relative to the package
// root, cleaned so the player can join it with the course's web path. file is the package path
// to check for existence ("" for absolute URLs).
func resolveLaunch(ref string) (launch, file string, notes []string, err error) {
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
		return "", "", notes, errEscapes
	}
	return p + rest, p, notes, nil
}

// fileExists reports whether a launch path is in the package, trying the percent-decoded form
// too because authors write my%20page.html for a file named "my page.html".
func fileExists(fsys fs.FS, p string) bool {
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
