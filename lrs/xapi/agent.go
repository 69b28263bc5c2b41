package xapi

import (
	"errors"
	"strings"
)

// IFI returns the inverse functional identifier of an Agent or identified Group in the form
// the store indexes: "mbox:mailto:x", "mbox_sha1sum:<hex>", "openid:<uri>" or
// "account:<homePage>|<name>". Anonymous groups have none.
func IFI(agent map[string]any) (string, error) {
	if s, ok := agent["mbox"].(string); ok {
		return "mbox:" + s, nil
	}
	if s, ok := agent["mbox_sha1sum"].(string); ok {
		// hex case is not significant
		return "mbox_sha1sum:" + strings.ToLower(s), nil
	}
	if s, ok := agent["openid"].(string); ok {
		return "openid:" + s, nil
	}
	if a, ok := agent["account"].(map[string]any); ok {
		hp, _ := a["homePage"].(string)
		name, _ := a["name"].(string)
		if hp != "" || name != "" {
			return "account:" + hp + "|" + name, nil
		}
	}
	return "", errors.New("xapi: agent has no inverse functional identifier")
}

// ParseAgent validates the agent parameter of queries and document resources (an Agent or an
// identified Group, as JSON) and returns it with its IFI.
func ParseAgent(js []byte, v Version) (agent map[string]any, ifi string, err error) {
	x, err := decode(js)
	if err != nil {
		return nil, "", &Error{Path: "agent", Msg: err.(*Error).Msg}
	}
	c := &validator{v: v}
	if err := c.actor(x, "agent", actorAny); err != nil {
		return nil, "", err
	}
	agent = x.(map[string]any)
	ifi, err = IFI(agent)
	if err != nil {
		return nil, "", &Error{Path: "agent", Msg: "must have an inverse functional identifier"}
	}
	return agent, ifi, nil
}

// Person returns the Person object GET /agents answers for one agent: each identifying
// property as an array (the LRS knows of no other agents of the same person).
func Person(agent map[string]any) map[string]any {
	p := map[string]any{"objectType": "Person"}
	for _, k := range []string{"name", "mbox", "mbox_sha1sum", "openid", "account"} {
		if v, ok := agent[k]; ok && v != nil {
			p[k] = []any{v}
		}
	}
	return p
}
