package sequencing

// TOCEntry is one activity of the table of contents as the player should draw it.
type TOCEntry struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Depth is 0 for the root.
	Depth int `json:"depth"`
	// Visible is false for items the manifest hides (isvisible=false) and for activities a
	// hiddenFromChoice pre-condition hides now, theirs or an ancestor's (the choice
	// sequencing request process, SB.2.9, refuses an activity whose path from the root holds
	// one hidden from choice, so a hidden cluster's whole subtree is out of the learner's
	// reach; ADL CM-07c).
	Visible bool `json:"visible"`
	// Enabled says a choice request for the activity would be honoured now (look-ahead).
	Enabled bool `json:"enabled"`
	// Current marks the Current Activity.
	Current bool `json:"current,omitempty"`
}

// TOC is the table of contents in document order: what is visible, and what a choice
// request would allow right now (each entry evaluated like NavigationRequestValid, so
// nothing changes). Activities not selected for the current attempt of their cluster are
// left out.
func (s *State) TOC() []TOCEntry {
	var out []TOCEntry
	var walk func(n *node, depth int, hidden bool)
	walk = func(n *node, depth int, hidden bool) {
		if !hidden && s.preCondition(n, actHiddenFromChoice) != "" {
			hidden = true
		}
		visible := (n.a.Visible || n.parent == nil) && !hidden
		out = append(out, TOCEntry{
			ID: n.a.ID, Title: n.a.Title, Depth: depth, Visible: visible,
			Enabled: visible && s.NavigationRequestValid(Request{Kind: Choice, Target: n.a.ID}),
			Current: n.a.ID == s.Current,
		})
		for _, c := range s.avail(n) {
			walk(c, depth+1, hidden)
		}
	}
	walk(s.t.root, 0, false)
	return out
}
