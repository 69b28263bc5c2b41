package contentjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/queue"
)

// maxSectionsBytes bounds the sections blob read back (extract keeps at most 8 MiB of text).
const maxSectionsBytes = 64 << 20

// Indexer is the TypeIndex handler: chunks, embeddings, fields, index write.
type Indexer struct {
	Content *content.Store
	Jobs    *jobs.Store
	Blobs   blob.Store
	Index   indexer.Index
	// Embedder embeds chunk texts; nil indexes without vectors, so lexical and field search
	// work and semantic search finds nothing.
	Embedder embed.Embedder
	// InContext, when set, is Embedder's model reading phrases in context: a version whose
	// fields are generated runs each new chunk through it once, for the chunk's vector and
	// the vectors of the document's candidate phrases it holds (content.InContext), so field
	// generation embeds only the title and the phrases no chunk holds, instead of every
	// candidate alone (issue 27: 2.6× the chunks' model work before).
	InContext content.ContextEmbedder
	// Vectors, when set, caches chunk vectors per tenant in the record store in front of
	// Embedder (pass the bare model then: a cache under it would be shared by tenants), so a
	// restarted or second indexer does not re-embed known text. Each index task also expires
	// the tenant's entries unused for longer than its retention.
	Vectors *embed.RecordCache
	// Fields, when set, generates and stores the version's fields (workers/fieldgen); nil
	// indexes content.Fields (TITLE, SUMMARY) without storing them.
	Fields FieldMaker
	// ExpireInterval is how often, at most, the task expires a tenant's cached vectors (a
	// record store scan); zero means every minute. One call deletes up to 1,000, so once a
	// minute keeps up with any indexing rate, and the scan no longer costs every task.
	ExpireInterval time.Duration
	Logger         *slog.Logger

	expireMu   sync.Mutex
	lastExpire map[string]time.Time // by tenant
}

// FieldMaker generates and stores a version's generated fields of the types only (all when
// empty) and returns every stored field of the version for the index.
type FieldMaker interface {
	// chunkVectors are the embeddings of content.Chunks(sections), nil without an embedder;
	// phraseVectors the document's candidate phrases read in context (GenerateInput's), nil
	// when they were not.
	MakeFields(ctx context.Context, tenant string, v *content.Version, sections []extract.Section, chunkVectors [][]float32, phraseVectors map[string][]float32, only []string) ([]indexer.Field, error)
	// StoredFields returns the version's stored fields for the index, none when generation
	// has not run.
	StoredFields(ctx context.Context, tenant string, v *content.Version) ([]indexer.Field, error)
}

// ProcessTask implements queue.Handler.
func (h *Indexer) ProcessTask(ctx context.Context, t *queue.Task) error {
	var p IndexPayload
	if err := json.Unmarshal(t.Payload, &p); err != nil || p.Tenant == "" || p.ContentID == "" {
		return fmt.Errorf("bad %s payload %q: %w", TypeIndex, t.Payload, queue.SkipRetry)
	}
	err := h.index(ctx, p)
	var f *failure
	switch {
	case err == nil:
		if p.JobID == "" {
			return nil
		}
		err := h.Jobs.Update(ctx, p.JobID, func(j *jobs.Job) {
			j.Status, j.Error = jobs.StatusCompleted, nil
			j.Results = map[string]any{"content_id": p.ContentID, "version": p.Version}
		})
		if errors.Is(err, jobs.ErrNotFound) {
			return nil
		}
		return err
	case errors.Is(err, content.ErrNotFound):
		// The version (or its tenant) is gone, or the task belongs to another deployment on
		// the same Redis without a queue prefix of its own: nothing to index, but say so.
		h.logger().Warn("task without its content version: dropped", "task", TypeIndex, "job", p.JobID, "tenant", p.Tenant,
			"content_id", p.ContentID, "version", p.Version,
			"hint", "deleted content or tenant, or another deployment on the same Redis (set LECTERN_QUEUE_PREFIX)")
		return nil
	case errors.As(err, &f), queue.LastAttempt(ctx):
		if p.JobID != "" {
			_ = h.Jobs.Update(ctx, p.JobID, func(j *jobs.Job) {
				j.Status, j.Error = jobs.StatusFailed, &jobs.JobError{Code: CodeIndex, Message: "indexing failed: " + err.Error()}
			})
		}
		if errors.As(err, &f) {
			return nil
		}
		return err
	default:
		return err
	}
}

func (h *Indexer) index(ctx context.Context, p IndexPayload) error {
	v, err := h.Content.Get(ctx, p.Tenant, p.ContentID, p.Version)
	if err != nil {
		return err
	}
	sections, err := h.sections(ctx, v)
	if err != nil {
		return err
	}
	pieces := content.Chunks(sections)
	chunks := make([]indexer.Chunk, len(pieces))
	for i, pc := range pieces {
		chunks[i] = indexer.Chunk{Location: pc.Location, Text: pc.Text, Tags: v.Tags, Active: v.Active}
	}
	var phrases map[string][]float32
	if h.Embedder != nil && len(pieces) > 0 {
		texts := make([]string, len(pieces))
		for i, pc := range pieces {
			texts[i] = pc.Text
		}
		var vecs [][]float32
		if h.InContext != nil && h.Fields != nil && !p.Rebuild {
			vecs, phrases, err = h.embedInContext(ctx, p.Tenant, v.Title, sections, texts)
		} else {
			var emb embed.Embedder = h.Embedder
			if h.Vectors != nil {
				emb = embed.NewCached(h.Embedder, h.Vectors.Tenant(ctx, p.Tenant))
			}
			vecs, err = emb.Embed(ctx, texts)
		}
		if err != nil {
			return fmt.Errorf("embed %d chunks: %w", len(texts), err)
		}
		for i := range chunks {
			chunks[i].Vector = vecs[i]
		}
	}
	var fields []indexer.Field
	if h.Fields != nil && p.Rebuild {
		// A rebuild keeps the stored generated fields and their dates, so search answers come
		// back unchanged; a version with none stored yet gets them generated below.
		if fields, err = h.Fields.StoredFields(ctx, p.Tenant, v); err != nil {
			return err
		}
	}
	switch {
	case len(fields) > 0:
	case h.Fields != nil:
		var vecs [][]float32
		for _, c := range chunks {
			vecs = append(vecs, c.Vector)
		}
		if fields, err = h.Fields.MakeFields(ctx, p.Tenant, v, sections, vecs, phrases, p.Fields); err != nil {
			return err
		}
	default:
		// A field's update_dt is the version record's last change, not the moment of
		// indexing, so a rebuild of the index (Reindexer) gives back the very same answers.
		for _, f := range content.Fields(v.Title, sections) {
			fields = append(fields, indexer.Field{FieldType: f.Type, Value: f.Value, Created: v.Created.UTC(), Updated: v.Updated.UTC()})
		}
	}
	if err := h.Index.IndexContent(ctx, p.Tenant, p.ContentID, p.Version, chunks, fields); err != nil {
		if errors.Is(err, indexer.ErrInvalidQuery) || errors.Is(err, indexer.ErrModelMismatch) {
			return fail(CodeIndex, "%v", err)
		}
		return err
	}
	// A PATCH of tags or the active flag between reading the version and writing the index
	// found nothing to update in the index; apply the current status now.
	cur, err := h.Content.Get(ctx, p.Tenant, p.ContentID, p.Version)
	if err != nil {
		return err
	}
	indexedTags, indexedActive := indexer.NormalizeTags(v.Tags), v.Active
	if len(chunks) == 0 {
		indexedTags, indexedActive = nil, true // a version without chunks starts active, untagged
	}
	if cur.Active != indexedActive || !slices.Equal(indexer.NormalizeTags(cur.Tags), indexedTags) {
		if err := h.Index.SetStatus(ctx, p.Tenant, p.ContentID, p.Version, cur.Tags, cur.Active); err != nil && !errors.Is(err, indexer.ErrNotFound) {
			return err
		}
	}
	h.expireVectors(ctx, p.Tenant)
	return nil
}

// embedInContext embeds a version's chunk texts through InContext: a chunk the tenant's
// vector cache holds keeps its vector and is not run; every other chunk runs once for its
// vector (stored in the cache) and the document's candidate phrases it holds.
func (h *Indexer) embedInContext(ctx context.Context, tenant, title string, sections []extract.Section, texts []string) ([][]float32, map[string][]float32, error) {
	info := h.Embedder.Model()
	keys := make([]string, len(texts))
	for i, t := range texts {
		keys[i] = embed.CacheKey(info, t)
	}
	known := make([][]float32, len(texts))
	var cache embed.Cache
	if h.Vectors != nil {
		cache = h.Vectors.Tenant(ctx, tenant)
		hits := cache.Get(keys)
		for i, k := range keys {
			if v := hits[k]; len(v) == info.Dims {
				known[i] = v
			}
		}
	}
	vecs, phrases, err := content.InContext(ctx, h.InContext, texts, known, content.Candidates(title, sections))
	if err != nil {
		return nil, nil, err
	}
	if cache != nil {
		fresh := map[string][]float32{}
		for i, k := range keys {
			if known[i] == nil {
				fresh[k] = vecs[i]
			}
		}
		if len(fresh) > 0 {
			cache.Put(fresh)
		}
	}
	return vecs, phrases, nil
}

// expireVectors deletes a batch of the tenant's cached vectors that nobody used within the
// retention. It runs here, after the tenant's own indexing, so no scheduler is needed and a
// tenant that stops indexing keeps at most what it indexed in its last retention period
// (until the tenant is deleted). Failures only cost space, so they are logged, not returned.
func (h *Indexer) expireVectors(ctx context.Context, tenant string) {
	if h.Vectors == nil {
		return
	}
	every := h.ExpireInterval
	if every <= 0 {
		every = time.Minute
	}
	h.expireMu.Lock()
	if last, ok := h.lastExpire[tenant]; ok && time.Since(last) < every {
		h.expireMu.Unlock()
		return
	}
	if h.lastExpire == nil {
		h.lastExpire = map[string]time.Time{}
	}
	h.lastExpire[tenant] = time.Now()
	h.expireMu.Unlock()
	n, err := h.Vectors.Expire(ctx, tenant, time.Now().Add(-h.Vectors.Retention()))
	if err != nil && h.Logger != nil {
		h.Logger.Warn("expiring cached vectors failed", "tenant", tenant, "error", err)
	}
	if n > 0 && h.Logger != nil {
		h.Logger.Debug("expired cached vectors", "tenant", tenant, "count", n)
	}
}

func (h *Indexer) sections(ctx context.Context, v *content.Version) ([]extract.Section, error) {
	if v.SectionsKey == "" {
		return nil, nil
	}
	r, _, err := h.Blobs.Get(ctx, v.SectionsKey)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, fail(CodeIndex, "the extracted text of content '%s' version %d is missing", v.ContentID, v.Version)
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxSectionsBytes))
	if err != nil {
		return nil, err
	}
	var out []extract.Section
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fail(CodeIndex, "the extracted text of content '%s' version %d is unreadable: %v", v.ContentID, v.Version, err)
	}
	return out, nil
}

func (h *Indexer) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.Default()
	}
	return h.Logger
}
