package rollup

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course/registration"
)

// TestFoldMatchesVerbsOf: folding statements batch by batch, with batches folded again (a
// rebuild racing a batch), gives what reading every statement at once gives.
func TestFoldMatchesVerbsOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	verbs := []string{VerbCompleted, VerbPassed, VerbFailed, VerbWaived, VerbTerminated, VerbAnswered,
		"http://adlnet.gov/expapi/verbs/experienced", "http://adlnet.gov/expapi/verbs/progressed"}
	objects := []string{"https://example.com/au/1", "https://example.com/au/2", "https://example.com/q/1"}
	for round := 0; round < 50; round++ {
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var raws []json.RawMessage
		for i := 0; i < 200; i++ {
			st := map[string]any{"id": fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
				"stored": start.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano),
				"verb":   map[string]any{"id": verbs[rng.IntN(len(verbs))]}, "object": map[string]any{"id": objects[rng.IntN(len(objects))]}}
			if rng.IntN(2) == 0 {
				st["result"] = map[string]any{"duration": fmt.Sprintf("PT%dS", rng.IntN(300)),
					"score": map[string]any{"scaled": float64(rng.IntN(100)) / 100}, "response": "a", "success": rng.IntN(2) == 0}
			}
			b, _ := json.Marshal(st)
			raws = append(raws, b)
		}
		want := VerbsOf(raws)
		var f registration.StatementFold
		for i := 0; i < len(raws); {
			n := 1 + rng.IntN(10)
			if i+n > len(raws) {
				n = len(raws) - i
			}
			FoldStatements(&f, raws[i:i+n])
			if rng.IntN(3) == 0 {
				// The same batch again, or everything so far (a rebuild): nothing changes.
				again := raws[i : i+n]
				if rng.IntN(2) == 0 {
					again = raws[:i+n]
				}
				if FoldStatements(&f, again) {
					t.Fatalf("round %d: folding statements again changed the fold", round)
				}
			}
			i += n
		}
		// The fold survives its stored (JSON) form.
		b, _ := json.Marshal(&f)
		var back registration.StatementFold
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if got := VerbsOfFold(&back); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: fold %+v, all at once %+v", round, got, want)
		}
	}
}
