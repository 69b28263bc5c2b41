package runtime

import (
	"fmt"
	"math/rand"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestValueChecks: the hand-written checks match what the data model's regular expressions
// match.
func TestValueChecks(t *testing.T) {
	checks := []struct {
		re    *regexp.Regexp
		check func(string) bool
	}{
		{regexp.MustCompile(`^-?\d{1,15}(\.\d{1,15})?$`), isDecimal},
		{regexp.MustCompile(`^-?\d{1,9}$`), isInteger},
		{regexp.MustCompile(`^\d{2,4}:\d{2}:\d{2}(\.\d{1,2})?$`), isTimespan12},
		{regexp.MustCompile(`^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,2})?$`), isTime12},
	}
	rnd := rand.New(rand.NewSource(1))
	alphabet := "0123456789:.-- 0129356:.\n٣x"
	samples := []string{"", "0", "-0", "1.5", "-", "1.", ".5", "1234567890123456", "123456789012345.123456789012345",
		"1234567890", "-123456789", "00:00:00", "0000:00:00.00", "10:00:00", "23:59:59.99", "24:00:00", "19:60:00",
		"09:59:59.9", "12345:00:00", "1:00:00", "00:00:00.", "00:00:00.123", "00:00:00\n", "٣٣:00:00"}
	for i := 0; i < 200000; i++ {
		var b strings.Builder
		for n := rnd.Intn(14); n > 0; n-- {
			r := []rune(alphabet)
			b.WriteRune(r[rnd.Intn(len(r))])
		}
		samples = append(samples, b.String())
	}
	for _, c := range checks {
		for _, s := range samples {
			if got, want := c.check(s), c.re.MatchString(s); got != want {
				t.Fatalf("%s: %q: %v, the expression %v", c.re, s, got, want)
			}
		}
	}
}

// parseSlow is ParseCommit without its fast path.
func parseSlow(d Dialect, body []byte) (c *Commit, err error) {
	old := fastParse
	fastParse = false
	defer func() { fastParse = old }()
	return ParseCommit(d, body)
}

// TestParseFastSameAsSlow: the one-pass parse gives what decoding and flattening gave, or
// leaves the body to it: random commits in both forms, with odd names, values, nesting and
// syntax.
func TestParseFastSameAsSlow(t *testing.T) {
	rnd := rand.New(rand.NewSource(2))
	names := []string{"core", "lesson_status", "score", "raw", "interactions", "0", "1", "01", "10000", "id", "time",
		"timestamp", "type", "weighting", "latency", "objectives", "correct_responses", "pattern", "cmi", "suspend_data",
		"completion_status", "a.b", "", "adl", "nav", "request", "student_id", "learner_id", "commitSequence", "cmi.core.lesson_status",
		"cmi.interactions.0.id", "cmi.interactions.0.time", "cmi.suspend_data", "adl.data", "cmi.interactions", "exit"}
	values := []string{`"x"`, `""`, `"10:00:00"`, `"PT1S"`, `"0000:00:12.5"`, `"passed"`, `"completed"`, `1`, `-1.5`, `1e3`, `true`,
		`false`, `null`, `"a\"b\\c\u00e9"`, `"é☃"`, `"choice"`, `"2026-12-06T10:00:00Z"`, `101`, `"1"`, `01`, `"\u0000"`, `"a` + "\x01" + `"`}
	var value func(depth int) string
	value = func(depth int) string {
		switch r := rnd.Intn(10); {
		case r < 2 && depth < 10:
			var parts []string
			for n := rnd.Intn(4); n > 0; n-- {
				parts = append(parts, value(depth+1))
			}
			return "[" + strings.Join(parts, ",") + "]"
		case r < 5 && depth < 10:
			var parts []string
			for n := rnd.Intn(4); n > 0; n-- {
				parts = append(parts, fmt.Sprintf("%q:%s", names[rnd.Intn(len(names))], value(depth+1)))
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
		return values[rnd.Intn(len(values))]
	}
	accepted, fast := 0, 0
	for i := 0; i < 20000; i++ {
		var parts []string
		if rnd.Intn(4) > 0 {
			parts = append(parts, fmt.Sprintf(`"commitSequence":%s`, []string{"1", "2", "0", "1.5", `"1"`}[rnd.Intn(5)]))
		}
		for n := rnd.Intn(5); n > 0; n-- {
			parts = append(parts, fmt.Sprintf("%q:%s", names[rnd.Intn(len(names))], value(0)))
		}
		body := "{" + strings.Join(parts, ",") + "}" + []string{"", " ", "}", "x", "{}"}[rnd.Intn(5)]
		for _, d := range []Dialect{SCORM12, SCORM2004} {
			want, werr := parseSlow(d, []byte(body))
			got, gerr := ParseCommit(d, []byte(body))
			if fmt.Sprint(werr) != fmt.Sprint(gerr) || !sameCommit(got, want) {
				// The slow path's choice between two errors, or two spellings of one element,
				// follows map order: only a fast answer must equal it.
				if c, ok := parseFast(d, []byte(body)); ok {
					t.Fatalf("%s (%v):\n got %+v, %v\nwant %+v, %v", body, d, c, nil, want, werr)
				}
				continue
			}
			if werr == nil {
				accepted++
				if _, ok := parseFast(d, []byte(body)); ok {
					fast++
				}
			}
		}
	}
	if accepted < 2000 || fast < accepted/2 {
		t.Fatalf("%d commits accepted, %d of them by the fast path: the commits test too little", accepted, fast)
	}
	// The benchmark's commits take the fast path.
	for _, d := range []Dialect{SCORM12, SCORM2004} {
		body := BigCommit(50)
		if _, ok := parseFast(d, body); ok != (d == SCORM2004) {
			t.Fatalf("%v: fast path %v", d, ok)
		}
		want, _ := parseSlow(d, body)
		got, _ := ParseCommit(d, body)
		if !sameCommit(got, want) {
			t.Fatalf("%v: differs", d)
		}
	}
	t.Logf("%d commits accepted, %d by the fast path", accepted, fast)
}

// sameCommit compares what ParseCommit answers; the fast path also keeps the body's order,
// which must be its values'.
func sameCommit(a, b *Commit) bool {
	for _, c := range []*Commit{a, b} {
		if c == nil || c.order == nil {
			continue
		}
		if o := c.inOrder(); len(o) != len(c.Values) {
			return false
		}
		for _, e := range c.order {
			if v, ok := c.Values[e.name]; !ok || v != e.value {
				return false
			}
		}
	}
	if a == nil || b == nil {
		return a == b
	}
	return a.Sequence == b.Sequence && reflect.DeepEqual(a.Values, b.Values)
}

// FuzzParseFast: whatever the one-pass parse accepts, decoding and flattening accept the same.
func FuzzParseFast(f *testing.F) {
	f.Add([]byte(`{"commitSequence":1,"cmi.core.lesson_status":"passed","cmi.interactions.0.id":"q"}`), true)
	f.Add([]byte(`{"commitSequence":2,"cmi":{"score":{"scaled":"0.5"},"interactions":[{"id":"a","objectives":[{"id":"o"}]}]}}`), false)
	f.Add([]byte(`{"cmi":{"core":{"lesson_status":"passed","score":{"raw":1.5e1}},"interactions":[{"id":"q\u00e9","time":"10:00:00"}]}}`), true)
	f.Add(BigCommit(2), false)
	f.Fuzz(func(t *testing.T, body []byte, v12 bool) {
		d := SCORM2004
		if v12 {
			d = SCORM12
		}
		fast, ok := parseFast(d, body)
		if !ok {
			return
		}
		slow, err := parseSlow(d, body)
		if err != nil || !sameCommit(fast, slow) {
			t.Fatalf("%q: fast %+v, slow %+v, %v", body, fast, slow, err)
		}
	})
}
