package servertest

import (
	"bytes"
	"flag"
	"fmt"
	"regexp"
	"sort"
	"testing"
)

// TimestampRE matches an ISO 8601 date-time in a JSON string: with or without fraction and
// zone (the content service writes UTC without a zone).
var TimestampRE = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"`)

// GoldenRecorder collects normalised responses of one mode.
type GoldenRecorder struct {
	E        *Env
	Volatile map[string]string // value → placeholder
	Got      map[string][]byte // response type → golden text
}

// Vary declares value volatile: it appears in golden files as <name>.
func (g *GoldenRecorder) Vary(value, name string) {
	if value == "" {
		g.E.T.Fatalf("volatile %s is empty", name)
	}
	g.Volatile[value] = "<" + name + ">"
}

// Record keeps r as the golden text of the response type name.
func (g *GoldenRecorder) Record(name string, r Resp) {
	g.E.T.Helper()
	if _, dup := g.Got[name]; dup {
		g.E.T.Fatalf("response type %s recorded twice", name)
	}
	body := r.Body
	// Longest values first, so a value that contains another is replaced whole.
	vals := make([]string, 0, len(g.Volatile))
	for v := range g.Volatile {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		body = bytes.ReplaceAll(body, []byte(v), []byte(g.Volatile[v]))
	}
	body = TimestampRE.ReplaceAll(body, []byte(`"<time>"`))
	ct := r.Header.Get("Content-Type")
	g.Got[name] = fmt.Appendf(nil, "%d %s\n%s\n", r.Status, ct, body)
}

// RawID extracts the string member name of a raw JSON object body, without decoding it
// into a struct (an exact, case-sensitive match).
func RawID(t *testing.T, body []byte, name string) string {
	t.Helper()
	m := regexp.MustCompile(`"` + regexp.QuoteMeta(name) + `":"([^"]+)"`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no %q in %s", name, body)
	}
	return string(m[1])
}

// Update asks the golden tests to rewrite their golden files from the output.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata from the tests' output (both modes must run and agree)")
