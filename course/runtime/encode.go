package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/storage/record"
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
// of storing it. Nothing needs the stored form in order (a commit is read faster when its
// elements come in the order of the next one, see encodeCommit); decode reads any JSON object.
func encode(rt *Record) ([]byte, error) { return encodeLayers(rt, rt.Values) }

// encodeLayers is encode with the values given as layers, a name in a later layer hiding it
// in the earlier ones (rt.Values is ignored): a commit is stored as its own values with the
// stored ones it left out beneath them, without first copying 100,000 elements into one map.
func encodeLayers(rt *Record, layers ...Values) ([]byte, error) {
	size := 0
	for _, l := range layers {
		for k, v := range l {
			size += len(k) + len(v) + 6
		}
	}
	return encodeEach(rt, size, func(emit func(k, v string)) {
		for i, l := range layers {
			for k, v := range l {
				if !hidden(k, layers[i+1:]) {
					emit(k, v)
				}
			}
		}
	})
}

// encodeCommit is encodeLayers(rt, under, c.Values, set) with c's values written in the
// order of its body when that is known (Commit.inOrder), then under, then set.
func encodeCommit(rt *Record, under Values, c *Commit, set Values) ([]byte, error) {
	order := c.inOrder()
	if order == nil {
		return encodeLayers(rt, under, c.Values, set)
	}
	size := 0
	for _, e := range order {
		size += len(e.name) + len(e.value) + 6
	}
	for _, l := range []Values{under, set} {
		for k, v := range l {
			size += len(k) + len(v) + 6
		}
	}
	return encodeEach(rt, size, func(emit func(k, v string)) {
		for _, e := range order {
			if _, ok := set[e.name]; !ok {
				emit(e.name, e.value)
			}
		}
		for k, v := range under {
			if !hidden(k, []Values{c.Values, set}) {
				emit(k, v)
			}
		}
		for k, v := range set {
			emit(k, v)
		}
	})
}

// encodeEach is encode with the values each emits (names distinct), size bytes about.
func encodeEach(rt *Record, size int, each func(emit func(k, v string))) ([]byte, error) {
	head, err := json.Marshal(storedRecord{recordAlias: (*recordAlias)(rt), Values: json.RawMessage("null")})
	if err != nil {
		return nil, err
	}
	// The first "values":null is the field: inside a string a quote is always escaped.
	at := bytes.Index(head, []byte(`"values":null`))
	if at < 0 {
		return nil, fmt.Errorf("encode runtime %s: no values field", rt.Activity)
	}
	b := make([]byte, 0, len(head)+2+size)
	b = append(b, head[:at+len(`"values":`)]...)
	b = append(b, '{')
	first := true
	each(func(k, v string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, v)
	})
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
	err := eachValue(b, func(k, v string) { out[k] = v }, func() { clear(out) })
	return out, err
}

// eachValue calls fn with every name and value of the stored values, a JSON object of
// strings, in stored order (scanValues). Anything but an object of strings takes
// encoding/json's path (and its errors), after reset has undone what fn was given; null is
// no values.
func eachValue(b []byte, fn func(k, v string), reset func()) error {
	s := string(b)
	i := skipSpace(s, 0)
	if i >= len(s) || s[i:] == "null" {
		return nil
	}
	if end, ok := scanValues(s, i, fn); ok && skipSpace(s, end) == len(s) {
		return nil
	}
	reset()
	var v Values
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	for k, val := range v {
		fn(k, val)
	}
	return nil
}

// decodeWith decodes a stored record, handing its values to fn (eachValue, with reset)
// instead of keeping them. The values are read in one pass over a copy of the record in one
// string, and names and values without escapes (nearly all of them) are slices of it:
// 100,000 elements cost one allocation instead of 200,000, and encoding/json reads only the
// few hundred bytes around them (it would scan the values twice, to check them and to copy
// them out).
func decodeWith(r *record.Record, fn func(k, v string), reset func()) (*Record, error) {
	var rt Record
	sr := storedRecord{recordAlias: (*recordAlias)(&rt)}
	if rest, ok := scanRecord(string(r.Data), fn); ok && json.Unmarshal(rest, &sr) == nil && string(sr.Values) == "null" {
		rt.Updated = r.Updated
		return &rt, nil
	}
	// Anything else, including a later field that encoding/json also takes for the values
	// (its names match without regard to case), is read as encoding/json reads it.
	reset()
	rt, sr.Values = Record{}, nil
	if err := json.Unmarshal(r.Data, &sr); err != nil {
		return nil, fmt.Errorf("decode runtime %s: %w", r.ID, err)
	}
	if err := eachValue(sr.Values, fn, reset); err != nil {
		return nil, fmt.Errorf("decode runtime %s: %w", r.ID, err)
	}
	rt.Updated = r.Updated
	return &rt, nil
}

// scanRecord hands the values of the stored record s to fn and returns the record without
// them ("values":null). ok is false for anything but an object with one "values" field
// that is an object of strings, which the caller leaves to encoding/json.
func scanRecord(s string, fn func(k, v string)) (rest []byte, ok bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return nil, false
	}
	from, to := -1, -1
	i = skipSpace(s, i+1)
	for i < len(s) && s[i] != '}' {
		k, j, ok := readString(s, i)
		if !ok {
			return nil, false
		}
		i = skipSpace(s, j)
		if i >= len(s) || s[i] != ':' {
			return nil, false
		}
		v0 := skipSpace(s, i+1)
		var v1 int
		if k == "values" {
			if from >= 0 {
				return nil, false
			}
			if v1, ok = scanValues(s, v0, fn); !ok {
				return nil, false
			}
			from, to = v0, v1
		} else if v1, ok = skipJSON(s, v0); !ok {
			return nil, false
		}
		i = skipSpace(s, v1)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
		}
	}
	if from < 0 {
		return nil, false
	}
	rest = make([]byte, 0, len(s)-(to-from)+4)
	rest = append(append(append(rest, s[:from]...), "null"...), s[to:]...)
	return rest, true
}

// scanValues hands fn each name and value of the object of strings at s[i] and returns the
// index after it; ok is false for anything else (fn may have seen some of it).
func scanValues(s string, i int, fn func(k, v string)) (end int, ok bool) {
	if i >= len(s) || s[i] != '{' {
		return i, false
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, true
	}
	for {
		k, j, ok := readString(s, i)
		if !ok {
			return i, false
		}
		i = skipSpace(s, j)
		if i >= len(s) || s[i] != ':' {
			return i, false
		}
		v, j, ok := readString(s, skipSpace(s, i+1))
		if !ok {
			return i, false
		}
		fn(k, v)
		i = skipSpace(s, j)
		if i >= len(s) {
			return i, false
		}
		if s[i] == '}' {
			return i + 1, true
		}
		if s[i] != ',' {
			return i, false
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

// plainByte marks the bytes a JSON string holds as they are: not a quote, a backslash, a
// control character or part of a multi-byte character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// readString reads the JSON string at s[i]; j is the index after it. Nearly every string
// is plain ASCII, a slice of s; one with escapes is decoded by encoding/json, which also
// refuses control characters and replaces invalid UTF-8.
func readString(s string, i int) (v string, j int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	j = i + 1
	for j < len(s) && plainByte[s[j]] {
		j++
	}
	if j < len(s) && s[j] == '"' {
		return s[i+1 : j], j + 1, true
	}
	plain, ascii := true, true
	for ; j < len(s); j++ {
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

// skipJSON returns the index after the JSON value at s[i], following strings, objects and
// arrays far enough to find their ends; encoding/json checks the syntax of what it reads.
func skipJSON(s string, i int) (int, bool) {
	depth := 0
	for i < len(s) {
		switch s[i] {
		case '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(s) {
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
		if depth == 0 && (s[i-1] == '"' || s[i-1] == '}' || s[i-1] == ']') {
			return i, true
		}
	}
	return i, depth == 0
}
