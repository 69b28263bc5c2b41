package eval

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/mappings/analysis"
)

// Collection is a public test collection: documents, queries and relevance judgements, as
// the classic SMART-format collections (Cranfield, CISI, ...) ship them. None is committed
// (docs/search.md, "Hybrid search", says where they come from); TestCollections reads them
// from $LECTERN_EVAL_COLLECTIONS when set.
type Collection struct {
	// Name is the collection's name, such as "cranfield".
	Name string
	// Docs are the documents, in file order.
	Docs []Doc
	// Queries are the queries with at least one relevant document, in file order.
	Queries []CollectionQuery
}

// Doc is one document of a collection.
type Doc struct {
	// ID is the document's id in the judgements.
	ID string
	// Text is its title and body.
	Text string
}

// CollectionQuery is one query of a collection with its judgements.
type CollectionQuery struct {
	// ID is the query's id in the judgements.
	ID string
	// Text is the query as a learner would type it.
	Text string
	// Rel holds the gain of every relevant document.
	Rel Judgements
}

// smartRecord is one ".I" record of a SMART-format file: its id and its fields by letter.
type smartRecord struct {
	id     string
	fields map[byte]string
}

// readSMART parses a SMART-format file: records start with ".I <id>", fields with ".T",
// ".A", ".B", ".W", ".X" (or any other letter) alone on a line (or followed by text).
func readSMART(r io.Reader) ([]smartRecord, error) {
	var out []smartRecord
	var field byte
	var b strings.Builder
	flush := func() {
		if len(out) > 0 && field != 0 {
			out[len(out)-1].fields[field] = strings.TrimSpace(b.String())
		}
		b.Reset()
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if len(line) >= 2 && line[0] == '.' && line[1] >= 'A' && line[1] <= 'Z' && (len(line) == 2 || line[2] == ' ') {
			flush()
			field = line[1]
			if field == 'I' {
				out = append(out, smartRecord{id: strings.TrimSpace(line[2:]), fields: map[byte]string{}})
				field = 0
				continue
			}
			b.WriteString(line[2:])
			b.WriteByte('\n')
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	flush()
	return out, sc.Err()
}

// LoadCollection reads a collection from dir, which holds the files of one of Cranfield
// (cran.all.1400, cran.qry, cranqrel), CISI (CISI.ALL, CISI.QRY, CISI.REL), MEDLINE
// (MED.ALL, MED.QRY, MED.REL), CACM (cacm.all, query.text, qrels.text) or ADI (ADI.ALL,
// ADI.QRY, ADI.REL).
//
// Cranfield's judgements are graded 1 (a complete answer) to 4 (minimum interest), and
// -1 or 5 (no interest); the gain is 5 − grade, 0 for no interest. Its judgements number the
// queries 1 to 225 in file order (the .I numbers of cran.qry have gaps); documents past
// 1400, which some copies append, are left out. The others' judgements are binary (gain 1);
// query ids compare without leading zeros (CACM's judgements write "01").
func LoadCollection(dir string) (*Collection, error) {
	type layout struct{ name, docs, queries, rels string }
	for _, l := range []layout{
		{"cranfield", "cran.all.1400", "cran.qry", "cranqrel"},
		{"cisi", "CISI.ALL", "CISI.QRY", "CISI.REL"},
		{"medline", "MED.ALL", "MED.QRY", "MED.REL"},
		{"cacm", "cacm.all", "query.text", "qrels.text"},
		{"adi", "ADI.ALL", "ADI.QRY", "ADI.REL"},
	} {
		if _, err := os.Stat(filepath.Join(dir, l.docs)); err != nil {
			continue
		}
		read := func(name string) ([]smartRecord, error) {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return readSMART(f)
		}
		docs, err := read(l.docs)
		if err != nil {
			return nil, fmt.Errorf("eval: %s: %w", l.docs, err)
		}
		qs, err := read(l.queries)
		if err != nil {
			return nil, fmt.Errorf("eval: %s: %w", l.queries, err)
		}
		rels, err := os.ReadFile(filepath.Join(dir, l.rels))
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		c := &Collection{Name: l.name}
		for _, d := range docs {
			if n, err := strconv.Atoi(d.id); l.name == "cranfield" && (err != nil || n > 1400) {
				continue // some copies append documents of their own
			}
			c.Docs = append(c.Docs, Doc{ID: d.id, Text: strings.TrimSpace(d.fields['T'] + "\n" + d.fields['W'])})
		}
		judged := map[string]Judgements{}
		for _, line := range strings.Split(string(rels), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			gain := 1.0
			if l.name == "cranfield" {
				g, err := strconv.Atoi(f[2])
				if err != nil {
					return nil, fmt.Errorf("eval: %s: %q: %w", l.rels, line, err)
				}
				gain = 0
				if g >= 1 && g <= 4 {
					gain = float64(5 - g)
				}
			}
			if q := strings.TrimLeft(f[0], "0"); gain > 0 {
				if judged[q] == nil {
					judged[q] = Judgements{}
				}
				judged[q][f[1]] = gain
			}
		}
		for i, q := range qs {
			id := q.id
			if l.name == "cranfield" {
				id = strconv.Itoa(i + 1)
			}
			id = strings.TrimLeft(id, "0")
			if rel := judged[id]; len(rel) > 0 {
				c.Queries = append(c.Queries, CollectionQuery{ID: id, Text: strings.Join(strings.Fields(q.fields['W']), " "), Rel: rel})
			}
		}
		return c, nil
	}
	return nil, fmt.Errorf("eval: %s holds no known collection", dir)
}

// BM25 ranks a collection's documents for a query by Okapi BM25 (k1 = 1.2, b = 0.75, the
// Lucene idf ln(1 + (N − df + 0.5)/(df + 0.5))) over the lexemes of Lectern's analysis chain
// (mappings/analysis.Lexemes): the plain baseline of docs/search.md. Build it once per
// collection.
type BM25 struct {
	ids    []string
	tf     []map[string]int
	length []float64
	avg    float64
	df     map[string]int
}

// NewBM25 indexes docs for BM25.
func NewBM25(docs []Doc) *BM25 {
	b := &BM25{df: map[string]int{}}
	var total float64
	for _, d := range docs {
		tf := map[string]int{}
		lex := analysis.Lexemes(d.Text)
		for _, l := range lex {
			tf[l]++
		}
		for l := range tf {
			b.df[l]++
		}
		b.ids = append(b.ids, d.ID)
		b.tf = append(b.tf, tf)
		b.length = append(b.length, float64(len(lex)))
		total += float64(len(lex))
	}
	if len(docs) > 0 {
		b.avg = total / float64(len(docs))
	}
	return b
}

// Rank returns the ids of the first k documents by BM25 score for query (ties by id).
func (b *BM25) Rank(query string, k int) []string {
	const k1, bb = 1.2, 0.75
	n := float64(len(b.ids))
	type scored struct {
		id string
		s  float64
	}
	var hits []scored
	lex := analysis.Lexemes(query)
	for i, tf := range b.tf {
		var s float64
		for _, l := range lex {
			f := float64(tf[l])
			if f == 0 {
				continue
			}
			df := float64(b.df[l])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-bb+bb*b.length[i]/b.avg))
		}
		if s > 0 {
			hits = append(hits, scored{b.ids[i], s})
		}
	}
	slices.SortFunc(hits, func(x, y scored) int { return cmp.Or(cmp.Compare(y.s, x.s), strings.Compare(x.id, y.id)) })
	out := make([]string, 0, min(k, len(hits)))
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.id)
	}
	return out
}
