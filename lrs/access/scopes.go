package access

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The OAuth scopes of xAPI (1.0.3 Part Two §6.4.2, "OAuth Authorization Scope"; the same in
// 2.0).
const (
	ScopeStatementsWrite    = "statements/write"
	ScopeStatementsRead     = "statements/read"
	ScopeStatementsReadMine = "statements/read/mine"
	ScopeAllRead            = "all/read"
	ScopeAll                = "all"
	ScopeDefine             = "define"
	ScopeProfile            = "profile"
	ScopeState              = "state"
)

// Scopes lists every scope in canonical order.
var Scopes = []string{ScopeStatementsWrite, ScopeStatementsRead, ScopeStatementsReadMine,
	ScopeAllRead, ScopeAll, ScopeDefine, ScopeProfile, ScopeState}

// DefaultScopes is what xAPI grants when no scope is asked for.
var DefaultScopes = []string{ScopeStatementsWrite, ScopeStatementsReadMine}

// ErrUnknownScope means a scope that xAPI does not define.
var ErrUnknownScope = errors.New("unknown scope")

// NormalizeScopes checks scopes and returns them without repeats, in canonical order.
func NormalizeScopes(scopes []string) ([]string, error) {
	out := []string{}
	for _, s := range scopes {
		if !slices.Contains(Scopes, s) {
			return nil, fmt.Errorf("%w %q (xAPI scopes: %s)", ErrUnknownScope, s, strings.Join(Scopes, ", "))
		}
	}
	for _, s := range Scopes {
		if slices.Contains(scopes, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// ParseScopes reads an OAuth scope parameter: scopes separated by spaces (RFC 6749 §3.3).
func ParseScopes(s string) ([]string, error) {
	return NormalizeScopes(strings.Fields(s))
}

// ScopePermissions maps OAuth scopes to permissions. statements/read/mine reads only the
// statements whose agents include the client's own authority, which is the default read
// rule applied to the client's principal.
func ScopePermissions(scopes []string) Permissions {
	var p Permissions
	for _, s := range scopes {
		switch s {
		case ScopeAll:
			return everything
		case ScopeAllRead:
			p.Read, p.ReadAll, p.Definitions = true, true, true
			p.State, p.Profiles = max(p.State, ReadAccess), max(p.Profiles, ReadAccess)
		case ScopeStatementsWrite:
			p.Write = true
		case ScopeStatementsRead:
			p.Read, p.ReadAll, p.Definitions = true, true, true
		case ScopeStatementsReadMine:
			p.Read, p.Definitions = true, true
		case ScopeState:
			p.State = ReadWriteAccess
		case ScopeProfile:
			p.Profiles = ReadWriteAccess
		case ScopeDefine:
			p.Define = true
		}
	}
	return p
}

// implied lists the scopes each scope includes.
var implied = map[string][]string{
	ScopeAll:            Scopes,
	ScopeAllRead:        {ScopeStatementsRead, ScopeStatementsReadMine},
	ScopeStatementsRead: {ScopeStatementsReadMine},
}

// Covers says whether a client holding scopes may be granted scope: it holds it, or a
// broader one that includes it (all includes every scope, all/read and statements/read the
// narrower reads).
func Covers(scopes []string, scope string) bool {
	for _, s := range scopes {
		if s == scope || slices.Contains(implied[s], scope) {
			return true
		}
	}
	return false
}
