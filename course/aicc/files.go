package aicc

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/course/internal/pkgfs"
)

// MaxFileSize caps every structure file the parser reads (see pkgfs.MaxFileSize).
const MaxFileSize = pkgfs.MaxFileSize

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
	return pkgfs.DecodeCP1252(data)
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
