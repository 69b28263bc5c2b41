package onnx

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
)

func cosine(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

// TestEmbedInContext: the text's vector is Embed's, on either model (a short text runs on the
// float model, a long one on the integer model); a phrase the text holds as whole words gets
// a unit vector close to the phrase embedded alone; a phrase it does not hold, or holds only
// inside a longer word, gets nil.
func TestEmbedInContext(t *testing.T) {
	e := newTestONNX(t)
	ctx := context.Background()
	short := "Learners practise giving feedbacks in role plays, with teamwork."
	long := strings.Repeat("The course covers conflict resolution, negotiation and active listening for team leaders. ", 6)
	for _, text := range []string{short, long} {
		phrases := []string{"role plays", "conflict resolution", "active listening", "spreadsheet formulas", "feedback", "team", "listening"}
		vecs, found, err := e.EmbedInContext(ctx, []string{text}, phrases)
		if err != nil {
			t.Fatal(err)
		}
		vec, pv := vecs[0], found[0]
		want := embedOne(t, e, text)
		for k := range want {
			if d := math.Abs(float64(want[k] - vec[k])); d > 1e-5 {
				t.Fatalf("%.20q: dim %d: in context %g, Embed %g", text, k, vec[k], want[k])
			}
		}
		for i, p := range phrases {
			// As whole words only: in the short text "feedback" and "team" occur as the first
			// pieces of "feedbacks" (feedback ##s) and "teamwork" (team ##work) and are not held.
			held := regexp.MustCompile(`\b` + regexp.QuoteMeta(p) + `\b`).MatchString(text)
			if (pv[i] != nil) != held {
				t.Errorf("%.20q: phrase %q: vector %v, want one: %v", text, p, pv[i] != nil, held)
				continue
			}
			if pv[i] == nil {
				continue
			}
			if n := math.Sqrt(cosine(pv[i], pv[i])); math.Abs(n-1) > 1e-4 {
				t.Errorf("phrase %q: norm %g", p, n)
			}
			if c := cosine(pv[i], embedOne(t, e, p)); c < 0.5 {
				t.Errorf("phrase %q in context: cosine %.3f to the phrase alone", p, c)
			}
		}
	}
}

// TestEmbedInContextStopped: a caller whose context ends gets its cause, not an error of
// the embedder's own, so a queue hands its task back at a shutdown instead of counting a
// failed try (cmd/lectern TestGracefulShutdownHandsBackJob).
func TestEmbedInContextStopped(t *testing.T) {
	e := newTestONNX(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("shutting down")
	cancel(stop)
	if _, _, err := e.EmbedInContext(ctx, []string{"a", "b"}, []string{"a"}); !errors.Is(err, stop) {
		t.Fatalf("got %v, want the context's cause", err)
	}
}
