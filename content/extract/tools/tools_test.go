package tools

import (
	"context"
	"slices"
	"testing"
	"testing/fstest"
)

// newPackage is a testHost and Files over a package of the given files.
func newPackage(t *testing.T, files map[string]string) (*testHost, *Files) {
	fsys := fstest.MapFS{}
	var paths []string
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
		paths = append(paths, name)
	}
	return &testHost{t: t, fsys: fsys}, NewFiles(paths)
}

// TestDetect checks detection on its own; content/extract's package tests read whole
// packages of every tool through Extract.
func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		files         map[string]string
		name, version string
	}{
		{map[string]string{"story.html": "<!-- version: 3.85.31615.0 -->"}, "Articulate Storyline", "3.85.31615.0"},
		{map[string]string{"index.html": "<!-- Created with iSpring --><!--version 11.2.3.9020 -->"}, "iSpring", "11.2.3.9020"},
		{map[string]string{"Trivantis-PageTracking.js": ""}, "Lectora", Undetected},
		// A product name in the page's text is no signature.
		{map[string]string{"index.html": "<p>Created with iSpring, Lectora and Storyline</p>"}, "", ""},
	} {
		h, files := newPackage(t, tc.files)
		tool := Detect(h, files, nil)
		switch {
		case tool == nil && tc.name != "":
			t.Errorf("%v: no tool, want %s", tc.files, tc.name)
		case tool != nil && (tool.Name != tc.name || tool.Version == nil || *tool.Version != tc.version):
			t.Errorf("%v: %+v, want %s %s", tc.files, tool, tc.name, tc.version)
		}
	}
}

func TestReadElucidat(t *testing.T) {
	h, files := newPackage(t, map[string]string{
		"index.html": `<script src="https://cdn.elucidat.com/player.js"></script>`,
		"data/project.json": `{"pages":[{"name":"Welcome","text":"Hello"},{"name":"Hidden","hidden":true},` +
			`{"name":"Pool","chapter":"Quiz","draw":2,"question":"Pick one","answers":[{"text":"A","correct":true},{"text":"B"}]}]}`,
	})
	tool := Detect(h, files, []string{"index.html"})
	if tool == nil || tool.Name != "Elucidat" || tool.Version != nil {
		t.Fatalf("Detect = %+v", tool)
	}
	tool.Read(context.Background(), h, files)
	if !tool.Counted || tool.Count != 3 {
		t.Errorf("count %d (%v), want 3", tool.Count, tool.Counted)
	}
	if want := []string{"Welcome | Welcome | Hello", "Quiz > Pool | Quiz\nPool | Pick one\nA\nB"}; !slices.Equal(h.sections, want) {
		t.Errorf("sections %q, want %q", h.sections, want)
	}
	if len(h.questions) != 1 || h.questions[0].Question != "Pick one" || !h.questions[0].Choices[0].IsCorrect {
		t.Errorf("questions %+v", h.questions)
	}
}
