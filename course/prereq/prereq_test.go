package prereq

import (
	"errors"
	"reflect"
	"testing"
)

func TestMet(t *testing.T) {
	statuses := map[string]string{
		"module1": Completed, "module2": Passed, "module3": Incomplete, "module4": Failed,
		"module5": Browsed, "module6": "", "a": Completed, "b": Passed, "c": Incomplete, "d": NotAttempted,
	}
	status := func(id string) (string, bool) {
		st, ok := statuses[id]
		return st, ok
	}
	for _, tc := range []struct {
		name, expr string
		want       bool
	}{
		{"empty", "", true},
		{"blank", "  ", true},
		{"completed item", "module1", true},
		{"passed item", "module2", true},
		{"incomplete item", "module3", false},
		{"failed item", "module4", false},
		{"browsed item", "module5", false},
		{"untouched item", "module6", false},
		{"and, both done", "module1 & module2", true},
		{"and, one not", "module1 & module3", false},
		{"and without spaces", "module1&module2", true},
		{"or", "module3 | module2", true},
		{"or, neither", "module3 | module4", false},
		{"not", "~module3", true},
		{"not done", "~module1", false},
		{"double not", "~~module1", true},
		{"and binds tighter than or", "module3 & module4 | module1", true},
		{"and binds tighter than or, right", "module1 | module3 & module4", true},
		{"parentheses", "(module1 | module3) & module4", false},
		{"parentheses, met", "(module1 | module3) & (module2 | module4)", true},
		{"not of a group", "~(module3 | module4)", true},
		{"nested groups", "((module1))", true},
		{"equals a word", "module4 = failed", true},
		{"equals a quoted word", `module4 = "failed"`, true},
		{"equals a letter", "module3=i", true},
		{"equals, not so", "module3 = completed", false},
		{"not equal", "module3 <> completed", true},
		{"not equal, equal", "module1 <> c", false},
		{"equals not attempted, quoted", `module6 = "not attempted"`, true},
		{"equals not attempted, letter", "d = n", true},
		{"equals in an expression", "module1 & module4 = f", true},
		{"set, 3 of 4 with 2 done", "3*{a,b,c,d}", false},
		{"set, 2 of 4", "2*{a,b,c,d}", true},
		{"set with spaces", "2 * { a , b , c }", true},
		{"set, 0", "0*{c,d}", true},
		{"set and an item", "2*{a,b,c} & ~module3", true},
		{"unknown item counts as met", "nosuch", true},
		{"unknown item in a set", "3*{a,b,nosuch}", true},
		{"unknown item compared", "nosuch = failed", true},
		{"case of the status word", "module1 = COMPLETED", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Met(tc.expr, status)
			if err != nil || got != tc.want {
				t.Errorf("Met(%q) = %v, %v; want %v", tc.expr, got, err, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, expr := range []string{
		"module1 &", "& module1", "(module1", "module1)", "module1 module2", "~", "module1 = ", "module1 = great",
		"x*{a,b}", "3*{a,b", "3*{}", "3*a", `module1 = "passed`, "module1 | | module2", "{a}", "module1 < module2",
	} {
		if _, err := Parse(expr); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q): %v, want a syntax error", expr, err)
		}
	}
}

func TestIdentifiers(t *testing.T) {
	e, err := Parse("~(a | b = p) & 2*{c,d,e}")
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Identifiers(); !reflect.DeepEqual(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("Identifiers = %v", got)
	}
}
