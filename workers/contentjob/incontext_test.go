package contentjob_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/indexer"
	ibleve "github.com/lectern-lms/lectern/indexer/bleve"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/eval"
	"github.com/lectern-lms/lectern/storage/blob/local"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
	"github.com/lectern-lms/lectern/workers/contentjob"
	"github.com/lectern-lms/lectern/workers/jobs"
)

// countingContext counts the chunks read in context.
type countingContext struct {
	content.ContextEmbedder
	mu     sync.Mutex
	chunks int
}

func (c *countingContext) EmbedInContext(ctx context.Context, texts, phrases []string) ([][]float32, [][][]float32, error) {
	c.mu.Lock()
	c.chunks += len(texts)
	c.mu.Unlock()
	return c.ContextEmbedder.EmbedInContext(ctx, texts, phrases)
}

// generating is a FieldMaker that runs the built-in generator on what the index task hands
// it, embedding through a counting model, and keeps what it was given.
type generating struct {
	gen     *content.Builtin
	chunks  [][]float32
	phrases map[string][]float32
	fields  []content.GeneratedField
}

func (g *generating) MakeFields(ctx context.Context, _ string, v *content.Version, sections []extract.Section, chunkVectors [][]float32, phraseVectors map[string][]float32, only []string) ([]indexer.Field, error) {
	g.chunks, g.phrases = chunkVectors, phraseVectors
	var err error
	g.fields, err = g.gen.Generate(ctx, content.GenerateInput{Title: v.Title, Sections: sections, Types: only,
		ChunkVectors: chunkVectors, PhraseVectors: phraseVectors})
	return nil, err
}

func (g *generating) StoredFields(context.Context, string, *content.Version) ([]indexer.Field, error) {
	return nil, nil
}

// TestIndexReadsPhrasesInContext: with a model that reads phrases in context, the index task
// runs each new chunk once, for the chunk's vector (the model's own, as Embed gives it) and
// the vectors of the document's candidate phrases it holds; the generator then embeds only
// the title and the candidates no chunk holds, instead of every candidate (issue 27). A
// chunk the tenant's cache holds is not run again.
func TestIndexReadsPhrasesInContext(t *testing.T) {
	model := eval.Embedder(t)
	ctx := context.Background()
	rs := recordstores.All()[0].Open(t)
	blobs, err := local.New(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	info := model.Model()
	ix, err := ibleve.Open(filepath.Join(t.TempDir(), "search"), ibleve.Options{Model: indexer.Model{Name: info.Name, Dims: info.Dims}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	chunkModel, genModel := &countingModel{Embedder: model}, &countingModel{Embedder: model}
	inContext := &countingContext{ContextEmbedder: model}
	fields := &generating{gen: &content.Builtin{Embedder: genModel}}
	cs, js := content.NewStore(rs), jobs.NewStore(rs)
	h := &contentjob.Indexer{Content: cs, Jobs: js, Blobs: blobs, Index: ix, Embedder: chunkModel, InContext: inContext,
		Vectors: embed.NewRecordCache(rs, embed.RecordCacheOptions{}), Fields: fields}
	sections := []extract.Section{
		{Location: "Ladders", Text: "Keep three points of contact when climbing a ladder. Inspect the ladder feet before climbing."},
		{Location: "Lifting", Text: "Bend your knees when lifting heavy boxes, and keep the load close to your body."},
	}
	index := func() {
		t.Helper()
		job, err := js.Create(ctx, jobs.NewID(), contentjob.JobType, "t", true)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(sections)
		key := contentjob.SectionsKey("t", job.ID)
		if _, err := blobs.Put(ctx, key, bytes.NewReader(b), int64(len(b))); err != nil {
			t.Fatal(err)
		}
		v, err := cs.AddVersion(ctx, "t", &content.Version{ContentID: "safety", Title: "Workplace safety", Active: true, SectionsKey: key, JobID: job.ID})
		if err != nil {
			t.Fatal(err)
		}
		task, _ := contentjob.NewIndexTask(contentjob.IndexPayload{Tenant: "t", JobID: job.ID, ContentID: "safety", Version: v.Version})
		if err := h.ProcessTask(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	index()
	if chunkModel.count() != 0 || inContext.chunks != len(sections) {
		t.Fatalf("chunks embedded alone %d, read in context %d; want 0 and %d", chunkModel.count(), inContext.chunks, len(sections))
	}
	for i, pc := range content.Chunks(sections) {
		want, err := model.Embed(ctx, []string{pc.Text})
		if err != nil {
			t.Fatal(err)
		}
		for d := range want[0] {
			if math.Abs(float64(want[0][d]-fields.chunks[i][d])) > 1e-5 {
				t.Fatalf("chunk %d: the vector read in context is not the model's", i)
			}
		}
	}
	cands := content.Candidates("Workplace safety", sections)
	if len(fields.phrases) == 0 {
		t.Fatal("no phrase vectors reached the generator")
	}
	for p := range fields.phrases {
		if !slices.Contains(cands, p) {
			t.Errorf("phrase %q is no candidate", p)
		}
	}
	// The title and the candidates no chunk holds (title words) are all the generator embeds.
	if alone := 1 + len(cands) - len(fields.phrases); genModel.count() != alone {
		t.Errorf("the generator embedded %d texts, want %d (the title and %d candidates no chunk holds, of %d)",
			genModel.count(), alone, len(cands)-len(fields.phrases), len(cands))
	}
	if !slices.ContainsFunc(fields.fields, func(f content.GeneratedField) bool { return f.Type == content.FieldKeywords }) {
		t.Errorf("no KEYWORDS generated: %+v", fields.fields)
	}

	// The same text again (a new version): its chunks are in the cache, nothing runs.
	index()
	if chunkModel.count() != 0 || inContext.chunks != len(sections) {
		t.Errorf("re-indexing cached chunks: embedded alone %d, read in context %d more", chunkModel.count(), inContext.chunks-len(sections))
	}
}
