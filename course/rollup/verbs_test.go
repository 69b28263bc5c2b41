package rollup

import (
	"encoding/json"
	"testing"
)

func TestVerbsOf(t *testing.T) {
	st := func(verb, object, result string) json.RawMessage {
		s := `{"verb":{"id":"` + verb + `"},"object":{"id":"` + object + `"}`
		if result != "" {
			s += `,"result":` + result
		}
		return json.RawMessage(s + "}")
	}
	const au, other = "https://example.com/au/1", "https://example.com/au/2"
	got := VerbsOf([]json.RawMessage{
		st(VerbFailed, au, `{"score":{"scaled":0.4}}`),
		st(VerbPassed, au, `{"score":{"scaled":0.9}}`),
		st(VerbFailed, au, `{"score":{"scaled":0.2}}`), // after a pass: the pass stands
		st(VerbCompleted, au, ""),
		st(VerbTerminated, au, `{"duration":"PT1M"}`),
		st(VerbTerminated, au, `{"duration":"PT30S"}`),
		st(VerbFailed, other, ""),
		st("http://adlnet.gov/expapi/verbs/experienced", other, `{"duration":"PT10S"}`),
		json.RawMessage(`{"verb":{"id":"` + VerbCompleted + `"},"object":{"objectType":"Agent","mbox":"mailto:a@b.c"}}`),
		json.RawMessage(`not json`),
	})
	a, o := got[au], got[other]
	if !a.Passed || a.Failed || !a.Completed || a.Scaled == nil || *a.Scaled != 0.2 || a.Seconds != 90 {
		t.Errorf("AU 1: %+v", a)
	}
	if !o.Failed || o.Passed || o.Completed || o.Seconds != 10 {
		t.Errorf("AU 2: %+v", o)
	}
	if len(got) != 2 {
		t.Errorf("activities: %v", got)
	}
}
