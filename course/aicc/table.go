package aicc

import (
	"encoding/csv"
	"errors"
	"io"
	"strings"

	"github.com/lectern-lms/lectern/course"
)

// table is one AICC comma-separated file: a header row naming the columns, then data rows.
// CMI001 defines columns by name, not position, and real packages reorder and omit them, so
// every lookup goes through the header.
type table struct {
	file    string
	cols    map[string]int // normalized header name -> first column index
	members []int          // indexes of every "member" column, in order (.cst, .ort)
	rows    []tableRow
}

type tableRow struct {
	line   int
	fields []string
}

// normHeader makes "System_ID", " system id " and "SYSTEM-ID" the same column.
func normHeader(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = strings.NewReplacer(" ", "_", "-", "_").Replace(h)
	return h
}

// parseTable reads text as CSV. known lists the columns this parser understands (others are
// reported and ignored); required must all be present. Strict RFC 4180 quoting is tried first;
// if that fails the file is re-read with lenient quoting and a warning, because hand-edited
// AICC files often hold bare quotes (12" ruler) that every other LMS accepts.
func parseTable(file, text string, known, required []string, warn func(string, ...any)) (*table, error) {
	recs, lines, err := readCSV(text, false)
	if err != nil {
		var pe *csv.ParseError
		line := 0
		if errors.As(err, &pe) {
			line = pe.Line
			err = pe.Err
		}
		recs, lines, err = readCSV(text, true)
		if err != nil {
			return nil, course.Invalid("%s: malformed CSV: %v", file, err)
		}
		warn("%s: line %d: malformed CSV quoting; read leniently, check the values", file, line)
	}

	t := &table{file: file, cols: map[string]int{}}
	knownSet := map[string]bool{}
	for _, k := range known {
		knownSet[k] = true
	}
	if len(recs) == 0 {
		return nil, course.Invalid("%s: file is empty (no header row)", file)
	}
	for i, h := range recs[0] {
		n := normHeader(h)
		switch {
		case n == "":
			// A trailing comma on the header row; nothing to map.
		case n == "member":
			t.members = append(t.members, i)
		case !knownSet[n]:
			warn("%s: unknown column %q ignored", file, strings.TrimSpace(h))
		default:
			if _, dup := t.cols[n]; dup {
				warn("%s: column %q appears twice; the first is used", file, strings.TrimSpace(h))
				continue
			}
			t.cols[n] = i
		}
	}
	for _, req := range required {
		if req == "member" {
			if len(t.members) == 0 {
				return nil, course.Invalid("%s: header has no Member column", file)
			}
			continue
		}
		if _, ok := t.cols[req]; !ok {
			return nil, course.Invalid("%s: header is missing required column %q", file, req)
		}
	}
	for i, rec := range recs[1:] {
		t.rows = append(t.rows, tableRow{line: lines[i+1], fields: rec})
	}
	return t, nil
}

// readCSV returns the non-blank records of text and the line each starts on.
func readCSV(text string, lazy bool) ([][]string, []int, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1 // rows may be short, and trailing commas make them long
	r.LazyQuotes = lazy
	r.TrimLeadingSpace = true // `"A1", "B1"` is written by some tools
	var recs [][]string
	var lines []int
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return recs, lines, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if blankRecord(rec) {
			continue
		}
		line, _ := r.FieldPos(0)
		recs = append(recs, rec)
		lines = append(lines, line)
	}
}

func blankRecord(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// get returns the trimmed value of a named column, "" when the column or the cell is absent.
func (t *table) get(r tableRow, col string) string {
	i, ok := t.cols[col]
	if !ok || i >= len(r.fields) {
		return ""
	}
	return strings.TrimSpace(r.fields[i])
}

// memberValues returns the non-empty member cells of a row; AICC pads short rows with empty
// members up to Max_Fields_CST.
func (t *table) memberValues(r tableRow) []string {
	var out []string
	for _, i := range t.members {
		if i < len(r.fields) {
			if v := strings.TrimSpace(r.fields[i]); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}
