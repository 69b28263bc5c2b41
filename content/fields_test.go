package content

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/content/extract"
)

func TestFields(t *testing.T) {
	secs := []extract.Section{{Location: "Intro", Text: "First sentence here. Second one! Third?"}}
	f := Fields("  My Title ", secs)
	if len(f) != 2 || f[0] != (GeneratedField{FieldTitle, "My Title"}) || f[1] != (GeneratedField{FieldSummary, "First sentence here. Second one!"}) {
		t.Fatalf("fields: %+v", f)
	}
	if got := Fields("", nil); len(got) != 0 {
		t.Fatalf("no title, no text: %+v", got)
	}
	long := strings.Repeat("word ", 200)
	if s := Summary([]extract.Section{{Location: "x", Text: long}}); utf8.RuneCountInString(s) > SummaryMaxChars || s == "" {
		t.Fatalf("long summary: %d chars", len(s))
	}
}

func TestChunks(t *testing.T) {
	long := strings.Repeat("A sentence of moderate length. ", 100)
	pieces := Chunks([]extract.Section{{Location: "A", Text: "short"}, {Location: "B", Text: long}, {Location: "A", Text: "again"}, {Location: "C", Text: "  "}})
	seen := map[string]bool{}
	var total int
	for _, p := range pieces {
		if seen[p.Location] || p.Location == "" || p.Text == "" || utf8.RuneCountInString(p.Text) > ChunkChars {
			t.Fatalf("bad piece %q (%d chars)", p.Location, len(p.Text))
		}
		seen[p.Location] = true
		total += len(p.Text)
	}
	if pieces[0].Location != "A" || pieces[1].Location != "B" || pieces[2].Location != "B (part 2)" || pieces[len(pieces)-1].Location != "A (2)" {
		t.Fatalf("locations: %+v", pieces)
	}
	if total < len(strings.TrimSpace(long))-100 {
		t.Fatalf("text lost: %d of %d", total, len(long))
	}
}

func TestValidate(t *testing.T) {
	for _, bad := range []string{"", " x", "x ", "a\x00b", strings.Repeat("x", MaxIDLength+1)} {
		if ValidateID(bad) == nil {
			t.Errorf("ValidateID(%q) accepted", bad)
		}
	}
	if ValidateID("Ä/b c") != nil {
		t.Error("a printable id was refused")
	}
	tags, err := ValidateTags([]string{"b", "a", "b"})
	if err != nil || strings.Join(tags, ",") != "a,b" {
		t.Fatalf("tags: %v %v", tags, err)
	}
}
