package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"hash/crc32"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/storage/blob"
)

// FuzzOpen feeds arbitrary bytes (and mutations of small zips) to Open. It must never
// panic, every error must be classified (an *Error; a bytes.Reader cannot fail to read),
// and an Archive it returns may only expose clean, unique, junk-free names whose readers
// never yield more than the checked sizes.
func FuzzOpen(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Add(makeZip(f, ent{name: "imsmanifest.xml", body: "<manifest/>"}, ent{name: "res/"}, ent{name: "res/a.html", body: "<p>hi</p>"}))
	f.Add(makeZip(f, ent{name: "__MACOSX/._a", body: "x"}, ent{name: "a/.DS_Store", body: "x"}, ent{name: "a/b", body: "y"}))
	f.Add(makeZip(f, ent{name: "../evil", body: "x"}))
	f.Add(makeZip(f, ent{name: "link", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}))
	f.Add(makeZip(f, ent{name: "caf\x82.html", body: "x", nonUTF8: true}, ent{name: "CAF\x82.html", body: "y", nonUTF8: true}))
	f.Add(makeZip(f, ent{name: "a/b", body: "1"}, ent{name: "a/b/c", body: "2"}))
	real := make([]byte, 8192)
	f.Add(makeRawZip(f, rawEnt{name: "liar", method: zip.Deflate, data: deflate(f, real), crc: crc32.ChecksumIEEE(real), uncompressed: 100}))
	f.Add(makeRawZip(f, rawEnt{name: "s", method: zip.Store, data: []byte("abc"), crc: crc32.ChecksumIEEE([]byte("abc")), uncompressed: 3}))

	lim := Limits{MaxEntries: 64, MaxTotalSize: 1 << 20, MaxEntrySize: 256 << 10, MaxRatio: 200, RatioMinSize: 4096}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Open(bytes.NewReader(data), int64(len(data)), lim)
		if err != nil {
			if !isArchiveErr(err) {
				t.Fatalf("unclassified error %T: %v", err, err)
			}
			return
		}
		sizes := map[string]int64{}
		var total int64
		for _, file := range a.Files() {
			checkExposed(t, file.Name)
			if _, dup := sizes[file.Name]; dup {
				t.Fatalf("duplicate name %q", file.Name)
			}
			if file.Size < 0 || file.Size > lim.MaxEntrySize {
				t.Fatalf("%q: size %d", file.Name, file.Size)
			}
			sizes[file.Name] = file.Size
			total += file.Size
		}
		if total > lim.MaxTotalSize {
			t.Fatalf("total %d", total)
		}
		err = fs.WalkDir(a.FS(), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == "." {
				return nil
			}
			checkExposed(t, p)
			if d.IsDir() {
				return nil
			}
			size, ok := sizes[p]
			if !ok {
				t.Fatalf("FS exposes %q, which Files does not list", p)
			}
			b, err := fs.ReadFile(a.FS(), p)
			if err != nil {
				if !isArchiveErr(err) {
					t.Fatalf("ReadFile(%q): unclassified error %v", p, err)
				}
				return nil
			}
			if int64(len(b)) != size {
				t.Fatalf("ReadFile(%q) = %d bytes, size %d", p, len(b), size)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("WalkDir: %v", err)
		}
		err = a.Extract(context.Background(), func(_ context.Context, name string, r io.Reader, size int64) error {
			n, err := io.Copy(io.Discard, r)
			if n > size {
				t.Fatalf("%q yielded %d bytes, size %d", name, n, size)
			}
			return err
		})
		if err != nil && !isArchiveErr(err) {
			t.Fatalf("Extract: unclassified error %v", err)
		}
	})
}

// checkExposed fails unless name is acceptable as the tail of a blob key and is not junk.
func checkExposed(t *testing.T, name string) {
	t.Helper()
	if _, err := blob.CleanKey(name); err != nil {
		t.Fatalf("exposed name %q: %v", name, err)
	}
	if strings.Contains(name, "\\") || (len(name) > 1 && name[1] == ':' && isASCIILetter(name[0])) {
		t.Fatalf("exposed name %q has a backslash or drive letter", name)
	}
	if junkKind(name) != "" {
		t.Fatalf("exposed junk %q", name)
	}
}
