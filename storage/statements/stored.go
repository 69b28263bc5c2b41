package statements

import (
	"bytes"
	"encoding/json"
	"time"
)

// SetStored rewrites raw's top-level "stored" to t when it holds another instant, so the JSON a
// backend keeps agrees with the Stored it assigned; raw without that property (or not an
// object) is kept as is, since stores do not interpret xAPI. Otherwise raw's bytes are kept.
func SetStored(raw json.RawMessage, t time.Time) json.RawMessage {
	// Most statements either lack the property or already agree; skip the parse when the
	// bytes cannot contain it.
	if !bytes.Contains(raw, []byte(`"stored"`)) {
		return raw
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return raw
	}
	old, ok := obj["stored"]
	if !ok {
		return raw
	}
	var s string
	if json.Unmarshal(old, &s) == nil {
		if p, err := time.Parse(time.RFC3339Nano, s); err == nil && p.Equal(t) {
			return raw
		}
	}
	obj["stored"], _ = json.Marshal(t.UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
	out, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return out
}
