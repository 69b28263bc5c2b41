// Package app assembles Lectern from a Config: it picks each port's backend with one visible
// switch, wires the HTTP server and the job handlers, and runs the requested roles. It never
// reads the environment; cmd/lectern does that and tests build a Config directly.
package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lectern-lms/lectern/cmd/lectern/metrics"
	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/chatgen"
	"github.com/lectern-lms/lectern/content/extract/sandbox"
	"github.com/lectern-lms/lectern/content/subscription"
	"github.com/lectern-lms/lectern/content/taxonomy"
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/archive"
	"github.com/lectern-lms/lectern/course/registration"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/course/xsd"
	"github.com/lectern-lms/lectern/indexer"
	ibleve "github.com/lectern-lms/lectern/indexer/bleve"
	ielastic "github.com/lectern-lms/lectern/indexer/elastic"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/embed/onnx"
	"github.com/lectern-lms/lectern/internal/throttle"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/lrs/forward"
	"github.com/lectern-lms/lectern/lrs/launch"
	"github.com/lectern-lms/lectern/lrs/oauth"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/server"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/storage/blob/local"
	"github.com/lectern-lms/lectern/storage/blob/minio"
	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/postgres"
	"github.com/lectern-lms/lectern/storage/record/sqlite"
	"github.com/lectern-lms/lectern/storage/statements"
	stelastic "github.com/lectern-lms/lectern/storage/statements/elastic"
	stsqlite "github.com/lectern-lms/lectern/storage/statements/sqlite"
	"github.com/lectern-lms/lectern/tenant"
	"github.com/lectern-lms/lectern/workers/contentjob"
	"github.com/lectern-lms/lectern/workers/convertjob"
	"github.com/lectern-lms/lectern/workers/fieldgen"
	"github.com/lectern-lms/lectern/workers/importjob"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/outbound"
	"github.com/lectern-lms/lectern/workers/postbackjob"
	"github.com/lectern-lms/lectern/workers/queue"
	asynqq "github.com/lectern-lms/lectern/workers/queue/asynq"
	"github.com/lectern-lms/lectern/workers/queue/inproc"
	"github.com/lectern-lms/lectern/workers/taxonomyjob"
	"github.com/lectern-lms/lectern/workers/webhookjob"
)

// Config is the whole configuration; cmd/lectern fills it from LECTERN_* variables.
type Config struct {
	Addr      string
	DataDir   string
	PublicURL string
	// ContentURL is the content origin, where the player and course files are served
	// (docs/security.md, "Content isolation"); it must differ from PublicURL's origin. Empty
	// serves them on the API's origin, unisolated (tests of other parts only).
	ContentURL string
	Root       server.RootCredentials
	SecretKey  string
	BodyLimit  int
	Version    string
	// RecordBodyLimit bounds xAPI record-store bodies (0: the server's default).
	RecordBodyLimit int
	// PreAuthBudget bounds the bodies read before their sender is known, together (0: the
	// server's default, 64 MiB; httpx.Budget). Set by tests, never from the environment.
	PreAuthBudget int64
	// LRSHooks are an integrator's record-store hooks (spec/002 "Integration hooks"); zero
	// fields keep the defaults. Set in code by an embedding program, never from the
	// environment.
	LRSHooks server.LRSHooks
	// AuthThrottle slows down failed attempts to prove a secret (nil: throttle.NewGuard, the
	// budget docs/decisions.md states). Set in code by an embedding program or a test.
	AuthThrottle *throttle.Guard

	PostgresURL string
	RedisURL    string
	// QueuePrefix namespaces the queues on Redis ("<prefix>default", "<prefix>index"), so
	// deployments sharing one Redis never take each other's tasks, as IndexPrefix does for
	// Elasticsearch. Empty means Elastic.IndexPrefix (and so the plain names when that is
	// empty too).
	QueuePrefix string
	// RecreateStatements lets Open create missing statement indices empty even in a deployment
	// that has had them (`lectern recreate-statements`): the operator's decision that the
	// statements are lost and there is no snapshot to restore.
	RecreateStatements bool
	S3                 S3Config
	Elastic            ElasticConfig

	// ModelDir is the local embedding model (indexer/embed ONNX, installed by `make model`);
	// empty or not installed means no local model: semantic search answers 503.
	ModelDir string
	// Embeddings selects an OpenAI-compatible embeddings endpoint instead of the local model.
	Embeddings EmbeddingsConfig
	// Generation, when its URL is set, generates content fields with a chat-completions model.
	Generation GenerationConfig
	// EmbeddingCacheDays is how long a chunk vector persisted in the record store is kept
	// unused (embed.RecordCache); zero means 30.
	EmbeddingCacheDays int

	// XAPIDefaultVersion is the xAPI version reported to requests that name none.
	XAPIDefaultVersion string
	// OutboundAllow lists hosts or CIDRs outbound requests may reach although private.
	OutboundAllow []string
	// SchemaDir holds XML Schemas (cmi5 CourseStructure.xsd, the SCORM manifest schemas) that
	// imports validate against when a package does not ship its own; empty means none.
	SchemaDir string

	// ExtractCommand is the argv of the child process content imports are read in (the
	// lectern binary's hidden "extract" subcommand); empty reads them in the worker process,
	// bounded only by content/extract's own limits.
	ExtractCommand []string
	// ExtractTimeout and ExtractMemory bound one content item's extraction in that child;
	// zero means sandbox.DefaultTimeout and sandbox.DefaultMemory.
	ExtractTimeout time.Duration
	ExtractMemory  int64

	WorkerConcurrency int
	// MetricsAddr, when set, is a second listen address serving only GET /metrics without
	// credentials, in every role (cmd/lectern runs it): how worker and indexer processes,
	// which have no API server, are scraped. Keep it on a private network.
	MetricsAddr string
	// ShutdownTimeout bounds a graceful stop (SIGTERM): running jobs get DrainTimeout of it
	// to finish, then are cancelled and handed back to their queue for the next process.
	// Zero means 30 s.
	ShutdownTimeout time.Duration
	// IndexConcurrency is the number of index tasks (the indexer role) run at once; zero
	// means 4 per CPU. They wait mostly on the embedder, which bounds its own runs to one per
	// CPU, and on the index's group commit, so more tasks than CPUs keep both busy and make
	// the commits bigger.
	IndexConcurrency int
	// RetryBaseDelay overrides the queue's first retry delay (tests use milliseconds).
	RetryBaseDelay time.Duration
	// Clock replaces the system clock of the registration store (nil: time.Now): tests move
	// it to measure player sessions over hours without waiting.
	Clock func() time.Time

	Logger *slog.Logger
}

// S3Config selects the MinIO/S3 blob store when Endpoint is set.
type S3Config struct {
	Endpoint, AccessKey, SecretKey, Bucket string
	UseSSL                                 bool
}

// ElasticConfig selects Elasticsearch for statements and content when URL is set.
type ElasticConfig struct {
	URL         string
	IndexPrefix string
}

// EmbeddingsConfig selects an OpenAI-compatible /v1/embeddings endpoint when URL is set.
type EmbeddingsConfig struct {
	URL, Model, Key string
}

// GenerationConfig is the OpenAI-compatible chat-completions endpoint that generates content
// fields (LECTERN_GENERATION_URL, _MODEL, _KEY); empty URL keeps the built-in generator.
type GenerationConfig struct {
	URL, Model, Key string
}

var queuePrefixRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]{0,64}$`)

// DefaultGCPercent is the garbage collector's target (debug.SetGCPercent) that cmd/lectern
// sets for the server roles when GOGC is not set: a heap of up to five times the live data
// between collections instead of twice: a collection per 4× the live data allocated instead of
// 1×, a quarter as many.
const DefaultGCPercent = 400

// IndexQueueName is the queue of index tasks, which the indexer role consumes; every other
// task goes to the default queue, which the worker role consumes.
const IndexQueueName = "index"

// embedCacheEntries is the size of the in-memory vector cache (384 floats are 1.5 KiB).
const embedCacheEntries = 20000

// App is an assembled Lectern.
type App struct {
	Config  Config
	Records record.Store
	Blobs   blob.Store
	Queue   queue.Queue
	// IndexQueue carries index tasks only (the indexer role); Queue everything else.
	IndexQueue queue.Queue
	Elastic    *elastic.Client
	// Reindexer rebuilds the content index from the record and blob stores (`lectern
	// reindex`, and the TypeReindex task behind POST /api/v1/app_management/reindex).
	Reindexer *contentjob.Reindexer
	Tenants   *tenant.Registry
	Settings  *settings.Store
	Jobs      *jobs.Store
	Courses   *course.Store
	// Registrations keeps registrations, their instances and progress.
	Registrations *registration.Store
	Content       *content.Store
	// Taxonomies keeps skills taxonomies; ContentConfig the content service's settings.
	Taxonomies    *taxonomy.Store
	ContentConfig *content.Config
	ContentFields *content.FieldStore
	// Index is the content search index; Embedder embeds chunks and semantic queries (nil
	// when no model is available, NoEmbedder then says why).
	Index      indexer.Index
	Embedder   embed.Embedder
	NoEmbedder string
	// chunkEmbedder is the model with the import path's merged calls (embed.Coalescer), which
	// the index task reaches through vectors (a per-tenant persistent cache) rather than
	// through Embedder's tenant-blind LRU.
	chunkEmbedder embed.Embedder
	// importEmbedder is what field generation embeds with: the import path's merged calls
	// (embed.Coalescer) behind Embedder's LRU; nil without a model.
	importEmbedder embed.Embedder
	// contextEmbedder is the local model reading phrases in context for the index task
	// (content.InContext); nil with a remote embedder, whose API returns pooled vectors only.
	contextEmbedder content.ContextEmbedder
	vectors         *embed.RecordCache
	// Statements is the xAPI record store's backend.
	Statements statements.Backend
	// StatementsMissing lists the statement indices found missing at Open and left so (the
	// deployment had them before): what /readyz names until a snapshot restore.
	StatementsMissing []string
	Outbound          *outbound.Client
	// Forwarder copies statements to the destinations of the forwarding pairs; the worker
	// role runs it (Forwarder.Run).
	Forwarder *forward.Forwarder
	Server    *server.Server
	// Learner is the learner's path: launches, commits, rollup, post-backs, conversion.
	Learner *learner.Service
	// Metrics is the instrumentation over this App's own Prometheus registry, served at
	// /metrics; Registry is that registry.
	Metrics  *metrics.Metrics
	Registry *prometheus.Registry
	closers  []func() error

	// What one step of Open builds for the steps after it and is not part of the App's API.
	checks        []server.Check
	sealer        *settings.Sealer
	subscriptions *subscription.Store
	runtime       *scormrt.Store
	forwardPairs  *forward.Manager
	launchTokens  *launch.Issuer
}

// Validate rejects half-given or contradictory settings before anything is opened.
func (c Config) Validate() error {
	if c.ContentURL != "" {
		if err := checkContentURL(c.ContentURL, c.PublicURL); err != nil {
			return err
		}
	}
	s := c.S3
	if s.Endpoint != "" || s.AccessKey != "" || s.SecretKey != "" || s.Bucket != "" {
		var missing []string
		for name, v := range map[string]string{"LECTERN_S3_ENDPOINT": s.Endpoint, "LECTERN_S3_ACCESS_KEY": s.AccessKey,
			"LECTERN_S3_SECRET_KEY": s.SecretKey, "LECTERN_S3_BUCKET": s.Bucket} {
			if v == "" {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("the S3 blob store is half configured: %v not set", missing)
		}
	}
	if c.QueuePrefix != "" && c.RedisURL == "" {
		return errors.New("LECTERN_QUEUE_PREFIX is set but LECTERN_REDIS_URL is not")
	}
	if !queuePrefixRE.MatchString(c.QueuePrefix) {
		return fmt.Errorf("LECTERN_QUEUE_PREFIX %q: use at most 64 letters, digits, '_', '-', '.' and ':'", c.QueuePrefix)
	}
	if c.Elastic.IndexPrefix != "" && c.Elastic.URL == "" {
		return errors.New("LECTERN_ELASTICSEARCH_INDEX_PREFIX is set but LECTERN_ELASTICSEARCH_URL is not")
	}
	if e := c.Embeddings; (e.Model != "" || e.Key != "") && e.URL == "" {
		return errors.New("LECTERN_EMBEDDINGS_MODEL or LECTERN_EMBEDDINGS_KEY is set but LECTERN_EMBEDDINGS_URL is not")
	}
	if g := c.Generation; (g.Model != "" || g.Key != "") && g.URL == "" {
		return errors.New("LECTERN_GENERATION_MODEL or LECTERN_GENERATION_KEY is set but LECTERN_GENERATION_URL is not")
	}
	if g := c.Generation; g.URL != "" && g.Model == "" {
		return errors.New("LECTERN_GENERATION_URL is set but LECTERN_GENERATION_MODEL is not")
	}
	if e := c.Embeddings; e.URL != "" && e.Model == "" {
		return errors.New("LECTERN_EMBEDDINGS_URL is set but LECTERN_EMBEDDINGS_MODEL is not")
	}
	if c.DataDir == "" {
		return errors.New("a data directory is required")
	}
	if c.Root.User == "" || c.Root.Password == "" {
		return errors.New("root credentials are required")
	}
	if c.SecretKey == "" {
		return errors.New("a secret key is required")
	}
	return nil
}

// DefaultShutdownTimeout is ShutdownTimeout's default.
const DefaultShutdownTimeout = 30 * time.Second

// ShutdownDeadline is the whole graceful stop: ShutdownTimeout, or its default.
func (c Config) ShutdownDeadline() time.Duration {
	if c.ShutdownTimeout > 0 {
		return c.ShutdownTimeout
	}
	return DefaultShutdownTimeout
}

// handBack is the part of the shutdown deadline kept for cancelled jobs to hand their tasks
// back and for the backends to close: a fifth, between 200 ms and 5 s.
func (c Config) handBack() time.Duration {
	return min(max(c.ShutdownDeadline()/5, 200*time.Millisecond), 5*time.Second)
}

// DrainTimeout is how long running jobs may go on after a stop was asked for before they are
// cancelled and handed back: the shutdown deadline less the hand-back time.
func (c Config) DrainTimeout() time.Duration {
	return c.ShutdownDeadline() - c.handBack()
}

// Open connects every backend and assembles the server and job handlers. It reads as the list
// of what it wires: each step opens one port, its backend picked by one switch in the step, or
// builds one layer over the ports. The steps run in start-up order, so a bad setting fails
// with the same error at the same point, and the first error closes what earlier steps opened.
func Open(ctx context.Context, cfg Config) (a *App, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	a = &App{Config: cfg, Registry: prometheus.NewRegistry()}
	a.Metrics = metrics.New(a.Registry, cfg.Logger)
	opened := a // "return nil, err" clears a before the deferred Close runs
	defer func() {
		if err != nil {
			opened.Close()
		}
	}()
	for _, step := range []func(ctx context.Context) error{
		a.openRecords,
		a.openBlobs,
		a.openQueues,
		a.openElastic,
		a.openStatements,
		a.openEmbedder,
		a.openContentIndex,
		a.measurePorts,
		a.openStores,
		a.openOutbound,
		a.handleWebhookJobs,
		a.handleTenantJobs,
		a.handleContentJobs,
		a.handleCourseJobs,
		a.openForwarder,
		a.openServer,
	} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// openRecords opens the record store: PostgreSQL when configured, else SQLite in the data
// directory.
func (a *App) openRecords(ctx context.Context) error {
	cfg := a.Config
	switch {
	case cfg.PostgresURL != "":
		s, err := postgres.Open(ctx, cfg.PostgresURL)
		if err != nil {
			return err
		}
		a.Records = s
		a.checks = append(a.checks, server.Check{Name: "postgres", Ping: s.DB().PingContext})
	default:
		s, err := sqlite.Open(filepath.Join(cfg.DataDir, "lectern.db"))
		if err != nil {
			return err
		}
		a.Records = s
		a.checks = append(a.checks, server.Check{Name: "sqlite", Ping: s.DB().PingContext})
	}
	a.closers = append(a.closers, a.Records.Close)
	return nil
}

// openBlobs opens the blob store: MinIO/S3 when configured, else a local directory.
func (a *App) openBlobs(ctx context.Context) error {
	cfg := a.Config
	switch {
	case cfg.S3.Endpoint != "":
		s, err := minio.New(ctx, minio.Config{Endpoint: cfg.S3.Endpoint, AccessKey: cfg.S3.AccessKey,
			SecretKey: cfg.S3.SecretKey, Bucket: cfg.S3.Bucket, UseSSL: cfg.S3.UseSSL})
		if err != nil {
			return err
		}
		a.Blobs = s
		a.checks = append(a.checks, server.Check{Name: "s3", Ping: blobPing(s)})
	default:
		s, err := local.New(filepath.Join(cfg.DataDir, "blobs"))
		if err != nil {
			return err
		}
		a.Blobs = s
		a.checks = append(a.checks, server.Check{Name: "blobs", Ping: blobPing(s)})
	}
	return nil
}

// queuePrefix namespaces this deployment's queues on Redis: LECTERN_QUEUE_PREFIX, else the
// Elasticsearch index prefix.
func (c Config) queuePrefix() string { return cmp.Or(c.QueuePrefix, c.Elastic.IndexPrefix) }

// openQueues opens the two job queues (default and index): Asynq on Redis when configured,
// else the in-process queue in the record store.
func (a *App) openQueues(ctx context.Context) error {
	cfg := a.Config
	switch {
	case cfg.RedisURL != "":
		prefix := cfg.queuePrefix()
		q, err := asynqq.New(ctx, asynqq.Config{RedisURL: cfg.RedisURL, Queue: prefix + "default", Concurrency: cfg.WorkerConcurrency,
			BaseRetryDelay: cfg.RetryBaseDelay, TaskCheckInterval: 50 * time.Millisecond,
			DelayedTaskCheckInterval: 200 * time.Millisecond, ShutdownTimeout: cfg.DrainTimeout(), Logger: cfg.Logger})
		if err != nil {
			return err
		}
		a.Queue = q
		a.closers = append(a.closers, a.Queue.Close)
		iq, err := asynqq.New(ctx, asynqq.Config{RedisURL: cfg.RedisURL, Queue: prefix + IndexQueueName, Concurrency: indexConcurrency(cfg),
			BaseRetryDelay: cfg.RetryBaseDelay, TaskCheckInterval: 50 * time.Millisecond,
			DelayedTaskCheckInterval: 200 * time.Millisecond, ShutdownTimeout: cfg.DrainTimeout(), Logger: cfg.Logger})
		if err != nil {
			return err
		}
		a.IndexQueue = iq
		opt, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			return fmt.Errorf("LECTERN_REDIS_URL: %w", err)
		}
		rdb := redis.NewClient(opt)
		a.closers = append(a.closers, rdb.Close)
		a.checks = append(a.checks, server.Check{Name: "redis", Ping: func(ctx context.Context) error { return rdb.Ping(ctx).Err() }})
	default:
		a.Queue = inproc.New(a.Records, inproc.Config{Concurrency: cfg.WorkerConcurrency, BaseRetryDelay: cfg.RetryBaseDelay,
			ReleaseTimeout: cfg.handBack()})
		a.closers = append(a.closers, a.Queue.Close)
		a.IndexQueue = inproc.New(a.Records, inproc.Config{Name: IndexQueueName, Concurrency: indexConcurrency(cfg), BaseRetryDelay: cfg.RetryBaseDelay,
			ReleaseTimeout: cfg.handBack()})
	}
	a.closers = append(a.closers, a.IndexQueue.Close)
	return nil
}

// openElastic connects Elasticsearch, which holds statements and content in the distributed
// mode (openStatements and openContentIndex create their indices); without a URL there is
// nothing to open.
func (a *App) openElastic(ctx context.Context) error {
	cfg := a.Config
	if cfg.Elastic.URL == "" {
		return nil
	}
	c, err := elastic.New(elastic.Config{URLs: []string{cfg.Elastic.URL}, IndexPrefix: cfg.Elastic.IndexPrefix})
	if err != nil {
		return err
	}
	if err := c.Ping(ctx); err != nil {
		return fmt.Errorf("elasticsearch at %s: %w", cfg.Elastic.URL, err)
	}
	a.Elastic = c
	a.checks = append(a.checks, server.Check{Name: "elasticsearch", Ping: elasticReady(c)})
	return nil
}

// openStatements opens the xAPI record store's backend: Elasticsearch in the distributed mode,
// else SQLite in the data directory.
func (a *App) openStatements(ctx context.Context) error {
	switch {
	case a.Elastic != nil:
		// Writes ask for no refresh; a search refreshes first when writes are not yet searchable
		// (one refresh per wave of queries, none per write): see storage/statements/elastic.
		// A deployment that has had statement indices never gets them back empty on its own:
		// see statementsBefore.
		before, err := a.statementsBefore(ctx)
		if err != nil {
			return err
		}
		opts := []stelastic.Option{stelastic.WithReportFields(xapi.ReportFields)}
		if before && !a.Config.RecreateStatements {
			opts = append(opts, stelastic.KeepMissing())
		}
		st, err := stelastic.New(ctx, a.Elastic, opts...)
		if err != nil {
			return err
		}
		a.Statements = st
		if missing := st.Missing(); len(missing) > 0 {
			a.StatementsMissing = missing
			a.Config.Logger.Error("statement indices are missing: the statements, xAPI documents and attachments they held cannot be rebuilt from the record or blob stores; restore them from a snapshot (docs/operations.md), or start them empty with `lectern recreate-statements`",
				"missing", strings.Join(missing, ", "))
		}
		if !before {
			if err := a.Records.Create(ctx, &record.Record{Kind: kindDeployment, ID: statementIndicesID, Data: []byte(`{}`)}); err != nil && !errors.Is(err, record.ErrConflict) {
				return err
			}
		}
	default:
		st, err := stsqlite.Open(filepath.Join(a.Config.DataDir, "lrs.db"), stsqlite.WithReportFields(xapi.ReportFields))
		if err != nil {
			return err
		}
		a.Statements = st
	}
	a.closers = append(a.closers, a.Statements.Close)
	return nil
}

// kindDeployment is the record kind of facts about the deployment itself (no tenant);
// statementIndicesID the record saying its statement indices were created once.
const (
	kindDeployment     = "deployment"
	statementIndicesID = "statement_indices"
)

// statementsBefore reports whether this deployment has had its statement indices before (the
// record store says so). Statements live only in Elasticsearch, so when such a deployment finds
// them missing they were lost, and recreating them empty, as a first start does, would hide
// the loss from /readyz and stand in the way of a snapshot restore.
func (a *App) statementsBefore(ctx context.Context) (bool, error) {
	_, err := a.Records.Get(ctx, "", kindDeployment, statementIndicesID)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, record.ErrNotFound):
		return false, nil
	default:
		return false, err
	}
}

// openEmbedder picks the embedder: an OpenAI-compatible endpoint when configured, else the
// local ONNX model, else none (NoEmbedder then says why semantic search answers 503).
func (a *App) openEmbedder(ctx context.Context) error {
	cfg := a.Config
	var inner embed.Embedder
	switch {
	case cfg.Embeddings.URL != "":
		o, err := embed.NewOpenAI(ctx, embed.OpenAIConfig{BaseURL: cfg.Embeddings.URL, Model: cfg.Embeddings.Model, APIKey: cfg.Embeddings.Key})
		if err != nil {
			return fmt.Errorf("LECTERN_EMBEDDINGS_URL: %w", err)
		}
		inner = o
	case cfg.ModelDir != "":
		o, err := onnx.New(cfg.ModelDir)
		if err != nil {
			a.NoEmbedder = "semantic search is unavailable: no embedding model is installed in " + cfg.ModelDir +
				"; run `make model` (or set LECTERN_EMBEDDINGS_URL) and restart"
			if !errors.Is(err, onnx.ErrNoModel) {
				a.NoEmbedder = "semantic search is unavailable: the embedding model in " + cfg.ModelDir + " cannot be loaded (" +
					err.Error() + "); run `make model` (or set LECTERN_EMBEDDINGS_URL) and restart"
			}
			cfg.Logger.Warn("no embedding model: semantic search answers 503", "model_dir", cfg.ModelDir, "error", err)
			return nil
		}
		inner = o
		a.contextEmbedder = o
		a.closers = append(a.closers, o.Close)
	default:
		a.NoEmbedder = "semantic search is unavailable: no embedding model is configured; run `make model` (or set LECTERN_EMBEDDINGS_URL) and restart"
		return nil
	}
	lru := embed.NewLRU(embedCacheEntries)
	a.Embedder = embed.NewCached(inner, lru)
	// Imports embed per document from several index tasks at once; merged, their texts make
	// fuller batches of more even lengths (issue 27). Searches keep the bare model, whose
	// short calls go first.
	batched := embed.NewCoalescer(inner, embed.CoalesceOptions{})
	a.chunkEmbedder = batched
	a.importEmbedder = embed.NewCached(batched, lru)
	a.vectors = embed.NewRecordCache(a.Records, embed.RecordCacheOptions{FrontEntries: embedCacheEntries,
		Retention: time.Duration(cmp.Or(cfg.EmbeddingCacheDays, 30)) * 24 * time.Hour, Logger: cfg.Logger})
	return nil
}

// openContentIndex opens the content search index, recording the embedder's model:
// Elasticsearch in the distributed mode, else Bleve in <DataDir>/search.
func (a *App) openContentIndex(ctx context.Context) error {
	var model indexer.Model
	if a.chunkEmbedder != nil {
		info := a.chunkEmbedder.Model()
		model = indexer.Model{Name: info.Name, Dims: info.Dims}
	}
	switch {
	case a.Elastic != nil:
		if model.Dims == 0 {
			// Without a model the index is still needed for lexical and field search; create it
			// with the default model's dimension and no recorded model, so that configuring
			// that model later simply records it.
			if _, _, err := a.Elastic.EnsureIndex(ctx, mappings.Content, mappings.Options{EmbeddingDims: defaultEmbeddingDims}); err != nil {
				return err
			}
		}
		ix, err := ielastic.New(ctx, a.Elastic, ielastic.Options{Model: model, GroupWindow: indexGroupWindow})
		if err != nil {
			return err
		}
		a.Index = ix
	default:
		ix, err := ibleve.Open(filepath.Join(a.Config.DataDir, "search"), ibleve.Options{Model: model, GroupWindow: indexGroupWindow})
		if err != nil {
			return err
		}
		a.Index = ix
	}
	a.closers = append(a.closers, a.Index.Close)
	return nil
}

// openStores builds the domain stores over the record and blob stores, with the sealer that
// keeps secret-valued settings encrypted.
func (a *App) openStores(context.Context) error {
	sealer, err := settings.NewSealer(a.Config.SecretKey)
	if err != nil {
		return err
	}
	a.sealer = sealer
	a.Tenants = tenant.NewRegistry(a.Records)
	a.Settings = settings.NewStore(a.Records, settings.Default(), sealer)
	a.Jobs = jobs.NewStore(a.Records)
	a.subscriptions = &subscription.Store{Records: a.Records, Sealer: sealer}
	a.Courses = course.NewStore(a.Records)
	a.Registrations = registration.NewStore(a.Records, sealer, registration.WithClock(a.Config.Clock))
	a.runtime = scormrt.NewStore(a.Records)
	a.Content = content.NewStore(a.Records)
	a.Taxonomies = taxonomy.NewStore(a.Records, a.Blobs)
	a.ContentConfig = content.NewConfig(a.Records)
	a.ContentFields = content.NewFieldStore(a.Records)
	a.forwardPairs = &forward.Manager{Records: a.Records, Sealer: sealer}
	return nil
}

// openOutbound builds the one client of outbound HTTP (imports from URLs, webhooks,
// post-backs, forwarding), with the private-address policy of LECTERN_OUTBOUND_ALLOW.
func (a *App) openOutbound(context.Context) error {
	var err error
	a.Outbound, err = outbound.New(outbound.Config{Allow: a.Config.OutboundAllow, Timeout: 15 * time.Minute})
	if err != nil {
		return err
	}
	// Destinations are vetted when they are saved by the policy that sends to them.
	a.Settings.CheckOutbound = a.Outbound.CheckSaved
	a.forwardPairs.CheckURL = a.Outbound.CheckSaved
	return nil
}

// handleWebhookJobs makes every job that concludes, whatever its type, queue JOB_PROCESSED
// messages, and registers their fan-out and delivery.
func (a *App) handleWebhookJobs(context.Context) error {
	// The hooks queue a fan-out before the conclusion is written (engine course imports
	// conclude in the course store); the fan-out reads the job back and queues the messages.
	webhooks := &webhookjob.Handler{Subscriptions: a.subscriptions, Jobs: a.Jobs, Courses: a.Courses, Queue: a.Queue,
		Logger: a.Config.Logger, BaseDelay: a.Config.RetryBaseDelay, Outbound: a.Outbound, Outcome: a.Metrics.OutboundHook("webhook")}
	a.Jobs.OnConcluding(webhooks.JobConcluding)
	a.Courses.OnImportConcluding(webhooks.CourseImportConcluding)
	a.handle(a.Queue, webhookjob.TypeDeliver, webhooks)
	a.handle(a.Queue, webhookjob.TypeFanout, queue.HandlerFunc(webhooks.ProcessFanout))
	return nil
}

// handleTenantJobs registers the deletion of a tenant's data in every store.
func (a *App) handleTenantJobs(context.Context) error {
	a.handle(a.Queue, jobs.TypeTenantDelete, &jobs.TenantDeleter{Tenants: a.Tenants, Blobs: a.Blobs, Jobs: a.Jobs,
		Others: []jobs.Purger{a.Statements, a.Index}})
	return nil
}

// handleContentJobs registers the content service's jobs: taxonomy imports, content imports
// (read in the extraction child when ExtractCommand is set), index tasks on the index queue,
// and reindexing.
func (a *App) handleContentJobs(context.Context) error {
	cfg := a.Config
	a.handle(a.Queue, taxonomyjob.TypeImport, &taxonomyjob.Handler{Taxonomies: a.Taxonomies, Jobs: a.Jobs, Blobs: a.Blobs,
		Embedder: a.chunkEmbedder, Logger: cfg.Logger})
	importer := &contentjob.Importer{Content: a.Content, Jobs: a.Jobs, Blobs: a.Blobs,
		Outbound: a.Outbound, IndexQueue: a.IndexQueue, Limits: archive.DefaultLimits(), Logger: cfg.Logger}
	if len(cfg.ExtractCommand) > 0 {
		importer.InProcessText = inProcessText
		importer.Extractor = &sandbox.Runner{Command: cfg.ExtractCommand, Env: sandbox.RuntimeEnv(os.Environ()), Timeout: cfg.ExtractTimeout,
			MemoryBytes: cfg.ExtractMemory, Archive: archive.DefaultLimits()}
	}
	a.handle(a.Queue, contentjob.TypeImport, importer)
	// The embedding metrics observe the bare model under the vector cache: computed vectors count.
	contentIndexer := &contentjob.Indexer{Content: a.Content, Jobs: a.Jobs, Blobs: a.Blobs,
		Index: a.Index, Embedder: embed.Observe(a.chunkEmbedder, a.Metrics.Embedded), Vectors: a.vectors, Logger: cfg.Logger, Fields: a.fieldMaker(cfg)}
	if a.contextEmbedder != nil {
		contentIndexer.InContext = observedContext{a.contextEmbedder, a.Metrics.Embedded}
	}
	a.handle(a.IndexQueue, contentjob.TypeIndex, contentIndexer)
	a.Reindexer = &contentjob.Reindexer{Indexer: contentIndexer, Tenants: a.Tenants, Jobs: a.Jobs,
		Prepare: func(ctx context.Context) error {
			old, err := a.UpgradeContentIndex(ctx)
			if old != "" {
				a.Config.Logger.Info("content index alias moved to this version's index; delete the old one once the rebuild is done", "old", old)
			}
			return err
		}}
	a.handle(a.Queue, contentjob.TypeReindex, a.Reindexer)
	return nil
}

// handleCourseJobs builds the learner's path and registers the course engine's jobs:
// post-backs (the first attempt inline when the learner's path asks), the historical
// SCORM-to-xAPI conversion, and course imports, which validate against the schemas in
// SchemaDir when a package ships none.
func (a *App) handleCourseJobs(context.Context) error {
	cfg := a.Config
	a.launchTokens = launch.NewIssuer(cfg.SecretKey)
	postBacks := &postbackjob.Sender{Queue: a.Queue, Logger: cfg.Logger}
	var stored learner.StoredHook
	if cfg.LRSHooks.Stored != nil {
		stored = cfg.LRSHooks.Stored.StatementsStored
	}
	a.Learner = learner.New(learner.Deps{Courses: a.Courses, Registrations: a.Registrations, Runtime: a.runtime,
		Settings: a.Settings, Statements: a.Statements, LaunchTokens: a.launchTokens, PostBacks: postBacks,
		Stored: stored, StatementsCounted: a.Metrics.StatementsStored, PublicURL: cfg.PublicURL, Logger: cfg.Logger})
	postBacks.Handler = &postbackjob.Handler{Registrations: a.Registrations, Settings: a.Settings, Outbound: a.Outbound,
		Details: a.Learner, Logger: cfg.Logger, Outcome: a.Metrics.OutboundHook("postback")}
	a.handle(a.Queue, postbackjob.TypePostback, postBacks.Handler)
	a.handle(a.Queue, convertjob.TypeConvertHistorical, convertjob.Handler(a.Learner))
	var schemaDir fs.FS
	if cfg.SchemaDir != "" {
		if st, err := os.Stat(cfg.SchemaDir); err != nil || !st.IsDir() {
			return fmt.Errorf("schema directory %s is not a readable directory", cfg.SchemaDir)
		}
		schemaDir = os.DirFS(cfg.SchemaDir)
	}
	a.handle(a.Queue, importjob.TypeCourseImport, &importjob.Handler{Courses: a.Courses, Blobs: a.Blobs,
		Outbound: a.Outbound, Limits: archive.DefaultLimits(), Logger: cfg.Logger,
		Schemas: xsd.New(schemaDir), Settings: a.Settings, Statements: a.Statements})
	return nil
}

// openForwarder builds the statement forwarder, which the worker role runs.
func (a *App) openForwarder(context.Context) error {
	cfg := a.Config
	a.Forwarder = &forward.Forwarder{Pairs: a.forwardPairs, Statements: a.Statements, Client: a.Outbound, Logger: cfg.Logger,
		Tenants: a.forwardTenants, Config: a.forwardConfig, Outcome: a.Metrics.OutboundHook("forward")}
	if a.Elastic != nil {
		a.Forwarder.Settle = elasticForwardSettle
	}
	// The lease owner: one process owns the embedded data directory's forwarding, so a
	// restart resumes at once; distributed workers are told apart.
	a.Forwarder.ID = "embedded"
	if cfg.RedisURL != "" {
		host, _ := os.Hostname()
		a.Forwarder.ID = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), randomID())
	}
	return nil
}

// openServer builds the HTTP server over everything above.
func (a *App) openServer(context.Context) error {
	cfg := a.Config
	var preAuth *httpx.Budget
	if cfg.PreAuthBudget > 0 {
		preAuth = httpx.NewBudget(cfg.PreAuthBudget)
	}
	a.Server = server.New(server.Deps{Guard: cfg.AuthThrottle, PreAuth: preAuth, Forward: a.forwardPairs, Subscriptions: a.subscriptions, Outbound: a.Outbound, Records: a.Records, Blobs: a.Blobs, Queue: a.Queue, Tenants: a.Tenants,
		Settings: a.Settings, Jobs: a.Jobs, Courses: a.Courses, Registrations: a.Registrations, Launch: course.NewLaunchSigner(cfg.SecretKey),
		Runtime: a.runtime, Learner: a.Learner,
		Content: a.Content, Index: a.Index, Taxonomies: a.Taxonomies, ContentConfig: a.ContentConfig, ContentFields: a.ContentFields, IndexQueue: a.IndexQueue, Embedder: a.Embedder, NoEmbedder: a.NoEmbedder,
		Statements: a.Statements, Root: cfg.Root, Checks: a.checks, Logger: cfg.Logger,
		PublicURL: cfg.PublicURL, ContentURL: cfg.ContentURL, BodyLimit: cfg.BodyLimit, XAPIDefaultVersion: cfg.XAPIDefaultVersion,
		LaunchTokens: a.launchTokens, OAuth: oauth.New(a.Records, cfg.SecretKey, tenant.RecordRef),
		LRS:     cfg.LRSHooks,
		Version: cfg.Version, RecordBodyLimit: cfg.RecordBodyLimit,
		Metrics: a.Metrics, QueueConsole: a.queueConsole(), ConsoleSealer: a.sealer})
	return nil
}

// inProcessText is the largest plain-text file a content import reads in the worker rather
// than in the extraction child (contentjob.Importer.InProcessText): well under the child's
// memory limit, and a short text costs less to read than the child costs to start.
const inProcessText = 1 << 20

// indexGroupWindow is how long the search index waits for more content writes to commit
// with the first of a group (ibleve and ielastic Options.GroupWindow): a content import takes
// seconds, and writes committed together make one Bleve segment to merge later, or one
// Elasticsearch refresh, instead of one per document.
const indexGroupWindow = 50 * time.Millisecond

// indexConcurrency is Config.IndexConcurrency with its default.
func indexConcurrency(cfg Config) int {
	if cfg.IndexConcurrency > 0 {
		return cfg.IndexConcurrency
	}
	return 4 * runtime.NumCPU()
}

// elasticForwardSettle keeps the forwarder behind Elasticsearch's clock: a Put stamps stored
// before its documents are searchable, so the newest statements can appear out of stored
// order (see statements/elastic Put). The forwarder also stays behind the store's watermark,
// which covers acknowledged writes not yet refreshed; the two seconds are for batches other
// processes still have in flight, far above one bulk write.
const elasticForwardSettle = 2 * time.Second

// randomID is 8 random bytes in hex.
func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// forwardTenants lists the enabled tenants, whose forwarding pairs run.
func (a *App) forwardTenants(ctx context.Context) ([]string, error) {
	ts, err := a.Tenants.List(ctx, 0, math.MaxInt)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		if t.Enabled {
			out = append(out, t.ID)
		}
	}
	return out, nil
}

// forwardConfig reads a tenant's TinCanStatementForward* settings.
func (a *App) forwardConfig(ctx context.Context, tenant string) (forward.Config, error) {
	layer, err := a.Settings.TenantLayer(ctx, tenant)
	if err != nil {
		return forward.Config{}, err
	}
	cat := a.Settings.Catalogue()
	get := func(id string) (int, error) {
		v, err := cat.Resolve(id, layer)
		if err != nil {
			return 0, err
		}
		return strconv.Atoi(v)
	}
	var c forward.Config
	var errs []error
	for _, f := range []struct {
		id  string
		set func(int)
	}{
		{"TinCanStatementForwardSleepTime", func(n int) { c.Sleep = time.Duration(n) * time.Millisecond }},
		{"TinCanStatementForwardMaxBackoffHours", func(n int) { c.MaxBackoff = time.Duration(n) * time.Hour }},
		{"TinCanStatementForwardStmtBatchSize", func(n int) { c.Batch = n }},
		{"TinCanStatementForwardWebTimeout", func(n int) { c.Timeout = time.Duration(n) * time.Millisecond }},
	} {
		n, err := get(f.id)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.id, err))
			continue
		}
		f.set(n)
	}
	return c, errors.Join(errs...)
}

// UpgradeContentIndex points the content alias at this version's index when it still names
// an older one (a cluster upgraded from a release with another content mapping), so a rebuild
// (Reindexer) fills the new index; it returns the index left behind for the operator to
// delete ("" when the alias did not move, and always in the embedded mode).
func (a *App) UpgradeContentIndex(ctx context.Context) (string, error) {
	if a.Elastic == nil {
		return "", nil
	}
	dims := defaultEmbeddingDims
	if m, ok := a.Index.(interface{ Model() indexer.Model }); ok && m.Model().Dims > 0 {
		dims = m.Model().Dims
	}
	return a.Elastic.MoveAliasForward(ctx, mappings.Content, mappings.Options{EmbeddingDims: dims})
}

// defaultEmbeddingDims is the dimension of the default model (all-MiniLM-L6-v2).
const defaultEmbeddingDims = 384

// elasticReady checks that the cluster answers and that every index Lectern reads through an
// alias exists: a cluster that came back empty (a new cluster, a lost index) answers pings but
// cannot serve, so readiness names the missing aliases until they are recreated (the content
// index by its next write or search, everything by a restart) and refilled (`lectern reindex`,
// or a snapshot restore for statements; see docs/operations.md). One request answers all of
// it, so a probe every few seconds from every node costs the cluster little.
func elasticReady(c *elastic.Client) func(ctx context.Context) error {
	names := []string{mappings.Statements, mappings.XAPIDocuments, mappings.XAPIActivities,
		mappings.XAPIAttachments, mappings.Content}
	return func(ctx context.Context) error {
		found, err := c.Aliases(ctx, names...)
		if err != nil {
			return err
		}
		var what []string
		for _, name := range names {
			alias := c.Alias(name)
			switch {
			case len(found[alias]) > 0:
			case name == mappings.Content:
				what = append(what, alias+" (rebuild it: lectern reindex)")
			default:
				what = append(what, alias+" (statements: restore it from a snapshot)")
			}
		}
		if len(what) > 0 {
			return fmt.Errorf("missing index: %s", strings.Join(what, ", "))
		}
		// A cluster upgraded from a release with an older content mapping: this version's
		// writes do not fit the index the alias still names.
		if t := found[c.Alias(mappings.Content)]; len(t) == 1 && c.OlderIndex(mappings.Content, t[0]) {
			return fmt.Errorf("content index %s is of an older version than this Lectern writes (%s): run lectern reindex, which moves the alias and rebuilds it",
				t[0], c.Index(mappings.Content))
		}
		return nil
	}
}

// blobPing checks the blob store answers by statting a key that need not exist.
func blobPing(s blob.Store) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := s.Stat(ctx, "_lectern/ping")
		if err == nil || errors.Is(err, blob.ErrNotFound) {
			return nil
		}
		return err
	}
}

// Close releases every backend in reverse order of opening.
func (a *App) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}

// fieldMaker is the field generation of index tasks: the built-in generator on the search
// embedding model (or without one: frequency-ranked phrases, skills matched by words), or a
// chat-completions model when cfg.Generation names one.
func (a *App) fieldMaker(cfg Config) *fieldgen.Maker {
	builtin := &content.Builtin{Embedder: a.importEmbedder}
	var gen content.Generator = builtin
	if g := cfg.Generation; g.URL != "" {
		logger := cfg.Logger
		if logger == nil {
			logger = slog.Default()
		}
		gen = &chatgen.Generator{BaseURL: g.URL, Model: g.Model, APIKey: g.Key, Builtin: builtin,
			OnFallback: func(err error) { logger.Warn("field generation model failed; built-in generator used", "error", err) }}
	}
	m := &fieldgen.Maker{Generator: gen, Fields: a.ContentFields,
		Config: a.ContentConfig, Taxonomies: a.Taxonomies, Logger: cfg.Logger}
	if a.Embedder != nil {
		m.Model = a.Embedder.Model().Name
	}
	return m
}

// checkContentURL refuses a content origin that is not an http(s) origin, or is the APIs' own.
func checkContentURL(content, public string) error {
	u, err := url.Parse(content)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return fmt.Errorf("LECTERN_CONTENT_URL %q: give an origin, scheme and host only (such as https://content.example.com)", content)
	}
	if p, err := url.Parse(public); err == nil && strings.EqualFold(p.Scheme, u.Scheme) && strings.EqualFold(p.Host, u.Host) {
		return fmt.Errorf("LECTERN_CONTENT_URL %q is the same origin as LECTERN_PUBLIC_URL: course content must be served from an origin of its own (another host name or port)", content)
	}
	return nil
}

// observedContext counts each text read in context as one embedded vector, as the chunk
// embedder's calls are counted (lectern_embedded_vectors_total).
type observedContext struct {
	content.ContextEmbedder
	observe func(vectors int, d time.Duration)
}

func (o observedContext) EmbedInContext(ctx context.Context, texts, phrases []string) ([][]float32, [][][]float32, error) {
	start := time.Now()
	v, p, err := o.ContextEmbedder.EmbedInContext(ctx, texts, phrases)
	if o.observe != nil {
		n := len(v)
		if err != nil {
			n = 0
		}
		o.observe(n, time.Since(start))
	}
	return v, p, err
}
