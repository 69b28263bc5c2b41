package content

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/content/taxonomy"
)

var kitchen = []extract.Section{
	{Heading: "Knives", Text: "Always cut away from your body. Keep knives sharp, because a dull knife slips. Knife safety matters."},
	{Heading: "Baking", Text: "Bake the carrot cake at 180 degrees. Let the carrot cake cool before icing it. Unknown ovens run hot."},
}

func values(fs []GeneratedField, typ string) []string {
	var out []string
	for _, f := range fs {
		if f.Type == typ {
			out = append(out, f.Value)
		}
	}
	return out
}

// Without an embedding model: phrases by frequency, taxonomy skills by their words.
func TestBuiltinWithoutModel(t *testing.T) {
	g := &Builtin{}
	ctx := context.Background()
	fs, err := g.Generate(ctx, GenerateInput{Title: "Kitchen Safety Basics", Sections: kitchen})
	if err != nil {
		t.Fatal(err)
	}
	kw, skills := values(fs, FieldKeywords), values(fs, FieldSkills)
	if values(fs, FieldTitle)[0] != "Kitchen Safety Basics" || len(values(fs, FieldSummary)) != 1 {
		t.Fatalf("title/summary: %v", fs)
	}
	if len(kw) == 0 || len(kw) > defaultKeywords || !slices.Contains(kw, "carrot cake") {
		t.Fatalf("keywords %q: want carrot cake (twice in the text) among at most %d", kw, defaultKeywords)
	}
	if len(skills) == 0 || len(skills) > defaultSkills || slices.Contains(skills, UnknownSkill) {
		t.Fatalf("free skills %q", skills)
	}
	for _, k := range kw {
		for _, other := range kw {
			if k != other && strings.Contains(" "+other+" ", " "+k+" ") {
				t.Fatalf("keywords %q: %q lies inside %q", kw, k, other)
			}
		}
	}

	tax := &taxonomy.Taxonomy{ID: "t", Skills: []string{"Knife safety", "Baking", "Welding"}}
	fs, err = g.Generate(ctx, GenerateInput{Title: "Kitchen Safety Basics", Sections: kitchen, Types: []string{FieldSkills}, Taxonomy: tax})
	if err != nil {
		t.Fatal(err)
	}
	if got := values(fs, FieldSkills); len(fs) != len(got) || !slices.Equal(got, []string{"Knife safety", "Baking"}) {
		t.Fatalf("taxonomy skills %q (all fields %v), want [Knife safety Baking] only", got, fs)
	}
	tax.Skills = []string{"Welding", "Tax law"}
	fs, _ = g.Generate(ctx, GenerateInput{Sections: kitchen, Types: []string{FieldSkills}, Taxonomy: tax})
	if got := values(fs, FieldSkills); !slices.Equal(got, []string{UnknownSkill}) {
		t.Fatalf("irrelevant taxonomy: %q, want [Unknown]", got)
	}
	fs, _ = g.Generate(ctx, GenerateInput{Types: []string{FieldKeywords, FieldSkills}})
	if len(values(fs, FieldKeywords)) != 0 || len(values(fs, FieldSkills)) != 0 {
		t.Fatalf("empty document: %v", fs)
	}
}

func TestCandidates(t *testing.T) {
	got := map[string]int{}
	for _, c := range candidates("The carrot cake, the carrot cake! 180 degrees; an x-ray.") {
		got[c.text] = c.freq
	}
	if got["carrot cake"] != 2 || got["carrot"] != 2 || got["degrees"] != 1 || got["x-ray"] != 1 {
		t.Fatalf("candidates %v", got)
	}
	for _, bad := range []string{"the", "the carrot", "180", "180 degrees", "cake the", "an"} {
		if _, ok := got[bad]; ok {
			t.Errorf("candidate %q: stop words and numbers do not start or end a phrase", bad)
		}
	}
}
