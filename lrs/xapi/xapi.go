// Package xapi is Lectern's pure xAPI domain: strict statement validation for xAPI 1.0.3 and
// 2.0, the statement's index fields for storage/statements, statement formats, agents and
// IFIs, activity definition merging, statement comparison, multipart/mixed attachments and
// signed statements. It has no HTTP and no storage: the server's LRS handlers drive it. The
// lexical forms of xAPI's value types (UUIDs, IRIs, language tags, timestamps, durations) are
// lrs/xapi/lexical's.
//
// Validation is deliberately strict (unknown or wrongly cased properties, nulls, wrong JSON
// types and malformed identifiers are all rejected) because the ADL conformance suite checks
// that every malformed statement is refused with 400.
package xapi

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/lectern-lms/lectern/lrs/xapi/lexical"
)

// Version is the xAPI version a request speaks (from X-Experience-API-Version).
type Version string

// The two supported xAPI versions.
const (
	V103 Version = "1.0.3"
	V200 Version = "2.0.0"
)

// is20 reports whether v selects the xAPI 2.0 rules.
func (v Version) is20() bool { return strings.HasPrefix(string(v), "2.") }

// ErrVersion is returned by ParseVersionHeader for a missing or unsupported version.
var ErrVersion = errors.New("xapi: unsupported X-Experience-API-Version")

var (
	reVersion10 = regexp.MustCompile(`^1\.0(\.[0-9]+)?$`)
	reVersion20 = regexp.MustCompile(`^2\.0(\.[0-9]+)?$`)
	reSHA1Hex   = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)
	reEmail     = regexp.MustCompile(`^[^@\s]+@[^@\s]+$`)
)

// ParseVersionHeader maps an X-Experience-API-Version header to the rules to apply: any 1.0.x
// (and "1.0") selects V103, "2.0" and "2.0.x" select V200. The value returned is the family
// constant, so responses can send it back normalised.
func ParseVersionHeader(h string) (Version, error) {
	h = strings.TrimSpace(h)
	switch {
	case reVersion10.MatchString(h):
		return V103, nil
	case reVersion20.MatchString(h):
		return V200, nil
	}
	return "", fmt.Errorf("%w: %q", ErrVersion, h)
}

// Error is a validation failure; the HTTP layer answers 400 with its text.
type Error struct {
	// Path names the offending property, e.g. "statement.actor.mbox".
	Path string
	Msg  string
}

// Error renders "path: message", the text the HTTP layer returns with 400.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func errf(path, format string, a ...any) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, a...)}
}

// validIRL is an IRI that is also a locator; xAPI only distinguishes them by intent.
func validIRL(s string) bool { return lexical.ValidIRI(s) }
