package sequencing

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"slices"
)

// avail returns a cluster's Available Children: the children the Select Children Process
// (SR.1) picked and the Randomize Children Process (SR.2) ordered for the attempt at hand.
//
// Nothing random is stored: the choice is derived from State.Seed, the activity and the
// attempt it applies to, so it is the same on every request of the attempt (and after the
// state went through JSON), and a look-ahead sees what the real request will. "once" draws
// one choice for the whole registration; "onEachNewAttempt" a new one per attempt on the
// cluster, where an inactive cluster looks at the attempt it is about to begin.
func (s *State) avail(n *node) []*node {
	rc := n.seq.RandomizationControls
	if rc == nil || len(n.children) == 0 {
		return n.children
	}
	selectCount := 0
	if rc.SelectCount != nil {
		selectCount = *rc.SelectCount
	}
	selecting := selectCount > 0 && selectCount < len(n.children) && timed(rc.SelectionTiming)
	reorder := boolOr(rc.ReorderChildren, false) && timed(rc.RandomizationTiming)
	if !selecting && !reorder {
		return n.children
	}
	out := n.children
	if selecting {
		r := s.rng(n, rc.SelectionTiming, "select")
		picked := r.Perm(len(n.children))[:selectCount]
		slices.Sort(picked) // selection keeps the manifest order
		out = make([]*node, 0, selectCount)
		for _, i := range picked {
			out = append(out, n.children[i])
		}
	}
	if reorder {
		r := s.rng(n, rc.RandomizationTiming, "reorder")
		shuffled := slices.Clone(out)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		out = shuffled
	}
	return out
}

// timed reports whether a selectionTiming / randomizationTiming applies at all ("never",
// the default, does not).
func timed(t string) bool { return t == "once" || t == "onEachNewAttempt" }

// rng is a deterministic random source for one cluster and one attempt.
func (s *State) rng(n *node, timing, purpose string) *rand.Rand {
	attempt := 0
	if timing == "onEachNewAttempt" {
		st := s.st(n)
		attempt = st.AttemptCount
		if !st.Active && !st.IsSuspended {
			attempt++
		}
	}
	h := fnv.New64a()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(s.Seed))
	binary.LittleEndian.PutUint64(b[8:], uint64(attempt))
	h.Write(b[:])
	h.Write([]byte(n.a.ID))
	h.Write([]byte{0})
	h.Write([]byte(purpose))
	seed := h.Sum64()
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}
