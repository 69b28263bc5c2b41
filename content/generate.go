package content

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/content/taxonomy"
	"github.com/lectern-lms/lectern/mappings/analysis"
)

// More generated field types: KEYWORDS and SKILLS are lists, one GeneratedField per value.
const (
	FieldKeywords = "KEYWORDS"
	FieldSkills   = "SKILLS"
)

// FieldTypes are the generated field types, in the order they are generated.
var FieldTypes = []string{FieldTitle, FieldSummary, FieldKeywords, FieldSkills}

// UnknownSkill is the single skill generated against a taxonomy none of whose skills is
// relevant (spec 001, "Skills configuration"); without a taxonomy it never occurs.
const UnknownSkill = "Unknown"

// Embedder embeds texts into unit-length vectors (indexer/embed.Embedder satisfies it).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// GenerateInput is what a Generator reads.
type GenerateInput struct {
	Title    string
	Sections []extract.Section
	// Types are the field types to generate; empty means FieldTypes.
	Types []string
	// ChunkVectors, when the caller has them, are the embeddings of Chunks(Sections) by the
	// generator's model (the index task's chunk vectors), so they are not embedded twice.
	ChunkVectors [][]float32
	// PhraseVectors, when the caller has them, are vectors of the document's Candidates by
	// the generator's model read in context (the sum over the chunks that hold a phrase of
	// its ContextEmbedder vectors), keyed by phrase; a candidate without one is embedded
	// alone. Measured on the skills set, in-context vectors pick as well as phrases embedded
	// alone (docs/search.md), and they cost the model nothing beyond the chunks' runs.
	PhraseVectors map[string][]float32
	// Taxonomy, when set, is the pool skills are chosen from; nil generates free skills.
	// Its vectors are used only when they come from the generator's own embedding model
	// (the caller drops them otherwise).
	Taxonomy *taxonomy.Taxonomy
}

// Generator makes a version's generated fields: the port behind which the built-in
// extractive generator or a language model sits.
type Generator interface {
	Generate(ctx context.Context, in GenerateInput) ([]GeneratedField, error)
}

// Builtin is the offline generator: TITLE and SUMMARY are extracted (see Fields), KEYWORDS
// are the document's candidate phrases (runs of one to three words without stop words)
// ranked by the cosine similarity of their embedding to the document's and picked with
// maximal marginal relevance, so that near-duplicates do not crowd the list; SKILLS are
// either skill-like keyphrases (several words, no taxonomy) or the taxonomy skills whose
// embedding is close enough to a part of the document, else the single UnknownSkill.
// Without an embedder, phrases rank by frequency and taxonomy skills match when every
// word of theirs occurs in the document.
type Builtin struct {
	Embedder Embedder
	// MaxKeywords and MaxSkills cap the lists (defaults 8 and 5).
	MaxKeywords, MaxSkills int
	// SkillThreshold is the least cosine similarity between a taxonomy skill and the best
	// matching part of the document for the skill to count (default 0.35).
	SkillThreshold float64
}

// ContextEmbedder embeds texts and, from the same run of each, phrases as they occur in it
// (indexer/embed/onnx.Embedder.EmbedInContext): phrases[i][k] is nil when texts[i] does not
// hold phrase k. The index task reads the Candidates of a document from its chunks' runs with
// it (PhraseVectors).
type ContextEmbedder interface {
	EmbedInContext(ctx context.Context, texts, phrases []string) ([][]float32, [][][]float32, error)
}

// Generation limits: how much of a document is read for phrases, how many candidates are
// embedded, and how many parts of the document stand for it.
const (
	genMaxChars      = 60000
	genCandidates    = 60
	genDocParts      = 12
	genMMRLambda     = 0.65
	defaultKeywords  = 8
	defaultSkills    = 5
	defaultThreshold = 0.35
)

// Generate implements Generator.
func (b *Builtin) Generate(ctx context.Context, in GenerateInput) ([]GeneratedField, error) {
	types := in.Types
	if len(types) == 0 {
		types = FieldTypes
	}
	want := func(t string) bool { return slices.Contains(types, t) }
	var out []GeneratedField
	for _, f := range Fields(in.Title, in.Sections) {
		if want(f.Type) {
			out = append(out, f)
		}
	}
	if !want(FieldKeywords) && !want(FieldSkills) {
		return out, nil
	}
	g := &generation{b: b, in: in}
	if err := g.prepare(ctx); err != nil {
		return nil, err
	}
	if want(FieldKeywords) {
		for _, k := range g.keywords() {
			out = append(out, GeneratedField{Type: FieldKeywords, Value: k})
		}
	}
	if want(FieldSkills) {
		skills, err := g.skills(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range skills {
			out = append(out, GeneratedField{Type: FieldSkills, Value: s})
		}
	}
	return out, nil
}

type candidate struct {
	text  string
	words int
	freq  int
	rank  float64 // frequency rank before embeddings
	sim   float64 // similarity to the document
	vec   []float32
}

type generation struct {
	b      *Builtin
	in     GenerateInput
	text   string
	cands  []*candidate
	parts  [][]float32 // embeddings of the document's parts
	doc    []float32   // their normalised mean
	lexeme map[string]bool
}

func (g *generation) prepare(ctx context.Context) error {
	g.text = docText(g.in.Title, g.in.Sections)
	g.cands = candidates(g.text)
	if g.b.Embedder == nil || strings.TrimSpace(g.text) == "" {
		return nil
	}
	var parts []string
	if t := strings.TrimSpace(g.in.Title); t != "" {
		parts = append(parts, t)
	}
	chunks := Chunks(g.in.Sections)
	var known [][]float32
	if len(g.in.ChunkVectors) == len(chunks) && !slices.ContainsFunc(g.in.ChunkVectors, func(v []float32) bool { return v == nil }) {
		known = g.in.ChunkVectors[:min(len(chunks), genDocParts)]
	} else {
		for _, p := range chunks {
			if len(parts) >= genDocParts {
				break
			}
			parts = append(parts, p.Text)
		}
	}
	texts := append([]string{}, parts...)
	var alone []*candidate
	for _, c := range g.cands {
		if v := g.in.PhraseVectors[c.text]; len(v) > 0 {
			c.vec = normalized(slices.Clone(v))
			continue
		}
		alone = append(alone, c)
		texts = append(texts, c.text)
	}
	var vecs [][]float32
	if len(texts) > 0 {
		var err error
		if vecs, err = g.b.Embedder.Embed(ctx, texts); err != nil {
			return err
		}
	}
	g.parts = append(slices.Clone(vecs[:len(parts)]), known...)
	if len(g.parts) == 0 {
		return nil
	}
	g.doc = mean(g.parts)
	for i, c := range alone {
		c.vec = vecs[len(parts)+i]
	}
	for _, c := range g.cands {
		c.sim = dot(c.vec, g.doc)
	}
	return nil
}

// docText is the text generation reads of a document: the title, then each section's
// heading and text, up to genMaxChars.
func docText(title string, sections []extract.Section) string {
	var sb strings.Builder
	sb.WriteString(title)
	for _, s := range sections {
		if sb.Len() > genMaxChars {
			break
		}
		sb.WriteString("\n")
		sb.WriteString(s.Heading)
		sb.WriteString("\n")
		sb.WriteString(s.Text)
	}
	text := sb.String()
	if len(text) > genMaxChars {
		text = strings.ToValidUTF8(text[:genMaxChars], "")
	}
	return text
}

// InContext runs each of texts (a document's chunks) once through ce and returns their
// vectors and the document's candidate phrases (Candidates) as those runs read them, summed
// per phrase over the chunks that hold it: GenerateInput's ChunkVectors and PhraseVectors.
// A text with a known vector (known[i] non-nil, e.g. from a cache) is not run again; its
// phrases come from the other chunks, or the generator embeds them alone.
func InContext(ctx context.Context, ce ContextEmbedder, texts []string, known [][]float32, cands []string) ([][]float32, map[string][]float32, error) {
	vecs := make([][]float32, len(texts))
	var run []string
	var at []int
	for i, t := range texts {
		if i < len(known) && known[i] != nil {
			vecs[i] = known[i]
			continue
		}
		run, at = append(run, t), append(at, i)
	}
	phrases := map[string][]float32{}
	if len(run) == 0 {
		return vecs, phrases, nil
	}
	got, found, err := ce.EmbedInContext(ctx, run, cands)
	if err != nil {
		return nil, nil, err
	}
	for j, i := range at {
		vecs[i] = got[j]
		for k, x := range found[j] {
			if x == nil {
				continue
			}
			sum := phrases[cands[k]]
			if sum == nil {
				sum = make([]float32, len(x))
				phrases[cands[k]] = sum
			}
			for d := range x {
				sum[d] += x[d]
			}
		}
	}
	return vecs, phrases, nil
}

// Candidates are the phrases the built-in generator ranks for a document's KEYWORDS and free
// SKILLS: what a caller reads in context for GenerateInput.PhraseVectors.
func Candidates(title string, sections []extract.Section) []string {
	cs := candidates(docText(title, sections))
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.text
	}
	return out
}

// normalized scales v to unit length in place and returns it.
func normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	f := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= f
	}
	return v
}

// candidates are the text's phrases of one to three words, none a stop word or a number,
// within one clause; the genCandidates most frequent (longer phrases weigh more).
func candidates(text string) []*candidate {
	byKey := map[string]*candidate{}
	var order []*candidate
	for _, clause := range clauses(text) {
		for i := range clause {
			for n := 1; n <= 3 && i+n <= len(clause); n++ {
				ws := clause[i : i+n]
				if !phraseWords(ws) {
					break
				}
				key := strings.Join(ws, " ")
				c := byKey[key]
				if c == nil {
					c = &candidate{text: key, words: n}
					byKey[key] = c
					order = append(order, c)
				}
				c.freq++
			}
		}
	}
	for _, c := range order {
		c.rank = float64(c.freq) * (1 + 0.5*float64(c.words-1))
	}
	slices.SortStableFunc(order, func(a, b *candidate) int { return cmp.Compare(b.rank, a.rank) })
	if len(order) > genCandidates {
		order = order[:genCandidates]
	}
	return order
}

func phraseWords(ws []string) bool {
	last := ws[len(ws)-1]
	if analysis.IsStopWord(last) || utf8.RuneCountInString(last) < 2 || !hasLetter(last) {
		return false
	}
	return len(ws) > 1 || utf8.RuneCountInString(last) >= 3
}

func hasLetter(w string) bool { return strings.IndexFunc(w, unicode.IsLetter) >= 0 }

// clauses splits text at punctuation into runs of lowercased words.
func clauses(text string) [][]string {
	var out [][]string
	var cur []string
	var word strings.Builder
	flushWord := func() {
		if word.Len() > 0 {
			cur = append(cur, strings.Trim(word.String(), "-'"))
			word.Reset()
		}
	}
	flushClause := func() {
		flushWord()
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || (word.Len() > 0 && (r == '-' || r == '\'')):
			word.WriteRune(unicode.ToLower(r))
		case r == ' ' || r == '\t':
			flushWord()
		default:
			flushClause()
		}
	}
	flushClause()
	return out
}

// mmr picks up to k candidates by maximal marginal relevance.
func mmr(cands []*candidate, k int) []*candidate {
	var picked []*candidate
	left := slices.Clone(cands)
	for len(picked) < k && len(left) > 0 {
		best, bestScore := -1, math.Inf(-1)
		for i, c := range left {
			if overlaps(picked, c) {
				continue
			}
			red := 0.0
			for _, p := range picked {
				red = max(red, dot(c.vec, p.vec))
			}
			if s := genMMRLambda*c.sim - (1-genMMRLambda)*red; s > bestScore {
				best, bestScore = i, s
			}
		}
		if best < 0 {
			break
		}
		picked = append(picked, left[best])
		left = slices.Delete(left, best, best+1)
	}
	return picked
}

// overlaps reports whether c is a phrase inside a picked one, or holds one: "kitchen
// safety" beside "kitchen safety basics" says nothing new.
func overlaps(picked []*candidate, c *candidate) bool {
	return slices.ContainsFunc(picked, func(p *candidate) bool {
		return strings.Contains(" "+p.text+" ", " "+c.text+" ") || strings.Contains(" "+c.text+" ", " "+p.text+" ")
	})
}

// byFrequency picks up to k candidates by rank, leaving out phrases inside a picked one.
func byFrequency(cands []*candidate, k int) []*candidate {
	var picked []*candidate
	for _, c := range cands {
		if len(picked) >= k {
			break
		}
		if !overlaps(picked, c) {
			picked = append(picked, c)
		}
	}
	return picked
}

func (g *generation) pick(cands []*candidate, k int) []*candidate {
	if g.doc != nil {
		return mmr(cands, k)
	}
	return byFrequency(cands, k)
}

func (g *generation) keywords() []string {
	var out []string
	for _, c := range g.pick(g.cands, cmp.Or(g.b.MaxKeywords, defaultKeywords)) {
		out = append(out, c.text)
	}
	return out
}

func (g *generation) skills(ctx context.Context) ([]string, error) {
	k := cmp.Or(g.b.MaxSkills, defaultSkills)
	if g.in.Taxonomy != nil {
		return g.taxonomySkills(k), nil
	}
	// Free skills: phrases of several words name skills ("carrot cake baking"); single
	// words fill up when there are too few.
	var multi, single []*candidate
	for _, c := range g.cands {
		if strings.EqualFold(c.text, UnknownSkill) {
			continue // Unknown means "a taxonomy and no relevant skill", never a free skill
		}
		if c.words == 1 {
			single = append(single, c)
		} else {
			multi = append(multi, c)
		}
	}
	picked := g.pick(multi, k)
	if len(picked) < k {
		var rest []*candidate
		for _, c := range single {
			if !overlaps(picked, c) {
				rest = append(rest, c)
			}
		}
		picked = append(picked, g.pick(rest, k-len(picked))...)
	}
	var out []string
	for _, c := range picked {
		out = append(out, capitalize(c.text))
	}
	return out, nil
}

type scored struct {
	skill string
	score float64
}

// TaxonomyCandidates returns up to n skills of in.Taxonomy most relevant to the document,
// best first, with no threshold: the shortlist a language model chooses from (a taxonomy of
// thousands does not fit a prompt). Without vectors it is the skills whose words occur.
func (b *Builtin) TaxonomyCandidates(ctx context.Context, in GenerateInput, n int) ([]string, error) {
	if in.Taxonomy == nil {
		return nil, nil
	}
	g := &generation{b: b, in: in}
	if err := g.prepare(ctx); err != nil {
		return nil, err
	}
	out := g.rankTaxonomy(math.Inf(-1))
	if len(out) > n {
		out = out[:n]
	}
	skills := make([]string, len(out))
	for i, h := range out {
		skills[i] = h.skill
	}
	return skills, nil
}

func (g *generation) taxonomySkills(k int) []string {
	threshold := g.b.SkillThreshold
	if threshold == 0 {
		threshold = defaultThreshold
	}
	hits := g.rankTaxonomy(threshold)
	if len(hits) == 0 {
		return []string{UnknownSkill}
	}
	var out []string
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.skill)
	}
	return out
}

// rankTaxonomy scores the taxonomy's skills against the document, best first, keeping
// those at or above threshold (embedding mode) or whose words all occur (word mode).
func (g *generation) rankTaxonomy(threshold float64) []scored {
	t := g.in.Taxonomy
	var hits []scored
	if len(t.Vectors) == len(t.Skills) && len(t.Vectors) > 0 && len(g.parts) > 0 {
		for i, v := range t.Vectors {
			best := math.Inf(-1)
			for _, p := range g.parts {
				best = max(best, dot(v, p))
			}
			if best >= threshold {
				hits = append(hits, scored{t.Skills[i], best})
			}
		}
	} else {
		if g.lexeme == nil {
			g.lexeme = map[string]bool{}
			for _, l := range analysis.Lexemes(g.text) {
				g.lexeme[l] = true
			}
		}
		for _, s := range t.Skills {
			ls := analysis.Lexemes(s)
			if len(ls) > 0 && !slices.ContainsFunc(ls, func(l string) bool { return !g.lexeme[l] }) {
				hits = append(hits, scored{s, float64(len(ls))})
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	return hits
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func mean(vs [][]float32) []float32 {
	if len(vs) == 0 {
		return nil
	}
	out := make([]float32, len(vs[0]))
	for _, v := range vs {
		for i := range out {
			if i < len(v) {
				out[i] += v[i]
			}
		}
	}
	var n float64
	for _, x := range out {
		n += float64(x) * float64(x)
	}
	if n = math.Sqrt(n); n > 0 {
		for i := range out {
			out[i] = float32(float64(out[i]) / n)
		}
	}
	return out
}
