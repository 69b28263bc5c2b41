// Package taxonomyjob runs skills taxonomy imports on the job queue (TAXONOMY_IMPORT jobs):
// the HTTP layer parses the CSV (so a bad file or a missing column is a 400 at once) and
// stores the skill names as a blob; the task embeds every skill once with the search
// embedding model, in batches, stores the taxonomy (content/taxonomy) and completes the job.
package taxonomyjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/lectern-lms/lectern/content/taxonomy"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/queue"
)

// TypeImport is the task type; JobType the JobRead type.
const (
	TypeImport = "taxonomy:import"
	JobType    = "TAXONOMY_IMPORT"
)

// Error codes of a failed import.
const (
	CodeEmbed    = "EMBED_FAILED"
	CodeInternal = "INTERNAL_ERROR"
)

// BatchSize is how many skill names one Embed call gets.
const BatchSize = 256

// Payload names the import; the skill names wait in the blob SkillsKey.
type Payload struct {
	Tenant     string `json:"tenant"`
	JobID      string `json:"job_id"`
	TaxonomyID string `json:"taxonomy_id"`
	SkillsKey  string `json:"skills_key"`
}

// SkillsKey is where the HTTP layer stores the parsed skill names (a JSON array).
func SkillsKey(tenant, jobID string) string { return tenant + "/taxonomy-uploads/" + jobID }

// NewTask builds the import task; the job id makes enqueueing twice harmless.
func NewTask(p Payload) (*queue.Task, []queue.Option) {
	b, _ := json.Marshal(p)
	return queue.NewTask(TypeImport, b), []queue.Option{queue.TaskID("taxonomy-import-" + p.JobID), queue.MaxRetry(5)}
}

// Handler is the TypeImport handler.
type Handler struct {
	Taxonomies *taxonomy.Store
	Jobs       *jobs.Store
	Blobs      blob.Store
	// Embedder is the search embedding model; nil stores the skills without vectors (skills
	// are then matched by their words, see content.Builtin).
	Embedder embed.Embedder
	Logger   *slog.Logger
}

// ProcessTask implements queue.Handler.
func (h *Handler) ProcessTask(ctx context.Context, t *queue.Task) error {
	var p Payload
	if err := json.Unmarshal(t.Payload, &p); err != nil || p.Tenant == "" || p.JobID == "" || p.TaxonomyID == "" {
		return fmt.Errorf("bad %s payload %q: %w", TypeImport, t.Payload, queue.SkipRetry)
	}
	job, err := h.Jobs.Get(ctx, p.JobID)
	if errors.Is(err, jobs.ErrNotFound) {
		h.logger().Warn("task without its job: dropped", "task", TypeImport, "job", p.JobID, "tenant", p.Tenant)
		return nil
	}
	if err != nil {
		return err
	}
	if job.Status == jobs.StatusCompleted || job.Status == jobs.StatusFailed {
		return nil
	}
	_ = h.Jobs.Update(ctx, p.JobID, func(j *jobs.Job) { j.Status = jobs.StatusRunning })
	n, err := h.run(ctx, p)
	switch {
	case err == nil:
		_ = h.Blobs.Delete(ctx, p.SkillsKey)
		return h.Jobs.Update(ctx, p.JobID, func(j *jobs.Job) {
			j.Status, j.Error = jobs.StatusCompleted, nil
			j.Results = map[string]any{"taxonomy_id": p.TaxonomyID, "skills": n}
		})
	case errors.Is(err, blob.ErrNotFound), queue.LastAttempt(ctx):
		_ = h.Blobs.Delete(ctx, p.SkillsKey)
		code := CodeInternal
		if errors.Is(err, errEmbed) {
			code = CodeEmbed
		}
		_ = h.Jobs.Update(ctx, p.JobID, func(j *jobs.Job) {
			j.Status, j.Error = jobs.StatusFailed, &jobs.JobError{Code: code, Message: "the taxonomy import failed: " + err.Error()}
		})
		if errors.Is(err, blob.ErrNotFound) {
			return nil
		}
		return err
	default:
		return err
	}
}

var errEmbed = errors.New("embedding the skills failed")

func (h *Handler) run(ctx context.Context, p Payload) (int, error) {
	r, _, err := h.Blobs.Get(ctx, p.SkillsKey)
	if err != nil {
		return 0, err
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return 0, err
	}
	var skills []string
	if err := json.Unmarshal(b, &skills); err != nil {
		return 0, fmt.Errorf("unreadable skills upload: %w", err)
	}
	t := &taxonomy.Taxonomy{ID: p.TaxonomyID, Skills: skills}
	if h.Embedder != nil {
		t.Model = h.Embedder.Model().Name
		if t.Vectors, err = Embed(ctx, h.Embedder, skills); err != nil {
			return 0, err
		}
	}
	if err := h.Taxonomies.Put(ctx, p.Tenant, p.JobID, t); err != nil {
		return 0, err
	}
	h.logger().Info("taxonomy imported", "tenant", p.Tenant, "taxonomy_id", p.TaxonomyID, "skills", len(skills), "vectors", len(t.Vectors) > 0)
	return len(skills), nil
}

// Embed embeds skill names in batches of BatchSize.
func Embed(ctx context.Context, e embed.Embedder, skills []string) ([][]float32, error) {
	out := make([][]float32, 0, len(skills))
	for i := 0; i < len(skills); i += BatchSize {
		vs, err := e.Embed(ctx, skills[i:min(i+BatchSize, len(skills))])
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errEmbed, err)
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.Default()
	}
	return h.Logger
}
