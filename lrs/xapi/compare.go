package xapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/lectern-lms/lectern/lrs/xapi/lexical"
)

// ContentHash identifies a statement's content for the "same id, same statement" rule (a
// repeated PUT/POST of a stored id is a no-op when equal, 409 otherwise). It follows xAPI's
// Statement Comparison Requirements (Data 2.3.1): differences the immutability exceptions
// allow are ignored, everything else counts, serialisation included. Ignored: id, authority,
// stored, timestamp and version (LRS-assigned; timestamp is ignored rather than compared as an
// instant because the LRS fills it when absent, so a client re-sending the same statement
// without timestamp would otherwise conflict), activity definitions, verb display,
// attachments, the order of group members, the case of UUIDs and of mbox domains, a single
// context activity vs an array of one, and duration digits beyond 0.01 s. Object property
// order never matters. Invalid JSON hashes its bytes.
func ContentHash(raw []byte) string {
	x, err := decode(raw)
	if err != nil {
		sum := sha256.Sum256(raw)
		return hex.EncodeToString(sum[:])
	}
	return hashTree(x)
}

// hashTree is ContentHash of an already decoded statement; comparable copies what it
// changes, so the tree is left as it was.
func hashTree(x any) string {
	sum := sha256.Sum256(marshal(comparable(x)))
	return hex.EncodeToString(sum[:])
}

// comparable returns the comparison form of a statement tree (see ContentHash).
func comparable(x any) any {
	m, ok := x.(map[string]any)
	if !ok {
		return x
	}
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "id", "authority", "stored", "timestamp", "version", "attachments":
			continue
		}
		out[k] = v
	}
	return canonBody(out)
}

// canonBody normalises a statement or SubStatement body for comparison.
func canonBody(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "actor":
			out[k] = canonActor(v)
		case "verb":
			if vm, ok := v.(map[string]any); ok {
				out[k] = map[string]any{"id": vm["id"]}
			} else {
				out[k] = v
			}
		case "object":
			out[k] = canonObject(v)
		case "result":
			out[k] = canonResult(v)
		case "context":
			out[k] = canonContext(v)
		case "attachments", "timestamp":
			// ignored inside a SubStatement as well
		default:
			out[k] = v
		}
	}
	return out
}

func canonObject(x any) any {
	m, ok := x.(map[string]any)
	if !ok {
		return x
	}
	switch objectType(m) {
	case "Activity":
		return map[string]any{"objectType": "Activity", "id": m["id"]}
	case "Agent", "Group":
		return canonActor(m)
	case "StatementRef":
		id, _ := m["id"].(string)
		return map[string]any{"objectType": "StatementRef", "id": strings.ToLower(id)}
	case "SubStatement":
		return canonBody(m)
	}
	return m
}

func canonActor(x any) any {
	out, ok := copyObject(x)
	if !ok {
		return x
	}
	if _, ok := out["objectType"]; !ok {
		out["objectType"] = "Agent"
	}
	if s, ok := out["mbox"].(string); ok {
		if at := strings.LastIndexByte(s, '@'); at >= 0 {
			out["mbox"] = s[:at] + strings.ToLower(s[at:])
		}
	}
	if s, ok := out["mbox_sha1sum"].(string); ok {
		out["mbox_sha1sum"] = strings.ToLower(s)
	}
	if members, ok := out["member"].([]any); ok {
		// members are an unordered list: sort by their serialisation
		keyed := make([][]byte, len(members))
		for i, mem := range members {
			keyed[i] = marshal(canonActor(mem))
		}
		slices.SortFunc(keyed, func(a, b []byte) int { return strings.Compare(string(a), string(b)) })
		sorted := make([]any, len(keyed))
		for i, k := range keyed {
			sorted[i] = json.RawMessage(k)
		}
		out["member"] = sorted
	}
	return out
}

func canonResult(x any) any {
	out, ok := copyObject(x)
	if !ok {
		return x
	}
	if d, ok := out["duration"].(string); ok {
		out["duration"] = lexical.TruncateDuration(d)
	}
	return out
}

func canonContext(x any) any {
	m, ok := x.(map[string]any)
	if !ok {
		return x
	}
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "registration":
			if s, ok := v.(string); ok {
				v = strings.ToLower(s)
			}
		case "instructor", "team":
			v = canonActor(v)
		case "statement":
			v = canonObject(v)
		case "contextActivities":
			ca, ok := v.(map[string]any)
			if !ok {
				break
			}
			nca := map[string]any{}
			for t, list := range ca {
				arr, ok := list.([]any)
				if !ok {
					arr = []any{list}
				}
				ids := make([]any, len(arr))
				for i, a := range arr {
					ids[i] = canonObject(a)
				}
				nca[t] = ids
			}
			v = nca
		case "contextAgents", "contextGroups":
			arr, ok := v.([]any)
			if !ok {
				break
			}
			na := make([]any, len(arr))
			for i, e := range arr {
				em, ok := e.(map[string]any)
				if !ok {
					na[i] = e
					continue
				}
				ne := map[string]any{}
				for ek, ev := range em {
					if ek == "agent" || ek == "group" {
						ev = canonActor(ev)
					}
					ne[ek] = ev
				}
				na[i] = ne
			}
			v = na
		}
		out[k] = v
	}
	return out
}

// sameStatement compares two statement trees by the comparison rules of ContentHash.
func sameStatement(a, b any) bool {
	return string(marshal(comparable(a))) == string(marshal(comparable(b)))
}

// copyObject returns a shallow copy of x when it is a JSON object, so the canonical forms
// never change the statement they are computed from.
func copyObject(x any) (map[string]any, bool) {
	m, ok := x.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out, true
}
