package statements

import (
	"encoding/json"
	"time"
)

// SetStored rewrites raw's top-level "stored" to t when it holds another instant, so the JSON a
// backend keeps agrees with the Stored it assigned; raw without that property (or not an
// object) is kept as is, since stores do not interpret xAPI. Otherwise raw's bytes are kept.
//
// It is the one statement document rule both stores apply on write. It scans raw once and
// splices the new value in place of the old, rather than decoding and re-encoding the whole
// statement: on the ingest path the stored instant nearly always moves (stores keep it
// strictly increasing), so this runs for almost every statement.
func SetStored(raw json.RawMessage, t time.Time) json.RawMessage {
	start, end, ok := topLevelValue(raw, "stored")
	if !ok {
		return raw
	}
	var s string
	if json.Unmarshal(raw[start:end], &s) == nil {
		if p, err := time.Parse(time.RFC3339Nano, s); err == nil && p.Equal(t) {
			return raw
		}
	}
	v := `"` + t.UTC().Format("2006-01-02T15:04:05.000000Z07:00") + `"`
	out := make([]byte, 0, len(raw)-(end-start)+len(v))
	out = append(out, raw[:start]...)
	out = append(out, v...)
	return append(out, raw[end:]...)
}

// topLevelValue finds the value of key in the JSON object raw: the byte range of the value
// of its last occurrence (as encoding/json would keep), or ok false when raw is not an object
// or lacks the key. Malformed JSON gives ok false.
func topLevelValue(raw []byte, key string) (start, end int, ok bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return 0, 0, false
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return 0, 0, false
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return 0, 0, false
		}
		kEnd := skipString(raw, i)
		if kEnd < 0 {
			return 0, 0, false
		}
		k := raw[i:kEnd]
		match := string(k) == `"`+key+`"`
		if !match && len(k) > len(key)+2 {
			// An escaped spelling of the key: decode it to compare.
			var ks string
			match = json.Unmarshal(k, &ks) == nil && ks == key
		}
		i = skipWS(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return 0, 0, false
		}
		i = skipWS(raw, i+1)
		vEnd := skipValue(raw, i)
		if vEnd < 0 {
			return 0, 0, false
		}
		if match {
			start, end, ok = i, vEnd, true
		}
		i = skipWS(raw, vEnd)
		if i >= len(raw) {
			return 0, 0, false
		}
		switch raw[i] {
		case ',':
			i = skipWS(raw, i+1)
		case '}':
			return start, end, ok
		default:
			return 0, 0, false
		}
	}
	return 0, 0, false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a quote), or -1.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1. Nested objects and
// arrays are skipped by depth, strings by their quotes; scalars run to the next delimiter.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j := skipString(b, i)
				if j < 0 {
					return -1
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
