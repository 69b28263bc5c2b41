package sequencing

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/lectern-lms/lectern/course"
)

func randomTree(rc *course.Randomization) *course.Activity {
	seq := flowSeq()
	seq.RandomizationControls = rc
	return cluster("org", seq, leaf("a", nil), leaf("b", nil), leaf("c", nil), leaf("d", nil), leaf("e", nil))
}

// walk delivers the whole course by start and continue and returns the delivery order.
func walk(t *testing.T, s *State) []string {
	t.Helper()
	var order []string
	res, err := s.Navigate(start)
	for err == nil && res.Deliver != "" {
		order = append(order, res.Deliver)
		res, err = s.Navigate(cont)
	}
	if err != nil || !res.SessionEnded {
		t.Fatalf("walk ended with %+v, %v", res, err)
	}
	return order
}

func TestSelection(t *testing.T) {
	root := randomTree(&course.Randomization{SelectCount: ip(2), SelectionTiming: "once"})
	seen := map[string]bool{}
	for seed := int64(0); seed < 20; seed++ {
		s := newState(t, root)
		s.Seed = seed
		order := walk(t, s)
		if len(order) != 2 || !slices.IsSorted(order) {
			t.Fatalf("seed %d: delivered %v, want 2 activities in manifest order", seed, order)
		}
		seen[order[0]+order[1]] = true
		again := newState(t, root)
		again.Seed = seed
		if o := walk(t, again); !slices.Equal(o, order) {
			t.Fatalf("seed %d: the draw is not reproducible: %v then %v", seed, order, o)
		}
		for _, c := range []string{"a", "b", "c", "d", "e"} {
			if !slices.Contains(order, c) {
				again := newState(t, root)
				again.Seed = seed
				if _, err := again.Navigate(choose(c)); !errors.Is(err, ErrChoiceNotAvailable) {
					t.Fatalf("seed %d: choosing unselected %s: %v, want SB.2.9-2", seed, c, err)
				}
				break
			}
		}
	}
	if len(seen) < 3 {
		t.Errorf("20 seeds drew only %d different selections", len(seen))
	}
}

func TestRandomizationAndTiming(t *testing.T) {
	root := randomTree(&course.Randomization{ReorderChildren: bp(true), RandomizationTiming: "once"})
	orders := map[string]bool{}
	for seed := int64(0); seed < 10; seed++ {
		s := newState(t, root)
		s.Seed = seed
		order := walk(t, s)
		if len(order) != 5 {
			t.Fatalf("reordering lost children: %v", order)
		}
		orders[string(mustJSON(t, order))] = true
	}
	if len(orders) < 2 {
		t.Error("ten seeds gave one order")
	}
	if o := walk(t, newState(t, randomTree(&course.Randomization{ReorderChildren: bp(true)}))); !slices.Equal(o, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("randomizationTiming never (the default) must keep the manifest order: %v", o)
	}
}

func TestRandomizationSurvivesJSON(t *testing.T) {
	root := randomTree(&course.Randomization{ReorderChildren: bp(true), RandomizationTiming: "onEachNewAttempt", SelectCount: ip(3), SelectionTiming: "onEachNewAttempt"})
	s := newState(t, root)
	s.Seed = 7
	first := step(t, s, start, s.avail(s.t.root)[0].a.ID, nil).Deliver
	want := s.avail(s.t.root)
	loaded, err := Load(pkg(root), mustJSON(t, s), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := loaded.avail(loaded.t.root); len(got) != 3 || !slices.EqualFunc(got, want, func(a, b *node) bool { return a.a.ID == b.a.ID }) {
		t.Fatalf("after Load the available children changed within the attempt")
	}
	if first == "" {
		t.Fatal("nothing delivered")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
