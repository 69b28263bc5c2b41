package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// recordAlias is Record without its methods, so that storedRecord can shadow its values.
type recordAlias Record

// storedRecord is Record as stored with its values left raw: the outer Values shadows the
// embedded one, so every other field is encoded and decoded by encoding/json as declared.
type storedRecord struct {
	*recordAlias
	Values json.RawMessage `json:"values"`
}

// encode is json.Marshal(rt) without sorting the element names: a record of a commit with
// 10,000 interactions holds about 100,000 elements, and sorting them was a third of the cost
// of storing it. Nothing reads the stored form in order; decode reads any JSON object.
func encode(rt *Record) ([]byte, error) { return encodeLayers(rt, rt.Values) }

// encodeLayers is encode with the values given as layers, a name in a later layer hiding it
// in the earlier ones (rt.Values is ignored): a commit is stored as its own values with the
// stored ones it left out beneath them, without first copying 100,000 elements into one map.
func encodeLayers(rt *Record, layers ...Values) ([]byte, error) {
	head, err := json.Marshal(storedRecord{recordAlias: (*recordAlias)(rt), Values: json.RawMessage("null")})
	if err != nil {
		return nil, err
	}
	// The first "values":null is the field: inside a string a quote is always escaped.
	at := bytes.Index(head, []byte(`"values":null`))
	if at < 0 {
		return nil, fmt.Errorf("encode runtime %s: no values field", rt.Activity)
	}
	n := len(head) + 2
	for _, l := range layers {
		for k, v := range l {
			n += len(k) + len(v) + 6
		}
	}
	b := make([]byte, 0, n)
	b = append(b, head[:at+len(`"values":`)]...)
	b = append(b, '{')
	first := true
	for i, l := range layers {
		for k, v := range l {
			if hidden(k, layers[i+1:]) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, v)
		}
	}
	b = append(b, '}')
	return append(b, head[at+len(`"values":null`):]...), nil
}

// hidden reports whether a later layer has the name k.
func hidden(k string, later []Values) bool {
	for _, l := range later {
		if _, ok := l[k]; ok {
			return true
		}
	}
	return false
}

// appendString appends s as a JSON string. Values were checked to be UTF-8 when committed;
// anything else takes encoding/json's path, which replaces invalid bytes.
func appendString(b []byte, s string) []byte {
	// One pass finds the strings to copy as they are (nearly all); only those with escapes or
	// non-ASCII bytes are checked again.
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	if !utf8.ValidString(s) {
		q, _ := json.Marshal(s)
		return append(b, q...)
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// decodeValues reads the stored values, a JSON object of strings, into a map (eachValue).
func decodeValues(b []byte) (Values, error) {
	out := make(Values, len(b)/40)
	err := eachValue(b, func(k, v string) { out[k] = v })
	return out, err
}

// eachValue calls fn with every name and value of the stored values, a JSON object of
// strings, in stored order. The object is copied into one string once, and names and values
// without escapes (nearly all of them) are slices of it: 100,000 elements cost one
// allocation instead of 200,000. Anything but an object of strings takes encoding/json's
// path (and its errors), after which fn may see a name again, with the same value; null is
// no values.
func eachValue(b []byte, fn func(k, v string)) error {
	s := string(b)
	bad := func() error {
		var v Values
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		for k, val := range v {
			fn(k, val)
		}
		return nil
	}
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		if i >= len(s) || s[i:] == "null" {
			return nil
		}
		return bad()
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return nil
	}
	for {
		k, j, ok := readString(s, i)
		if !ok {
			return bad()
		}
		i = skipSpace(s, j)
		if i >= len(s) || s[i] != ':' {
			return bad()
		}
		v, j, ok := readString(s, skipSpace(s, i+1))
		if !ok {
			return bad()
		}
		fn(k, v)
		i = skipSpace(s, j)
		if i >= len(s) {
			return bad()
		}
		if s[i] == '}' {
			if skipSpace(s, i+1) != len(s) {
				return bad()
			}
			return nil
		}
		if s[i] != ',' {
			return bad()
		}
		i = skipSpace(s, i+1)
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

// readString reads the JSON string at s[i]; j is the index after it. A string with escapes
// is decoded by encoding/json, which also refuses control characters.
func readString(s string, i int) (v string, j int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	plain, ascii := true, true
	for j = i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\\':
			plain = false
			j++
		case c == '"':
			if plain && (ascii || utf8.ValidString(s[i+1:j])) {
				return s[i+1 : j], j + 1, true
			}
			// Its own variable: a result whose address is taken would be allocated on every
			// call, plain strings too.
			var u string
			if err := json.Unmarshal([]byte(s[i:j+1]), &u); err != nil {
				return "", j, false
			}
			return u, j + 1, true
		case c < 0x20:
			// Refused by encoding/json.
			plain = false
		case c >= 0x80:
			// Invalid UTF-8 is replaced by encoding/json.
			ascii = false
		}
	}
	return "", j, false
}

// splitValues finds the values of a stored record, data, and returns the record without them
// ("values":null) beside them: encoding/json then reads a few hundred bytes instead of
// scanning the megabytes of a large record's values twice (json.RawMessage is validated,
// then copied). ok is false for anything but an object with one "values" field, which the
// caller leaves to encoding/json.
func splitValues(data []byte) (rest, values []byte, ok bool) {
	i := skipSpaceBytes(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, nil, false
	}
	from, to := -1, -1
	i = skipSpaceBytes(data, i+1)
	for i < len(data) && data[i] != '}' {
		k0 := i
		k1, ok := skipJSON(data, i)
		if !ok || data[k0] != '"' {
			return nil, nil, false
		}
		i = skipSpaceBytes(data, k1)
		if i >= len(data) || data[i] != ':' {
			return nil, nil, false
		}
		v0 := skipSpaceBytes(data, i+1)
		v1, ok := skipJSON(data, v0)
		if !ok {
			return nil, nil, false
		}
		if string(data[k0:k1]) == `"values"` {
			if from >= 0 {
				return nil, nil, false
			}
			from, to = v0, v1
		}
		i = skipSpaceBytes(data, v1)
		if i < len(data) && data[i] == ',' {
			i = skipSpaceBytes(data, i+1)
		}
	}
	if from < 0 {
		return nil, nil, false
	}
	rest = make([]byte, 0, len(data)-(to-from)+4)
	rest = append(append(append(rest, data[:from]...), "null"...), data[to:]...)
	return rest, data[from:to], true
}

func skipSpaceBytes(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipJSON returns the index after the JSON value at b[i], following strings, objects and
// arrays far enough to find their ends; encoding/json checks the syntax of what it reads,
// and eachValue that of the values.
func skipJSON(b []byte, i int) (int, bool) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(b) {
				return i, false
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i, true
			}
			depth--
			i++
		case ',', ' ', '\n', '\r', '\t', ':':
			if depth == 0 {
				return i, true
			}
			i++
		default:
			i++
			continue
		}
		// A string, object or array just ended at the top.
		if depth == 0 && (b[i-1] == '"' || b[i-1] == '}' || b[i-1] == ']') {
			return i, true
		}
	}
	return i, depth == 0
}
