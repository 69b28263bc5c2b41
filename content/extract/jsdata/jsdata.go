// Package jsdata reads the course data authoring tools embed in their published packages:
// JSON, JSON inside JavaScript (globalProvideData('data', '…'), window.courseData = "…"),
// and JavaScript object literals (Captivate's CPM.js), all without running any script. The
// readers walk the data without a schema, because the tools rename their fields between
// versions: callers look for characteristic keys (Str, Num, Arr) rather than decode fixed
// structs.
//
// It is separate from content/extract/tools, which knows each tool's layout, because
// reading hostile JavaScript-shaped data safely (depth and size bounds, escapes, partial
// reads) is a concern of its own that the fuzz tests here exercise without any tool.
package jsdata

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/content/extract/textnorm"
)

// MaxDepth is how deep the readers here go into nested data, and how deep callers walking
// the values they return should go: it stops them on absurdly nested (hostile) data, where
// encoding/json itself only refuses nesting beyond 10,000.
const MaxDepth = 64

var tagRe = regexp.MustCompile(`<[^>]{0,1000}>`)

// StripTags reduces an HTML fragment (tools store rich text as HTML) to plain text. Block
// tags become spaces so paragraphs do not run together; inline tags vanish so "<b>W</b>ord"
// stays one word.
func StripTags(s string) string {
	if strings.ContainsRune(s, '<') {
		s = tagRe.ReplaceAllStringFunc(s, func(tag string) string {
			name := strings.ToLower(strings.TrimLeft(tag, "</"))
			if i := strings.IndexAny(name, " \t\n/>"); i >= 0 {
				name = name[:i]
			}
			switch name {
			case "b", "i", "u", "em", "strong", "span", "a", "sup", "sub", "small", "mark", "code", "font", "s":
				return ""
			}
			return " "
		})
	}
	return textnorm.CollapseSpace(html.UnescapeString(s))
}

// Parse decodes JSON into generic values. Numbers stay json.Number so that an id or a count
// too large for a float64 is not silently rounded; Num reads them.
func Parse(data []byte) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// UnwrapCall finds fn( 'name', PAYLOAD ) in a script and decodes PAYLOAD, which is either a
// JSON object written inline or a JavaScript string literal holding JSON.
func UnwrapCall(src []byte, fn string) (any, bool) {
	i := bytes.Index(src, []byte(fn+"("))
	if i < 0 {
		return nil, false
	}
	rest := src[i+len(fn)+1:]
	// Skip the first argument (a quoted name) and the comma after it.
	rest = bytes.TrimLeft(rest, " \t\r\n")
	if len(rest) > 0 && (rest[0] == '\'' || rest[0] == '"') {
		if _, n, ok := Unquote(rest); ok {
			rest = bytes.TrimLeft(rest[n:], " \t\r\n")
			rest = bytes.TrimLeft(bytes.TrimPrefix(rest, []byte(",")), " \t\r\n")
		}
	}
	return jsValue(rest)
}

// jsValue decodes a JSON value or a JS string literal holding JSON at the start of b.
func jsValue(b []byte) (any, bool) {
	if len(b) == 0 {
		return nil, false
	}
	if b[0] == '\'' || b[0] == '"' {
		s, _, ok := Unquote(b)
		if !ok {
			return nil, false
		}
		return Parse([]byte(s))
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// Unquote decodes the JavaScript string literal that b starts with (b[0] is its quote) and
// returns it with the number of bytes it took, so that a caller can read on after it. It
// knows the escapes tools emit: \n \t \r \b \f \v \0 \xHH \uHHHH \u{…} and escaped quotes,
// slashes and line continuations.
func Unquote(b []byte) (string, int, bool) {
	q := b[0]
	var out strings.Builder
	for i := 1; i < len(b); i++ {
		c := b[i]
		switch {
		case c == q:
			return out.String(), i + 1, true
		case c == '\n':
			return "", 0, false
		case c != '\\':
			out.WriteByte(c)
			continue
		}
		i++
		if i >= len(b) {
			return "", 0, false
		}
		switch c := b[i]; c {
		case 'n':
			out.WriteByte('\n')
		case 't':
			out.WriteByte('\t')
		case 'r':
			out.WriteByte('\r')
		case 'b', 'f', 'v':
			out.WriteByte(' ')
		case '0':
			out.WriteByte(' ')
		case '\n':
		case 'x':
			if i+2 < len(b) {
				if n, err := strconv.ParseUint(string(b[i+1:i+3]), 16, 8); err == nil {
					out.WriteRune(rune(n))
					i += 2
				}
			}
		case 'u':
			if i+1 < len(b) && b[i+1] == '{' {
				end := bytes.IndexByte(b[i:min(len(b), i+10)], '}')
				if end > 0 {
					if n, err := strconv.ParseUint(string(b[i+2:i+end]), 16, 32); err == nil && utf8.ValidRune(rune(n)) {
						out.WriteRune(rune(n))
					}
					i += end
				}
				continue
			}
			if i+4 < len(b) {
				if n, err := strconv.ParseUint(string(b[i+1:i+5]), 16, 16); err == nil {
					r := rune(n)
					// A surrogate pair is two \u escapes.
					if r >= 0xd800 && r < 0xdc00 && i+10 < len(b) && b[i+5] == '\\' && b[i+6] == 'u' {
						if lo, err := strconv.ParseUint(string(b[i+7:i+11]), 16, 16); err == nil && lo >= 0xdc00 && lo < 0xe000 {
							r = 0x10000 + (r-0xd800)<<10 + (rune(lo) - 0xdc00)
							i += 6
						}
					}
					out.WriteRune(r)
					i += 4
				}
			}
		default:
			out.WriteByte(c)
		}
	}
	return "", 0, false
}

// textKeys are the keys under which the tools we read keep learner-visible text.
var textKeys = map[string]bool{
	"text": true, "title": true, "heading": true, "paragraph": true, "caption": true,
	"description": true, "alttext": true, "acctext": true, "label": true, "body": true,
	"content": true, "html": true, "question": true, "prompt": true, "feedback": true,
	"instructions": true, "transcript": true, "name": false,
}

// CollectText appends to out the learner-visible strings of a value (only those under
// text-like keys: ids, URLs and settings never hold prose), in document order, each once:
// seen holds the strings already taken, so a caller can leave out a title it shows apart.
func CollectText(v any, out *[]string, seen map[string]bool) {
	collectText(v, out, seen, 0)
}

func collectText(v any, out *[]string, seen map[string]bool, depth int) {
	if depth > MaxDepth {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range SortedKeys(x) {
			val := x[k]
			if s, ok := val.(string); ok {
				if textKeys[strings.ToLower(k)] {
					if t := StripTags(s); t != "" && !seen[t] && !looksLikeID(t) {
						seen[t] = true
						*out = append(*out, t)
					}
				}
				continue
			}
			collectText(val, out, seen, depth+1)
		}
	case []any:
		for _, it := range x {
			collectText(it, out, seen, depth+1)
		}
	}
}

// SortedKeys gives a map's keys in a stable order; Go maps have none and the tools' key order is lost in
// decoding anyway. Title-like keys first so a block reads heading, then body.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		switch strings.ToLower(k) {
		case "title", "heading", "question", "prompt":
			return 0
		case "description", "paragraph", "text", "body", "content", "html":
			return 1
		}
		return 2
	}
	sortStrings(keys, func(a, b string) bool {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		return a < b
	})
	return keys
}

func sortStrings(s []string, less func(a, b string) bool) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && less(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// looksLikeID rejects tool ids and file names that sit under text-like keys.
func looksLikeID(s string) bool {
	if strings.ContainsRune(s, ' ') {
		return false
	}
	return strings.Contains(s, ".") && (strings.HasSuffix(s, ".png") || strings.HasSuffix(s, ".jpg") ||
		strings.HasSuffix(s, ".mp4") || strings.HasSuffix(s, ".mp3") || strings.HasSuffix(s, ".js")) ||
		strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// Str returns the string under the first of keys that holds a non-blank one, or "": the
// tools name the same field differently from version to version.
func Str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// Num returns the number under the first of keys that holds a non-negative whole number,
// written as a number or as a string (the tools write both), and whether it found one.
func Num(m map[string]any, keys ...string) (int, bool) {
	for _, k := range keys {
		switch v := m[k].(type) {
		case json.Number:
			if n, err := v.Int64(); err == nil && n >= 0 && n < 1<<31 {
				return int(n), true
			}
		case string:
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// Truthy reports whether a flag is set, whichever way the tool wrote it: a boolean, "true",
// "correct", "yes", "1", or a non-zero number.
func Truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		x = strings.ToLower(x)
		return x == "true" || x == "correct" || x == "yes" || x == "1"
	case json.Number:
		return x.String() != "0"
	}
	return false
}

// Arr returns the list under the first of keys that holds one, or nil.
func Arr(m map[string]any, keys ...string) []any {
	for _, k := range keys {
		if a, ok := m[k].([]any); ok {
			return a
		}
	}
	return nil
}
