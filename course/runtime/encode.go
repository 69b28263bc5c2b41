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
func encode(rt *Record) ([]byte, error) {
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
	for k, v := range rt.Values {
		n += len(k) + len(v) + 6
	}
	b := make([]byte, 0, n)
	b = append(b, head[:at+len(`"values":`)]...)
	b = append(b, '{')
	first := true
	for k, v := range rt.Values {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, v)
	}
	b = append(b, '}')
	return append(b, head[at+len(`"values":null`):]...), nil
}

// appendString appends s as a JSON string. Values were checked to be UTF-8 when committed;
// anything else takes encoding/json's path, which replaces invalid bytes.
func appendString(b []byte, s string) []byte {
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

// decodeValues reads the stored values, a JSON object of strings that encoding/json has
// already checked: names and values without escapes (nearly all of them) are sliced out
// directly, the rest go through encoding/json. About three times faster than json.Unmarshal
// into a map, which matters for records of 100,000 elements.
func decodeValues(b []byte) (Values, error) {
	bad := func() (Values, error) {
		var v Values
		err := json.Unmarshal(b, &v)
		return v, err
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		if string(b[i:]) == "null" || i >= len(b) {
			return Values{}, nil
		}
		return bad()
	}
	out := make(Values, len(b)/40)
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, nil
	}
	for {
		k, j, ok := readString(b, i)
		if !ok {
			return bad()
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return bad()
		}
		v, j, ok := readString(b, skipSpace(b, i+1))
		if !ok {
			return bad()
		}
		out[k] = v
		i = skipSpace(b, j)
		if i >= len(b) {
			return bad()
		}
		if b[i] == '}' {
			return out, nil
		}
		if b[i] != ',' {
			return bad()
		}
		i = skipSpace(b, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// readString reads the JSON string at b[i]; j is the index after it.
func readString(b []byte, i int) (s string, j int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	escaped := false
	for j = i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			if !escaped {
				return string(b[i+1 : j]), j + 1, true
			}
			if err := json.Unmarshal(b[i:j+1], &s); err != nil {
				return "", j, false
			}
			return s, j + 1, true
		}
	}
	return "", j, false
}
