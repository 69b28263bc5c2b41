package sqlite

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lectern-lms/lectern/storage/statements"
)

// TestScanLists pins that the lists scanner reads what json.Marshal writes exactly as
// encoding/json does, and hands what it does not expect to encoding/json.
func TestScanLists(t *testing.T) {
	cases := []lists{
		{},
		{Agents: []string{"mbox:mailto:a@example.com"}},
		{Agents: []string{"mbox:mailto:a@example.com"}, RelatedAgents: []string{"mbox:mailto:a@example.com", "account:https://lectern|root"},
			RelatedActivities: []string{"https://example.com/a?x=1&y=<2>", "https://example.com/c"}, AttachmentHashes: []string{"abc", "def"},
			ReportActors: []statements.ReportActor{{IFI: "mbox:mailto:a@example.com", Agent: json.RawMessage(`{"mbox":"mailto:a@example.com","name":"A, \"the\" [first]","n":[1,{"x":null}]}`)},
				{IFI: "account:h|n", Agent: json.RawMessage(`{"account":{"homePage":"h","name":"n"}}`)}}},
		{Agents: []string{`quote " and back \ slash`, "tab\tnewline\n", "ünïcødé ✓"}},
	}
	for i, c := range cases {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 && !scanLists(b, &lists{}) {
			t.Errorf("%s: the scanner handed plain lists to encoding/json", b)
		}
		var want lists
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		var got statements.Statement
		if err := decodeLists(&got, b); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		gotLists := lists{got.Agents, got.RelatedAgents, got.RelatedActivities, got.AttachmentHashes, got.ReportActors}
		if !reflect.DeepEqual(gotLists, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", b, gotLists, want)
		}
	}
	var st statements.Statement
	if err := decodeLists(&st, []byte(`{"a":[`)); err == nil {
		t.Error("truncated lists decoded without error")
	}
}

func TestScanListsEmptyArrays(t *testing.T) {
	b := []byte(`{"a":[],"ra":["x"],"p":[{"i":"x","a":{"mbox":"mailto:x@example.com"}}]}`)
	var want, got lists
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if !scanLists(b, &got) || !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}
