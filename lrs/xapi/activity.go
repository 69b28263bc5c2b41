package xapi

import (
	"encoding/json"
)

// MergeActivity merges a newly seen activity object into the canonical one the LRS keeps, so
// that GET /activities returns "all available information" gathered from statements: the
// new definition's properties win, but language maps (name, description) and extensions are
// merged key by key, so two statements describing the activity in two languages both count.
// Either argument may be empty; invalid JSON on one side yields the other.
func MergeActivity(old, new json.RawMessage) json.RawMessage {
	om, okOld := decodeObject(old)
	nm, okNew := decodeObject(new)
	switch {
	case !okOld && !okNew:
		return new
	case !okOld:
		return marshal(nm)
	case !okNew:
		return marshal(om)
	}
	out := map[string]any{}
	for k, v := range om {
		out[k] = v
	}
	for k, v := range nm {
		if k == "definition" {
			continue
		}
		out[k] = v
	}
	od, _ := om["definition"].(map[string]any)
	nd, _ := nm["definition"].(map[string]any)
	if od != nil || nd != nil {
		def := map[string]any{}
		for k, v := range od {
			def[k] = v
		}
		for k, v := range nd {
			switch k {
			case "name", "description", "extensions":
				if prev, ok := def[k].(map[string]any); ok {
					if cur, ok := v.(map[string]any); ok {
						merged := map[string]any{}
						for lk, lv := range prev {
							merged[lk] = lv
						}
						for lk, lv := range cur {
							merged[lk] = lv
						}
						def[k] = merged
						continue
					}
				}
			}
			def[k] = v
		}
		out["definition"] = def
	}
	return marshal(out)
}

func decodeObject(raw []byte) (map[string]any, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	x, err := decode(raw)
	if err != nil {
		return nil, false
	}
	m, ok := x.(map[string]any)
	return m, ok
}
