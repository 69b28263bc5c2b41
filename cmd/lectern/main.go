// Command lectern is the one Lectern binary. Roles: serve (HTTP), worker (job handlers),
// indexer (search indexing), all (the three in one process, the default). This is the only
// place that reads configuration (LECTERN_* environment variables, see docs/configuration.md).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/content/extract/sandbox"
	"github.com/lectern-lms/lectern/indexer/embed/onnx"
	"github.com/lectern-lms/lectern/server"
	"github.com/lectern-lms/lectern/workers/contentjob"
	"github.com/lectern-lms/lectern/workers/outbound"
	"github.com/lectern-lms/lectern/workers/queue"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "lectern:", err)
		os.Exit(1)
	}
}

const usage = `usage: lectern [serve|worker|indexer|all]
       lectern import PATH_OR_URL --tenant T --course ID [--new-version]
       lectern reindex
       lectern recreate-statements

  serve    HTTP APIs only (enqueues jobs, runs none)
  worker   job handlers only (course and content imports, tenant deletions) and statement forwarding
  indexer  search indexing only (chunking, embeddings, index writes)
  all      everything in one process (default)
  import   upload a course package to a running server and print its activity tree
  reindex  rebuild the content search index from the stored content versions, in place, and
           exit (with Elasticsearch, while the service runs; with the embedded index, stop
           the server first, or ask it instead: POST /api/v1/app_management/reindex)
  recreate-statements
           create missing statement indices empty (Elasticsearch) and exit: only when the
           statements are lost and there is no snapshot to restore (docs/operations.md)

Configuration comes from LECTERN_* environment variables; see docs/configuration.md.`

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	role := "all"
	if len(args) > 0 {
		role = args[0]
	}
	switch role {
	case "import":
		return runImport(ctx, args[1:], getenv, stdout, stderr)
	case "extract":
		// Not for people: the worker starts the binary itself with this subcommand to read
		// one uploaded content item under a memory limit and a deadline
		// (content/extract/sandbox); the file is descriptor 3, the request comes on stdin.
		return sandbox.Serve(ctx, os.Stdin, stdout, os.NewFile(3, "content"))
	case "serve", "worker", "indexer", "all", "reindex", "recreate-statements":
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		return fmt.Errorf("unknown role %q\n%s", role, usage)
	}
	cfg, err := loadConfig(getenv, stdout)
	if err != nil {
		return err
	}
	cfg.Logger = newLogger(getenv("LECTERN_LOG_LEVEL"), stderr)
	cfg.RecreateStatements = role == "recreate-statements"
	limit, from, err := memoryLimit(getenv, os.ReadFile)
	if err != nil {
		return err
	}
	if limit > 0 {
		cfg.Logger.Info("memory limit", "bytes", limit, "from", from)
	}
	// The live heap of a server is small (a few MB), so at Go's default of 100 the collector
	// ran every few requests; each cycle stops the world twice and takes CPU from requests,
	// the largest share of the record store's query latency tail (docs/benchmarks.md, issue
	// 12 item 2). The policy collects less often while the heap is small and holds a large
	// one within twice what is live (app.RunGCPolicy). GOGC or GOMEMLIMIT, when set, decide.
	switch {
	case getenv("GOGC") == "" && getenv("GOMEMLIMIT") == "":
		gcCtx, stopGC := context.WithCancel(ctx)
		defer stopGC()
		go app.RunGCPolicy(gcCtx, limit)
	case getenv("GOGC") == "": // GOMEMLIMIT is the limit (memoryLimit gave none)
		debug.SetGCPercent(app.DefaultGCPercent)
	case limit > 0:
		debug.SetMemoryLimit(limit)
	}
	var content net.Listener
	if role == "serve" || role == "all" {
		// The content origin's listener is bound before the app opens, so a derived
		// LECTERN_CONTENT_URL names the port it got.
		if content, err = listenContent(&cfg, getenv("LECTERN_CONTENT_ADDR")); err != nil {
			return err
		}
	}
	a, err := app.Open(ctx, cfg)
	if err != nil {
		if content != nil {
			content.Close()
		}
		return err
	}
	defer a.Close()
	switch role {
	case "reindex":
		return runReindex(ctx, a, stdout)
	case "recreate-statements":
		if a.Elastic == nil {
			return errors.New("recreate-statements: statements are in Elasticsearch only in the distributed mode (LECTERN_ELASTICSEARCH_URL)")
		}
		fmt.Fprintln(stdout, "statement indices present; any that were missing were created empty")
		return nil
	}
	return runRoles(ctx, a, cfg, role, content)
}

// defaultContentAddr is the content origin's default address: LECTERN_ADDR's host and the port
// after its (0, an ephemeral port, when LECTERN_ADDR's is 0).
func defaultContentAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("LECTERN_ADDR %q: %w", addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n >= 65535 {
		return "", fmt.Errorf("LECTERN_ADDR %q: the content origin takes the next port; set LECTERN_CONTENT_ADDR", addr)
	}
	if n > 0 {
		n++
	}
	return net.JoinHostPort(host, strconv.Itoa(n)), nil
}

// listenContent binds the content origin's listener: LECTERN_CONTENT_ADDR, by default the
// port after LECTERN_ADDR's (an ephemeral one when that is 0). Without LECTERN_CONTENT_URL the
// content origin is LECTERN_PUBLIC_URL's scheme and host with that port: a second port needs
// no DNS, and a browser keeps the two origins apart (docs/security.md, "Content isolation").
func listenContent(cfg *app.Config, addr string) (net.Listener, error) {
	if addr == "" {
		var err error
		if addr, err = defaultContentAddr(cfg.Addr); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("LECTERN_CONTENT_ADDR (the content origin's port): %w", err)
	}
	if cfg.ContentURL == "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("LECTERN_PUBLIC_URL: %w", err)
		}
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		cfg.ContentURL = u.Scheme + "://" + net.JoinHostPort(u.Hostname(), port)
	}
	if err := cfg.Validate(); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// runRoles runs role's queues, forwarding loop and listener on the opened app until ctx ends
// (SIGTERM, SIGINT) or the listener fails, then stops them gracefully; the content import
// benchmark runs the app in-process through it, exactly as the binary does.
func runRoles(ctx context.Context, a *app.App, cfg app.Config, role string, content net.Listener) error {
	errc := make(chan error, 2)
	// The roles share the queue backend but not its queues: the worker role consumes the
	// default queue (imports, deletions, ...), the indexer role the index queue (content:index
	// tasks), and all consumes both.
	var started []queue.Queue
	for _, c := range []struct {
		name string
		on   bool
		q    queue.Queue
	}{{"worker", role == "worker" || role == "all", a.Queue}, {"indexer", role == "indexer" || role == "all", a.IndexQueue}} {
		if !c.on {
			continue
		}
		if err := c.q.Start(ctx); err != nil {
			stopAll(cfg, a, started, false, nil)
			return fmt.Errorf("start %s: %w", c.name, err)
		}
		started = append(started, c.q)
	}
	forwarderDone := make(chan struct{})
	close(forwarderDone)
	if role == "worker" || role == "all" {
		// The forwarding role: one loop per worker process. Several workers may run it; the
		// position's compare-and-set keeps them from moving it backwards, and the
		// destination's id check absorbs a batch two of them sent.
		forwarderDone = make(chan struct{})
		go func() { defer close(forwarderDone); a.Forwarder.Run(ctx) }()
	}
	var metricsSrv *http.Server
	if cfg.MetricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			stopAll(cfg, a, started, false, nil)
			return fmt.Errorf("LECTERN_METRICS_ADDR: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", a.Metrics.Handler())
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := metricsSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics listener: %w", err)
			}
		}()
		cfg.Logger.Info("metrics", "addr", ln.Addr().String())
	}
	serving := role == "serve" || role == "all"
	if serving {
		// Bind before saying "listening": whoever waits for that line (an orchestrator's log
		// probe, the tests) may connect at once.
		ln, err := net.Listen("tcp", cfg.Addr)
		if err != nil {
			stopAll(cfg, a, started, false, metricsSrv)
			return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
		}
		go func() { errc <- a.Server.Serve(ln) }()
		if content != nil {
			go func() { errc <- a.Server.ServeContent(content) }()
		}
		cfg.Logger.Info("listening", "addr", cfg.Addr, "role", role, "public_url", cfg.PublicURL, "content_url", cfg.ContentURL)
	} else {
		cfg.Logger.Info("running", "role", role)
	}
	var err2 error
	select {
	case <-ctx.Done():
	case err2 = <-errc:
	}
	// The forwarder follows ctx (SIGTERM); a batch it was sending is sent again by the next
	// process, whose destination's id check absorbs it.
	stopAll(cfg, a, started, serving, metricsSrv)
	select {
	case <-forwarderDone:
	case <-time.After(time.Second): // it follows ctx; never hold the exit for it
	}
	return err2
}

// stopAll is the graceful stop, bounded by the shutdown deadline (LECTERN_SHUTDOWN_TIMEOUT):
// the HTTP server stops accepting connections and finishes its requests while the queues stop
// taking tasks and let running jobs finish for DrainTimeout; jobs still running then are
// cancelled and handed back to their queue (pending again), where the next process picks
// them up. The caller's deferred App.Close then releases the backends.
func stopAll(cfg app.Config, a *app.App, started []queue.Queue, serving bool, metricsSrv *http.Server) {
	begin := time.Now()
	cfg.Logger.Info("stopping", "deadline", cfg.ShutdownDeadline().String())
	ctx, cancel := context.WithTimeout(context.Background(), cfg.DrainTimeout())
	defer cancel()
	var wg sync.WaitGroup
	if serving {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Server.App().ShutdownWithContext(ctx); err != nil {
				cfg.Logger.Warn("http shutdown", "error", err)
			}
		}()
	}
	for _, q := range started {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := q.Shutdown(ctx); err != nil {
				cfg.Logger.Warn("queue shutdown: running jobs were handed back", "error", err)
			}
		}()
	}
	wg.Wait()
	if metricsSrv != nil {
		// Last, so a scrape can watch the drain; a scrape answers in well under a second.
		sctx, scancel := context.WithTimeout(context.Background(), time.Second)
		_ = metricsSrv.Shutdown(sctx)
		scancel()
	}
	cfg.Logger.Info("stopped", "took_ms", time.Since(begin).Milliseconds())
}

func newLogger(level string, w io.Writer) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil || level == "" {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// cacheDir is where downloads and installed models live: LECTERN_CACHE_DIR, else
// $HOME/.cache/lectern; "" when neither is set.
func cacheDir(getenv func(string) string) string {
	if d := getenv("LECTERN_CACHE_DIR"); d != "" {
		return d
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".cache", "lectern")
	}
	return ""
}

func loadConfig(getenv func(string) string, stdout io.Writer) (app.Config, error) {
	env := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	cfg := app.Config{
		Addr:        env("LECTERN_ADDR", ":8080"),
		MetricsAddr: getenv("LECTERN_METRICS_ADDR"),
		DataDir:     env("LECTERN_DATA_DIR", "data"),
		PostgresURL: getenv("LECTERN_POSTGRES_URL"),
		RedisURL:    getenv("LECTERN_REDIS_URL"),
		S3: app.S3Config{Endpoint: getenv("LECTERN_S3_ENDPOINT"), AccessKey: getenv("LECTERN_S3_ACCESS_KEY"),
			SecretKey: getenv("LECTERN_S3_SECRET_KEY"), Bucket: getenv("LECTERN_S3_BUCKET")},
		Elastic: app.ElasticConfig{URL: getenv("LECTERN_ELASTICSEARCH_URL"), IndexPrefix: getenv("LECTERN_ELASTICSEARCH_INDEX_PREFIX")},
		// Empty: the queues take the index prefix (app.Config.QueuePrefix).
		QueuePrefix: getenv("LECTERN_QUEUE_PREFIX"),
		Version:     version,
		Embeddings: app.EmbeddingsConfig{URL: getenv("LECTERN_EMBEDDINGS_URL"), Model: getenv("LECTERN_EMBEDDINGS_MODEL"),
			Key: getenv("LECTERN_EMBEDDINGS_KEY")},
		Generation: app.GenerationConfig{URL: getenv("LECTERN_GENERATION_URL"), Model: getenv("LECTERN_GENERATION_MODEL"),
			Key: getenv("LECTERN_GENERATION_KEY")},
	}
	if cfg.SchemaDir = getenv("LECTERN_SCHEMA_DIR"); cfg.SchemaDir != "" {
		if st, err := os.Stat(cfg.SchemaDir); err != nil || !st.IsDir() {
			return cfg, fmt.Errorf("LECTERN_SCHEMA_DIR: %s is not a readable directory", cfg.SchemaDir)
		}
	}
	if cfg.ModelDir = getenv("LECTERN_MODEL_DIR"); cfg.ModelDir == "" {
		// Without a cache directory (no LECTERN_CACHE_DIR and no HOME) there is no default
		// model; the server starts and semantic search says how to install one.
		if cache := cacheDir(getenv); cache != "" {
			cfg.ModelDir = onnx.DefaultModelDir(cache)
		}
	}
	var err error
	if cfg.S3.UseSSL, err = parseBool("LECTERN_S3_USE_SSL", getenv("LECTERN_S3_USE_SSL")); err != nil {
		return cfg, err
	}
	if cfg.BodyLimit, err = parseInt("LECTERN_MAX_BODY_BYTES", env("LECTERN_MAX_BODY_BYTES", strconv.Itoa(512<<20))); err != nil {
		return cfg, err
	}
	if cfg.RecordBodyLimit, err = parseInt("LECTERN_MAX_XAPI_BODY_BYTES", env("LECTERN_MAX_XAPI_BODY_BYTES", strconv.Itoa(64<<20))); err != nil {
		return cfg, err
	}
	if cfg.ShutdownTimeout, err = parseDuration("LECTERN_SHUTDOWN_TIMEOUT", env("LECTERN_SHUTDOWN_TIMEOUT", app.DefaultShutdownTimeout.String())); err != nil {
		return cfg, err
	}
	if cfg.WorkerConcurrency, err = parseInt("LECTERN_WORKER_CONCURRENCY", env("LECTERN_WORKER_CONCURRENCY", "0")); err != nil {
		return cfg, err
	}
	if cfg.IndexConcurrency, err = parseInt("LECTERN_INDEX_CONCURRENCY", env("LECTERN_INDEX_CONCURRENCY", "0")); err != nil {
		return cfg, err
	}
	if cfg.ExtractTimeout, err = parseDuration("LECTERN_EXTRACT_TIMEOUT", env("LECTERN_EXTRACT_TIMEOUT", sandbox.DefaultTimeout.String())); err != nil {
		return cfg, err
	}
	mem, err := parseInt("LECTERN_EXTRACT_MEMORY_MB", env("LECTERN_EXTRACT_MEMORY_MB", strconv.Itoa(sandbox.DefaultMemory>>20)))
	if err != nil {
		return cfg, err
	}
	if mem < 32 {
		return cfg, errors.New("LECTERN_EXTRACT_MEMORY_MB must be at least 32")
	}
	cfg.ExtractMemory = int64(mem) << 20
	// Content is read in a child process of this same binary; without a path to it (a
	// binary deleted while running) it is read in the worker process.
	if exe, err := os.Executable(); err == nil {
		cfg.ExtractCommand = []string{exe, "extract"}
	}
	if cfg.EmbeddingCacheDays, err = parseInt("LECTERN_EMBEDDING_CACHE_DAYS", env("LECTERN_EMBEDDING_CACHE_DAYS", "30")); err != nil {
		return cfg, err
	}
	if cfg.EmbeddingCacheDays == 0 {
		return cfg, errors.New("LECTERN_EMBEDDING_CACHE_DAYS must be at least 1")
	}
	switch cfg.XAPIDefaultVersion = env("LECTERN_XAPI_DEFAULT_VERSION", "2.0.0"); cfg.XAPIDefaultVersion {
	case "1.0.3", "2.0.0":
	default:
		return cfg, fmt.Errorf("LECTERN_XAPI_DEFAULT_VERSION must be 1.0.3 or 2.0.0, not %q", cfg.XAPIDefaultVersion)
	}
	if cfg.OutboundAllow, err = outbound.ParseAllow(getenv("LECTERN_OUTBOUND_ALLOW")); err != nil {
		return cfg, fmt.Errorf("LECTERN_OUTBOUND_ALLOW: %w", err)
	}
	port := cfg.Addr[strings.LastIndex(cfg.Addr, ":")+1:]
	cfg.PublicURL = strings.TrimRight(env("LECTERN_PUBLIC_URL", "http://localhost:"+port), "/")
	cfg.ContentURL = strings.TrimRight(getenv("LECTERN_CONTENT_URL"), "/")
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return cfg, fmt.Errorf("LECTERN_DATA_DIR: %w", err)
	}
	if cfg.Root, err = rootCredentials(getenv, cfg.DataDir, stdout); err != nil {
		return cfg, err
	}
	if cfg.SecretKey, err = secretKey(getenv, cfg.DataDir); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func parseBool(name, v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s must be true or false, not %q", name, v)
	}
	return b, nil
}

func parseInt(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s must be a non-negative integer, not %q", name, v)
	}
	return n, nil
}

func parseDuration(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s must be a positive duration such as 90s or 2m, not %q", name, v)
	}
	return d, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// rootCredentials takes LECTERN_ROOT_USER/PASSWORD, or generates them on first start, keeps
// them in the data directory (mode 0600) and prints them once.
func rootCredentials(getenv func(string) string, dataDir string, stdout io.Writer) (server.RootCredentials, error) {
	user, pass := getenv("LECTERN_ROOT_USER"), getenv("LECTERN_ROOT_PASSWORD")
	if user != "" || pass != "" {
		if user == "" || pass == "" {
			return server.RootCredentials{}, errors.New("set both LECTERN_ROOT_USER and LECTERN_ROOT_PASSWORD, or neither")
		}
		if strings.Contains(user, ":") || strings.Contains(user, ".") {
			return server.RootCredentials{}, errors.New("LECTERN_ROOT_USER must not contain ':' or '.'")
		}
		return server.RootCredentials{User: user, Password: pass}, nil
	}
	path := filepath.Join(dataDir, "root-credentials.json")
	var rc server.RootCredentials
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &rc); err != nil || rc.User == "" || rc.Password == "" {
			return rc, fmt.Errorf("%s is unreadable; delete it to generate new root credentials", path)
		}
		return rc, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return rc, err
	}
	rc = server.RootCredentials{User: "root", Password: randomHex(20)}
	b, _ := json.Marshal(rc)
	if err := writeFileSync(path, b); err != nil {
		return rc, err
	}
	fmt.Fprintf(stdout, "Generated root credentials (shown once; kept in %s):\n  LECTERN_ROOT_USER=%s\n  LECTERN_ROOT_PASSWORD=%s\n", path, rc.User, rc.Password)
	return rc, nil
}

// secretKey takes LECTERN_SECRET_KEY or a key generated once into the data directory.
func secretKey(getenv func(string) string, dataDir string) (string, error) {
	if k := getenv("LECTERN_SECRET_KEY"); k != "" {
		return k, nil
	}
	path := filepath.Join(dataDir, "secret.key")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	k := randomHex(32)
	return k, writeFileSync(path, []byte(k+"\n"))
}

func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runReindex is `lectern reindex`: it rebuilds the content index in this process (see
// contentjob.Reindexer), printing its progress, at most a line a second.
func runReindex(ctx context.Context, a *app.App, stdout io.Writer) error {
	var last time.Time
	p, err := a.Reindexer.Run(ctx, func(p contentjob.Progress) {
		if time.Since(last) >= time.Second {
			last = time.Now()
			fmt.Fprintf(stdout, "reindexed %d of %d content versions\n", p.Done, p.Total)
		}
	})
	for _, s := range p.Skipped {
		fmt.Fprintf(stdout, "skipped %s\n", s)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "reindexed %d of %d content versions: done\n", p.Done, p.Total)
	if len(a.StatementsMissing) > 0 {
		// Not something a reindex can rebuild: say so where the operator is looking.
		fmt.Fprintf(stdout, "statements NOT rebuilt: %s missing; restore from a snapshot, or `lectern recreate-statements` to start empty\n",
			strings.Join(a.StatementsMissing, ", "))
	}
	return nil
}
