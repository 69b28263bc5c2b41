package jsdata

import (
	"encoding/json"
)

// Some tools (Adobe Captivate's CPM.js) ship their course model as a JavaScript object
// literal rather than JSON: unquoted keys, single-quoted strings, and references to player
// functions (chfn:cp.ch) among the data. Literal reads such a literal without running it:
// strings, numbers, booleans, arrays and objects become the same generic values Parse
// gives; a bare reference becomes a ref (which Str does not take for text); anything else
// (a call, an operator) ends the read, and what was read so far is kept, because a model cut
// short is still worth its slides.

// ref is a bare name in a literal (cp.fd, undefined): not data, but it must not end the read.
type ref string

// maxLiteralItems bounds the values one literal may hold in total, so a hostile file cannot
// turn a few MiB into an unbounded tree of tiny values. Real CPM.js models hold well under a
// million (a 3 MiB model holds about a tenth of that).
const maxLiteralItems = 1 << 20

type literalReader struct {
	b     []byte
	i     int
	items int
}

// Literal reads the object or array literal at b[0] and reports whether it read all of it.
// On a partial read the value holds everything before the point it stopped, since a
// model cut short is still worth what it holds.
func Literal(b []byte) (any, bool) {
	r := &literalReader{b: b}
	return r.value(0)
}

func (r *literalReader) space() {
	for r.i < len(r.b) {
		switch c := r.b[r.i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			r.i++
		case c == '/' && r.i+1 < len(r.b) && r.b[r.i+1] == '/':
			for r.i < len(r.b) && r.b[r.i] != '\n' {
				r.i++
			}
		case c == '/' && r.i+1 < len(r.b) && r.b[r.i+1] == '*':
			end := indexFrom(r.b, r.i+2, "*/")
			if end < 0 {
				r.i = len(r.b)
				return
			}
			r.i = end + 2
		default:
			return
		}
	}
}

func indexFrom(b []byte, from int, s string) int {
	for i := from; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}

func (r *literalReader) value(depth int) (any, bool) {
	r.space()
	if r.i >= len(r.b) || depth > MaxDepth {
		return nil, false
	}
	r.items++
	if r.items > maxLiteralItems {
		return nil, false
	}
	switch c := r.b[r.i]; {
	case c == '{':
		return r.object(depth)
	case c == '[':
		return r.array(depth)
	case c == '\'' || c == '"':
		s, n, ok := Unquote(r.b[r.i:])
		if !ok {
			return nil, false
		}
		r.i += n
		return s, true
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		start := r.i
		r.i++
		for r.i < len(r.b) && isNumByte(r.b[r.i]) {
			r.i++
		}
		return json.Number(string(r.b[start:r.i])), true
	case isIdentByte(c):
		start := r.i
		for r.i < len(r.b) && (isIdentByte(r.b[r.i]) || r.b[r.i] == '.') {
			r.i++
		}
		name := string(r.b[start:r.i])
		switch name {
		case "true":
			return true, true
		case "false":
			return false, true
		case "null", "undefined":
			return nil, true
		case "new", "function":
			return nil, false
		}
		r.space()
		if r.i < len(r.b) && (r.b[r.i] == '(' || r.b[r.i] == '[' || r.b[r.i] == '=') {
			return nil, false
		}
		return ref(name), true
	}
	return nil, false
}

func isNumByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+' ||
		c == 'x' || c == 'X' || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (r *literalReader) object(depth int) (any, bool) {
	m := map[string]any{}
	r.i++ // {
	for {
		r.space()
		if r.i >= len(r.b) {
			return m, false
		}
		if r.b[r.i] == '}' {
			r.i++
			return m, true
		}
		var key string
		switch c := r.b[r.i]; {
		case c == '\'' || c == '"':
			s, n, ok := Unquote(r.b[r.i:])
			if !ok {
				return m, false
			}
			key = s
			r.i += n
		case isIdentByte(c):
			start := r.i
			for r.i < len(r.b) && isIdentByte(r.b[r.i]) {
				r.i++
			}
			key = string(r.b[start:r.i])
		default:
			return m, false
		}
		r.space()
		if r.i >= len(r.b) || r.b[r.i] != ':' {
			return m, false
		}
		r.i++
		v, ok := r.value(depth + 1)
		if v != nil || ok {
			m[key] = v
		}
		if !ok {
			return m, false
		}
		r.space()
		if r.i < len(r.b) && r.b[r.i] == ',' {
			r.i++
		}
	}
}

func (r *literalReader) array(depth int) (any, bool) {
	a := []any{}
	r.i++ // [
	for {
		r.space()
		if r.i >= len(r.b) {
			return a, false
		}
		switch r.b[r.i] {
		case ']':
			r.i++
			return a, true
		case ',':
			r.i++
			continue
		}
		v, ok := r.value(depth + 1)
		if !ok {
			return a, false
		}
		a = append(a, v)
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
