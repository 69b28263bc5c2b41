package xapi

import (
	"errors"
	"slices"
	"strings"
)

// ErrFormat is returned by Format for an unknown format name.
var ErrFormat = errors.New(`xapi: format must be "exact", "ids" or "canonical"`)

// Format returns a stored statement in the statement resource's "format":
//   - "exact" (or ""): as stored;
//   - "ids": Agents and identified Groups reduced to objectType and IFI, anonymous Groups to
//     their members' ids, Activities to their id alone, Verbs to their id;
//   - "canonical": every language map (verb display, activity name and description,
//     interaction component descriptions, attachment display and description) reduced to
//     the single entry best matching langs, the client's Accept-Language preferences in
//     order. Substituting the LRS's canonical activity definitions is the caller's business
//     (it has the store); this only chooses languages.
func Format(raw []byte, format string, langs []string) ([]byte, error) {
	switch format {
	case "", "exact":
		return raw, nil
	case "ids", "canonical":
	default:
		return nil, ErrFormat
	}
	x, err := decode(raw)
	if err != nil {
		return nil, err
	}
	m, ok := x.(map[string]any)
	if !ok {
		return nil, &Error{Path: "statement", Msg: "must be a JSON object"}
	}
	if format == "ids" {
		idsBody(m)
		if a, ok := m["authority"]; ok {
			m["authority"] = idsActor(a)
		}
	} else {
		canonicalBody(m, langs)
	}
	return marshal(m), nil
}

func idsBody(m map[string]any) {
	if a, ok := m["actor"]; ok {
		m["actor"] = idsActor(a)
	}
	if v, ok := m["verb"].(map[string]any); ok {
		m["verb"] = map[string]any{"id": v["id"]}
	}
	if o, ok := m["object"].(map[string]any); ok {
		switch objectType(o) {
		case "Activity":
			m["object"] = map[string]any{"id": o["id"]}
		case "Agent", "Group":
			m["object"] = idsActor(o)
		case "SubStatement":
			idsBody(o)
		}
	}
	ctx, _ := m["context"].(map[string]any)
	if ctx == nil {
		return
	}
	for _, k := range []string{"instructor", "team"} {
		if a, ok := ctx[k]; ok {
			ctx[k] = idsActor(a)
		}
	}
	if ca, ok := ctx["contextActivities"].(map[string]any); ok {
		for k, v := range ca {
			list, ok := v.([]any)
			if !ok {
				list = []any{v}
			}
			out := make([]any, len(list))
			for i, a := range list {
				if am, ok := a.(map[string]any); ok {
					out[i] = map[string]any{"id": am["id"]}
				} else {
					out[i] = a
				}
			}
			ca[k] = out
		}
	}
	for _, spec := range [][2]string{{"contextAgents", "agent"}, {"contextGroups", "group"}} {
		arr, _ := ctx[spec[0]].([]any)
		for _, e := range arr {
			if em, ok := e.(map[string]any); ok {
				if a, ok := em[spec[1]]; ok {
					em[spec[1]] = idsActor(a)
				}
			}
		}
	}
}

// idsActor reduces an Agent or Group to what identifies it.
func idsActor(x any) any {
	m, ok := x.(map[string]any)
	if !ok {
		return x
	}
	out := map[string]any{}
	if ot, ok := m["objectType"]; ok {
		out["objectType"] = ot
	}
	identified := false
	for _, k := range ifiKeys {
		if v, ok := m[k]; ok {
			out[k] = v
			identified = true
			break
		}
	}
	if !identified {
		if members, ok := m["member"].([]any); ok {
			ids := make([]any, len(members))
			for i, mem := range members {
				ids[i] = idsActor(mem)
			}
			out["member"] = ids
		}
	}
	return out
}

func canonicalBody(m map[string]any, langs []string) {
	if v, ok := m["verb"].(map[string]any); ok {
		pickLang(v, "display", langs)
	}
	if o, ok := m["object"].(map[string]any); ok {
		switch objectType(o) {
		case "Activity":
			canonicalActivity(o, langs)
		case "SubStatement":
			canonicalBody(o, langs)
		}
	}
	if ctx, ok := m["context"].(map[string]any); ok {
		if ca, ok := ctx["contextActivities"].(map[string]any); ok {
			for _, v := range ca {
				list, _ := v.([]any)
				for _, a := range list {
					if am, ok := a.(map[string]any); ok {
						canonicalActivity(am, langs)
					}
				}
			}
		}
	}
	if atts, ok := m["attachments"].([]any); ok {
		for _, a := range atts {
			if am, ok := a.(map[string]any); ok {
				pickLang(am, "display", langs)
				pickLang(am, "description", langs)
			}
		}
	}
}

func canonicalActivity(a map[string]any, langs []string) {
	def, ok := a["definition"].(map[string]any)
	if !ok {
		return
	}
	pickLang(def, "name", langs)
	pickLang(def, "description", langs)
	for _, list := range componentLists {
		arr, _ := def[list].([]any)
		for _, c := range arr {
			if cm, ok := c.(map[string]any); ok {
				pickLang(cm, "description", langs)
			}
		}
	}
}

// pickLang replaces the language map m[key] by its single best entry for langs.
func pickLang(m map[string]any, key string, langs []string) {
	lm, ok := m[key].(map[string]any)
	if !ok || len(lm) <= 1 {
		return
	}
	tag := BestLanguage(lm, langs)
	m[key] = map[string]any{tag: lm[tag]}
}

// BestLanguage chooses the key of a language map for the preferences langs (most preferred
// first; "*" accepts anything): an exact (case-insensitive) match, else a tag sharing the
// preference's primary language, else en-US, en, and finally the first tag in sorted order,
// so that the choice is deterministic.
func BestLanguage(lm map[string]any, langs []string) string {
	keys := make([]string, 0, len(lm))
	for k := range lm {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, want := range langs {
		// tolerate raw Accept-Language items: drop a ";q=…" weight
		want, _, _ = strings.Cut(want, ";")
		want = strings.TrimSpace(want)
		if want == "" {
			continue
		}
		if want == "*" {
			break
		}
		for _, k := range keys {
			if strings.EqualFold(k, want) {
				return k
			}
		}
		// prefix match: "en" matches "en-GB", "en-GB" falls back to "en" or "en-US"
		primary, _, _ := strings.Cut(strings.ToLower(want), "-")
		for _, k := range keys {
			kp, _, _ := strings.Cut(strings.ToLower(k), "-")
			if kp == primary {
				return k
			}
		}
	}
	for _, fallback := range []string{"en-US", "en"} {
		for _, k := range keys {
			if strings.EqualFold(k, fallback) {
				return k
			}
		}
	}
	return keys[0]
}
