package player_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// ltsCase is one course package of CATAPULT's cmi5 LMS test suite, built the way the suite's
// webpack configuration builds it: a folder becomes a zip of index.html, <name>.js and the
// folder's cmi5.xml (its README.md stays out), a file is uploaded as it is.
type ltsCase struct {
	name     string
	body     []byte
	filename string
	pass     bool   // 001–102 must import, 201–210 must be refused
	rule     string // the requirement a refusal must name, from the package's own comments
}

// ruleRE finds a cmi5 requirement id ("14.1.0.0-4") in a package's comments or README.
var ruleRE = regexp.MustCompile(`\b(\d+\.\d+\.\d+\.\d+-\d+)\b`)

func ltsCases(t *testing.T) []ltsCase {
	src := testenv.SharedConformance(t, "cmi5-lts/lts/pkg/src")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return b
	}
	index, empty := read(filepath.Join(src, "index.html")), read(filepath.Join(src, "empty.js"))
	var out []ltsCase
	for _, e := range entries {
		name := e.Name()
		if name == "index.html" || name == "empty.js" || name == "lib" || !regexp.MustCompile(`^\d{3}-`).MatchString(name) {
			continue
		}
		c := ltsCase{name: name, pass: name < "200"}
		// The requirement a package violates is written in its cmi5.xml comment, its README
		// or, for the files that are not packages, in the file itself.
		var notes []byte
		if e.IsDir() {
			dir := filepath.Join(src, name)
			files := map[string][]byte{"index.html": index}
			if js := read(filepath.Join(dir, name+".js")); js != nil {
				files[name+".js"] = js
			} else {
				files[name+".js"] = empty
			}
			if x := read(filepath.Join(dir, "cmi5.xml")); x != nil {
				files["cmi5.xml"] = x
			}
			notes = append(read(filepath.Join(dir, "cmi5.xml")), read(filepath.Join(dir, "README.md"))...)
			if strings.Contains(name, "zip64") {
				c.body = zip64(t, files)
			} else {
				c.body = zipFiles(t, files)
			}
			c.filename = name + ".zip"
		} else {
			c.body = read(filepath.Join(src, name))
			c.filename, notes = name, c.body
		}
		if !c.pass {
			m := ruleRE.FindSubmatch(notes)
			if m == nil {
				t.Fatalf("%s: no requirement id in the package's comments", name)
			}
			c.rule = string(m[1])
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	if len(out) < 30 {
		t.Fatalf("only %d packages in %s", len(out), src)
	}
	return out
}

// TestCMI5LMSTestPackages imports every course package of CATAPULT's cmi5 LMS test suite
// (shared/conformance/cmi5-lts) through the HTTP API: each package the suite says an LMS
// must accept imports, and each it must reject is refused with a message naming the
// requirement it breaks, either at upload (not a course at all) or in the import job.
func TestCMI5LMSTestPackages(t *testing.T) {
	cases := ltsCases(t)
	schemas := testenv.SharedConformance(t, "schemas")
	for name, cfg := range servertest.Modes(t) {
		t.Run(name, func(t *testing.T) {
			c := cfg(t)
			c.SchemaDir = schemas
			e := servertest.Start(t, c)
			const tn = "lts"
			e.CreateTenant(tn, true)
			for _, lc := range cases {
				t.Run(lc.name, func(t *testing.T) {
					e := &servertest.Env{T: t, App: e.App, URL: e.URL}
					r := e.Upload(tn, "course="+url.QueryEscape(lc.name), lc.body, lc.filename)
					if !lc.pass && r.Status == 400 {
						if !strings.Contains(r.Message(), lc.rule) {
							t.Fatalf("refused at upload, but the message does not name %s: %s", lc.rule, r.Body)
						}
						return
					}
					res := e.WaitJob(tn, r)
					switch {
					case lc.pass && res.Status != "COMPLETE":
						t.Fatalf("must import: %+v", res)
					case !lc.pass && res.Status != "ERROR":
						t.Fatalf("must be refused for %s: %+v", lc.rule, res)
					case !lc.pass && !strings.Contains(res.Message, lc.rule):
						t.Fatalf("refused, but the message does not name %s: %s", lc.rule, res.Message)
					}
					if lc.pass {
						for _, w := range res.ParserWarnings {
							if strings.Contains(w, "not validated") {
								t.Errorf("cmi5.xml was not validated against the schema: %q", w)
							}
						}
					}
				})
			}
			// A course structure on its own imports from a URL too, under the same rules.
			t.Run("by URL", func(t *testing.T) {
				e := &servertest.Env{T: t, App: e.App, URL: e.URL}
				files := map[string][]byte{}
				for _, lc := range cases {
					files["/"+lc.filename] = lc.body
				}
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if b, ok := files[r.URL.Path]; ok {
						w.Write(b)
						return
					}
					http.NotFound(w, r)
				}))
				defer srv.Close()
				imp := func(course, file string) servertest.ImportResult {
					return e.WaitJob(tn, e.Do("POST", "/engine/api/v1/"+tn+"/courses/importJobs?course="+course, servertest.Root,
						map[string]any{"url": srv.URL + "/" + file, "courseName": course}))
				}
				if res := imp("url101", "101-one-thousand-aus.xml"); res.Status != "COMPLETE" {
					t.Errorf("101 by URL: %+v", res)
				}
				if res := imp("url202", "202-1-relative-url-no-zip.xml"); res.Status != "ERROR" || !strings.Contains(res.Message, "14.2.0.0-1") {
					t.Errorf("202-1 by URL: %+v", res)
				}
			})
		})
	}
}

func zipFiles(t *testing.T, files map[string][]byte) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, n := range sortedKeys(files) {
		f, err := w.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(files[n])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// zip64 writes files as a zip in the ZIP64 format whatever their size, as the suite's 102
// package is built (forceZip64Format): archive/zip only writes ZIP64 records for archives
// past 4 GiB. Entries are stored; every size and offset lives in the ZIP64 extra fields and
// the ZIP64 end records (APPNOTE 4.3.14, 4.5.3).
func zip64(t *testing.T, files map[string][]byte) []byte {
	var out, cd bytes.Buffer
	le := func(b *bytes.Buffer, vs ...any) {
		for _, v := range vs {
			if err := binary.Write(b, binary.LittleEndian, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := sortedKeys(files)
	for _, n := range names {
		data := files[n]
		off, size, crc := uint64(out.Len()), uint64(len(data)), crc32.ChecksumIEEE(data)
		le(&out, uint32(0x04034b50), uint16(45), uint16(0), uint16(0), uint16(0), uint16(0x21), crc,
			uint32(0xffffffff), uint32(0xffffffff), uint16(len(n)), uint16(20))
		out.WriteString(n)
		le(&out, uint16(1), uint16(16), size, size)
		out.Write(data)
		le(&cd, uint32(0x02014b50), uint16(45), uint16(45), uint16(0), uint16(0), uint16(0), uint16(0x21), crc,
			uint32(0xffffffff), uint32(0xffffffff), uint16(len(n)), uint16(28), uint16(0), uint16(0), uint16(0),
			uint32(0), uint32(0xffffffff))
		cd.WriteString(n)
		le(&cd, uint16(1), uint16(24), size, size, off)
	}
	cdOff, cdLen, count := uint64(out.Len()), uint64(cd.Len()), uint64(len(names))
	out.Write(cd.Bytes())
	eocd64 := uint64(out.Len())
	le(&out, uint32(0x06064b50), uint64(44), uint16(45), uint16(45), uint32(0), uint32(0), count, count, cdLen, cdOff)
	le(&out, uint32(0x07064b50), uint32(0), eocd64, uint32(1))
	le(&out, uint32(0x06054b50), uint16(0), uint16(0), uint16(0xffff), uint16(0xffff), uint32(0xffffffff), uint32(0xffffffff), uint16(0))
	// The archive must really be one only a ZIP64 reader can open, and a correct one.
	r, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil || len(r.File) != len(names) {
		t.Fatalf("zip64 writer: %v", err)
	}
	return out.Bytes()
}
