package textnorm

import (
	"reflect"
	"testing"
)

func TestCollapseSpace(t *testing.T) {
	if got := CollapseSpace(" a\t\n b\u200b\x03c  "); got != "a b c" {
		t.Errorf("CollapseSpace = %q", got)
	}
}

func TestHeadingTrail(t *testing.T) {
	var h HeadingTrail
	var got []string
	for _, s := range []struct {
		path []string
		body string
	}{
		{[]string{"Safety", "Gloves"}, "Wear them."},
		{[]string{"Safety", "Boots"}, "Boots\nSteel caps."}, // the body repeats its own heading
		{[]string{"Tools", "Saws"}, "Cut away from you."},
	} {
		got = append(got, h.Next(s.path, s.body))
	}
	want := []string{"Safety\nGloves", "", "Tools\nSaws"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("headings %q, want %q", got, want)
	}
}
