package runtime

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BigCommit is a legal SCORM 2004 commit in the API's nested JSON form with n interactions,
// each with every element set, a correct response and an objective (about 260 bytes each).
func BigCommit(n int) []byte {
	type pattern struct {
		Pattern string `json:"pattern"`
	}
	type id struct {
		ID string `json:"id"`
	}
	type interaction struct {
		ID               string    `json:"id"`
		Type             string    `json:"type"`
		Timestamp        string    `json:"timestamp"`
		Weighting        string    `json:"weighting"`
		LearnerResponse  string    `json:"learner_response"`
		Result           string    `json:"result"`
		Latency          string    `json:"latency"`
		Description      string    `json:"description"`
		CorrectResponses []pattern `json:"correct_responses"`
		Objectives       []id      `json:"objectives"`
	}
	ins := make([]interaction, n)
	for i := range ins {
		ins[i] = interaction{ID: fmt.Sprintf("urn:lectern:question:%d", i), Type: "choice", Timestamp: "2026-12-06T10:00:00Z",
			Weighting: "1", LearnerResponse: "a[,]b", Result: "correct", Latency: "PT12.5S", Description: "Which of these are prime numbers?",
			CorrectResponses: []pattern{{"a[,]b"}}, Objectives: []id{{"primes"}}}
	}
	b, _ := json.Marshal(map[string]any{"commitSequence": 1, "cmi": map[string]any{"completion_status": "incomplete",
		"success_status": "unknown", "location": "page-12", "suspend_data": "resume here", "interactions": ins}})
	return b
}

// TestBigCommitParses: the largest collection index the data model allows (9999) parses, and
// an index out of range, with a leading zero or not a number is not an element.
func TestBigCommitParses(t *testing.T) {
	c, err := ParseCommit(SCORM2004, BigCommit(9999))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Values["cmi.interactions.9998.objectives.0.id"]; got != "primes" {
		t.Fatalf("last interaction's objective: %q", got)
	}
	for _, name := range []string{"cmi.interactions.10000.id", "cmi.interactions.01.id", "cmi.interactions.x.id", "cmi.interactions..id", "cmi.interactions.1", "cmi.interactions.1.objectives.0.id.x"} {
		if _, err := Validate(SCORM2004, name, "q"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func BenchmarkParseCommit10k(b *testing.B) {
	body := BigCommit(10000)
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		if _, err := ParseCommit(SCORM2004, body); err != nil {
			b.Fatal(err)
		}
	}
}
