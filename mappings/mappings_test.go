package mappings

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenOptions are the options the golden files are rendered with.
var goldenOptions = Options{EmbeddingDims: 384, Shards: 1, Replicas: 0}

func TestGolden(t *testing.T) {
	for _, ix := range Indexes() {
		t.Run(ix.Name, func(t *testing.T) {
			got, err := Render(ix.Name, goldenOptions)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", ix.Name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./mappings -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Render(%q) differs from %s; if the change is intended, bump the "+
					"definition's Version and run go test ./mappings -update\ngot:\n%s", ix.Name, path, got)
			}
		})
	}
}

func TestEveryFileHasADefinition(t *testing.T) {
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	var defined []string
	for _, ix := range Indexes() {
		defined = append(defined, ix.Name+".json")
		if ix.Version < 1 {
			t.Errorf("%s: version %d, want >= 1", ix.Name, ix.Version)
		}
	}
	slices.Sort(names)
	slices.Sort(defined)
	if !slices.Equal(names, defined) {
		t.Errorf("embedded files %v, definitions %v", names, defined)
	}
}

func TestEnglishStopWords(t *testing.T) {
	if len(EnglishStopWords) != 127 {
		t.Errorf("len = %d, want 127", len(EnglishStopWords))
	}
	seen := map[string]bool{}
	for _, w := range EnglishStopWords {
		if seen[w] {
			t.Errorf("duplicate %q", w)
		}
		seen[w] = true
		if w != strings.ToLower(strings.TrimSpace(w)) || w == "" || strings.ContainsAny(w, "'’ ") {
			t.Errorf("stop word %q is not a lower-case word without apostrophes", w)
		}
	}
	for _, w := range []string{"the", "don", "t", "s", "now"} {
		if !seen[w] {
			t.Errorf("%q missing", w)
		}
	}
}

func TestRenderFillsPlaceholders(t *testing.T) {
	out, err := Render(Content, Options{EmbeddingDims: 768, Shards: 2, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(`"$`)) {
		t.Errorf("placeholder left in output:\n%s", out)
	}
	var doc struct {
		Settings struct {
			Shards   int `json:"number_of_shards"`
			Replicas int `json:"number_of_replicas"`
		} `json:"settings"`
		Mappings struct {
			Meta       map[string]any `json:"_meta"`
			Properties map[string]struct {
				Type string `json:"type"`
				Dims int    `json:"dims"`
			} `json:"properties"`
		} `json:"mappings"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Settings.Shards != 2 || doc.Settings.Replicas != 1 {
		t.Errorf("shards/replicas = %d/%d, want 2/1", doc.Settings.Shards, doc.Settings.Replicas)
	}
	if got := doc.Mappings.Properties["embedding"]; got.Type != "dense_vector" || got.Dims != 768 {
		t.Errorf("embedding = %+v", got)
	}
	if doc.Mappings.Meta["lectern_mapping"] != Content || doc.Mappings.Meta["lectern_version"] != float64(contentVersion(t)) {
		t.Errorf("_meta = %v", doc.Mappings.Meta)
	}
}

func TestRenderErrors(t *testing.T) {
	if _, err := Render("nope", Options{EmbeddingDims: 3}); err == nil {
		t.Error("unknown name: no error")
	}
	for _, dims := range []int{0, -1, MaxEmbeddingDims + 1} {
		if _, err := Render(Content, Options{EmbeddingDims: dims}); err == nil {
			t.Errorf("EmbeddingDims %d: no error", dims)
		}
	}
	if _, err := Render(Statements, Options{}); err != nil {
		t.Errorf("statements needs no dims: %v", err)
	}
	if _, err := Render(Statements, Options{Replicas: -1}); err == nil {
		t.Error("negative replicas: no error")
	}
	if _, err := fill(map[string]any{"x": "$typo"}, nil); err == nil {
		t.Error("unknown placeholder: no error")
	}
}

// contentVersion returns the content definition's version, which changes with its JSON.
func contentVersion(t *testing.T) int {
	t.Helper()
	ix, ok := Lookup(Content)
	if !ok || ix.Version < 2 {
		t.Fatalf("Lookup(Content) = %+v, %v; want version 2 or later", ix, ok)
	}
	return ix.Version
}

func TestVersioned(t *testing.T) {
	if got, want := Versioned(Content), fmt.Sprintf("content_v%d", contentVersion(t)); got != want {
		t.Errorf("Versioned(Content) = %q", got)
	}
	if got := Versioned(Statements); got != "statements_v2" {
		t.Errorf("Versioned(Statements) = %q", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Versioned of an unknown name did not panic")
		}
	}()
	Versioned("nope")
}

// TestStockComponentsOnly checks that every definition names only analysis components that
// every Elasticsearch 8 node has, with no plugin and without the analysis-common module: the
// built-in analyzers below, and custom normalizers made of the server's own lowercase filter.
func TestStockComponentsOnly(t *testing.T) {
	builtin := map[string]bool{AnalyzerTerms: true, "standard": true, "keyword": true, "simple": true, "stop": true}
	for _, ix := range Indexes() {
		out, err := Render(ix.Name, goldenOptions)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Settings struct {
				Analysis map[string]map[string]struct {
					Type   string   `json:"type"`
					Filter []string `json:"filter"`
				} `json:"analysis"`
			} `json:"settings"`
			Mappings map[string]any `json:"mappings"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		for kind, defs := range doc.Settings.Analysis {
			if kind != "normalizer" {
				t.Errorf("%s defines %s %v: only normalizers are allowed", ix.Name, kind, defs)
			}
			for name, d := range defs {
				if d.Type != "custom" || !slices.Equal(d.Filter, []string{"lowercase"}) {
					t.Errorf("%s: normalizer %s = %+v, want custom with the lowercase filter", ix.Name, name, d)
				}
			}
		}
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, e := range v {
					if s, ok := e.(string); ok && (k == "analyzer" || k == "search_analyzer") && !builtin[s] {
						t.Errorf("%s: %s.%s = %q, not a built-in analyzer", ix.Name, path, k, s)
					}
					walk(path+"."+k, e)
				}
			case []any:
				for _, e := range v {
					walk(path, e)
				}
			}
		}
		walk("mappings", doc.Mappings)
	}
}
