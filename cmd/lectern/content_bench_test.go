package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/embed/onnx"
	"github.com/lectern-lms/lectern/indexer/eval"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// BenchmarkContentImport imports short text documents end to end through the HTTP API and
// reports docs/s. Per iteration CONTENT_BENCH_DOCS (default 1,000) plain-text documents of
// 80-300 words (one or two chunks) are posted by 4 clients to POST /api/v1/content, and the
// clock stops when every job is COMPLETED (extracted by the binary's extract subcommand,
// chunked, embedded by the local model, indexed). Cases:
//
//   - embedded: SQLite, Bleve, the in-process queue, local blobs;
//   - distributed: PostgreSQL, Elasticsearch, Asynq on Redis, MinIO of scripts/services.sh;
//
// each as after (the binary built from this tree, role "all") and, when
// CONTENT_BENCH_BASELINE names a git revision, before (the binary built from that revision,
// checked out in a temporary worktree), run back to back with after in each mode, so that
// the load of a shared machine changes little between the two. CONTENT_BENCH_INPROC=1 runs "after" in this process instead (loadConfig,
// app.Open, runRoles: the app exactly as the binary assembles it), so that -cpuprofile and
// -blockprofile see the server, the queues and the index task.
//
// Each mode first runs embed-only (issue 27): the same documents, extracted and chunked as
// the import does it, their chunks embedded by the model as the app loads it (onnx.New with
// its defaults) in one Embed call (the embedder's best batching: length-sorted batches on
// every run slot); docs/s of the embedding alone, the ceiling of the import. Run just before
// the import of the same mode, so that both see the same load; scripts/bench-report.sh
// prints the import's docs/s as a share of it. Then model-only: the same chunks and every text
// the field generation (content.Builtin, which an import runs after the chunks) embeds for
// those documents, each distinct text once (as the app's vector cache would spare the
// repeats), in one Embed call each: all the model work of the import, with nothing else. The
// generation is given the phrase vectors the index task reads in context (content.InContext),
// so it embeds the titles and the candidates no chunk holds.
func BenchmarkContentImport(b *testing.B) {
	modelDir := benchModelDir(b)
	n := benchCount(b, "CONTENT_BENCH_DOCS", 1000)
	dir := b.TempDir()
	bins := map[string]string{"after": buildBinary(b)}
	versions := []string{"after"}
	if rev := os.Getenv("CONTENT_BENCH_BASELINE"); rev != "" {
		bins["before"] = buildRevision(b, rev, filepath.Join(dir, "lectern-before"))
		versions = []string{"before", "after"}
	}
	inproc := os.Getenv("CONTENT_BENCH_INPROC") == "1"
	docs := benchDocuments(n)
	chunks, generated := benchChunks(b, modelDir, docs)
	for _, mode := range []string{"embedded", "distributed"} {
		for _, c := range []struct {
			name  string
			calls [][]string
		}{{"embed-only", [][]string{chunks}}, {"model-only", [][]string{chunks, generated}}} {
			b.Run(mode+"/"+c.name, func(b *testing.B) {
				var total, cpu time.Duration
				for i := 0; i < b.N; i++ {
					took, used := embedOnce(b, modelDir, c.calls)
					total, cpu = total+took, cpu+used
				}
				b.ReportMetric(float64(b.N*len(docs))/total.Seconds(), "docs/s")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N*len(docs)), "CPU-ms/doc")
				texts := 0
				for _, call := range c.calls {
					texts += len(call)
				}
				b.ReportMetric(float64(texts), "texts")
			})
		}
		for _, v := range versions {
			b.Run(mode+"/"+v, func(b *testing.B) {
				var total, cpu time.Duration
				for i := 0; i < b.N; i++ {
					took, used := importOnce(b, bins[v], modelDir, mode, docs, inproc && v == "after")
					total, cpu = total+took, cpu+used
				}
				b.ReportMetric(float64(b.N*len(docs))/total.Seconds(), "docs/s")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N*len(docs)), "CPU-ms/doc")
			})
		}
	}
}

// benchChunks is the chunk texts of docs as the import makes them: each read as plain text
// by content/extract (as the import task reads a .txt upload) and cut by content.Chunks (as
// the index task cuts its sections); and the distinct texts the field generation embeds
// for them (content.Builtin given the chunk and phrase vectors, as the index task gives them
// with a model that reads phrases in context; recorded by an embedder that answers unit
// vectors, since the texts do not depend on the vectors).
func benchChunks(b *testing.B, modelDir string, docs [][]byte) (chunks, generated []string) {
	ctx := context.Background()
	model, err := onnx.New(modelDir)
	if err != nil {
		b.Fatal(err)
	}
	defer model.Close()
	rec := &recordingEmbedder{seen: map[string]bool{}}
	gen := &content.Builtin{Embedder: rec}
	for i, d := range docs {
		name := fmt.Sprintf("doc-%04d.txt", i)
		res, err := extract.Extract(ctx, extract.KindText, extract.Source{ReaderAt: bytes.NewReader(d), Size: int64(len(d)), Name: name}, extract.Options{})
		if err != nil {
			b.Fatal(err)
		}
		pieces := content.Chunks(res.Sections)
		texts := make([]string, len(pieces))
		for j, pc := range pieces {
			chunks = append(chunks, pc.Text)
			texts[j] = pc.Text
		}
		title := strings.TrimSpace(res.Title)
		if title == "" {
			title = strings.TrimSuffix(name, filepath.Ext(name))
		}
		vecs, phrases, err := content.InContext(ctx, model, texts, nil, content.Candidates(title, res.Sections))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := gen.Generate(ctx, content.GenerateInput{Title: title, Sections: res.Sections, ChunkVectors: vecs, PhraseVectors: phrases}); err != nil {
			b.Fatal(err)
		}
	}
	return chunks, rec.texts
}

// recordingEmbedder answers unit vectors and keeps the distinct texts it was asked for.
type recordingEmbedder struct {
	seen  map[string]bool
	texts []string
}

func (r *recordingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if !r.seen[t] {
			r.seen[t] = true
			r.texts = append(r.texts, t)
		}
		out[i] = unitVector()
	}
	return out, nil
}

func (r *recordingEmbedder) Model() embed.Info { return embed.Info{Name: "recording", Dims: 384} }

func unitVector() []float32 {
	v := make([]float32, 384)
	v[0] = 1
	return v
}

// embedOnce loads the model as the app does (onnx.New with its defaults), warms it up, and
// times one Embed call per element of calls, one after the other: wall time and this
// process's CPU time.
func embedOnce(b *testing.B, modelDir string, calls [][]string) (time.Duration, time.Duration) {
	b.StopTimer()
	e, err := onnx.New(modelDir)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	for _, texts := range calls {
		if _, err := e.Embed(ctx, texts[:min(len(texts), 64)]); err != nil {
			b.Fatal(err)
		}
	}
	b.StartTimer()
	start, cpu0 := time.Now(), rusageCPU(syscall.RUSAGE_SELF)
	for _, texts := range calls {
		if _, err := e.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	took, used := time.Since(start), rusageCPU(syscall.RUSAGE_SELF)-cpu0
	b.StopTimer()
	return took, used
}

// buildRevision builds cmd/lectern of git revision rev (a temporary worktree of this
// repository) into bin.
func buildRevision(b *testing.B, rev, bin string) string {
	wt := filepath.Join(b.TempDir(), "baseline")
	if out, err := exec.Command("git", "worktree", "add", "--detach", wt, rev).CombinedOutput(); err != nil {
		b.Fatalf("git worktree add %s: %v\n%s", rev, err, out)
	}
	b.Cleanup(func() { _ = exec.Command("git", "worktree", "remove", "--force", wt).Run() })
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/lectern")
	cmd.Dir = wt
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build %s: %v\n%s", rev, err, out)
	}
	return bin
}

// benchDocuments returns n plain-text documents of 80-300 words of the evaluation set's
// vocabulary (500-2,000 characters: one or two chunks of content.ChunkChars), each opening
// with a title line; deterministic.
func benchDocuments(n int) [][]byte {
	r := rand.New(rand.NewPCG(7, 11))
	voc := eval.Vocabulary
	stop := []string{"the", "of", "and", "to", "in", "a", "is", "for"}
	out := make([][]byte, n)
	for i := range out {
		var sb strings.Builder
		fmt.Fprintf(&sb, "Document %d about %s and %s\n\n", i, voc[r.IntN(len(voc))], voc[r.IntN(len(voc))])
		words := 80 + r.IntN(221)
		for w := range words {
			if w > 0 {
				if w%12 == 0 {
					sb.WriteString(". ")
				} else {
					sb.WriteByte(' ')
				}
			}
			if w%4 == 3 {
				sb.WriteString(stop[r.IntN(len(stop))])
			} else {
				sb.WriteString(voc[r.IntN(len(voc))])
			}
		}
		sb.WriteString(".\n")
		out[i] = []byte(sb.String())
	}
	return out
}

// importOnce starts a fresh app in mode (the binary bin as a process, or in this process when
// inproc), posts docs and waits for every job; it returns the time from the first POST to
// the last job's completion and the CPU time the app used meanwhile, its extraction children
// included (not the backends': PostgreSQL, Redis, MinIO and Elasticsearch serve everyone on
// a shared machine).
func importOnce(b *testing.B, bin, modelDir, mode string, docs [][]byte, inproc bool) (time.Duration, time.Duration) {
	b.StopTimer()
	dataDir := b.TempDir()
	addr := freeAddr(b)
	env := map[string]string{"LECTERN_ADDR": addr, "LECTERN_DATA_DIR": dataDir, "LECTERN_ROOT_USER": "root",
		"LECTERN_ROOT_PASSWORD": "bench-password", "LECTERN_SECRET_KEY": "bench-secret", "LECTERN_MODEL_DIR": modelDir,
		"LECTERN_LOG_LEVEL": "warn"}
	if mode == "distributed" {
		bucket := fmt.Sprintf("contentbench-%d", time.Now().UnixNano())
		env["LECTERN_POSTGRES_URL"] = testenv.FreshPostgres(b, testenv.External(b, "LECTERN_TEST_POSTGRES_URL"))
		env["LECTERN_REDIS_URL"] = benchRedis(b, testenv.External(b, "LECTERN_TEST_REDIS_URL"))
		env["LECTERN_S3_ENDPOINT"] = testenv.External(b, "LECTERN_TEST_S3_ENDPOINT")
		env["LECTERN_S3_ACCESS_KEY"] = testenv.External(b, "LECTERN_TEST_S3_ACCESS_KEY")
		env["LECTERN_S3_SECRET_KEY"] = testenv.External(b, "LECTERN_TEST_S3_SECRET_KEY")
		env["LECTERN_S3_BUCKET"] = bucket
		env["LECTERN_ELASTICSEARCH_URL"] = testenv.External(b, "LECTERN_TEST_ELASTICSEARCH_URL")
		env["LECTERN_ELASTICSEARCH_INDEX_PREFIX"] = bucket + "_"
		b.Cleanup(func() {
			removeBucket(b, bucket)
			dropElasticIndexes(b, env["LECTERN_ELASTICSEARCH_URL"], bucket+"_")
		})
	}
	var appCPU func() time.Duration
	if inproc {
		appCPU = func() time.Duration { return rusageCPU(syscall.RUSAGE_SELF) + rusageCPU(syscall.RUSAGE_CHILDREN) }
		cfg, err := loadConfig(func(k string) string { return env[k] }, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		cfg.ExtractCommand = []string{bin, "extract"} // the test binary has no extract subcommand
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		ctx, cancel := context.WithCancel(context.Background())
		a, err := app.Open(ctx, cfg)
		if err != nil {
			cancel()
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- runRoles(ctx, a, cfg, "all", nil) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				b.Errorf("app: %v", err)
			}
			a.Close()
		}()
	} else {
		cmd := exec.Command(bin, "all")
		cmd.Env = os.Environ()
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		appCPU = func() time.Duration { return procCPU(b, cmd.Process.Pid) }
		defer func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}()
	}
	waitReady(b, "http://"+addr+"/readyz")
	base := "http://" + addr
	took, cpu := importDocs(b, base, docs, appCPU)

	// The last documents are searchable, semantically too.
	req, _ := http.NewRequest("GET", base+"/api/v1/content/search?search_type=SEMANTIC&term="+
		strings.Fields(string(docs[len(docs)-1]))[5], nil)
	req.SetBasicAuth("root", "bench-password")
	req.Header.Set("tenant_id", "bench")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(raw), "content_id") {
		b.Errorf("semantic search after the import: %d %.300s", res.StatusCode, raw)
	}
	return took, cpu
}

// rusageCPU is the user and system time of who (RUSAGE_SELF or RUSAGE_CHILDREN, the children
// reaped so far).
func rusageCPU(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is the CPU time of process pid and of its reaped children (/proc/PID/stat utime,
// stime, cutime, cstime, in clock ticks of 1/100 s).
func procCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("CPU time of the app: %v", err)
	}
	// Fields after the command name (which is in parentheses and may hold spaces): state is
	// field 3, utime 14, stime 15, cutime 16, cstime 17.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	var ticks int64
	for _, i := range []int{14, 15, 16, 17} {
		n, _ := strconv.ParseInt(f[i-3], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// importDocs creates the tenant "bench", then times (wall and the CPU that cpu counts) the
// import of docs through POST /api/v1/content from 4 clients until every job is COMPLETED.
func importDocs(b *testing.B, base string, docs [][]byte, cpu func() time.Duration) (took, used time.Duration) {
	if st, body := benchCall(b, "POST", base+"/api/v1/app_management/tenants", `{"tenant_id":"bench","enabled":true}`); st != 201 {
		b.Fatalf("create tenant: %d %s", st, body)
	}
	b.StartTimer()
	start, cpu0 := time.Now(), cpu()
	ids := make([]string, len(docs))
	var wg sync.WaitGroup
	const clients = 4
	for c := range clients {
		wg.Go(func() {
			for i := c; i < len(docs); i += clients {
				ids[i] = postContent(b, base, fmt.Sprintf("doc-%04d.txt", i), docs[i])
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" {
			b.FailNow()
		}
		waitJob(b, base, id)
	}
	took, used = time.Since(start), cpu()-cpu0
	b.StopTimer()
	return took, used
}

func postContent(b *testing.B, base, name string, data []byte) string {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", base+"/api/v1/content", &body)
	req.SetBasicAuth("root", "bench-password")
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("tenant_id", "bench")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Error(err)
		return ""
	}
	defer res.Body.Close()
	var j struct{ ID string }
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != 202 || json.Unmarshal(raw, &j) != nil || j.ID == "" {
		b.Errorf("upload %s: %d %s", name, res.StatusCode, raw)
		return ""
	}
	return j.ID
}

// waitJob polls a content import job until it is COMPLETED (fails the benchmark on FAILED
// or after 10 minutes).
func waitJob(b *testing.B, base, id string) {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		req, _ := http.NewRequest("GET", base+"/api/v1/jobs/"+id, nil)
		req.SetBasicAuth("root", "bench-password")
		req.Header.Set("tenant_id", "bench")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var j struct{ Status string }
		if res.StatusCode != 200 || json.Unmarshal(raw, &j) != nil {
			b.Fatalf("job %s: %d %s", id, res.StatusCode, raw)
		}
		switch j.Status {
		case "COMPLETED":
			return
		case "FAILED":
			b.Fatalf("job %s failed: %s", id, raw)
		}
		if time.Now().After(deadline) {
			b.Fatalf("job %s not complete after 10 minutes: %s", id, raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dropElasticIndexes deletes the benchmark's Elasticsearch indexes (prefix*).
func dropElasticIndexes(b *testing.B, url, prefix string) {
	req, _ := http.NewRequest("DELETE", strings.TrimRight(url, "/")+"/"+prefix+"*", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Errorf("drop indexes %s*: %v", prefix, err)
		return
	}
	res.Body.Close()
}

// benchModelDir is the installed embedding model the import benchmarks need.
func benchModelDir(b *testing.B) string {
	b.Helper()
	d := os.Getenv("LECTERN_TEST_MODEL_DIR")
	if d == "" {
		b.Fatal("LECTERN_TEST_MODEL_DIR must name the installed model (scripts/install-model.sh)")
	}
	return d
}

// benchCount is the positive number in the environment variable name, else def.
func benchCount(b *testing.B, name string, def int) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}
