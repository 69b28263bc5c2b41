package archive

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBenchZip writes a package shaped like real e-learning output to path: 300 HTML/JS-like
// text files of 100 KB (deflated, about 4:1) and 20 incompressible 1 MiB "media" files
// (stored, as zip tools store already-compressed video). It returns the uncompressed total,
// about 50 MB.
func writeBenchZip(tb testing.TB, path string) int64 {
	out, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("var function return the course lesson quiz score div span class id " +
		"learner module slide audio video script style width height left top true false null")
	var total int64
	for i := range 300 {
		w, err := zw.Create(fmt.Sprintf("res/text/file%03d.js", i))
		if err != nil {
			tb.Fatal(err)
		}
		var sb strings.Builder
		for sb.Len() < 100_000 {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteString(fmt.Sprint(rng.IntN(100)))
			sb.WriteByte(" \n;"[rng.IntN(3)])
		}
		n, _ := io.WriteString(w, sb.String())
		total += int64(n)
	}
	media := make([]byte, 1<<20)
	for i := range 20 {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("res/media/clip%02d.mp4", i), Method: zip.Store})
		if err != nil {
			tb.Fatal(err)
		}
		for j := range media {
			media[j] = byte(rng.Uint32())
		}
		n, _ := w.Write(media)
		total += int64(n)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return total
}

// BenchmarkExtract extracts a ~50 MB generated package from a file to io.Discard, Open
// included, to compare with `unzip -t` or `unzip -d /tmp/x`. Set ARCHIVE_BENCH_ZIP to a
// path to keep the generated zip for that comparison.
func BenchmarkExtract(b *testing.B) {
	path := os.Getenv("ARCHIVE_BENCH_ZIP")
	if path == "" {
		path = filepath.Join(b.TempDir(), "bench.zip")
	}
	total := writeBenchZip(b, path)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	b.Logf("package: %d bytes uncompressed, %d bytes zipped", total, st.Size())
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		a, err := Open(f, st.Size(), DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		err = a.Extract(context.Background(), func(_ context.Context, _ string, r io.Reader, _ int64) error {
			_, err := io.Copy(io.Discard, r)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
