package archive

import (
	"archive/zip"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/storage/blob"
)

// flagUTF8 is general-purpose bit 11: the writer declares names and comments UTF-8.
const flagUTF8 = 0x800

// flagEncrypted is general-purpose bit 0: the entry is encrypted.
const flagEncrypted = 0x1

// cp437High maps bytes 0x80-0xFF of IBM code page 437 to Unicode. The zip specification
// (APPNOTE 4.4.4) says names without the UTF-8 flag are CP437, and old Windows and DOS
// tools still write them; the low half is ASCII and is kept as is, so control characters
// stay visible to checkName instead of turning into CP437's graphic glyphs.
var cp437High = []rune("ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»" +
	"░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀" +
	"αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0")

// decodeName returns the entry's name as UTF-8 and whether it had to be decoded from CP437.
// Names that are valid UTF-8 are trusted whatever the flag says, as archive/zip does,
// because many writers emit UTF-8 without setting the flag. A name that is not valid UTF-8
// but carries the flag is refused: the writer lied, and guessing could map two distinct
// stored names onto one key.
func decodeName(f *zip.File) (string, bool, error) {
	if utf8.ValidString(f.Name) {
		return f.Name, false, nil
	}
	if f.Flags&flagUTF8 != 0 {
		return "", false, entryErr(ErrUnsafe, f.Name, "has a name that is not valid UTF-8 although the archive declares UTF-8 names")
	}
	var b strings.Builder
	for i := 0; i < len(f.Name); i++ {
		if c := f.Name[i]; c < 0x80 {
			b.WriteByte(c)
		} else {
			b.WriteRune(cp437High[c-0x80])
		}
	}
	return b.String(), true, nil
}

// checkName refuses a name (a directory's without its trailing slash) that is not a clean
// relative path. The specific checks come first so that the author reads the real problem
// ("escapes the package root") rather than CleanKey's generic one; blob.CleanKey then has
// the last word, because it defines what the store accepts and the name becomes the tail
// of a key.
func checkName(raw, name string) error {
	if name == "" {
		if raw == "/" {
			return entryErr(ErrUnsafe, raw, "is an absolute path")
		}
		return entryErr(ErrUnsafe, raw, "has an empty name")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f {
			return entryErr(ErrUnsafe, raw, "has a control character (%#x) in its name", c)
		}
	}
	if name[0] == '/' || name[0] == '\\' {
		return entryErr(ErrUnsafe, raw, "is an absolute path")
	}
	if len(name) >= 2 && name[1] == ':' && isASCIILetter(name[0]) {
		return entryErr(ErrUnsafe, raw, "starts with a drive letter")
	}
	// Split on backslashes too: Windows tools and some unzip programs treat them as
	// separators, so `a\..\..\b` is a traversal even though CleanKey would only call it a
	// bad character.
	for seg := range strings.FieldsFuncSeq(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return entryErr(ErrUnsafe, raw, "escapes the package root")
		}
	}
	if strings.ContainsRune(name, '\\') {
		return entryErr(ErrUnsafe, raw, "contains a backslash, which Windows treats as a folder separator")
	}
	if _, err := blob.CleanKey(name); err != nil {
		e := entryErr(ErrUnsafe, raw, "is not a clean relative path (%s)", strings.TrimPrefix(err.Error(), blob.ErrInvalidKey.Error()+": "))
		e.Err = err
		return e
	}
	return nil
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// junkKind says which kind of operating-system clutter a (clean) name is, or "" if it is
// content. Such files are never referenced by a course, and extracting them would only
// leak the author's folder metadata, so they are skipped rather than refused.
func junkKind(name string) string {
	base := name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		base = name[i+1:]
	}
	if name == "__MACOSX" || strings.HasPrefix(name, "__MACOSX/") || strings.Contains(name, "/__MACOSX/") || strings.HasSuffix(name, "/__MACOSX") {
		return "macos"
	}
	switch {
	case base == ".DS_Store":
		return "ds_store"
	case strings.EqualFold(base, "Thumbs.db"):
		return "thumbs"
	case strings.EqualFold(base, "desktop.ini"):
		return "desktop"
	}
	return ""
}

// junkWarning is the warning reported once per kind of junk found.
var junkWarning = map[string]string{
	"macos":    "skipped macOS resource fork folder __MACOSX/",
	"ds_store": "skipped macOS folder settings files .DS_Store",
	"thumbs":   "skipped Windows thumbnail cache files Thumbs.db",
	"desktop":  "skipped Windows folder settings files desktop.ini",
}

// junkOrder fixes the order warnings are reported in.
var junkOrder = []string{"macos", "ds_store", "thumbs", "desktop"}

// isArchiveErr reports whether err is one of ours (as opposed to an I/O or callback error).
func isArchiveErr(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
