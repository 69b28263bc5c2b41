// Package settings is Lectern's typed catalogue of course-engine
// configuration settings: the ids that the tenant, course and registration
// configuration endpoints accept, their types, defaults and allowed levels,
// and the rules that validate, canonicalise and cascade their values.
//
// The ids and semantics follow Rustici Engine REST API v1 (see
// shared/reference/course-engine-semantics.md §2.8) so that integrating LMSs
// written against Engine keep working. The package is deliberately pure (no
// HTTP, no storage): handlers and stores call it, which keeps the rules in
// one place and testable without infrastructure.
//
// Secret settings are write-only: they can be set and are returned in clear
// only by [Catalogue.Resolve] (for the engine's own use, e.g. checking a
// record-store account), never by [Catalogue.Effective] or [Catalogue.EffectiveAll],
// which back the public GET endpoints.
package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Type is the data type of a setting's value. Values travel as strings on
// the wire (the spec says "booleans and flags are carried as strings"), so
// the type decides how a string is validated and canonicalised.
type Type int

// The setting types. The zero value is deliberately invalid so that a
// Setting literal that forgets its Type is rejected by [New].
const (
	// TypeString accepts any valid UTF-8 text, kept verbatim.
	TypeString Type = iota + 1
	// TypeBool accepts true/false/yes/no in any case; canonical "true"/"false".
	TypeBool
	// TypeInt accepts a base-10 integer, optionally bounded by Min/Max.
	TypeInt
	// TypeEnum accepts one of Setting.Allowed, matched case-insensitively.
	TypeEnum
	// TypeURL accepts an absolute http(s) URL, the empty string, or one of
	// Setting.Allowed as a keyword (e.g. "closer" for an exit redirect).
	TypeURL
	// TypeJSON accepts a JSON document; canonical form is compacted.
	TypeJSON
	// TypeRegex accepts a Go (RE2) regular expression.
	TypeRegex
	// TypeCredentials accepts "<username>:<password>" with a non-empty
	// username, the form the spec gives for TinCanRootAccount.
	TypeCredentials
)

// String returns the lower-case name of the type, used in error messages.
func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeBool:
		return "bool"
	case TypeInt:
		return "int"
	case TypeEnum:
		return "enum"
	case TypeURL:
		return "url"
	case TypeJSON:
		return "json"
	case TypeRegex:
		return "regex"
	case TypeCredentials:
		return "credentials"
	default:
		return "Type(" + strconv.Itoa(int(t)) + ")"
	}
}

// Level is a bitmask of the configuration levels at which a setting may be
// given an explicit value. A bitmask, because Engine's "Registration"-level
// settings may be set at tenant, course or registration level alike.
type Level uint8

// The configuration levels, from least to most specific. The cascade
// applies them in this order, so a more specific level overrides a less
// specific one.
const (
	// LevelSystem is deployment-wide configuration that is never writable
	// through the tenant-scoped API (e.g. a rule that governs tenant
	// creation, which cannot belong to a tenant).
	LevelSystem Level = 1 << iota
	// LevelTenant is set via /{tenant}/configuration.
	LevelTenant
	// LevelCourse is set via /{tenant}/courses/{courseId}/configuration.
	LevelCourse
	// LevelRegistration is set via
	// /{tenant}/registrations/{registrationId}/configuration.
	LevelRegistration
)

// levelNames lists every level in cascade order; a function rather than a
// package variable so that the package holds no mutable state.
func levelNames() []struct {
	l    Level
	name string
} {
	return []struct {
		l    Level
		name string
	}{
		{LevelSystem, "system"},
		{LevelTenant, "tenant"},
		{LevelCourse, "course"},
		{LevelRegistration, "registration"},
	}
}

// String renders the levels joined by "|" (e.g. "tenant|course"), so that
// error messages can tell the caller where a setting may be set.
func (l Level) String() string {
	if l == 0 {
		return "none"
	}
	var parts []string
	for _, n := range levelNames() {
		if l&n.l != 0 {
			parts = append(parts, n.name)
			l &^= n.l
		}
	}
	if l != 0 {
		parts = append(parts, fmt.Sprintf("Level(%#x)", uint8(l)))
	}
	return strings.Join(parts, "|")
}

// Has reports whether every bit of other is in l (false for an empty
// other). It exists so callers do not hand-roll bit arithmetic when
// checking where a setting may be set.
func (l Level) Has(other Level) bool { return other != 0 && l&other == other }

// single reports whether l is exactly one known level; layers and writes
// happen at one level at a time.
func (l Level) single() bool {
	switch l {
	case LevelSystem, LevelTenant, LevelCourse, LevelRegistration:
		return true
	}
	return false
}

// Setting describes one configuration setting. Setting values returned by a
// Catalogue are copies: mutating one does not affect the catalogue.
type Setting struct {
	// ID is the setting id exactly as it appears on the wire; lookups are
	// case-sensitive because Engine clients send ids verbatim.
	ID string
	// Type decides validation and canonicalisation; see [Normalize].
	Type Type
	// Default is the canonical value used when no level sets one. An empty
	// default on a non-string type means "taken from the course package
	// properties" (Engine's "pkg" settings), and then an explicit empty
	// value is accepted too.
	Default string
	// Allowed lists the canonical spellings for TypeEnum, and the extra
	// keywords a TypeURL setting accepts in place of a URL.
	Allowed []string
	// Bounded makes Min and Max (inclusive) apply to a TypeInt value. A
	// separate flag, because 0 is a meaningful bound.
	Bounded bool
	// Min is the smallest accepted integer when Bounded.
	Min int64
	// Max is the largest accepted integer when Bounded.
	Max int64
	// Levels are the levels at which an explicit value may be set.
	Levels Level
	// Secret marks a write-only setting (passwords, account lists): its
	// value is never echoed in listings, single GETs or error messages.
	Secret bool
	// Outbound marks a URL the server itself sends requests to (a post-back): when set, the
	// value is checked against the outbound policy (Store.CheckOutbound) as well.
	Outbound bool
	// Description says what the setting does and why it exists.
	Description string
}

// clone returns a deep copy so that callers cannot mutate catalogue data
// through the Allowed slice.
func (s Setting) clone() Setting {
	if s.Allowed != nil {
		s.Allowed = append([]string(nil), s.Allowed...)
	}
	return s
}

// Sentinel errors. Every error returned by this package wraps exactly one
// of them (test with errors.Is), so an HTTP layer can map ErrUnknownSetting
// and ErrInvalidValue to 400 without parsing messages.
var (
	// ErrUnknownSetting: the id is not in the catalogue. Engine answers
	// 400 "X is not a valid setting ID" for this case.
	ErrUnknownSetting = errors.New("unknown setting")
	// ErrInvalidValue: the value does not fit the setting's type, bounds or
	// allowed values (also returned for bad values found in a layer).
	ErrInvalidValue = errors.New("invalid setting value")
	// ErrWrongLevel: the setting may not be set at the given level.
	ErrWrongLevel = errors.New("setting not allowed at this level")
	// ErrBadLayer: layers passed to the cascade are not single, known
	// levels in increasing order of specificity (a programming error).
	ErrBadLayer = errors.New("bad configuration layer")
)

// Error is the concrete error type of this package. Its message names the
// setting and the problem and is safe to return to API callers as the
// Message body: it never contains a secret value.
type Error struct {
	// ID is the setting id concerned (possibly unknown to the catalogue).
	ID string
	// Msg is the complete human-readable message.
	Msg string
	// Kind is the sentinel this error wraps.
	Kind error
}

// Error returns the message without a sentinel prefix, so that it reads
// well as an API error message.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the sentinel, so errors.Is(err, ErrInvalidValue) works.
func (e *Error) Unwrap() error { return e.Kind }

// maxEcho bounds how much of a rejected value is quoted back in messages,
// so a huge request body is not reflected into logs and responses.
const maxEcho = 64

// echo quotes a rejected value for an error message, hiding secrets.
func echo(s Setting, v string) string {
	if s.Secret {
		return "(redacted)"
	}
	if len(v) > maxEcho {
		cut := maxEcho
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		return strconv.Quote(v[:cut]) + "…"
	}
	return strconv.Quote(v)
}

func invalid(s Setting, format string, args ...any) error {
	return &Error{ID: s.ID, Kind: ErrInvalidValue,
		Msg: fmt.Sprintf("setting '%s' ", s.ID) + fmt.Sprintf(format, args...)}
}

// optional reports whether an explicit empty value is acceptable: always
// for free text and URLs (empty = off), and for any setting whose default is
// empty, where empty means "use the course package properties".
func (s Setting) optional() bool {
	switch s.Type {
	case TypeString, TypeURL:
		return true
	}
	return s.Default == ""
}

// Normalize validates value for setting s and returns its canonical form.
// Canonical forms make stored values comparable and make listings stable
// whatever spelling a client used:
//
//   - TypeBool: true/false/yes/no in any case → "true" or "false" (Engine
//     player settings use YES/NO on the wire; both are accepted).
//   - TypeInt: base-10 integer, re-formatted (so "+007" → "7"), checked
//     against Min/Max when Bounded.
//   - TypeEnum: case-insensitive match → the spelling in Allowed, because
//     real Engines mix casings and clients should not have to care.
//   - TypeURL: absolute http or https URL with a host, or a keyword from
//     Allowed (canonical spelling), or empty.
//   - TypeJSON: valid JSON, compacted. TypeRegex: compiles as RE2.
//   - TypeCredentials: "<username>:<password>", username non-empty.
//   - TypeString: any valid UTF-8, verbatim.
//
// Surrounding white space is trimmed for all types except TypeString and
// TypeCredentials, whose spaces may be significant. An empty value is
// accepted for TypeString and TypeURL, and for other types only when the
// default is empty (see [Setting.Default]). Invalid UTF-8 is always
// rejected because values are echoed in JSON.
//
// Errors wrap [ErrInvalidValue] and read like
// `setting 'ApiResultLimit' expects an integer, got "abc"`.
func Normalize(s Setting, value string) (string, error) {
	if !utf8.ValidString(value) {
		return "", invalid(s, "expects valid UTF-8 text")
	}
	v := value
	if s.Type != TypeString && s.Type != TypeCredentials {
		v = strings.TrimSpace(value)
	}
	if v == "" {
		if s.optional() {
			return "", nil
		}
		return "", invalid(s, "requires a value (%s)", describe(s))
	}
	switch s.Type {
	case TypeString:
		return v, nil
	case TypeBool:
		switch strings.ToLower(v) {
		case "true", "yes":
			return "true", nil
		case "false", "no":
			return "false", nil
		}
		return "", invalid(s, "expects a boolean (true, false, YES or NO), got %s", echo(s, v))
	case TypeInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", invalid(s, "expects an integer, got %s", echo(s, v))
		}
		if s.Bounded && (n < s.Min || n > s.Max) {
			return "", invalid(s, "must be %s, got %s", bounds(s), echo(s, v))
		}
		return strconv.FormatInt(n, 10), nil
	case TypeEnum:
		if a, ok := matchFold(s.Allowed, v); ok {
			return a, nil
		}
		return "", invalid(s, "expects one of %s, got %s", strings.Join(s.Allowed, ", "), echo(s, v))
	case TypeURL:
		if a, ok := matchFold(s.Allowed, v); ok {
			return a, nil
		}
		u, err := url.Parse(v)
		if err != nil || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) || u.Host == "" {
			return "", invalid(s, "expects %s, got %s", describe(s), echo(s, v))
		}
		return v, nil
	case TypeJSON:
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(v)); err != nil {
			return "", invalid(s, "expects a JSON document, got %s", echo(s, v))
		}
		return buf.String(), nil
	case TypeRegex:
		if _, err := regexp.Compile(v); err != nil {
			return "", invalid(s, "expects a regular expression, got %s", echo(s, v))
		}
		return v, nil
	case TypeCredentials:
		user, _, ok := strings.Cut(v, ":")
		if !ok || strings.TrimSpace(user) == "" {
			return "", invalid(s, "expects <username>:<password>, got %s", echo(s, v))
		}
		return v, nil
	}
	return "", invalid(s, "has unsupported type %s", s.Type)
}

// describe says in words what a setting accepts, for error messages.
func describe(s Setting) string {
	switch s.Type {
	case TypeBool:
		return "a boolean (true, false, YES or NO)"
	case TypeInt:
		if s.Bounded {
			return "an integer " + bounds(s)
		}
		return "an integer"
	case TypeEnum:
		return "one of " + strings.Join(s.Allowed, ", ")
	case TypeURL:
		if len(s.Allowed) > 0 {
			return "an absolute http(s) URL or one of " + strings.Join(s.Allowed, ", ")
		}
		return "an absolute http(s) URL"
	case TypeJSON:
		return "a JSON document"
	case TypeRegex:
		return "a regular expression"
	case TypeCredentials:
		return "<username>:<password>"
	}
	return "text"
}

// bounds renders the integer range of a bounded setting, leaving out a side
// that is effectively unbounded.
func bounds(s Setting) string {
	switch {
	case s.Min == math.MinInt64:
		return fmt.Sprintf("at most %d", s.Max)
	case s.Max == math.MaxInt64:
		return fmt.Sprintf("at least %d", s.Min)
	}
	return fmt.Sprintf("between %d and %d", s.Min, s.Max)
}

func matchFold(allowed []string, v string) (string, bool) {
	for _, a := range allowed {
		if strings.EqualFold(a, v) {
			return a, true
		}
	}
	return "", false
}
