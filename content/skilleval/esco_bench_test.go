package skilleval

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/taxonomy"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/eval"
	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/storage/record/sqlite"
	"github.com/lectern-lms/lectern/workers/taxonomyjob"
)

// BenchmarkSkillsESCO reports precision@5 and recall@5 of SKILLS on the ESCO set (ESCOSet:
// 27 ESCO occupations, their preferred label and ESCO description as the job description)
// against the full ESCO skills list as the taxonomy (13,939 skills, their preferred labels
// as ParseESCO recovers them), imported the way the product imports a taxonomy: the names
// go through taxonomy.Parse (the upload's CSV parser) and are embedded once, in batches, by
// taxonomyjob.Embed. The vectors are kept between runs in the product's persistent vector
// cache (embed.RecordCache) over a SQLite file under the cache directory
// (bench/skilleval-esco-vectors.db), so only the first run pays the ~14,000 embeddings.
//
// A returned skill name counts when one of the ESCO skills of that label is expected (names
// are scored by URI, so a label the parser gets wrong still scores as its concept). Free
// skills are scored leniently against the expected labels (Overlap: a shared stemmed word);
// the model's and the keyword baseline's taxonomy answers are also scored that way
// ("-lenient"), to put all three on one scale. The keyword baseline ranks the same names. The ESCO data and the model are required: without them the
// benchmark skips on a developer's machine and fails under CI.
func BenchmarkSkillsESCO(b *testing.B) {
	data := escoData(b)
	set, err := ESCOSet()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var csvb bytes.Buffer
	w := csv.NewWriter(&csvb)
	_ = w.Write([]string{"preferredLabel"})
	uris := map[string][]string{} // folded label -> URIs
	for _, s := range data.Skills {
		_ = w.Write([]string{s.Label})
		k := strings.ToLower(s.Label)
		uris[k] = append(uris[k], s.URI)
	}
	w.Flush()
	names, err := taxonomy.Parse(csvb.Bytes(), "preferredLabel")
	if err != nil {
		b.Fatal(err)
	}
	occ := map[string]ESCOConcept{}
	for _, o := range data.Occupations {
		occ[o.URI] = o
	}

	e := eval.Embedder(b)
	dir := filepath.Join(testenv.CacheDir(), "bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	records, err := sqlite.Open(filepath.Join(dir, "skilleval-esco-vectors.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { records.Close() })
	cached := embed.NewCached(e, embed.NewRecordCache(records, embed.RecordCacheOptions{FrontEntries: 1}).Tenant(ctx, "skilleval"))
	start := time.Now()
	vecs, err := taxonomyjob.Embed(ctx, cached, names)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("taxonomy: %d ESCO skills, %d distinct names, embedded or loaded from the cache in %s", len(data.Skills), len(names), time.Since(start).Round(time.Millisecond))
	withVecs := &taxonomy.Taxonomy{ID: "esco", Skills: names, Vectors: vecs, Model: e.Model().Name}
	words := &taxonomy.Taxonomy{ID: "esco", Skills: names}

	model, noModel := &content.Builtin{Embedder: e}, &content.Builtin{}
	// With 13,939 skills at least five pass the default threshold (0.35) for every description
	// of the set, and 0.30 or 0.40 return the same lists; higher thresholds show whether the
	// best-scoring skills are more often right.
	low, high := &content.Builtin{Embedder: e, SkillThreshold: 0.50}, &content.Builtin{Embedder: e, SkillThreshold: 0.60}
	skills := func(g *content.Builtin, tx *taxonomy.Taxonomy, text string) []string {
		return generatedSkills(ctx, b, g, tx, text)
	}
	wantURIs, wantLabels := make([][]string, len(set)), make([][]string, len(set))
	texts := make([]string, len(set))
	for i, it := range set {
		for _, s := range it.Skills {
			wantURIs[i] = append(wantURIs[i], s.URI)
			wantLabels[i] = append(wantLabels[i], s.Label)
		}
		o, ok := occ[it.Occupation.URI]
		if !ok {
			b.Fatalf("occupation %s is not in the ESCO export", it.Occupation.URI)
		}
		texts[i] = it.Occupation.Label + ". " + o.Definition
	}
	byURI := func(got, want string) bool {
		for _, u := range uris[strings.ToLower(got)] {
			if u == want {
				return true
			}
		}
		return false
	}
	for b.Loop() {
		var tax, tax50, tax60, word, free, base [][]string
		for _, t := range texts {
			tax = append(tax, skills(model, withVecs, t))
			tax50 = append(tax50, skills(low, withVecs, t))
			tax60 = append(tax60, skills(high, withVecs, t))
			word = append(word, skills(noModel, words, t))
			free = append(free, skills(model, nil, t))
			base = append(base, KeywordBaseline(t, names, 5))
		}
		for _, r := range []struct {
			name string
			s    Scores
		}{
			{"taxonomy", ScoreAgainst(tax, wantURIs, 5, byURI)},
			{"taxonomy-0.50", ScoreAgainst(tax50, wantURIs, 5, byURI)},
			{"taxonomy-0.60", ScoreAgainst(tax60, wantURIs, 5, byURI)},
			{"words", ScoreAgainst(word, wantURIs, 5, byURI)},
			{"free", ScoreAgainst(free, wantLabels, 5, Overlap)},
			{"keyword", ScoreAgainst(base, wantURIs, 5, byURI)},
			// The free skills' lenient scoring applied to the taxonomy answers too, so the
			// three can be compared on one scale.
			{"taxonomy-lenient", ScoreAgainst(tax, wantLabels, 5, Overlap)},
			{"keyword-lenient", ScoreAgainst(base, wantLabels, 5, Overlap)},
		} {
			b.ReportMetric(r.s.Precision, "P@5-"+r.name)
			b.ReportMetric(r.s.Recall, "R@5-"+r.name)
		}
		if testing.Verbose() {
			for i, it := range set {
				b.Logf("%s want %q\n  taxonomy %q\n  keyword  %q\n  free     %q", it.Occupation.Label, wantLabels[i], tax[i], base[i], free[i])
			}
		}
	}
}
