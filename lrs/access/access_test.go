package access_test

import (
	"errors"
	"testing"

	"github.com/lectern-lms/lectern/lrs/access"
)

// TestScopePermissions: each xAPI scope grants its resources and nothing else.
func TestScopePermissions(t *testing.T) {
	type op struct {
		r     access.Resource
		write bool
	}
	every := []op{{access.Statements, true}, {access.Statements, false}, {access.State, true}, {access.State, false},
		{access.ActivityProfile, true}, {access.ActivityProfile, false}, {access.AgentProfile, true}, {access.AgentProfile, false},
		{access.Activities, false}, {access.Agents, false}, {access.Reports, false}}
	cases := map[string][]op{
		access.ScopeStatementsWrite:    {{access.Statements, true}},
		access.ScopeStatementsRead:     {{access.Statements, false}, {access.Activities, false}, {access.Agents, false}, {access.Reports, false}},
		access.ScopeStatementsReadMine: {{access.Statements, false}, {access.Activities, false}, {access.Agents, false}, {access.Reports, false}},
		access.ScopeAllRead: {{access.Statements, false}, {access.State, false}, {access.ActivityProfile, false}, {access.AgentProfile, false},
			{access.Activities, false}, {access.Agents, false}, {access.Reports, false}},
		access.ScopeAll:     every,
		access.ScopeState:   {{access.State, true}, {access.State, false}},
		access.ScopeProfile: {{access.ActivityProfile, true}, {access.ActivityProfile, false}, {access.AgentProfile, true}, {access.AgentProfile, false}},
		access.ScopeDefine:  nil,
	}
	for scope, allowed := range cases {
		p := access.ScopePermissions([]string{scope})
		for _, o := range every {
			want := false
			for _, a := range allowed {
				want = want || a == o
			}
			err := p.Check(o.r, o.write)
			if (err == nil) != want {
				t.Errorf("%s: %s write=%v: %v, want allowed=%v", scope, o.r, o.write, err, want)
			}
			if err != nil && !errors.Is(err, access.ErrForbidden) {
				t.Errorf("%s: error %v does not wrap ErrForbidden", scope, err)
			}
		}
	}
	if p := access.ScopePermissions([]string{access.ScopeStatementsReadMine}); p.ReadAll {
		t.Error("statements/read/mine reads every statement")
	}
	if p := access.ScopePermissions([]string{access.ScopeStatementsRead}); !p.ReadAll || p.Define {
		t.Errorf("statements/read: %+v", p)
	}
	if p := access.ScopePermissions([]string{access.ScopeDefine}); !p.Define {
		t.Error("define does not define")
	}
}

// TestScopesParseAndCover: scope parameters are checked and normalised, and broader scopes
// include the narrower reads.
func TestScopesParseAndCover(t *testing.T) {
	got, err := access.ParseScopes("  state statements/write state ")
	if err != nil || len(got) != 2 || got[0] != access.ScopeStatementsWrite || got[1] != access.ScopeState {
		t.Fatalf("ParseScopes: %v %v", got, err)
	}
	if _, err := access.ParseScopes("statements/write statements/delete"); !errors.Is(err, access.ErrUnknownScope) {
		t.Fatalf("unknown scope: %v", err)
	}
	for _, c := range []struct {
		have []string
		ask  string
		want bool
	}{
		{[]string{access.ScopeAll}, access.ScopeState, true},
		{[]string{access.ScopeAllRead}, access.ScopeStatementsReadMine, true},
		{[]string{access.ScopeAllRead}, access.ScopeState, false},
		{[]string{access.ScopeStatementsRead}, access.ScopeStatementsReadMine, true},
		{[]string{access.ScopeStatementsReadMine}, access.ScopeStatementsRead, false},
		{[]string{access.ScopeStatementsWrite}, access.ScopeDefine, false},
	} {
		if got := access.Covers(c.have, c.ask); got != c.want {
			t.Errorf("Covers(%v, %s) = %v, want %v", c.have, c.ask, got, c.want)
		}
	}
}
