package analysis

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestLexemes(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"carrot cake", []string{"carrot", "cake"}},
		{"carrot in cake", []string{"carrot", "cake"}},
		{"Carrots IN the cakes", []string{"carrot", "cake"}},
		{"jumps jumping jumped", []string{"jump"}},
		{"Don't stop", []string{"stop"}},
		{"don’t ‘quote’ ＇this＇", []string{"quot"}},
		{"rock'n'roll", []string{"rock", "n", "roll"}},
		{"the of and", nil},
		{"", nil},
		{"management of change", []string{"manag", "chang"}},
		{"Ünïcödé café", []string{"ünïcödé", "café"}},
		{"generously", []string{"generous"}},
		{"skies dying", []string{"sky", "die"}},
		{"中文", []string{"中", "文"}},
		{"3.14 1,000", []string{"3.14", "1,000"}},
	} {
		if got := Lexemes(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Lexemes(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	if a, b := Lexemes("carrot cake"), Lexemes("carrot in cake"); !slices.Equal(a, b) {
		t.Errorf("'carrot cake' %q and 'carrot in cake' %q differ", a, b)
	}
}

func TestTokens(t *testing.T) {
	text := "I don't like ’em."
	got := Tokens(text)
	want := []Token{
		{Term: "i", Start: 0, End: 1, Position: 0, Stop: true},
		{Term: "don", Start: 2, End: 5, Position: 1, Stop: true},
		{Term: "t", Start: 6, End: 7, Position: 2, Stop: true},
		{Term: "like", Start: 8, End: 12, Position: 3},
		{Term: "em", Start: 16, End: 18, Position: 4},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Tokens(%q) =\n %+v\nwant\n %+v", text, got, want)
	}
	for _, tk := range got {
		if s := text[tk.Start:tk.End]; strings.ToLower(s) != tk.Term && tk.Stop {
			t.Errorf("stop token %+v spans %q", tk, s)
		}
	}
	// Over-long words are cut at 255 UTF-16 units, as Lucene does.
	long := strings.Repeat("x", 600)
	if toks := Tokens(long); len(toks) != 3 || toks[1].Start != 255 || toks[2].End != 600 {
		t.Errorf("long word: %+v", toks)
	}
}

func TestPhraseTerms(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"management of change", []string{"manag", StopPlaceholder, "chang"}},
		{"Management for changes", []string{"manag", StopPlaceholder, "chang"}},
		{"management big change", []string{"manag", "big", "chang"}},
		{"I don't know", []string{StopPlaceholder, StopPlaceholder, StopPlaceholder, "know"}},
		// Text that spells the placeholder cannot produce it: every term is lower case.
		{"_STOP_ _stop_", []string{"_stop_", "_stop_"}},
	} {
		if got := PhraseTerms(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("PhraseTerms(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestMatchedTerms(t *testing.T) {
	for _, tc := range []struct {
		text    string
		lexemes []string
		want    []string
	}{
		{"Jumping jacks jumped, then JUMPING again", []string{"jump"}, []string{"Jumping", "jumped", "JUMPING"}},
		{"Carrot cake and carrots", Lexemes("carrot in cake"), []string{"Carrot", "cake", "carrots"}},
		{"I don't know", []string{"know", "don"}, []string{"know"}}, // stop words never match
		{"nothing here", []string{"cake"}, nil},
	} {
		if got := MatchedTerms(tc.text, tc.lexemes); !slices.Equal(got, tc.want) {
			t.Errorf("MatchedTerms(%q, %q) = %q, want %q", tc.text, tc.lexemes, got, tc.want)
		}
	}
}

func TestMatchRegex(t *testing.T) {
	for _, tc := range []struct {
		phrase  string
		match   []string // texts whose first match must be exactly the given part after "|"
		noMatch []string
	}{
		{
			phrase: `"management of change"`,
			match: []string{
				"Management of Change|Management of Change",
				"the managing for changes today|managing for changes",
				"management — in — change|management — in — change",
			},
			noMatch: []string{"management big change", "management change", "change of management"},
		},
		{
			phrase:  `"don't panic"`,
			match:   []string{"Don't panic!|Don't panic", "I can’t panic|can’t panic", "we do not panic|do not panic"},
			noMatch: []string{"don panic", "dont panic"},
		},
		{
			phrase:  `"happy carrots"`,
			match:   []string{"happily carrot|happily carrot", "HAPPY CARROTING|HAPPY CARROTING"},
			noMatch: []string{"unhappy carrot", "happy big carrot"},
		},
		{
			phrase:  `"the end"`,
			match:   []string{"at this end.|this end", "the ending|the ending"},
			noMatch: []string{"pizza end", "big end"},
		},
	} {
		re, err := regexp.Compile(MatchRegex(tc.phrase))
		if err != nil {
			t.Fatalf("MatchRegex(%q): %v", tc.phrase, err)
		}
		for _, m := range tc.match {
			text, want, _ := strings.Cut(m, "|")
			if got := re.FindString(text); got != want {
				t.Errorf("MatchRegex(%q) = %s\n on %q found %q, want %q", tc.phrase, re, text, got, want)
			}
		}
		for _, text := range tc.noMatch {
			if got := re.FindString(text); got != "" {
				t.Errorf("MatchRegex(%q) = %s\n on %q found %q, want none", tc.phrase, re, text, got)
			}
		}
	}
	if got := MatchRegex(`"the of"`); got == "" {
		t.Error("a phrase of stop words still has a regex")
	}
	if got := MatchRegex(`"  "`); got != "" {
		t.Errorf("empty phrase: %q", got)
	}
}

func FuzzTokens(f *testing.F) {
	f.Add("Don't stop 😀 ภาษาไทย 中文 ’tis")
	f.Fuzz(func(t *testing.T, s string) {
		prev := -1
		for _, tk := range Tokens(s) {
			if tk.Start < 0 || tk.End > len(s) || tk.Start >= tk.End || tk.Position != prev+1 {
				t.Fatalf("bad token %+v in %q", tk, s)
			}
			prev = tk.Position
		}
		_ = MatchRegex(s)
		if _, err := regexp.Compile(MatchRegex(s)); err != nil {
			t.Fatal(err)
		}
	})
}
