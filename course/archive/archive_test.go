package archive

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"
)

// ent describes one entry for makeZip.
type ent struct {
	name    string
	body    string
	mode    fs.FileMode // set with SetMode when non-zero
	flags   uint16      // extra general-purpose flags
	nonUTF8 bool        // stop the writer from setting the UTF-8 flag
}

// makeZip builds a zip in memory; archive/zip's writer accepts any name, which is what lets
// the tests write hostile ones.
func makeZip(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range ents {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Flags: e.flags, NonUTF8: e.nonUTF8}
		h.Modified = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if e.body == "" {
			continue
		}
		if _, err := io.WriteString(w, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawEnt writes an entry with CreateRaw: the caller supplies the stored bytes and every
// size and checksum field, true or not.
type rawEnt struct {
	name         string
	method       uint16
	flags        uint16
	data         []byte // as stored (compressed)
	crc          uint32
	uncompressed uint64
}

func makeRawZip(t testing.TB, ents ...rawEnt) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range ents {
		h := &zip.FileHeader{Name: e.name, Method: e.method, Flags: e.flags, CRC32: e.crc,
			CompressedSize64: uint64(len(e.data)), UncompressedSize64: e.uncompressed}
		w, err := zw.CreateRaw(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// deflate compresses data with the default level.
func deflate(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.DefaultCompression)
	fw.Write(data)
	fw.Close()
	return buf.Bytes()
}

func openBytes(b []byte, lim Limits) (*Archive, error) {
	return Open(bytes.NewReader(b), int64(len(b)), lim)
}

// extractAll runs Extract and returns the contents it was given.
func extractAll(t testing.TB, a *Archive) (map[string]string, error) {
	t.Helper()
	got := map[string]string{}
	err := a.Extract(context.Background(), func(_ context.Context, name string, r io.Reader, size int64) error {
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if int64(len(b)) != size {
			t.Errorf("%s: read %d bytes, size %d", name, len(b), size)
		}
		got[name] = string(b)
		return nil
	})
	return got, err
}

func wantErr(t *testing.T, err, kind error, msgPart string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v, want %v", err, kind)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Error", err)
	}
	if !strings.Contains(err.Error(), msgPart) {
		t.Fatalf("error %q does not contain %q", err, msgPart)
	}
}

func TestOpenValidPackage(t *testing.T) {
	b := makeZip(t,
		ent{name: "imsmanifest.xml", body: "<manifest/>"},
		ent{name: "res/"},
		ent{name: "res/index.html", body: strings.Repeat("<p>hello</p>", 100)},
		ent{name: "res/js/app.js", body: "console.log(1)"},
		ent{name: "empty/"},
		ent{name: "res/empty.txt", body: ""},
		ent{name: "Ünïcödé/файл.html", body: "x"},
	)
	a, err := openBytes(b, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []File{
		{"imsmanifest.xml", 11}, {"res/index.html", 1200}, {"res/js/app.js", 14},
		{"res/empty.txt", 0}, {"Ünïcödé/файл.html", 1},
	}
	if got := a.Files(); !slices.Equal(got, wantFiles) {
		t.Fatalf("Files() = %v, want %v", got, wantFiles)
	}
	if w := a.Warnings(); len(w) != 0 {
		t.Fatalf("warnings: %q", w)
	}
	if err := fstest.TestFS(a.FS(), "imsmanifest.xml", "res/index.html", "res/js/app.js", "res/empty.txt", "empty", "Ünïcödé/файл.html"); err != nil {
		t.Fatal(err)
	}
	got, err := extractAll(t, a)
	if err != nil {
		t.Fatal(err)
	}
	if got["res/index.html"] != strings.Repeat("<p>hello</p>", 100) || got["res/empty.txt"] != "" || len(got) != 5 {
		t.Fatalf("extracted %v", got)
	}
	data, err := fs.ReadFile(a.FS(), "imsmanifest.xml")
	if err != nil || string(data) != "<manifest/>" {
		t.Fatalf("ReadFile = %q, %v", data, err)
	}
}

func TestHostileNames(t *testing.T) {
	cases := []struct {
		name, msg string
	}{
		{"", `zip entry "" has an empty name`},
		{"../x", `zip entry "../x" escapes the package root`},
		{"../../etc/passwd", `zip entry "../../etc/passwd" escapes the package root`},
		{"a/../../b", "escapes the package root"},
		{"a/../b", "escapes the package root"},
		{"..", "escapes the package root"},
		{"../", "escapes the package root"},
		{"/abs", `zip entry "/abs" is an absolute path`},
		{"/", "absolute path"},
		{"a\\..\\b", "escapes the package root"},
		{"..\\..\\windows\\win.ini", "escapes the package root"},
		{"a\\b", "backslash"},
		{"\\\\server\\share\\x", "absolute path"},
		{"C:/x", "drive letter"},
		{"c:\\x", "drive letter"},
		{"a\x00b", "control character"},
		{"a\nb.html", "control character"},
		{"a\x7fb", "control character"},
		{"./a", `"." segment`},
		{"a/./b", `"." segment`},
		{"a//b", "empty segment"},
		{"a/.lectern-tmp", "reserved prefix"},
		{strings.Repeat("x", 256), "segment longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := "evil"
			if strings.HasSuffix(c.name, "/") {
				body = "" // the writer refuses data for folder entries
			}
			b := makeZip(t, ent{name: "ok.html", body: "ok"}, ent{name: c.name, body: body})
			_, err := openBytes(b, DefaultLimits())
			wantErr(t, err, ErrUnsafe, c.msg)
		})
	}
}

func TestInvalidUTF8FlaggedUTF8(t *testing.T) {
	b := makeZip(t, ent{name: "caf\xe9.html", body: "x", flags: flagUTF8})
	_, err := openBytes(b, DefaultLimits())
	wantErr(t, err, ErrUnsafe, "not valid UTF-8")
}

func TestCP437Names(t *testing.T) {
	// 0x82 is "é" in CP437; the writer leaves the UTF-8 flag off.
	b := makeZip(t, ent{name: "caf\x82.html", body: "x", nonUTF8: true}, ent{name: "index.html", body: "y"})
	a, err := openBytes(b, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if a.Files()[0].Name != "café.html" {
		t.Fatalf("name %q", a.Files()[0].Name)
	}
	if w := a.Warnings(); len(w) != 1 || !strings.Contains(w[0], "CP437") || !strings.Contains(w[0], "café.html") {
		t.Fatalf("warnings %q", w)
	}
	if _, err := fs.ReadFile(a.FS(), "café.html"); err != nil {
		t.Fatal(err)
	}
	// Decoding must not hide a traversal or a control character.
	b = makeZip(t, ent{name: "..\\\x82/x", body: "x", nonUTF8: true})
	_, err = openBytes(b, DefaultLimits())
	wantErr(t, err, ErrUnsafe, "escapes the package root")
}

func TestNonRegularFiles(t *testing.T) {
	for _, m := range []struct {
		mode fs.FileMode
		msg  string
	}{
		{fs.ModeSymlink | 0o777, "is a symbolic link"},
		{fs.ModeNamedPipe | 0o644, "is not a regular file"},
		{fs.ModeDevice | 0o644, "is not a regular file"},
		{fs.ModeSocket | 0o644, "is not a regular file"},
	} {
		b := makeZip(t, ent{name: "index.html", body: "x"}, ent{name: "link", body: "../../etc/passwd", mode: m.mode})
		_, err := openBytes(b, DefaultLimits())
		wantErr(t, err, ErrUnsafe, `zip entry "link" `+m.msg)
	}
}

func TestDuplicatesAndPrefixes(t *testing.T) {
	b := makeZip(t, ent{name: "a.html", body: "1"}, ent{name: "a.html", body: "2"})
	_, err := openBytes(b, DefaultLimits())
	wantErr(t, err, ErrUnsafe, `zip entry "a.html" appears twice`)

	b = makeZip(t, ent{name: "a/b", body: "1"}, ent{name: "a/b/c", body: "2"})
	_, err = openBytes(b, DefaultLimits())
	wantErr(t, err, ErrUnsafe, `zip entry "a/b" is a file, but "a/b/c" needs it to be a folder`)

	b = makeZip(t, ent{name: "a/b/c/d", body: "2"}, ent{name: "a/b", body: "1"})
	_, err = openBytes(b, DefaultLimits())
	wantErr(t, err, ErrUnsafe, `zip entry "a/b" is a file`)

	b = makeZip(t, ent{name: "a/b/"}, ent{name: "a/b", body: "1"})
	_, err = openBytes(b, DefaultLimits())
	wantErr(t, err, ErrUnsafe, "is both a file and a folder")

	// Repeated folder entries are harmless.
	b = makeZip(t, ent{name: "a/"}, ent{name: "a/"}, ent{name: "a/x", body: "1"})
	if _, err := openBytes(b, DefaultLimits()); err != nil {
		t.Fatal(err)
	}

	// Case-only duplicates are a warning, not an error.
	b = makeZip(t, ent{name: "Index.html", body: "1"}, ent{name: "index.html", body: "2"})
	a, err := openBytes(b, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if w := a.Warnings(); len(w) != 1 || !strings.Contains(w[0], `"Index.html" and "index.html"`) {
		t.Fatalf("warnings %q", w)
	}
}

func TestJunkSkipped(t *testing.T) {
	b := makeZip(t,
		ent{name: "__MACOSX/"},
		ent{name: "__MACOSX/._index.html", body: "fork"},
		ent{name: "__MACOSX/res/._a.js", body: "fork"},
		ent{name: "index.html", body: "ok"},
		ent{name: ".DS_Store", body: "ds"},
		ent{name: "res/.DS_Store", body: "ds"},
		ent{name: "res/a.js", body: "js"},
		ent{name: "res/img/Thumbs.db", body: "th"},
		ent{name: "res/DESKTOP.INI", body: "ini"},
		ent{name: "nested/__MACOSX/x", body: "fork"},
	)
	a, err := openBytes(b, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Files(); !slices.Equal(got, []File{{"index.html", 2}, {"res/a.js", 2}}) {
		t.Fatalf("Files() = %v", got)
	}
	want := []string{
		"skipped macOS resource fork folder __MACOSX/ (4 entries)",
		"skipped macOS folder settings files .DS_Store (2 entries)",
		"skipped Windows thumbnail cache files Thumbs.db (1 entry)",
		"skipped Windows folder settings files desktop.ini (1 entry)",
	}
	if got := a.Warnings(); !slices.Equal(got, want) {
		t.Fatalf("warnings:\n%q\nwant\n%q", got, want)
	}
	for _, name := range []string{"__MACOSX", ".DS_Store", "res/.DS_Store", "res/img/Thumbs.db", "res/img", "nested"} {
		if _, err := fs.Stat(a.FS(), name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%q) = %v, want not exist", name, err)
		}
	}
	got, err := extractAll(t, a)
	if err != nil || len(got) != 2 {
		t.Fatalf("extracted %v, %v", got, err)
	}
	if err := fstest.TestFS(a.FS(), "index.html", "res/a.js"); err != nil {
		t.Fatal(err)
	}
}

func TestNotZip(t *testing.T) {
	valid := makeZip(t, ent{name: "a.html", body: strings.Repeat("a", 1000)})
	rnd := make([]byte, 4096)
	for i := range rnd {
		rnd[i] = byte(rand.IntN(256))
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"random":    rnd,
		"pdf":       []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF\n"),
		"truncated": valid[:len(valid)/2],
		"text":      []byte("PK but not really"),
	} {
		_, err := openBytes(b, DefaultLimits())
		if !errors.Is(err, ErrNotZip) || err.Error() != "the upload is not a zip archive" {
			t.Errorf("%s: error = %v", name, err)
		}
	}
}

func TestTooManyEntries(t *testing.T) {
	var ents []ent
	for i := range 11 {
		ents = append(ents, ent{name: fmt.Sprintf("f%d.html", i), body: "x"})
	}
	b := makeZip(t, ents...)
	_, err := openBytes(b, Limits{MaxEntries: 10})
	wantErr(t, err, ErrTooLarge, "the package has 11 entries; the limit is 10")
	if _, err := openBytes(b, Limits{MaxEntries: 11}); err != nil {
		t.Fatal(err)
	}
}

func TestSizeLimits(t *testing.T) {
	b := makeZip(t, ent{name: "a.bin", body: strings.Repeat("ab", 1000)}, ent{name: "b.bin", body: strings.Repeat("cd", 1000)})
	_, err := openBytes(b, Limits{MaxEntrySize: 1999})
	wantErr(t, err, ErrTooLarge, `zip entry "a.bin" is 2000 bytes uncompressed; the limit is 1999 bytes per file`)
	_, err = openBytes(b, Limits{MaxTotalSize: 3999})
	wantErr(t, err, ErrTooLarge, "the package is larger than the limit of 3999 bytes uncompressed")
	if _, err := openBytes(b, Limits{MaxTotalSize: 4000, MaxEntrySize: 2000}); err != nil {
		t.Fatal(err)
	}
}

// bomb returns a zip with one entry of n zeros, compressed streaming (about 1000:1).
func bomb(t testing.TB, name string, n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		w.Write(chunk[:k])
		n -= k
	}
	zw.Close()
	return buf.Bytes()
}

func TestZipBomb(t *testing.T) {
	b := bomb(t, "video.mp4", 100<<20)
	t.Logf("100 MiB of zeros compress to %d bytes", len(b))
	_, err := openBytes(b, DefaultLimits())
	wantErr(t, err, ErrTooLarge, `zip entry "video.mp4" expands`)
	if !strings.Contains(err.Error(), "zip bomb") {
		t.Fatal(err)
	}
}

func TestSmallCompressibleFilesAllowed(t *testing.T) {
	// 512 KiB of zeros compresses about 1000:1 but sits under RatioMinSize.
	b := makeZip(t, ent{name: "blank.bmp", body: string(make([]byte, 512<<10))}, ent{name: "index.html", body: "x"})
	a, err := openBytes(b, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := extractAll(t, a); err != nil {
		t.Fatal(err)
	}
}

func TestManySmallBombsHitOverallRatio(t *testing.T) {
	// Each entry stays under RatioMinSize, so only the archive-wide ratio can catch them.
	data := make([]byte, 1<<20-1)
	comp := deflate(t, data)
	var ents []rawEnt
	for i := range 64 {
		ents = append(ents, rawEnt{name: fmt.Sprintf("f%02d.bin", i), method: zip.Deflate, data: comp,
			crc: crc32.ChecksumIEEE(data), uncompressed: uint64(len(data))})
	}
	b := makeRawZip(t, ents...)
	_, err := openBytes(b, DefaultLimits())
	wantErr(t, err, ErrTooLarge, "the package expands")
}

func TestLyingHeaderTooSmall(t *testing.T) {
	real := make([]byte, 10<<20)
	comp := deflate(t, real)
	b := makeRawZip(t,
		rawEnt{name: "ok.html", method: zip.Store, data: []byte("ok"), crc: crc32.ChecksumIEEE([]byte("ok")), uncompressed: 2},
		rawEnt{name: "liar.bin", method: zip.Deflate, data: comp, crc: crc32.ChecksumIEEE(real), uncompressed: 1000},
	)
	a, err := openBytes(b, DefaultLimits())
	if err != nil {
		t.Fatal(err) // the header looks harmless: 1000 bytes from ~10 KB
	}

	// Extract: the callback never sees more than the declared size.
	var seen int64
	err = a.Extract(context.Background(), func(_ context.Context, name string, r io.Reader, size int64) error {
		n, err := io.Copy(io.Discard, r)
		seen += n
		if n > size {
			t.Errorf("%s: got %d bytes, declared %d", name, n, size)
		}
		return err
	})
	wantErr(t, err, ErrTooLarge, `zip entry "liar.bin" decompresses to more than the 1000 bytes`)
	if seen != 1002 {
		t.Fatalf("callback saw %d bytes", seen)
	}

	// A callback that reads exactly size bytes (as blob.Put may) and reports success.
	err = a.Extract(context.Background(), func(_ context.Context, _ string, r io.Reader, size int64) error {
		_, err := io.ReadFull(r, make([]byte, size))
		return err
	})
	wantErr(t, err, ErrTooLarge, "liar.bin")

	// A callback that reads nothing.
	err = a.Extract(context.Background(), func(context.Context, string, io.Reader, int64) error { return nil })
	wantErr(t, err, ErrTooLarge, "liar.bin")

	_, err = fs.ReadFile(a.FS(), "liar.bin")
	wantErr(t, err, ErrTooLarge, "liar.bin")

	f, err := a.FS().Open("liar.bin")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, f)
	f.Close()
	if n != 1000 {
		t.Fatalf("read %d bytes", n)
	}
	wantErr(t, err, ErrTooLarge, "liar.bin")
}

func TestLyingHeaderTooLargeAndChecksum(t *testing.T) {
	real := []byte(strings.Repeat("hello ", 200))
	comp := deflate(t, real)
	b := makeRawZip(t, rawEnt{name: "short.html", method: zip.Deflate, data: comp, crc: crc32.ChecksumIEEE(real), uncompressed: uint64(len(real) + 500)})
	a, err := openBytes(b, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, err = extractAll(t, a)
	wantErr(t, err, ErrCorrupt, `zip entry "short.html" ends after 1200 bytes, but its header says 1700`)
	_, err = fs.ReadFile(a.FS(), "short.html")
	wantErr(t, err, ErrCorrupt, "short.html")

	b = makeRawZip(t, rawEnt{name: "bad.html", method: zip.Deflate, data: comp, crc: 12345, uncompressed: uint64(len(real))})
	a, err = openBytes(b, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, err = extractAll(t, a)
	wantErr(t, err, ErrCorrupt, `zip entry "bad.html" fails its checksum`)

	garbage := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	b = makeRawZip(t, rawEnt{name: "junk.html", method: zip.Deflate, data: garbage, crc: 1, uncompressed: 10})
	a, err = openBytes(b, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, err = extractAll(t, a)
	wantErr(t, err, ErrCorrupt, `zip entry "junk.html" has damaged compressed data`)

	// Stored entries: more stored bytes than declared is a lie too.
	b = makeRawZip(t, rawEnt{name: "s.txt", method: zip.Store, data: []byte("0123456789"), crc: crc32.ChecksumIEEE([]byte("01234")), uncompressed: 5})
	a, err = openBytes(b, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, err = extractAll(t, a)
	wantErr(t, err, ErrTooLarge, `zip entry "s.txt" decompresses to more than the 5 bytes`)
}

func TestUnsupported(t *testing.T) {
	b := makeRawZip(t, rawEnt{name: "a.html", method: 12, data: []byte("BZh9..."), uncompressed: 10})
	_, err := openBytes(b, DefaultLimits())
	wantErr(t, err, ErrUnsupported, `zip entry "a.html" uses compression method 12`)

	b = makeRawZip(t, rawEnt{name: "a.html", method: zip.Store, flags: flagEncrypted, data: []byte("0123456789ab"), uncompressed: 0})
	_, err = openBytes(b, DefaultLimits())
	wantErr(t, err, ErrUnsupported, `zip entry "a.html" is encrypted`)
}

// setCentralOffset rewrites the local-header offset of name's central directory record.
func setCentralOffset(t *testing.T, b []byte, name string, off uint32) []byte {
	b = slices.Clone(b)
	for i := 0; i+46 <= len(b); i++ {
		if binary.LittleEndian.Uint32(b[i:]) != 0x02014b50 {
			continue
		}
		n := int(binary.LittleEndian.Uint16(b[i+28:]))
		if i+46+n <= len(b) && string(b[i+46:i+46+n]) == name {
			binary.LittleEndian.PutUint32(b[i+42:], off)
			return b
		}
	}
	t.Fatalf("no central record for %q", name)
	return nil
}

func TestOverlappingEntries(t *testing.T) {
	body := strings.Repeat("same content ", 50)
	b := makeZip(t, ent{name: "a.html", body: body}, ent{name: "b.html", body: body})
	b = setCentralOffset(t, b, "b.html", 0) // b's record now points at a's data
	_, err := openBytes(b, DefaultLimits())
	wantErr(t, err, ErrUnsafe, `zip entry "b.html" shares its data with zip entry "a.html"`)

	b = makeZip(t, ent{name: "a.html", body: body})
	b = setCentralOffset(t, b, "a.html", uint32(len(b)-10))
	_, err = openBytes(b, DefaultLimits())
	if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotZip) {
		t.Fatalf("error = %v", err)
	}
}

func TestExtractCancellation(t *testing.T) {
	b := makeZip(t, ent{name: "a.html", body: "1"}, ent{name: "b.html", body: "2"}, ent{name: "c.html", body: "3"})
	a, err := openBytes(b, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var calls []string
	err = a.Extract(ctx, func(ctx context.Context, name string, r io.Reader, size int64) error {
		calls = append(calls, name)
		cancel()
		_, err := io.ReadAll(r) // the reader honours ctx even if fn does not
		return err
	})
	if !errors.Is(err, context.Canceled) || len(calls) != 1 {
		t.Fatalf("err = %v, calls = %v", err, calls)
	}

	// A callback error names the entry and keeps its identity.
	sentinel := errors.New("bucket full")
	a, _ = openBytes(b, DefaultLimits())
	err = a.Extract(context.Background(), func(_ context.Context, name string, _ io.Reader, _ int64) error {
		if name == "b.html" {
			return sentinel
		}
		return nil
	})
	if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), `"b.html"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestConcurrentReads(t *testing.T) {
	var ents []ent
	for i := range 20 {
		ents = append(ents, ent{name: fmt.Sprintf("d/f%d.js", i), body: strings.Repeat(fmt.Sprint(i), 5000)})
	}
	a, err := openBytes(makeZip(t, ents...), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			for range 20 {
				b, err := fs.ReadFile(a.FS(), fmt.Sprintf("d/f%d.js", i))
				if err != nil || string(b) != strings.Repeat(fmt.Sprint(i), 5000) {
					t.Errorf("f%d: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
}

func TestRootPrefix(t *testing.T) {
	for _, c := range []struct {
		files  []string
		prefix string
		found  bool
	}{
		{[]string{"imsmanifest.xml", "a/imsmanifest.xml"}, "", true},
		{[]string{"course/imsmanifest.xml", "course/index.html"}, "course/", true},
		{[]string{"z/imsmanifest.xml", "a/b/imsmanifest.xml"}, "z/", true},
		{[]string{"b/imsmanifest.xml", "a/imsmanifest.xml"}, "a/", true},
		{[]string{"x/y/z/imsmanifest.xml"}, "x/y/z/", true},
		{[]string{"index.html", "imsmanifest.xml.bak", "imsmanifest.xml/x"}, "", false},
	} {
		m := fstest.MapFS{}
		for _, f := range c.files {
			m[f] = &fstest.MapFile{Data: []byte("x")}
		}
		if p, ok := RootPrefix(m, "imsmanifest.xml"); p != c.prefix || ok != c.found {
			t.Errorf("%v: got %q, %v; want %q, %v", c.files, p, ok, c.prefix, c.found)
		}
	}
	// Through the archive's own FS, as the import job uses it.
	a, err := openBytes(makeZip(t, ent{name: "My Course/imsmanifest.xml", body: "<m/>"}, ent{name: "__MACOSX/imsmanifest.xml", body: "x"}), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := RootPrefix(a.FS(), "imsmanifest.xml"); p != "My Course/" || !ok {
		t.Fatalf("got %q, %v", p, ok)
	}
}

func TestLimitsDefaults(t *testing.T) {
	if got := (Limits{}).withDefaults(); got != DefaultLimits() {
		t.Fatalf("zero limits = %+v", got)
	}
	got := (Limits{MaxEntries: 5, MaxRatio: -1}).withDefaults()
	if got.MaxEntries != 5 || got.MaxRatio != DefaultLimits().MaxRatio {
		t.Fatalf("got %+v", got)
	}
}

func TestEntryCountReadBeforeParsing(t *testing.T) {
	// A directory that claims 60,000 records is refused on the count alone, before
	// archive/zip would allocate for each of them.
	b := makeZip(t, ent{name: "a.html", body: "x"})
	b = slices.Clone(b)
	eocd := bytes.LastIndex(b, []byte("PK\x05\x06"))
	binary.LittleEndian.PutUint16(b[eocd+8:], 60000)
	binary.LittleEndian.PutUint16(b[eocd+10:], 60000)
	_, err := openBytes(b, DefaultLimits())
	wantErr(t, err, ErrTooLarge, "the package has 60000 entries; the limit is 20000")

	// More than 65,535 entries forces the zip64 records.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range 70000 {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprint(i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	if n, ok := declaredEntries(bytes.NewReader(buf.Bytes()), int64(buf.Len())); n != 70000 || !ok {
		t.Fatalf("declaredEntries = %d, %v", n, ok)
	}
	_, err = openBytes(buf.Bytes(), DefaultLimits())
	wantErr(t, err, ErrTooLarge, "the package has 70000 entries")
}
