package contentjob_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/indexer"
	ibleve "github.com/lectern-lms/lectern/indexer/bleve"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/eval"
	"github.com/lectern-lms/lectern/storage/blob/local"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
	"github.com/lectern-lms/lectern/workers/contentjob"
	"github.com/lectern-lms/lectern/workers/jobs"
)

// countingModel delegates to the real model and counts the texts that reach it.
type countingModel struct {
	embed.Embedder
	mu    sync.Mutex
	texts int
}

func (c *countingModel) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.texts += len(texts)
	c.mu.Unlock()
	return c.Embedder.Embed(ctx, texts)
}

func (c *countingModel) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.texts
}

// pipeline is one indexer process: its own connections, index handle and vector cache.
type pipeline struct {
	records record.Store
	content *content.Store
	jobs    *jobs.Store
	index   indexer.Index
	model   *countingModel
	handler *contentjob.Indexer
	close   func()
}

func TestIndexAfterRestartEmbedsOnce(t *testing.T) {
	model := eval.Embedder(t)
	for _, backend := range recordstores.All() {
		t.Run(backend.Name, func(t *testing.T) {
			ctx := context.Background()
			openRecords := backend.Fresh(t)
			dataDir := t.TempDir()
			info := model.Model()
			start := func() *pipeline {
				rs := openRecords()
				blobs, err := local.New(filepath.Join(dataDir, "blobs"))
				if err != nil {
					t.Fatal(err)
				}
				ix, err := ibleve.Open(filepath.Join(dataDir, "search"), ibleve.Options{Model: indexer.Model{Name: info.Name, Dims: info.Dims}})
				if err != nil {
					t.Fatal(err)
				}
				p := &pipeline{records: rs, content: content.NewStore(rs), jobs: jobs.NewStore(rs), index: ix,
					model: &countingModel{Embedder: model}}
				p.handler = &contentjob.Indexer{Content: p.content, Jobs: p.jobs, Blobs: blobs, Index: ix,
					Embedder: p.model, Vectors: embed.NewRecordCache(rs, embed.RecordCacheOptions{})}
				p.close = sync.OnceFunc(func() { ix.Close(); blobs.Close(); rs.Close() })
				t.Cleanup(p.close)
				return p
			}
			sections := []extract.Section{
				{Location: "Ladders", Text: "Keep three points of contact when climbing a ladder."},
				{Location: "Money", Text: "Compound interest is earned on interest already added to the principal."},
				{Location: "Code", Text: "A recursive function calls itself on a smaller input until it reaches a base case."},
			}
			commit := func(p *pipeline, sections []extract.Section) contentjob.IndexPayload {
				job, err := p.jobs.Create(ctx, jobs.NewID(), contentjob.JobType, "t", true)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(sections)
				key := contentjob.SectionsKey("t", job.ID)
				if _, err := p.handler.Blobs.Put(ctx, key, bytes.NewReader(b), int64(len(b))); err != nil {
					t.Fatal(err)
				}
				v, err := p.content.AddVersion(ctx, "t", &content.Version{ContentID: "safety", Title: "Safety", Active: true,
					SectionsKey: key, JobID: job.ID})
				if err != nil {
					t.Fatal(err)
				}
				return contentjob.IndexPayload{Tenant: "t", JobID: job.ID, ContentID: "safety", Version: v.Version}
			}
			index := func(p *pipeline, pl contentjob.IndexPayload) {
				t.Helper()
				task, _ := contentjob.NewIndexTask(pl)
				if err := p.handler.ProcessTask(ctx, task); err != nil {
					t.Fatal(err)
				}
				j, err := p.jobs.Get(ctx, pl.JobID)
				if err != nil || j.Status != jobs.StatusCompleted {
					t.Fatalf("job after indexing: %+v, %v", j, err)
				}
			}

			first := start()
			v1 := commit(first, sections)
			index(first, v1)
			if first.model.count() != len(sections) {
				t.Fatalf("first indexing embedded %d texts, want %d", first.model.count(), len(sections))
			}
			first.close()

			// A restart: new connections, a new index handle, an empty in-memory cache.
			second := start()
			index(second, v1) // a redelivered or repeated index task
			sections[1].Text = "Simple interest is paid only on the original deposit."
			v2 := commit(second, sections)
			index(second, v2)
			if second.model.count() != 1 {
				t.Fatalf("after a restart the model embedded %d texts, want only the 1 changed one", second.model.count())
			}

			// The persisted vectors are the model's: a paraphrase finds the right chunk.
			q, err := model.Embed(ctx, []string{"avoiding a fall while going up steps"})
			if err != nil {
				t.Fatal(err)
			}
			hits, err := second.index.Search(ctx, indexer.Query{Tenant: "t", Type: indexer.Semantic, Vector: q[0],
				ContentID: "safety", Version: &v1.Version, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 1 || hits[0].Location != "Ladders" {
				t.Fatalf("semantic search over cached vectors: %+v, want the Ladders chunk", hits)
			}
		})
	}
}
