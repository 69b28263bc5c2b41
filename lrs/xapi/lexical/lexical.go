// Package lexical holds the lexical forms of xAPI's value types: UUIDs, IRIs, RFC 5646
// language tags, ISO 8601 timestamps and durations. It knows nothing of statements; lrs/xapi
// validates with it, and the LRS handlers check query parameters with it.
package lexical

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	reUUID       = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	reIRIScheme  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]*:`)
	reTimestamp  = regexp.MustCompile(`^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?$`)
	reDurationPW = regexp.MustCompile(`^P[0-9]+W$`)
	reDuration   = regexp.MustCompile(`^P(?:([0-9]+(?:\.[0-9]+)?)Y)?(?:([0-9]+(?:\.[0-9]+)?)M)?(?:([0-9]+(?:\.[0-9]+)?)D)?(?:T(?:([0-9]+(?:\.[0-9]+)?)H)?(?:([0-9]+(?:\.[0-9]+)?)M)?(?:([0-9]+(?:\.[0-9]+)?)S)?)?$`)
)

// ValidUUID reports whether s is a UUID in the canonical 8-4-4-4-12 hex form (any case).
func ValidUUID(s string) bool { return reUUID.MatchString(s) }

// ValidIRI reports whether s is an absolute IRI: a scheme, a colon, and a non-empty rest
// without whitespace, control characters or the characters RFC 3987 excludes. xAPI only
// needs "has a scheme and is plausibly an IRI"; full RFC 3987 parsing would reject real
// world identifiers the suite expects to pass.
func ValidIRI(s string) bool {
	loc := reIRIScheme.FindStringIndex(s)
	if loc == nil || len(s) == loc[1] {
		return false
	}
	for _, r := range s {
		if r <= 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return false
		}
		switch r {
		case '<', '>', '"', '{', '}', '|', '\\', '^', '`':
			return false
		}
	}
	return true
}

// ParseTimestamp parses an xAPI Timestamp: ISO 8601 combined date and time (the RFC 3339
// profile, plus the ±hhmm and ±hh offsets and a missing offset, taken as UTC). The RFC 3339
// "unknown local offset" -00:00 (and -0000, -00) is rejected, as the conformance suite expects.
func ParseTimestamp(s string) (time.Time, error) {
	m := reTimestamp.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, fmt.Errorf("not an ISO 8601 timestamp: %q", s)
	}
	num := func(x string) int { n, _ := strconv.Atoi(x); return n }
	year, mon, day := num(m[1]), num(m[2]), num(m[3])
	hh, mm, ss := num(m[4]), num(m[5]), num(m[6])
	if mon < 1 || mon > 12 || day < 1 || day > daysIn(year, mon) || hh > 23 || mm > 59 || ss > 60 {
		return time.Time{}, fmt.Errorf("timestamp out of range: %q", s)
	}
	if ss == 60 { // leap second: time.Date normalises it to the next minute
		ss = 59
	}
	nsec := 0
	if frac := m[7]; frac != "" {
		digits := frac[1:]
		if len(digits) > 9 {
			digits = digits[:9]
		}
		nsec = num(digits)
		for i := len(digits); i < 9; i++ {
			nsec *= 10
		}
	}
	loc := time.UTC
	switch off := m[8]; {
	case off == "" || off == "Z" || off == "z":
	default:
		sign := 1
		if off[0] == '-' {
			sign = -1
		}
		d := strings.ReplaceAll(off[1:], ":", "")
		oh, om := num(d[:2]), 0
		if len(d) == 4 {
			om = num(d[2:])
		}
		if oh > 23 || om > 59 {
			return time.Time{}, fmt.Errorf("timestamp offset out of range: %q", s)
		}
		if sign < 0 && oh == 0 && om == 0 {
			return time.Time{}, fmt.Errorf("timestamp with -00:00 (unknown) offset: %q", s)
		}
		loc = time.FixedZone("", sign*(oh*3600+om*60))
	}
	return time.Date(year, time.Month(mon), day, hh, mm, ss, nsec, loc), nil
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// ValidDuration reports whether s is an ISO 8601 duration in the basic PnYnMnDTnHnMnS form
// (at least one component; "T" only with a time component) or PnW alone.
func ValidDuration(s string) bool {
	if reDurationPW.MatchString(s) {
		return true
	}
	m := reDuration.FindStringSubmatch(s)
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return false
	}
	// Only the smallest given component may carry a fraction (ISO 8601 4.4.3.2).
	last := -1
	for i := 1; i < len(m); i++ {
		if m[i] != "" {
			last = i
		}
	}
	for i := 1; i < last; i++ {
		if strings.Contains(m[i], ".") {
			return false
		}
	}
	return last > 0
}

// TruncateDuration cuts the seconds of a duration to 0.01 s: xAPI says precision beyond that
// must not count when statements are compared.
func TruncateDuration(s string) string {
	if !strings.HasSuffix(s, "S") {
		return s
	}
	i := strings.LastIndexAny(s, "THMD")
	secs := s[i+1 : len(s)-1]
	whole, frac, ok := strings.Cut(secs, ".")
	if !ok {
		return s
	}
	if len(frac) > 2 {
		frac = frac[:2]
	}
	frac = strings.TrimRight(frac, "0")
	if frac == "" {
		return s[:i+1] + whole + "S"
	}
	return s[:i+1] + whole + "." + frac + "S"
}

// FormatTimestamp renders t as xAPI timestamps are stored: UTC, RFC 3339, milliseconds.
// The suite checks stored values carry millisecond precision.
func FormatTimestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
