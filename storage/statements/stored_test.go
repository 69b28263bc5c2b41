package statements

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestSetStored(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	want := `"2026-01-02T03:04:05.000006Z"`
	for _, c := range []struct{ in, out string }{
		{`{"id":"x","stored":"2020-01-01T00:00:00Z","object":{"stored":"keep"}}`, `{"id":"x","stored":` + want + `,"object":{"stored":"keep"}}`},
		{`{"object":{"stored":"keep","a":[1,{"stored":2}]},"s\u0074ored" : "old" }`, `{"object":{"stored":"keep","a":[1,{"stored":2}]},"s\u0074ored" : ` + want + ` }`},
		{`{"stored":"2026-01-02T03:04:05.000006Z"}`, `{"stored":"2026-01-02T03:04:05.000006Z"}`},
		{`{"a":"\"stored\":1"}`, `{"a":"\"stored\":1"}`},
		{`{"stored":1,"stored":"x"}`, `{"stored":1,"stored":` + want + `}`},
		{`[{"stored":"x"}]`, `[{"stored":"x"}]`},
		{`{"stored":`, `{"stored":`},
		{`{}`, `{}`},
	} {
		got := string(SetStored(json.RawMessage(c.in), at))
		if got != c.out {
			t.Errorf("SetStored(%s) = %s, want %s", c.in, got, c.out)
		}
		var a, b any
		if json.Unmarshal([]byte(c.out), &a) == nil && (json.Unmarshal([]byte(got), &b) != nil || !reflect.DeepEqual(a, b)) {
			t.Errorf("SetStored(%s) is not valid JSON: %s", c.in, got)
		}
	}
}
