// Package taxonomy holds skills taxonomies (spec 001, "Skills taxonomy import"): a named
// pool of skill names a tenant uploads as CSV, each embedded once with the search embedding
// model, against which skills are generated when the tenant's GENERATION__SKILL_TAXONOMY
// setting names it. This file reads the CSV; store.go keeps taxonomies.
package taxonomy

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentinel errors; test them with errors.Is. Their messages name the problem for a 400.
var (
	// ErrInvalidCSV means the file is not readable as CSV (not UTF-8, a broken quote, binary).
	ErrInvalidCSV = errors.New("invalid taxonomy CSV")
	// ErrNoColumn means the header row has no column of the requested name.
	ErrNoColumn = errors.New("taxonomy CSV column not found")
	// ErrNoSkills means the column holds no skill name.
	ErrNoSkills = errors.New("taxonomy CSV holds no skills")
)

// Limits of one taxonomy.
const (
	// MaxSkills is the most distinct skill names one taxonomy may hold.
	MaxSkills = 100000
	// MaxSkillChars is the longest skill name, in characters.
	MaxSkillChars = 255
)

var bom = []byte("\xef\xbb\xbf")

// Parse reads the skill names of column from a CSV file: the first row is the header, the
// delimiter is sniffed (comma, semicolon or tab, whichever the header row holds most of,
// outside quotes), a UTF-8 byte order mark is dropped, quoted fields may hold newlines,
// and rows may be ragged. The column is matched exactly after trimming spaces, else ignoring
// case when that is unambiguous. Names are trimmed; empty ones are skipped and duplicates
// (ignoring case) keep their first spelling, in file order.
func Parse(data []byte, column string) ([]string, error) {
	data = bytes.TrimPrefix(data, bom)
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: the file is not UTF-8 text", ErrInvalidCSV)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, fmt.Errorf("%w: the file holds NUL bytes (binary, not CSV)", ErrInvalidCSV)
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = Sniff(data)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%w: the file is empty", ErrInvalidCSV)
	}
	if err != nil {
		return nil, csvError(err)
	}
	col, err := findColumn(header, column)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		if col >= len(rec) {
			continue
		}
		name := strings.Join(strings.Fields(rec[col]), " ")
		if name == "" {
			continue
		}
		if n := utf8.RuneCountInString(name); n > MaxSkillChars {
			line, _ := r.FieldPos(col)
			return nil, fmt.Errorf("%w: line %d: the skill name is %d characters long, more than %d", ErrInvalidCSV, line, n, MaxSkillChars)
		}
		if strings.IndexFunc(name, unicode.IsControl) >= 0 {
			line, _ := r.FieldPos(col)
			return nil, fmt.Errorf("%w: line %d: the skill name holds a control character", ErrInvalidCSV, line)
		}
		key := strings.ToLower(name)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, name)
		if len(out) > MaxSkills {
			return nil, fmt.Errorf("%w: more than %d distinct skills", ErrInvalidCSV, MaxSkills)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: column %q has no values", ErrNoSkills, column)
	}
	return out, nil
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w: line %d: %v", ErrInvalidCSV, pe.StartLine, pe.Err)
	}
	return fmt.Errorf("%w: %v", ErrInvalidCSV, err)
}

func findColumn(header []string, column string) (int, error) {
	want := strings.TrimSpace(column)
	match := -1
	for i, h := range header {
		if strings.TrimSpace(h) == want {
			return i, nil
		}
		if strings.EqualFold(strings.TrimSpace(h), want) {
			if match >= 0 {
				return 0, fmt.Errorf("%w: %q matches columns %q and %q ignoring case; give the exact label", ErrNoColumn, column, header[match], h)
			}
			match = i
		}
	}
	if match >= 0 {
		return match, nil
	}
	names := make([]string, len(header))
	for i, h := range header {
		names[i] = fmt.Sprintf("%q", strings.TrimSpace(h))
	}
	return 0, fmt.Errorf("%w: the header row has no column %q (columns: %s)", ErrNoColumn, column, strings.Join(names, ", "))
}

// Sniff returns the delimiter of a CSV file: of comma, semicolon and tab, the one its first
// row holds most of outside double quotes; comma when it holds none.
func Sniff(data []byte) rune {
	counts := map[byte]int{}
	quoted := false
	for _, b := range data {
		if b == '"' {
			quoted = !quoted
			continue
		}
		if quoted {
			continue
		}
		if b == '\n' || b == '\r' {
			break
		}
		if b == ',' || b == ';' || b == '\t' {
			counts[b]++
		}
	}
	best, n := byte(','), 0
	for _, b := range []byte{',', ';', '\t'} {
		if counts[b] > n {
			best, n = b, counts[b]
		}
	}
	return rune(best)
}
