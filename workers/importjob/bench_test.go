package importjob

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/archive"
	"github.com/lectern-lms/lectern/storage/blob/local"
	"github.com/lectern-lms/lectern/storage/record/sqlite"
)

// The import benchmark compares a real course import with `unzip` of the same zip on the same
// machine (issue 3: at most 1.5× unzip). `make bench` (scripts/bench-report.sh) runs it:
//
//	go test -run='^$' -bench=BenchmarkImport -benchtime=3x ./workers/importjob/
//
// Everything (the generated zip, the blob directories, the SQLite files, unzip's output, the
// handler's temporary copy of the zip) lives below one directory, so both sides write to the
// same file system. That directory is LECTERN_BENCH_DIR if set, else a new directory in
// os.TempDir(); it is removed when the test binary ends.

const (
	benchSCOs        = 50
	benchTextBytes   = 30_000_000  // uncompressed HTML/JS/CSS
	benchZipTarget   = 100_000_000 // total zip size; the media fill what the text leaves
	benchTenant      = "bench"
	benchCourseID    = "bench-course"
	benchJobID       = "bench-job"
	benchTextPerSCO  = 8  // index.html, 5 pages, sco.js, sco.css
	benchSharedFiles = 30 // shared/lib/*.js and shared/css/*.css
)

var (
	benchOnce  sync.Once
	benchRoot  string // the per-process directory
	benchZip   string // the generated package
	benchSize  int64  // its size in bytes
	benchFiles int    // files in it
	benchErr   error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchRoot != "" && os.Getenv("LECTERN_BENCH_DIR") == "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}

// benchPackage builds the package once per process and returns its path and size.
func benchPackage(b *testing.B) (string, int64) {
	b.Helper()
	benchOnce.Do(func() {
		if dir := os.Getenv("LECTERN_BENCH_DIR"); dir != "" {
			benchRoot, benchErr = dir, os.MkdirAll(dir, 0o755)
		} else {
			benchRoot, benchErr = os.MkdirTemp("", "lectern-importbench-")
		}
		if benchErr != nil {
			return
		}
		benchZip = filepath.Join(benchRoot, "package.zip")
		var text, media int64
		text, media, benchFiles, benchErr = writeSCORMZip(benchZip)
		if benchErr != nil {
			return
		}
		st, err := os.Stat(benchZip)
		if err != nil {
			benchErr = err
			return
		}
		benchSize = st.Size()
		b.Logf("package %s: %d files, %.1f MB zipped, %.1f MB text + %.1f MB media uncompressed",
			benchZip, benchFiles, float64(benchSize)/1e6, float64(text)/1e6, float64(media)/1e6)
	})
	if benchErr != nil {
		b.Fatalf("building the benchmark package: %v", benchErr)
	}
	return benchZip, benchSize
}

// countingWriter tracks how many bytes the zip writer has produced so far.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeSCORMZip writes a SCORM 1.2 package shaped like authoring-tool output: a manifest with
// benchSCOs SCOs, each a folder of HTML pages, a script and a style sheet, plus shared
// libraries (all deflated, about 4:1), then incompressible media — per SCO a video (stored,
// as zip tools often store already-compressed video), two audio clips and two images
// (deflated, which leaves them at their size) — sized so that the zip ends near
// benchZipTarget bytes.
func writeSCORMZip(name string) (text, media int64, files int, err error) {
	out, err := os.Create(name)
	if err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	cw := &countingWriter{w: out}
	zw := zip.NewWriter(cw)
	rng := rand.New(rand.NewPCG(3, 14))
	add := func(name string, method uint16, data []byte) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		files++
		return err
	}

	if err := add("imsmanifest.xml", zip.Deflate, []byte(benchManifest())); err != nil {
		return 0, 0, 0, err
	}
	// Text: benchTextBytes shared out by weight, each file's size jittered by ±50 %.
	type textFile struct {
		name   string
		weight float64
		kind   string
	}
	var tf []textFile
	for i := range 20 {
		tf = append(tf, textFile{fmt.Sprintf("shared/lib/lib%02d.js", i), 5, "js"})
	}
	for i := range benchSharedFiles - 20 {
		tf = append(tf, textFile{fmt.Sprintf("shared/css/theme%02d.css", i), 2, "css"})
	}
	for s := range benchSCOs {
		d := scoDir(s)
		tf = append(tf, textFile{d + "/index.html", 1, "html"})
		for p := range 5 {
			tf = append(tf, textFile{fmt.Sprintf("%s/page%d.html", d, p+1), 1, "html"})
		}
		tf = append(tf, textFile{d + "/sco.js", 3, "js"}, textFile{d + "/sco.css", 0.6, "css"})
	}
	var sum float64
	for _, f := range tf {
		sum += f.weight
	}
	for _, f := range tf {
		size := int(float64(benchTextBytes) * f.weight / sum * (0.5 + rng.Float64()))
		data := benchText(rng, f.kind, size)
		if err := add(f.name, zip.Deflate, data); err != nil {
			return 0, 0, 0, err
		}
		text += int64(len(data))
	}
	if err := zw.Flush(); err != nil {
		return 0, 0, 0, err
	}

	// Media: what is left of the target, 5 files per SCO; the video takes 60 % of a SCO's
	// share, the audio clips 15 % each, the images 5 % each. Central directory and headers
	// take a few dozen KB, which the estimate leaves aside.
	left := benchZipTarget - cw.n - 100_000
	chacha := rand.NewChaCha8([32]byte{1, 2, 3})
	perSCO := float64(left) / benchSCOs
	for s := range benchSCOs {
		d := scoDir(s)
		for _, m := range []struct {
			name   string
			method uint16
			share  float64
		}{
			{d + "/media/video.mp4", zip.Store, 0.60},
			{d + "/media/narration1.mp3", zip.Deflate, 0.15},
			{d + "/media/narration2.mp3", zip.Deflate, 0.15},
			{d + "/media/figure1.jpg", zip.Deflate, 0.05},
			{d + "/media/figure2.jpg", zip.Deflate, 0.05},
		} {
			data := make([]byte, int(perSCO*m.share))
			_, _ = chacha.Read(data)
			if err := add(m.name, m.method, data); err != nil {
				return 0, 0, 0, err
			}
			media += int64(len(data))
		}
	}
	if err := zw.Close(); err != nil {
		return 0, 0, 0, err
	}
	return text, media, files, nil
}

func scoDir(s int) string { return fmt.Sprintf("sco%02d", s+1) }

// benchManifest lists every SCO with its files, as authoring tools do, so the parser's
// file checks run over the whole package.
func benchManifest() string {
	var sb strings.Builder
	sb.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="com.example.bench12" version="1.0"
  xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="ORG">
    <organization identifier="ORG">
      <title>Benchmark Course</title>
`)
	for s := range benchSCOs {
		fmt.Fprintf(&sb, `      <item identifier="ITEM-%d" identifierref="RES-%d">
        <title>Lesson %d</title>
        <adlcp:masteryscore>80</adlcp:masteryscore>
      </item>
`, s+1, s+1, s+1)
	}
	sb.WriteString("    </organization>\n  </organizations>\n  <resources>\n")
	for s := range benchSCOs {
		d := scoDir(s)
		fmt.Fprintf(&sb, `    <resource identifier="RES-%d" type="webcontent" adlcp:scormtype="sco" href="%s/index.html">
`, s+1, d)
		for _, f := range []string{"index.html", "page1.html", "page2.html", "page3.html", "page4.html", "page5.html",
			"sco.js", "sco.css", "media/video.mp4", "media/narration1.mp3", "media/narration2.mp3",
			"media/figure1.jpg", "media/figure2.jpg"} {
			fmt.Fprintf(&sb, "      <file href=\"%s/%s\"/>\n", d, f)
		}
		sb.WriteString("      <dependency identifierref=\"SHARED\"/>\n    </resource>\n")
	}
	sb.WriteString(`    <resource identifier="SHARED" type="webcontent" adlcp:scormtype="asset">` + "\n")
	for i := range 20 {
		fmt.Fprintf(&sb, "      <file href=\"shared/lib/lib%02d.js\"/>\n", i)
	}
	for i := range benchSharedFiles - 20 {
		fmt.Fprintf(&sb, "      <file href=\"shared/css/theme%02d.css\"/>\n", i)
	}
	sb.WriteString("    </resource>\n  </resources>\n</manifest>\n")
	return sb.String()
}

var benchWords = map[string][]string{
	"html": strings.Fields(`<div> </div> <p> </p> <span class="text"> </span> <img src="media/figure1.jpg"> ` +
		`the learner course lesson quiz score slide audio video question answer correct incorrect ` +
		`next previous continue module objective safety procedure step <li> </li> <a href="page2.html">`),
	"js": strings.Fields(`var function return if else for while this that null true false undefined ` +
		`document.getElementById LMSSetValue("cmi.core.lesson_status", LMSGetValue( API. window. ` +
		`slide player timeline state => { } ( ) ; , === !== + - * / length push`),
	"css": strings.Fields(`.slide .player #nav { } : ; margin padding color background border ` +
		`width height px em % solid none block inline-flex font-size line-height #fff #333 rgba(0,0,0,.5)`),
}

// benchText returns size bytes of source-like text: tokens, numbers and line breaks, which
// deflate about 4:1 like real HTML and scripts.
func benchText(rng *rand.Rand, kind string, size int) []byte {
	words := benchWords[kind]
	buf := make([]byte, 0, size+64)
	for len(buf) < size {
		buf = append(buf, words[rng.IntN(len(words))]...)
		buf = strconv.AppendInt(buf, int64(rng.IntN(100)), 10)
		buf = append(buf, " \n;"[rng.IntN(3)])
	}
	return buf[:size]
}

// importEnv is one iteration's fresh blob directory and SQLite database.
type importEnv struct {
	dir   string
	blobs *local.Store
	h     *Handler
	close func()
}

func newImportEnv(b *testing.B, root string, i int) *importEnv {
	b.Helper()
	dir := filepath.Join(root, fmt.Sprintf("lectern-%d", i))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	blobs, err := local.New(filepath.Join(dir, "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	records, err := sqlite.Open(filepath.Join(dir, "lectern.db"))
	if err != nil {
		b.Fatal(err)
	}
	h := &Handler{Courses: course.NewStore(records), Blobs: blobs, Limits: archive.DefaultLimits(),
		TempDir: dir, Logger: slog.New(slog.DiscardHandler)}
	return &importEnv{dir: dir, blobs: blobs, h: h, close: func() {
		records.Close()
		blobs.Close()
	}}
}

// upload does the HTTP request's share of an import: store the zip, record the job.
func (e *importEnv) upload(ctx context.Context, zipPath string, size int64) error {
	f, err := os.Open(zipPath)
	if err != nil {
		return err
	}
	defer f.Close()
	key := UploadKey(benchTenant, benchJobID)
	if _, err := e.blobs.Put(ctx, key, f, size); err != nil {
		return err
	}
	return e.h.Courses.CreateImportJob(ctx, benchTenant, &course.ImportJob{ID: benchJobID,
		CourseID: benchCourseID, UploadKey: key})
}

// process runs the import task as the queue would.
func (e *importEnv) process(ctx context.Context) error {
	task, _ := NewTask(Payload{Tenant: benchTenant, JobID: benchJobID})
	return e.h.ProcessTask(ctx, task)
}

// check confirms the import committed and stored every file of the package.
func (e *importEnv) check(ctx context.Context, b *testing.B) {
	b.Helper()
	job, err := e.h.Courses.ImportJob(ctx, benchTenant, benchJobID)
	if err != nil {
		b.Fatal(err)
	}
	if job.Status != course.ImportComplete {
		b.Fatalf("import ended %s: %s", job.Status, job.Message)
	}
	n, err := e.blobs.DeletePrefix(ctx, FilesPrefix(benchTenant, benchJobID)) // counts them
	if err != nil {
		b.Fatal(err)
	}
	if n != benchFiles {
		b.Fatalf("import stored %d files, the package has %d", n, benchFiles)
	}
}

// settle flushes what setup or the previous iteration left dirty in the page cache, so that
// write-back of untimed work does not land in the next timed section.
func settle() { syscall.Sync() }

// BenchmarkImport compares the course import with unzip on one ~100 MB SCORM 1.2 package.
//
//   - lectern: Handler.ProcessTask end to end — copy the upload out of the blob store to a
//     temporary file, archive.Open with the default limits, parse.Package, extract every
//     file into a fresh local blob store (each Put fsynced), commit the version in a fresh
//     SQLite database (synchronous=FULL), delete the upload, mark the job complete. Storing
//     the upload in the blob store and creating the job record are NOT timed: they are the
//     HTTP request's work (server.createImportJob), done while the client uploads, and the
//     issue is about what the import adds after that.
//   - lectern+upload: the same, with the upload's blob.Put and CreateImportJob timed too,
//     i.e. everything from "the zip is on local disk" to "the course is live".
//   - unzip: `unzip -q -o <zip> -d <fresh dir>` on the same file. unzip does not fsync, so
//     its files may still be only in the page cache when it exits; the import's are on disk.
//   - unzip+sync: unzip followed by sync(2), for the cost of making unzip's output durable
//     as well (the import syncs file by file; this flushes everything at once).
//
// b.SetBytes is the zip's size, so MB/s is zip bytes per second.
func BenchmarkImport(b *testing.B) {
	zipPath, size := benchPackage(b)
	root := filepath.Join(benchRoot, "runs")
	ctx := context.Background()

	lectern := func(withUpload bool) func(b *testing.B) {
		return func(b *testing.B) {
			b.SetBytes(size)
			i := 0
			for b.Loop() {
				b.StopTimer()
				os.RemoveAll(root)
				e := newImportEnv(b, root, i)
				i++
				if !withUpload {
					if err := e.upload(ctx, zipPath, size); err != nil {
						b.Fatal(err)
					}
				}
				settle()
				b.StartTimer()
				if withUpload {
					if err := e.upload(ctx, zipPath, size); err != nil {
						b.Fatal(err)
					}
				}
				if err := e.process(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				e.check(ctx, b)
				e.close()
				b.StartTimer()
			}
			b.StopTimer()
			os.RemoveAll(root)
		}
	}
	b.Run("lectern", lectern(false))
	b.Run("lectern+upload", lectern(true))

	unzip := func(withSync bool) func(b *testing.B) {
		return func(b *testing.B) {
			unzip, err := exec.LookPath("unzip")
			if err != nil {
				b.Skip("unzip is not installed (Debian/Ubuntu: apt-get install unzip); no baseline to compare with")
			}
			b.SetBytes(size)
			i := 0
			for b.Loop() {
				b.StopTimer()
				os.RemoveAll(root)
				dir := filepath.Join(root, fmt.Sprintf("unzip-%d", i))
				i++
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				settle()
				b.StartTimer()
				if out, err := exec.Command(unzip, "-q", "-o", zipPath, "-d", dir).CombinedOutput(); err != nil {
					b.Fatalf("unzip: %v\n%s", err, out)
				}
				if withSync {
					settle()
				}
			}
			b.StopTimer()
			os.RemoveAll(root)
		}
	}
	b.Run("unzip", unzip(false))
	b.Run("unzip+sync", unzip(true))
}
