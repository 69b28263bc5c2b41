package taxonomy

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, csv, col string
		want           []string
	}{
		{"comma", "id,skill\n1,Baking\n2,Knife safety\n", "skill", []string{"Baking", "Knife safety"}},
		{"bom", "\xef\xbb\xbfskill,id\nBaking,1\n", "skill", []string{"Baking"}},
		{"semicolon", "id;skill;note\n1;Baking;a, b\n2;Welding;x\n", "skill", []string{"Baking", "Welding"}},
		{"tab", "skill\tid\nBaking\t1\n", "skill", []string{"Baking"}},
		{"quoted newline", "id,skill\n1,\"Knife\nsafety\"\n2,\"a, b\"\n", "skill", []string{"Knife safety", "a, b"}},
		{"crlf, dedupe, blanks, ragged", "id,skill\r\n1,Baking\r\n2,baking\r\n3,\r\n4\r\n5,  Food   hygiene \r\n", "skill", []string{"Baking", "Food hygiene"}},
		{"case-insensitive column", "ID,Skill Name\n1,Baking\n", "skill name", []string{"Baking"}},
		{"single column", "skill\nBaking\n", "skill", []string{"Baking"}},
	}
	for _, c := range cases {
		got, err := Parse([]byte(c.csv), c.col)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, csv, col string
		want           error
		mention        string
	}{
		{"missing column", "id,skill\n1,a\n", "skills", ErrNoColumn, `"skills"`},
		{"empty", "", "skill", ErrInvalidCSV, "empty"},
		{"no values", "skill\n\n , \n", "skill", ErrNoSkills, "skill"},
		{"binary", "skill\n\x00\x01", "skill", ErrInvalidCSV, "NUL"},
		{"latin-1", "skill\nCr\xe8me", "skill", ErrInvalidCSV, "UTF-8"},
		{"broken quote", "skill\n\"a\"b\n", "skill", ErrInvalidCSV, "line 2"},
		{"too long", "skill\n" + strings.Repeat("x", 256) + "\n", "skill", ErrInvalidCSV, "256"},
		{"ambiguous", "Skill,skill\na,b\n", "SKILL", ErrNoColumn, "exact"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.csv), c.col)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: error %v, want %v mentioning %q", c.name, err, c.want, c.mention)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"id,skill\n1,Baking\n", "\xef\xbb\xbfa;b\n\"x\ny\";z\n", "skill\t\n\"", "s\n\"a\"\"b\",c"} {
		f.Add([]byte(s), "skill")
	}
	f.Fuzz(func(t *testing.T, data []byte, col string) {
		skills, err := Parse(data, col)
		if err != nil {
			if !errors.Is(err, ErrInvalidCSV) && !errors.Is(err, ErrNoColumn) && !errors.Is(err, ErrNoSkills) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if len(skills) == 0 {
			t.Fatal("no skills without an error")
		}
		seen := map[string]bool{}
		for _, s := range skills {
			k := strings.ToLower(s)
			if s == "" || s != strings.TrimSpace(s) || seen[k] {
				t.Fatalf("bad or duplicate skill %q in %q", s, skills)
			}
			seen[k] = true
		}
	})
}
