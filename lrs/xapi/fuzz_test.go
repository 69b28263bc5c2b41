package xapi

import (
	"testing"
	"time"
)

// FuzzParseStatements checks that no input panics the parser or the functions applied to a
// parsed statement, and that what is accepted serialises to something accepted again.
func FuzzParseStatements(f *testing.F) {
	f.Add(stmtJSON())
	f.Add([]byte("[" + string(stmtJSON()) + "]"))
	f.Add(stmtJSON(mod{"object", raw(sub)}, mod{"context", raw(`{"contextActivities":{"parent":{"id":"http://e.com/p"}},"registration":"ec531277-b57b-4c15-8d91-d292c5b2b8f7"}`)}))
	f.Add(stmtJSON(mod{"actor", raw(`{"objectType":"Group","member":[{"mbox":"mailto:a@example.com"}]}`)}, mod{"result", raw(`{"score":{"raw":1,"min":0,"max":2},"duration":"PT1S"}`)}))
	f.Add(stmtJSON(mod{"object.definition", raw(`{"interactionType":"choice","choices":[{"id":"a","description":{"en":"x"}}]}`)}))
	f.Add([]byte(`{"actor":{"mbox":"mailto:a@b"},"verb":{"id":"v:x"},"object":{"id":"a:b"},"timestamp":"2008-09-15T15:53:00.601-00:00"}`))
	f.Add([]byte(`[{},null,1,"x",[]]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, v := range []Version{V103, V200} {
			stmts, _, err := ParseStatements(body, v)
			if err != nil {
				continue
			}
			for _, s := range stmts {
				s.Fields()
				s.Attachments()
				s.Activities()
				_ = s.VerifySignature(nil)
				s.Complete(nil, time.Unix(0, 0), v)
				out := s.JSON()
				for _, fm := range []string{"exact", "ids", "canonical"} {
					if _, err := Format(out, fm, []string{"en"}); err != nil {
						t.Fatalf("Format(%s) of a valid statement: %v", fm, err)
					}
				}
				if _, _, err := ParseStatements(out, v); err != nil {
					t.Fatalf("completed statement no longer valid: %v\n%s", err, out)
				}
				ContentHash(out)
			}
		}
	})
}
