package xapi

import (
	"encoding/json"
	"testing"
)

func TestReportFields(t *testing.T) {
	for _, tc := range []struct {
		name, stmt string
		result     bool
		actors     []string // IFI=agent JSON
	}{
		{"agent with result", `{"actor":{"mbox":"mailto:a@x","name":"A","extra":1},"object":{"id":"http://x/a"},"result":{"success":true}}`,
			true, []string{`mbox:mailto:a@x={"mbox":"mailto:a@x","name":"A","objectType":"Agent"}`}},
		{"account, no result", `{"actor":{"account":{"homePage":"http://h","name":"n"}},"object":{"objectType":"Activity","id":"http://x/a"}}`,
			false, []string{`account:http://h|n={"account":{"homePage":"http://h","name":"n"},"objectType":"Agent"}`}},
		{"identified group is one actor", `{"actor":{"objectType":"Group","mbox":"mailto:g@x","member":[{"mbox":"mailto:m@x"}]},"object":{"id":"http://x/a"}}`,
			false, []string{`mbox:mailto:g@x={"mbox":"mailto:g@x","objectType":"Group"}`}},
		{"anonymous group: its identified members", `{"actor":{"objectType":"Group","member":[{"mbox":"mailto:m@x","name":"M"},{"name":"no ifi"},{"openid":"http://o"}]},"object":{"id":"http://x/a"},"result":{}}`,
			true, []string{`mbox:mailto:m@x={"mbox":"mailto:m@x","name":"M","objectType":"Agent"}`, `openid:http://o={"objectType":"Agent","openid":"http://o"}`}},
		{"object not an activity", `{"actor":{"mbox":"mailto:a@x"},"object":{"objectType":"Agent","mbox":"mailto:b@x"},"result":{"success":true}}`, false, nil},
	} {
		result, actors, err := ReportFields(json.RawMessage(tc.stmt))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		for _, a := range actors {
			got = append(got, a.IFI+"="+string(a.Agent))
		}
		if result != tc.result || len(got) != len(tc.actors) {
			t.Errorf("%s: result %v, actors %v", tc.name, result, got)
			continue
		}
		for i := range got {
			if got[i] != tc.actors[i] {
				t.Errorf("%s: actor %d = %s, want %s", tc.name, i, got[i], tc.actors[i])
			}
		}
	}
	if _, _, err := ReportFields(json.RawMessage(`[1]`)); err == nil {
		t.Error("a non-object statement was accepted")
	}
}
