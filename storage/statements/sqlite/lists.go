package sqlite

import (
	"encoding/json"
	"fmt"

	"github.com/lectern-lms/lectern/storage/statements"
)

// lists keeps the multi-valued fields so Get and Query return the statement as it was put;
// the filterable copies live in terms.
type lists struct {
	Agents            []string `json:"a,omitempty"`
	RelatedAgents     []string `json:"ra,omitempty"`
	RelatedActivities []string `json:"ro,omitempty"`
	AttachmentHashes  []string `json:"h,omitempty"`
	// ReportActors are the statement's report actors, read back by the actors report.
	ReportActors []statements.ReportActor `json:"p,omitempty"`
}

// decodeLists sets st's multi-valued fields from the lists column. The column is always the
// json.Marshal of lists, so a small scanner reads it (encoding/json's reflection was a third
// of a query's CPU); anything it does not expect, such as an escaped string, goes to
// encoding/json instead.
func decodeLists(st *statements.Statement, l []byte) error {
	var ls lists
	if !scanLists(l, &ls) {
		ls = lists{}
		if err := json.Unmarshal(l, &ls); err != nil {
			return fmt.Errorf("statement %s: corrupt lists: %w", st.ID, err)
		}
	}
	st.Agents, st.RelatedAgents, st.RelatedActivities, st.AttachmentHashes = ls.Agents, ls.RelatedAgents, ls.RelatedActivities, ls.AttachmentHashes
	st.ReportActors = ls.ReportActors
	return nil
}

// listScanner reads the compact JSON that json.Marshal writes: no whitespace.
type listScanner struct {
	b []byte
	i int
}

func (s *listScanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes.
func (s *listScanner) str() (string, bool) {
	if !s.eat('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			v := string(s.b[start:s.i])
			s.i++
			return v, true
		case c == '\\' || c < 0x20:
			return "", false
		}
		s.i++
	}
	return "", false
}

func (s *listScanner) strings() ([]string, bool) {
	if !s.eat('[') {
		return nil, false
	}
	out := []string{} // as encoding/json decodes []
	for !s.eat(']') {
		if len(out) > 0 && !s.eat(',') {
			return nil, false
		}
		v, ok := s.str()
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// value skips one JSON value (strings without escapes) and returns its bytes.
func (s *listScanner) value() ([]byte, bool) {
	start, depth := s.i, 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			if _, ok := s.str(); !ok {
				return nil, false
			}
			if depth == 0 {
				return s.b[start:s.i], true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return nil, false
			}
			if depth == 0 {
				s.i++
				return s.b[start:s.i], true
			}
		case ',':
			if depth == 0 {
				return s.b[start:s.i], start < s.i
			}
		}
		s.i++
	}
	return nil, false
}

func (s *listScanner) actors() ([]statements.ReportActor, bool) {
	if !s.eat('[') {
		return nil, false
	}
	out := []statements.ReportActor{}
	for !s.eat(']') {
		if len(out) > 0 && !s.eat(',') {
			return nil, false
		}
		if !s.eat('{') {
			return nil, false
		}
		var a statements.ReportActor
		for n := 0; !s.eat('}'); n++ {
			if n > 0 && !s.eat(',') {
				return nil, false
			}
			k, ok := s.str()
			if !ok || !s.eat(':') {
				return nil, false
			}
			switch k {
			case "i":
				if a.IFI, ok = s.str(); !ok {
					return nil, false
				}
			case "a":
				v, ok := s.value()
				if !ok {
					return nil, false
				}
				a.Agent = json.RawMessage(string(v))
			default:
				return nil, false
			}
		}
		out = append(out, a)
	}
	return out, true
}

// scanLists decodes l into ls, or reports false when l is not in the form it expects.
func scanLists(l []byte, ls *lists) bool {
	s := listScanner{b: l}
	if !s.eat('{') {
		return false
	}
	for n := 0; !s.eat('}'); n++ {
		if n > 0 && !s.eat(',') {
			return false
		}
		k, ok := s.str()
		if !ok || !s.eat(':') {
			return false
		}
		switch k {
		case "a":
			ls.Agents, ok = s.strings()
		case "ra":
			ls.RelatedAgents, ok = s.strings()
		case "ro":
			ls.RelatedActivities, ok = s.strings()
		case "h":
			ls.AttachmentHashes, ok = s.strings()
		case "p":
			ls.ReportActors, ok = s.actors()
		default:
			return false
		}
		if !ok {
			return false
		}
	}
	return s.i == len(s.b)
}
