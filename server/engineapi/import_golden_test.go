package engineapi_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/coursetest"
	"github.com/lectern-lms/lectern/storage/blob"
)

const goldenTenant = "golden"

// TestImportGolden imports every course/coursetest fixture through the HTTP API, in both
// modes, with the fixture's name as the course id, and compares what the detail endpoint
// says about it (courseLearningStandard, title, parserWarnings and the whole rootActivity)
// with testdata/golden/<name>.json. Both modes must give byte-identical output: there is one
// golden file per fixture, not one per mode.
func TestImportGolden(t *testing.T) {
	fixtures := coursetest.Fixtures()
	got := map[string]map[string][]byte{} // fixture → mode → canonical JSON
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		mode := path.Base(t.Name())
		e.CreateTenant(goldenTenant, true)
		for _, f := range fixtures {
			t.Run(f.Name, func(t *testing.T) {
				e := &servertest.Env{T: t, App: e.App, URL: e.URL} // failures belong to this subtest
				out := importDetail(e, f)
				if got[f.Name] == nil {
					got[f.Name] = map[string][]byte{}
				}
				got[f.Name][mode] = out
				if !*servertest.Update {
					compareGolden(t, f.Name, out)
				}
			})
		}
	})
	if t.Failed() {
		return
	}
	// The modes ran one after the other; their outputs must agree, and only then may the
	// golden files be rewritten.
	for _, f := range fixtures {
		outs := got[f.Name]
		modes := make([]string, 0, len(outs))
		for m := range outs {
			modes = append(modes, m)
		}
		sort.Strings(modes)
		if len(modes) != 2 {
			t.Errorf("%s: ran in modes %v; both embedded and distributed must run", f.Name, modes)
			continue
		}
		if a, b := outs[modes[0]], outs[modes[1]]; !bytes.Equal(a, b) {
			t.Errorf("%s: %s and %s differ\n%s:\n%s\n%s:\n%s", f.Name, modes[0], modes[1], modes[0], a, modes[1], b)
			continue
		}
		if *servertest.Update {
			p := goldenPath(f.Name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, outs[modes[0]], 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if *servertest.Update {
		// A golden file whose fixture is gone would never be checked again.
		files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
		for _, p := range files {
			if got[strings.TrimSuffix(filepath.Base(p), ".json")] == nil {
				t.Errorf("%s has no fixture in course/coursetest; delete it", p)
			}
		}
	}
}

// importDetail imports the fixture as course f.Name, checks the job and the stored files, and
// returns the canonical JSON of the detail's standard, title, warnings and activity tree.
func importDetail(e *servertest.Env, f coursetest.Fixture) []byte {
	t := e.T
	t.Helper()
	pkg, err := coursetest.Zip(f.Files)
	if err != nil {
		t.Fatal(err)
	}
	r := e.Upload(goldenTenant, "course="+url.QueryEscape(f.Name), pkg, f.Name+".zip")
	e.Expect(r, 200, "start import")
	var job struct{ Result string }
	r.JSON(t, &job)
	res := e.WaitJob(goldenTenant, r)
	if res.Status != "COMPLETE" {
		t.Fatalf("import of %s: %+v", f.Name, res)
	}

	// The package's files are in the blob store under the job's prefix: every file of the
	// zip except operating-system junk, which the archive skips.
	prefix := goldenTenant + "/courses/"
	if n := e.BlobCount(prefix); n == 0 {
		t.Fatalf("no files stored under %s", prefix)
	}
	stored := storedNames(e, prefix+job.Result+"/")
	var want []string
	for name := range f.Files {
		if !isJunk(name) {
			want = append(want, name)
		}
	}
	sort.Strings(want)
	if strings.Join(stored, "\n") != strings.Join(want, "\n") {
		t.Errorf("stored files %q, want %q", stored, want)
	}

	r = e.Do("GET", "/engine/api/v1/"+goldenTenant+"/courses/"+url.PathEscape(f.Name)+"/detail", servertest.Root, nil)
	e.Expect(r, 200, "detail")
	var d map[string]json.RawMessage
	r.JSON(t, &d)
	var id string
	var version int
	if json.Unmarshal(d["id"], &id) != nil || id != f.Name || json.Unmarshal(d["version"], &version) != nil || version != 0 {
		t.Errorf("detail id/version = %s/%s, want %q/0", d["id"], d["version"], f.Name)
	}
	var title string
	var warnings []string
	_ = json.Unmarshal(d["title"], &title)
	_ = json.Unmarshal(d["parserWarnings"], &warnings)
	if title != res.CourseTitle || strings.Join(warnings, "\n") != strings.Join(res.ParserWarnings, "\n") {
		t.Errorf("the detail (%q, %q) and the import job (%q, %q) disagree", title, warnings, res.CourseTitle, res.ParserWarnings)
	}
	var std string
	if _ = json.Unmarshal(d["courseLearningStandard"], &std); std != string(f.Standard) {
		t.Errorf("courseLearningStandard %q, want %q", std, f.Standard)
	}
	return canonical(t, d, "courseLearningStandard", "title", "parserWarnings", "rootActivity")
}

// canonical re-encodes the named members of obj: object keys sorted, two-space indent,
// numbers as written and no HTML escaping (launch URLs read "a?x=1&y=2").
func canonical(t *testing.T, obj map[string]json.RawMessage, keys ...string) []byte {
	t.Helper()
	view := map[string]any{}
	for _, k := range keys {
		raw, ok := obj[k]
		if !ok {
			t.Fatalf("the detail has no %q", k)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		view[k] = v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(view); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func goldenPath(name string) string { return filepath.Join("testdata", "golden", name+".json") }

func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(goldenPath(name))
	if err != nil {
		t.Fatalf("%v (run go test ./server -run TestImportGolden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the import; if the change is intended run go test ./server -run TestImportGolden -update and review the diff\ngot:\n%s", goldenPath(name), got)
	}
}

// storedNames lists the blobs under prefix, without it, sorted.
func storedNames(e *servertest.Env, prefix string) []string {
	var names []string
	if err := e.App.Blobs.List(e.T.Context(), prefix, func(b blob.Info) error {
		names = append(names, strings.TrimPrefix(b.Key, prefix))
		return nil
	}); err != nil {
		e.T.Fatalf("list %s: %v", prefix, err)
	}
	sort.Strings(names)
	return names
}

// isJunk mirrors the archive's operating-system junk rule (__MACOSX/, .DS_Store, Thumbs.db,
// desktop.ini), which the import skips.
func isJunk(name string) bool {
	base := path.Base(name)
	return strings.HasPrefix(name, "__MACOSX/") || strings.Contains(name, "/__MACOSX/") ||
		base == ".DS_Store" || strings.EqualFold(base, "Thumbs.db") || strings.EqualFold(base, "desktop.ini")
}
