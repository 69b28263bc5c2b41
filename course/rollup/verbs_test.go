package rollup

import (
	"encoding/json"
	"testing"
)

func TestDurationOfISO(t *testing.T) {
	for in, want := range map[string]float64{"PT1H2M3.5S": 3723.5, "PT90S": 90, "P1DT1S": 86401, "P1W": 604800, "": 0, "PT": 0, "1H": 0, "PTxS": 0} {
		if got := DurationOfISO(in); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}

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
