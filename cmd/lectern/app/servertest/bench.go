package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/course/coursetest"
	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/server"
)

// CommitBenchServer starts the application in one mode for a benchmark (the test helpers take a
// *testing.T) and returns its base URL.
func CommitBenchServer(b *testing.B, mode string) string {
	cfg := app.Config{DataDir: b.TempDir(), Root: server.RootCredentials{User: RootUser, Password: RootPass},
		SecretKey: "bench-secret", Version: "bench", BodyLimit: 8 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mode == "distributed" {
		cfg.PostgresURL = testenv.FreshPostgres(b, testenv.External(b, "LECTERN_TEST_POSTGRES_URL"))
		cfg.RedisURL = testenv.FreshRedis(b, testenv.External(b, "LECTERN_TEST_REDIS_URL"))
		cfg.S3 = app.S3Config{Endpoint: testenv.External(b, "LECTERN_TEST_S3_ENDPOINT"),
			AccessKey: testenv.External(b, "LECTERN_TEST_S3_ACCESS_KEY"), SecretKey: testenv.External(b, "LECTERN_TEST_S3_SECRET_KEY"),
			Bucket: RandomName("benchplayer-")}
		cfg.Elastic = app.ElasticConfig{URL: testenv.External(b, "LECTERN_TEST_ELASTICSEARCH_URL"), IndexPrefix: RandomName("benchplayer_") + "_"}
	}
	base, stop := BenchServer(b, cfg)
	b.Cleanup(stop)
	return base
}

// CommitBenchCall sends one request as root (without following redirects) and fails the benchmark
// on another status than want.
func CommitBenchCall(b *testing.B, method, url, ct string, body []byte, want int) *http.Response {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.SetBasicAuth(RootUser, RootPass)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != want {
		b.Fatalf("%s %s: %d %s", method, url, res.StatusCode, out)
	}
	res.Body = io.NopCloser(bytes.NewReader(out))
	return res
}

// CommitBenchJSON decodes a benchmark response's JSON body into v.
func CommitBenchJSON(b *testing.B, res *http.Response, v any) {
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		b.Fatal(err)
	}
}

// BenchTenantCourse creates tenant bench and imports the package of files as its course c,
// waiting (a minute at most) for the import to complete.
func BenchTenantCourse(b *testing.B, base string, files map[string]string) {
	b.Helper()
	CommitBenchCall(b, "POST", base+"/api/v1/app_management/tenants", "application/json", []byte(`{"tenant_id":"bench"}`), 201)
	pkg, err := coursetest.Zip(files)
	if err != nil {
		b.Fatal(err)
	}
	form, ct := MultipartFile("course.zip", pkg)
	var job struct{ Result string }
	CommitBenchJSON(b, CommitBenchCall(b, "POST", base+"/engine/api/v1/bench/courses/importJobs?course=c", ct, form, 200), &job)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var st struct{ Status string }
		CommitBenchJSON(b, CommitBenchCall(b, "GET", base+"/engine/api/v1/bench/courses/importJobs/"+job.Result, "", nil, 200), &st)
		if st.Status == "COMPLETE" {
			return
		}
		if st.Status != "RUNNING" || time.Now().After(deadline) {
			b.Fatalf("import: %s", st.Status)
		}
	}
}

const (
	BenchTenant   = "bench"
	BenchCourses  = 100
	BenchLearners = 200_000
	BenchClients  = 4
	BenchQueries  = 2000
)

// Ms is d in milliseconds, as the benchmarks report latencies.
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchConfig is the embedded configuration the benchmarks start Lectern with.
func BenchConfig(b *testing.B) app.Config {
	return app.Config{DataDir: b.TempDir(), Root: server.RootCredentials{User: RootUser, Password: RootPass},
		SecretKey: "bench-secret", Version: "bench", BodyLimit: 8 << 20}
}

// BenchServer starts Lectern on a loopback port and returns its base URL and the function
// that stops it and removes what it made in the shared backends (its index prefix, its
// bucket's objects).
func BenchServer(b *testing.B, cfg app.Config) (string, func()) {
	ctx := context.Background()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := a.Queue.Start(ctx); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = a.Server.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() {
		// Bounded: a client connection left open must not hang the benchmark (it did, once).
		_ = a.Server.App().ShutdownWithTimeout(10 * time.Second)
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = a.Queue.Shutdown(sctx)
		if a.Elastic != nil {
			_ = a.Elastic.DeleteIndices(ctx, cfg.Elastic.IndexPrefix)
		}
		if cfg.S3.Bucket != "" {
			_, _ = a.Blobs.DeletePrefix(ctx, "")
		}
		a.Close()
	}
}

// BinaryCollector runs the lectern binary's collector policy (app.RunGCPolicy) in this process
// until tb ends, unless GOGC or GOMEMLIMIT is set, as cmd/lectern does: a benchmark that runs
// the server in process then measures it as it ships. Go's default target comes back after.
func BinaryCollector(tb testing.TB) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { app.RunGCPolicy(ctx, 0); close(done) }()
	tb.Cleanup(func() { stop(); <-done; debug.SetGCPercent(100) })
}
