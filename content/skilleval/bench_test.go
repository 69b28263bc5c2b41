package skilleval

import (
	"context"
	"testing"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/content/taxonomy"
	"github.com/lectern-lms/lectern/indexer/eval"
)

// BenchmarkSkills reports precision@5 and recall@5 of SKILLS on the evaluation set: the
// built-in generator (content.Builtin, default threshold) against the set's taxonomy with the
// search model, against the same taxonomy without a model (its word match), freely (free
// phrases scored by Overlap), and the keyword baseline; and, to show how sensitive the
// taxonomy figures are to it, the model with a threshold of 0.30 and 0.40 beside the default
// (0.35, chosen on one test document, not on this set). The figures do not depend on
// -benchtime; run it with -benchtime=1x (scripts/bench-report.sh does).
func BenchmarkSkills(b *testing.B) {
	e := eval.Embedder(b)
	ctx := context.Background()
	vecs, err := e.Embed(ctx, Taxonomy)
	if err != nil {
		b.Fatal(err)
	}
	withVecs := &taxonomy.Taxonomy{ID: "eval", Skills: Taxonomy, Vectors: vecs}
	words := &taxonomy.Taxonomy{ID: "eval", Skills: Taxonomy}
	model, noModel := &content.Builtin{Embedder: e}, &content.Builtin{}
	low, high := &content.Builtin{Embedder: e, SkillThreshold: 0.30}, &content.Builtin{Embedder: e, SkillThreshold: 0.40}
	skills := func(g *content.Builtin, tx *taxonomy.Taxonomy, text string) []string {
		return generatedSkills(ctx, b, g, tx, text)
	}
	for b.Loop() {
		var tax, tax30, tax40, word, free, freeCtx, base [][]string
		for _, it := range Set {
			tax = append(tax, skills(model, withVecs, it.Text))
			tax30 = append(tax30, skills(low, withVecs, it.Text))
			tax40 = append(tax40, skills(high, withVecs, it.Text))
			word = append(word, skills(noModel, words, it.Text))
			free = append(free, skills(model, nil, it.Text))
			freeCtx = append(freeCtx, inContextSkills(ctx, b, e, model, it.Text))
			base = append(base, KeywordBaseline(it.Text, Taxonomy, 5))
		}
		for _, r := range []struct {
			name string
			s    Scores
		}{
			{"taxonomy", Score(tax, 5, Exact)},
			{"taxonomy-0.30", Score(tax30, 5, Exact)},
			{"taxonomy-0.40", Score(tax40, 5, Exact)},
			{"words", Score(word, 5, Exact)},
			{"free", Score(free, 5, Overlap)},
			{"free-incontext", Score(freeCtx, 5, Overlap)},
			{"keyword", Score(base, 5, Exact)},
		} {
			b.ReportMetric(r.s.Precision, "P@5-"+r.name)
			b.ReportMetric(r.s.Recall, "R@5-"+r.name)
		}
		if testing.Verbose() {
			for i, it := range Set {
				b.Logf("item %d want %q\n  taxonomy %q\n  keyword  %q\n  free     %q\n  in context %q", i, it.Skills, tax[i], base[i], free[i], freeCtx[i])
			}
		}
	}
}

// inContextSkills is generatedSkills with the chunk and phrase vectors the index task hands
// the generator when its model reads phrases in context (workers/contentjob): each chunk runs
// once, and its run gives the candidates it holds their vectors.
func inContextSkills(ctx context.Context, b *testing.B, e content.ContextEmbedder, g *content.Builtin, text string) []string {
	b.Helper()
	sections := []extract.Section{{Location: "1", Text: text}}
	var texts []string
	for _, ch := range content.Chunks(sections) {
		texts = append(texts, ch.Text)
	}
	chunkVecs, phrases, err := content.InContext(ctx, e, texts, nil, content.Candidates("", sections))
	if err != nil {
		b.Fatal(err)
	}
	fs, err := g.Generate(ctx, content.GenerateInput{Sections: sections, Types: []string{content.FieldSkills},
		ChunkVectors: chunkVecs, PhraseVectors: phrases})
	if err != nil {
		b.Fatal(err)
	}
	return skillValues(fs)
}

// generatedSkills is what g generates as SKILLS for one text, exactly as the index task asks
// (one section, SKILLS only).
func generatedSkills(ctx context.Context, b *testing.B, g *content.Builtin, tx *taxonomy.Taxonomy, text string) []string {
	b.Helper()
	fs, err := g.Generate(ctx, content.GenerateInput{
		Sections: []extract.Section{{Location: "1", Text: text}},
		Types:    []string{content.FieldSkills},
		Taxonomy: tx,
	})
	if err != nil {
		b.Fatal(err)
	}
	return skillValues(fs)
}

// skillValues are the SKILLS among generated fields, in order.
func skillValues(fs []content.GeneratedField) []string {
	var out []string
	for _, f := range fs {
		if f.Type == content.FieldSkills {
			out = append(out, f.Value)
		}
	}
	return out
}
