package xapi

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/lectern-lms/lectern/storage/statements"
)

// ReportFields derives the fields the report extension aggregates on (statements.Statement's
// Result and ReportActors) from a stored statement's JSON; backends call it to fill those
// fields into statements stored before they existed.
func ReportFields(raw json.RawMessage) (result bool, actors []statements.ReportActor, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return false, nil, fmt.Errorf("xapi: stored statement is not a JSON object: %v", err)
	}
	result, actors = reportFields(m)
	return result, actors, nil
}

// reportFields: a statement counts for the reports when its object is an Activity (the
// others have no definition.name); its report actors are the actor when identified (an
// identified group is one actor, its members are not listed), else the anonymous group's
// identified members.
func reportFields(m map[string]any) (result bool, actors []statements.ReportActor) {
	obj, _ := m["object"].(map[string]any)
	if obj == nil || objectType(obj) != "Activity" {
		return false, nil
	}
	_, result = m["result"].(map[string]any)
	actor, _ := m["actor"].(map[string]any)
	if actor == nil {
		return result, nil
	}
	seen := map[string]bool{}
	add := func(a map[string]any) {
		ifi, err := IFI(a)
		if err != nil || seen[ifi] {
			return
		}
		seen[ifi] = true
		actors = append(actors, statements.ReportActor{IFI: ifi, Agent: marshal(reportAgent(a))})
	}
	if _, err := IFI(actor); err == nil {
		add(actor)
		return result, actors
	}
	members, _ := actor["member"].([]any)
	for _, e := range members {
		if mm, _ := e.(map[string]any); mm != nil {
			add(mm)
		}
	}
	return result, actors
}

// reportAgent is an agent as the reports show it: objectType (Agent by default), name, and
// the property its IFI comes from (IFI's order), nothing else.
func reportAgent(a map[string]any) map[string]any {
	out := map[string]any{"objectType": "Agent"}
	if ot, ok := a["objectType"].(string); ok {
		out["objectType"] = ot
	}
	if n, ok := a["name"].(string); ok {
		out["name"] = n
	}
	for _, k := range []string{"mbox", "mbox_sha1sum", "openid"} {
		if v, ok := a[k].(string); ok {
			out[k] = v
			return out
		}
	}
	if acc, ok := a["account"].(map[string]any); ok {
		out["account"] = map[string]any{"homePage": acc["homePage"], "name": acc["name"]}
	}
	return out
}
