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

func TestChunksOpenWithHeading(t *testing.T) {
	long := strings.Repeat("Breathe slowly and pause before each point. ", 60)
	head := "Public speaking\nManaging nerves"
	pieces := Chunks([]extract.Section{
		{Location: "Public speaking > Managing nerves", Heading: head, Text: long},
		{Location: "Public speaking > Closing", Heading: "Closing"},
		{Location: "Intro", Text: "No heading here."},
	})
	var parts []Piece
	for _, p := range pieces {
		if strings.HasPrefix(p.Location, "Public speaking > Managing nerves") {
			parts = append(parts, p)
		}
	}
	if len(parts) < 2 || parts[0].Location != "Public speaking > Managing nerves" || parts[1].Location != "Public speaking > Managing nerves (part 2)" {
		t.Fatalf("locations: %+v", pieces)
	}
	var body int
	for _, p := range parts {
		// Every chunk of the section opens with its heading and still fits the model's window.
		if !strings.HasPrefix(p.Text, head+"\n") || utf8.RuneCountInString(p.Text) > ChunkChars {
			t.Fatalf("piece %q: %d chars, %q...", p.Location, utf8.RuneCountInString(p.Text), p.Text[:40])
		}
		body += len(p.Text) - len(head) - 1
	}
	if body < len(strings.TrimSpace(long))-len(parts) {
		t.Fatalf("text lost: %d of %d", body, len(long))
	}
	last := pieces[len(pieces)-2:]
	if last[0] != (Piece{"Public speaking > Closing", "Closing"}) || last[1] != (Piece{"Intro", "No heading here."}) {
		t.Fatalf("heading-only and heading-less sections: %+v", last)
	}
	// A heading too long to repeat opens the first chunk only.
	longHead := strings.Repeat("very ", maxRepeatedHeading)
	pieces = Chunks([]extract.Section{{Location: "L", Heading: longHead, Text: long}})
	n := 0
	for _, p := range pieces {
		n += strings.Count(p.Text, "very")
	}
	if !strings.HasPrefix(pieces[0].Text, "very") || n != maxRepeatedHeading {
		t.Fatalf("long heading: %d times in %d pieces", n, len(pieces))
	}
	// Summaries are drawn from the text, not the headings.
	if s := Summary([]extract.Section{{Location: "x", Heading: "Closing"}, {Location: "y", Heading: "Managing nerves", Text: "Breathe. Pause."}}); s != "Breathe. Pause." {
		t.Fatalf("summary %q", s)
	}
}
