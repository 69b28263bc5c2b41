package runtime

import (
	"reflect"
	"strconv"
	"strings"
)

// fastParse turns parseFast on; tests turn it off to compare.
var fastParse = true

// parseFast is ParseCommit for the bodies content sends: one pass over the body that
// flattens, looks each element up by a pattern built along the way and checks its value,
// where ParseCommit decodes the body into maps and slices of interfaces, flattens them, and
// splits every name again to validate it (about 700,000 allocations for 10,000
// interactions). ok is false for anything else (a syntax error, a duplicate name, nesting too
// deep, an element the data model does not define, a bad value): ParseCommit then reads the
// body as before, and answers with the error it always gave.
func parseFast(d Dialect, body []byte) (c *Commit, ok bool) {
	p := &flatParser{s: string(body), index: index12, d: d}
	if d == SCORM2004 {
		p.index = index2004
	}
	// One map, sized for the body (an element with its value takes 25 bytes or more).
	p.flat = make(Values, len(body)/25)
	p.c = &Commit{Values: p.flat, order: make([]namedValue, 0, len(body)/20), ordered: p.flat}
	i := skipSpace(p.s, 0)
	if i >= len(p.s) || p.s[i] != '{' {
		return nil, false
	}
	i, ok = p.object(i, 0)
	if !ok || skipSpace(p.s, i) != len(p.s) {
		return nil, false
	}
	return p.c, true
}

// flatParser is the state of parseFast: the body as one string (names and values without
// escapes are slices of it), the name and pattern of the element being read.
type flatParser struct {
	s     string
	d     Dialect
	index map[string]*element
	flat  Values
	c     *Commit
	name  []byte
	pat   []byte
	// seq: commitSequence was read; navSeen: adl.nav.request was.
	seq, navSeen bool
}

// object reads the object at s[i], whose name is p.name (empty at the top, depth 0).
func (p *flatParser) object(i, depth int) (int, bool) {
	i = skipSpace(p.s, i+1)
	if i < len(p.s) && p.s[i] == '}' {
		return i + 1, true
	}
	nameLen, patLen := len(p.name), len(p.pat)
	// The names met, for duplicates (the last would win, alone): in an array while few.
	var few [16]string
	keys := few[:0]
	var seen map[string]bool
	for {
		k, j, ok := readString(p.s, i)
		if !ok {
			return i, false
		}
		if len(keys) < 16 {
			for _, o := range keys {
				if o == k {
					return i, false
				}
			}
			keys = append(keys, k)
		} else {
			if seen == nil {
				seen = make(map[string]bool, 32)
				for _, o := range keys {
					seen[o] = true
				}
			}
			if seen[k] {
				return i, false
			}
			seen[k] = true
		}
		i = skipSpace(p.s, j)
		if i >= len(p.s) || p.s[i] != ':' {
			return i, false
		}
		i = skipSpace(p.s, i+1)
		if depth == 0 && k == "commitSequence" {
			if i, ok = p.sequence(i); !ok {
				return i, false
			}
		} else {
			if depth == 0 {
				// A top-level name may be a flattened element name: its pattern is patternOf's.
				pat, ok := patternOf(k)
				if !ok {
					return i, false
				}
				p.name, p.pat = append(p.name, k...), append(p.pat, pat...)
			} else {
				if k == "" || strings.IndexByte(k, '.') >= 0 {
					return i, false
				}
				p.name = append(append(p.name, '.'), k...)
				p.pat = append(p.pat, '.')
				if p.pat, ok = appendSegment(p.pat, k); !ok {
					return i, false
				}
			}
			if i, ok = p.value(i, depth); !ok {
				return i, false
			}
			p.name, p.pat = p.name[:nameLen], p.pat[:patLen]
		}
		i = skipSpace(p.s, i)
		if i >= len(p.s) {
			return i, false
		}
		switch p.s[i] {
		case '}':
			return i + 1, true
		case ',':
			i = skipSpace(p.s, i+1)
		default:
			return i, false
		}
	}
}

// array reads the array at s[i], whose name is p.name.
func (p *flatParser) array(i, depth int) (int, bool) {
	i = skipSpace(p.s, i+1)
	if i < len(p.s) && p.s[i] == ']' {
		return i + 1, true
	}
	nameLen, patLen := len(p.name), len(p.pat)
	for n := 0; ; n++ {
		if n > 9999 {
			// Not an index of the data model.
			return i, false
		}
		p.name = strconv.AppendInt(append(p.name, '.'), int64(n), 10)
		p.pat = append(p.pat, ".n"...)
		var ok bool
		if i, ok = p.value(i, depth); !ok {
			return i, false
		}
		p.name, p.pat = p.name[:nameLen], p.pat[:patLen]
		i = skipSpace(p.s, i)
		if i >= len(p.s) {
			return i, false
		}
		switch p.s[i] {
		case ']':
			return i + 1, true
		case ',':
			i = skipSpace(p.s, i+1)
		default:
			return i, false
		}
	}
}

// value reads the value at s[i] of the element p.name, in a container at depth.
func (p *flatParser) value(i, depth int) (int, bool) {
	if depth > 8 {
		// Nested too deeply.
		return i, false
	}
	if i >= len(p.s) {
		return i, false
	}
	var v string
	switch c := p.s[i]; {
	case c == '{':
		return p.object(i, depth+1)
	case c == '[':
		return p.array(i, depth+1)
	case c == '"':
		var ok bool
		var j int
		if v, j, ok = readString(p.s, i); !ok {
			return i, false
		}
		i = j
	case c == '-' || (c >= '0' && c <= '9'):
		j := numberEnd(p.s, i)
		if j < 0 {
			return i, false
		}
		v, i = p.s[i:j], j
	case strings.HasPrefix(p.s[i:], "true"):
		v, i = "true", i+4
	case strings.HasPrefix(p.s[i:], "false"):
		v, i = "false", i+5
	case strings.HasPrefix(p.s[i:], "null"):
		v, i = "", i+4
	default:
		return i, false
	}
	return i, p.leaf(v)
}

// leaf takes the value of the element p.name, as ParseCommit's Validate would.
func (p *flatParser) leaf(v string) bool {
	e := p.index[string(p.pat)]
	if e == nil {
		if p.d != SCORM2004 || !strings.HasPrefix(string(p.name), "adl.") {
			return false
		}
		if strings.HasPrefix(string(p.name), "adl.data.") {
			// Shared data stores are few and rare: ParseCommit takes them out (SharedData).
			return false
		}
		// The pending navigation request travels with the commit, checked as ParseCommit
		// checks it (a second one is a duplicate: ParseCommit decides); the rest of adl.*
		// (request_valid, adl.data) is not kept.
		if string(p.name) != NavRequestElement {
			return true
		}
		if p.navSeen {
			return false
		}
		p.navSeen = true
		if _, err := Validate(p.d, NavRequestElement, v); err != nil {
			return false
		}
		if v != "_none_" {
			p.c.NavRequest = v
		}
		return true
	}
	if e.kind == kReadOnly {
		return true
	}
	if v != "" || !e.blank {
		// readString's strings are valid UTF-8 (encoding/json's replace what is not).
		if checkValue(p.d, e, "", v) != nil {
			return false
		}
	}
	n, k := len(p.flat), string(p.name)
	p.flat[k] = v
	// The same element twice (a flattened name and a nested one): ParseCommit decides.
	if len(p.flat) == n {
		return false
	}
	p.c.order = append(p.c.order, namedValue{k, v})
	return true
}

// sequence reads commitSequence at s[i].
func (p *flatParser) sequence(i int) (int, bool) {
	j := numberEnd(p.s, i)
	if j < 0 || p.seq {
		return i, false
	}
	seq, err := strconv.ParseInt(p.s[i:j], 10, 64)
	if err != nil || seq < 1 {
		return i, false
	}
	p.c.Sequence, p.seq = seq, true
	return j, true
}

// numberEnd returns the end of the JSON number at s[i], -1 when there is none.
func numberEnd(s string, i int) int {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i >= len(s):
		return -1
	case s[i] == '0':
		i++
	case s[i] >= '1' && s[i] <= '9':
		i = digitsEnd(s, i)
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		j := digitsEnd(s, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digitsEnd(s, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digitsEnd(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// appendSegment appends the pattern of one name segment (patternOf's rule): "n" for a
// collection index, the segment itself otherwise; false for an index the data model does
// not allow.
func appendSegment(pat []byte, seg string) ([]byte, bool) {
	if seg == "" || seg[0] < '0' || seg[0] > '9' {
		return append(pat, seg...), true
	}
	if len(seg) > 4 || (len(seg) > 1 && seg[0] == '0') {
		return pat, false
	}
	for i := 1; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return pat, false
		}
	}
	return append(pat, 'n'), true
}

// The value checks of the common types, hand-written: a regular expression match cost as much
// as the rest of an element's validation. TestValueChecks holds the expressions they match.

// isDecimal is decimalRE: -?\d{1,15}(\.\d{1,15})?
func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, dot := strings.Cut(s, ".")
	return allDigits(whole, 1, 15) && (!dot || allDigits(frac, 1, 15))
}

// isInteger is integerRE: -?\d{1,9}
func isInteger(s string) bool { return allDigits(strings.TrimPrefix(s, "-"), 1, 9) }

// isTimespan12 is timespan12RE: \d{2,4}:\d{2}:\d{2}(\.\d{1,2})?
func isTimespan12(s string) bool {
	h, rest, ok := strings.Cut(s, ":")
	if !ok || !allDigits(h, 2, 4) || len(rest) < 5 || rest[2] != ':' || !allDigits(rest[:2], 2, 2) || !allDigits(rest[3:5], 2, 2) {
		return false
	}
	return fraction2(rest[5:])
}

// isTime12 is time12RE: ([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,2})?
func isTime12(s string) bool {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' || !allDigits(s[:2], 2, 2) || !allDigits(s[3:5], 2, 2) || !allDigits(s[6:8], 2, 2) {
		return false
	}
	if s[0] > '2' || (s[0] == '2' && s[1] > '3') || s[3] > '5' || s[6] > '5' {
		return false
	}
	return fraction2(s[8:])
}

// fraction2 is (\.\d{1,2})? at the end of a time.
func fraction2(s string) bool { return s == "" || (s[0] == '.' && allDigits(s[1:], 1, 2)) }

// allDigits: s is lo to hi ASCII digits.
func allDigits(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// namedValue is one element of a commit, in the order of its body.
type namedValue struct{ name, value string }

// inOrder returns c's values in the order its body gave them, nil when that order is unknown
// (a commit not parsed by parseFast) or no longer c.Values' (the map was replaced, as a
// no-credit session's WithoutResults does). Store.Commit writes a commit in this order, so
// that the next commit of the same content, read in the same order, meets the stored
// elements one after the other instead of looking each up in a map of 100,000 (storedUnder),
// and a large commit is written from consecutive memory.
func (c *Commit) inOrder() []namedValue {
	if c.order == nil || len(c.order) != len(c.Values) || reflect.ValueOf(c.ordered).UnsafePointer() != reflect.ValueOf(c.Values).UnsafePointer() {
		return nil
	}
	return c.order
}
