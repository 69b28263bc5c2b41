package bleve

import (
	"context"
	"fmt"
	"slices"
	"strings"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/mappings/analysis"
)

func (ix *Index) keyword(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	lexemes := analysis.Lexemes(q.Term)
	if len(lexemes) == 0 {
		return []indexer.Hit{}, nil
	}
	cands, err := ix.keywordCandidates(ctx, q, lexemes)
	if err != nil {
		return nil, err
	}
	// The candidates: every chunk the query may find holding a lexeme, with its term
	// frequencies (see keywordCandidates).
	counts := make([][]int, len(cands))
	for k, c := range cands {
		counts[k] = c.tf
	}
	scores := indexer.KeywordScores(counts)
	// Every lexeme must occur in the version, in any of its chunks (unless q.AnyTerm).
	found := map[*version][]bool{}
	for _, c := range cands {
		f := found[c.v]
		if f == nil {
			f = make([]bool, len(lexemes))
			found[c.v] = f
		}
		for j, n := range c.tf {
			if n > 0 {
				f[j] = true
			}
		}
	}
	complete := func(v *version) bool { return q.AnyTerm || !slices.Contains(found[v], false) }
	matched := map[*version][]int{} // chunk indexes with a lexeme, per matching version
	best := map[*version]int{}      // tenant-wide: index in hits of the version's best chunk
	var hits []indexer.Hit
	for k, c := range cands {
		if !complete(c.v) {
			continue
		}
		matched[c.v] = append(matched[c.v], c.i)
		h := indexer.Hit{ContentID: c.v.contentID, Version: c.v.version, Location: c.v.locations[c.i], Score: scores[k]}
		if q.ContentID != "" {
			hits = append(hits, h)
			continue
		}
		// Tenant-wide only each version's best chunk can survive Collapse: keep just that
		// one here, so that Collapse sorts versions, not chunks.
		if b, ok := best[c.v]; !ok {
			best[c.v] = len(hits)
			hits = append(hits, h)
		} else if indexer.Compare(h, hits[b]) < 0 {
			hits[b] = h
		}
	}
	page := indexer.Page(indexer.Collapse(hits, q), q)
	if q.ReturnMatch {
		for i := range page {
			v := ix.versions[recordKey(q.Tenant, page[i].ContentID, page[i].Version)]
			idx := slices.Sorted(slices.Values(matched[v]))
			if q.ContentID != "" {
				idx = []int{slices.Index(v.locations, page[i].Location)}
			}
			r, err := ix.load(v.key)
			if err != nil || r == nil {
				return nil, fmt.Errorf("indexer/bleve: load match text: %v", err)
			}
			var texts []string
			for _, c := range idx {
				texts = append(texts, r.Chunks[c].Text)
			}
			terms := analysis.MatchedTerms(strings.Join(texts, "\n"), lexemes)
			if terms == nil {
				terms = []string{}
			}
			page[i].Match = terms
		}
	}
	return page, nil
}

// candidate is a chunk a keyword query may find that holds at least one of its lexemes.
type candidate struct {
	v  *version
	i  int   // chunk index
	tf []int // term frequency of each lexeme
}

// keywordCandidates returns the candidates of a keyword query: every chunk document the
// query's filters admit holding at least one of lexemes, with the term frequencies of the
// lexemes. It reads the postings of each lexeme in field "text" directly (the frequencies
// they carry are the term frequencies, as "text" is analysed by the chain of
// indexer.TermCounts, see analyzers.go), without Bleve's search machinery: no scoring, no
// term locations, no filter postings. The filters (tenant, content id, version, tags,
// active) are applied from the version table, which holds exactly the values the chunk
// documents were indexed with (both change under ix.mu); only chunk documents have a "text"
// field. The caller holds ix.mu.
func (ix *Index) keywordCandidates(ctx context.Context, q indexer.Query, lexemes []string) ([]candidate, error) {
	r, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	at := map[uint64]int{} // internal document number -> index in out
	var out []candidate
	for j, l := range lexemes {
		if slices.Index(lexemes, l) < j {
			continue // a repeated lexeme: same frequencies as its first occurrence
		}
		tfr, err := r.TermFieldReader(ctx, []byte(l), "text", true, false, false)
		if err != nil {
			return nil, fmt.Errorf("indexer/bleve: postings: %w", err)
		}
		var d *index.TermFieldDoc
		for n := 0; ; n++ {
			if n%1024 == 1023 && ctx.Err() != nil {
				tfr.Close()
				return nil, ctx.Err()
			}
			d, err = tfr.Next(d)
			if err != nil {
				tfr.Close()
				return nil, fmt.Errorf("indexer/bleve: postings: %w", err)
			}
			if d == nil {
				break
			}
			num := d.ID.Value()
			k, ok := at[num]
			if !ok {
				id, err := r.ExternalID(d.ID)
				if err != nil {
					tfr.Close()
					return nil, fmt.Errorf("indexer/bleve: document id: %w", err)
				}
				k = -1
				if id[0] == 'c' {
					if v, i, ok := ix.chunkOf(id); ok && v.admits(&q) {
						k = len(out)
						out = append(out, candidate{v: v, i: i, tf: make([]int, len(lexemes))})
					}
				}
				at[num] = k
			}
			if k >= 0 {
				for jj := j; jj < len(lexemes); jj++ {
					if lexemes[jj] == l {
						out[k].tf[jj] = int(d.Freq)
					}
				}
			}
		}
		if err := tfr.Close(); err != nil {
			return nil, fmt.Errorf("indexer/bleve: postings: %w", err)
		}
	}
	return out, nil
}
