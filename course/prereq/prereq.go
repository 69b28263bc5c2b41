// Package prereq evaluates SCORM 1.2 adlcp:prerequisites and AICC prerequisites (.pre), both
// written in the AICC script syntax (AICC CMI001, "Prerequisites" scripting; SCORM 1.2 CAM
// 2.3.2.5.1): identifiers of items joined by & (and), | (or) and ~ (not), parentheses,
// comparisons of an item's status (= and <>, with a status word or its first letter), and
// sets: n*{a,b,c} is true when at least n of the listed items are. A bare identifier is true
// when its item is completed or passed. The package is pure: the caller says what each
// item's status is.
package prereq

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("prerequisites syntax error")

// Statuses are the lesson status words an item can have; Status functions return one of
// them ("" is taken as not attempted).
const (
	Passed       = "passed"
	Completed    = "completed"
	Failed       = "failed"
	Incomplete   = "incomplete"
	Browsed      = "browsed"
	NotAttempted = "not attempted"
)

// Status returns the lesson status of the item id, and whether the course has such an item.
type Status func(id string) (status string, ok bool)

// Expr is a parsed prerequisites expression.
type Expr struct{ root node }

// Parse reads an expression; an empty one is always met. Errors wrap ErrSyntax.
func Parse(s string) (*Expr, error) {
	p := &parser{toks: nil}
	if err := p.lex(s); err != nil {
		return nil, err
	}
	if len(p.toks) == 0 {
		return &Expr{}, nil
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("%w: unexpected %q at position %d", ErrSyntax, p.toks[p.pos].text, p.toks[p.pos].at+1)
	}
	return &Expr{root: n}, nil
}

// Met evaluates the expression with the items' statuses. An identifier naming no item of
// the course counts as met, so a typo in a package never locks the learner out.
func (e *Expr) Met(status Status) bool {
	if e == nil || e.root == nil {
		return true
	}
	return e.root.eval(status)
}

// Identifiers lists the item identifiers the expression names, in order of appearance.
func (e *Expr) Identifiers() []string {
	var out []string
	if e != nil && e.root != nil {
		e.root.ids(&out)
	}
	return out
}

// Met parses s and evaluates it.
func Met(s string, status Status) (bool, error) {
	e, err := Parse(s)
	if err != nil {
		return false, err
	}
	return e.Met(status), nil
}

type node interface {
	eval(Status) bool
	ids(*[]string)
}

type (
	ident struct{ id string }
	not   struct{ x node }
	and   struct{ l, r node }
	or    struct{ l, r node }
	cmp   struct {
		id, status string
		equal      bool
	}
	set struct {
		n     int
		items []string
	}
)

func done(status Status, id string) bool {
	st, ok := status(id)
	if !ok {
		return true
	}
	return st == Passed || st == Completed
}

func (n ident) eval(s Status) bool { return done(s, n.id) }
func (n not) eval(s Status) bool   { return !n.x.eval(s) }
func (n and) eval(s Status) bool   { return n.l.eval(s) && n.r.eval(s) }
func (n or) eval(s Status) bool    { return n.l.eval(s) || n.r.eval(s) }
func (n cmp) eval(s Status) bool {
	st, ok := s(n.id)
	if !ok {
		return true
	}
	if st == "" {
		st = NotAttempted
	}
	return (st == n.status) == n.equal
}
func (n set) eval(s Status) bool {
	c := 0
	for _, id := range n.items {
		if done(s, id) {
			c++
		}
	}
	return c >= n.n
}

func (n ident) ids(out *[]string) { *out = append(*out, n.id) }
func (n not) ids(out *[]string)   { n.x.ids(out) }
func (n and) ids(out *[]string)   { n.l.ids(out); n.r.ids(out) }
func (n or) ids(out *[]string)    { n.l.ids(out); n.r.ids(out) }
func (n cmp) ids(out *[]string)   { *out = append(*out, n.id) }
func (n set) ids(out *[]string)   { *out = append(*out, n.items...) }

type token struct {
	kind byte // 'i' identifier, 's' quoted string, or the operator character ('<' for <>)
	text string
	at   int
}

type parser struct {
	toks []token
	pos  int
}

const operators = "&|~=(){},*"

func (p *parser) lex(s string) error {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '<' && i+1 < len(s) && s[i+1] == '>':
			p.toks = append(p.toks, token{kind: '<', text: "<>", at: i})
			i += 2
		case strings.IndexByte(operators, c) >= 0:
			p.toks = append(p.toks, token{kind: c, text: string(c), at: i})
			i++
		case c == '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return fmt.Errorf("%w: unterminated quote at position %d", ErrSyntax, i+1)
			}
			p.toks = append(p.toks, token{kind: 's', text: s[i+1 : i+1+end], at: i})
			i += end + 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n\"<>"+operators, rune(s[j])) {
				j++
			}
			if j == i {
				return fmt.Errorf("%w: unexpected %q at position %d", ErrSyntax, s[i:i+1], i+1)
			}
			p.toks = append(p.toks, token{kind: 'i', text: s[i:j], at: i})
			i = j
		}
	}
	return nil
}

func (p *parser) peek() byte {
	if p.pos < len(p.toks) {
		return p.toks[p.pos].kind
	}
	return 0
}

func (p *parser) expect(kind byte, what string) (token, error) {
	if p.pos >= len(p.toks) {
		return token{}, fmt.Errorf("%w: %s expected at the end", ErrSyntax, what)
	}
	t := p.toks[p.pos]
	if t.kind != kind {
		return token{}, fmt.Errorf("%w: %s expected at position %d, not %q", ErrSyntax, what, t.at+1, t.text)
	}
	p.pos++
	return t, nil
}

func (p *parser) or() (node, error) {
	l, err := p.and()
	for err == nil && p.peek() == '|' {
		p.pos++
		var r node
		if r, err = p.and(); err == nil {
			l = or{l, r}
		}
	}
	return l, err
}

func (p *parser) and() (node, error) {
	l, err := p.unary()
	for err == nil && p.peek() == '&' {
		p.pos++
		var r node
		if r, err = p.unary(); err == nil {
			l = and{l, r}
		}
	}
	return l, err
}

func (p *parser) unary() (node, error) {
	if p.peek() == '~' {
		p.pos++
		x, err := p.unary()
		return not{x}, err
	}
	return p.primary()
}

func (p *parser) primary() (node, error) {
	switch p.peek() {
	case '(':
		p.pos++
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		_, err = p.expect(')', "')'")
		return n, err
	case 'i':
	default:
		if p.pos >= len(p.toks) {
			return nil, fmt.Errorf("%w: an identifier expected at the end", ErrSyntax)
		}
		t := p.toks[p.pos]
		return nil, fmt.Errorf("%w: an identifier expected at position %d, not %q", ErrSyntax, t.at+1, t.text)
	}
	t := p.toks[p.pos]
	p.pos++
	if p.peek() == '*' {
		n, err := strconv.Atoi(t.text)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: a set's count %q at position %d is not a number", ErrSyntax, t.text, t.at+1)
		}
		p.pos++
		if _, err := p.expect('{', "'{'"); err != nil {
			return nil, err
		}
		s := set{n: n}
		for {
			id, err := p.expect('i', "an identifier")
			if err != nil {
				return nil, err
			}
			s.items = append(s.items, id.text)
			if p.peek() != ',' {
				break
			}
			p.pos++
		}
		_, err = p.expect('}', "'}'")
		return s, err
	}
	if k := p.peek(); k == '=' || k == '<' {
		p.pos++
		if p.pos >= len(p.toks) || (p.toks[p.pos].kind != 'i' && p.toks[p.pos].kind != 's') {
			return nil, fmt.Errorf("%w: a status expected after %q at position %d", ErrSyntax, t.text, t.at+1)
		}
		v := p.toks[p.pos]
		p.pos++
		st, ok := statusWord(v.text)
		if !ok {
			return nil, fmt.Errorf("%w: %q at position %d is not a lesson status", ErrSyntax, v.text, v.at+1)
		}
		return cmp{id: t.text, status: st, equal: k == '='}, nil
	}
	return ident{t.text}, nil
}

// statusWord reads a status as the script writes it: the word (any case, "not attempted"
// also with an underscore or without the space) or its first letter.
func statusWord(v string) (string, bool) {
	w := strings.ToLower(strings.TrimSpace(v))
	switch strings.NewReplacer("_", " ", "-", " ").Replace(w) {
	case "passed", "p":
		return Passed, true
	case "completed", "c":
		return Completed, true
	case "failed", "f":
		return Failed, true
	case "incomplete", "i":
		return Incomplete, true
	case "browsed", "b":
		return Browsed, true
	case "not attempted", "notattempted", "n":
		return NotAttempted, true
	}
	return "", false
}
