package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/course/coursetest"
	"github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/server"
)

// commitLearners is how many simulated learners commit at once (issue 11: 200).
const commitLearners = 200

type commitLearner struct {
	url string
	seq int64
}

// runCommitLoad sends b.N commits spread over the learners, commitLearners at a time, and reports
// the latency percentiles and the throughput. With pace > 0 each learner commits once per
// pace (staggered), as learners do (autocommit, page turns); with 0 they commit back to back,
// which measures the saturated throughput.
func runCommitLoad(b *testing.B, learners []*commitLearner, pace time.Duration) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: commitLearners, MaxConnsPerHost: commitLearners}}
	var next atomic.Int64
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for _, l := range learners {
		wg.Add(1)
		l := l
		go func(l *commitLearner, offset time.Duration) {
			defer wg.Done()
			tick := start.Add(offset)
			for {
				if pace > 0 {
					time.Sleep(time.Until(tick))
					tick = tick.Add(pace)
				}
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				l.seq++
				body := fmt.Sprintf(`{"commitSequence":%d,"cmi.core.lesson_status":"incomplete","cmi.core.lesson_location":"page-%d","cmi.suspend_data":"state=%d","cmi.core.score.raw":"50","cmi.core.session_time":"00:00:05"}`, l.seq, l.seq, l.seq)
				t0 := time.Now()
				res, err := client.Post(l.url, "text/plain;charset=UTF-8", bytes.NewBufferString(body))
				if err != nil {
					b.Error(err)
					return
				}
				out, _ := io.ReadAll(res.Body)
				res.Body.Close()
				lat[i] = time.Since(t0)
				if res.StatusCode != 200 {
					b.Errorf("commit: %d %s", res.StatusCode, out)
					return
				}
			}
		}(l, pace*time.Duration(indexOf(learners, l))/time.Duration(len(learners)))
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	// The server's Shutdown waits for every open connection: close the keep-alive ones.
	client.CloseIdleConnections()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
}

func indexOf(ls []*commitLearner, l *commitLearner) int {
	for i, x := range ls {
		if x == l {
			return i
		}
	}
	return 0
}

// commitPace is how often each simulated learner commits in the paced runs: 200 learners every
// 500 ms make 400 commits/s, far above what 200 real learners send (autocommit every 30 s).
const commitPace = 500 * time.Millisecond

// commitBenchServer starts the application in one mode for a benchmark (the test helpers take a
// *testing.T) and returns its base URL.
func commitBenchServer(b *testing.B, mode string) string {
	cfg := app.Config{DataDir: b.TempDir(), Root: server.RootCredentials{User: rootUser, Password: rootPass},
		SecretKey: "bench-secret", Version: "bench", BodyLimit: 8 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mode == "distributed" {
		cfg.PostgresURL = testenv.FreshPostgres(b, testenv.External(b, "LECTERN_TEST_POSTGRES_URL"))
		cfg.RedisURL = testenv.FreshRedis(b, testenv.External(b, "LECTERN_TEST_REDIS_URL"))
		cfg.S3 = app.S3Config{Endpoint: testenv.External(b, "LECTERN_TEST_S3_ENDPOINT"),
			AccessKey: testenv.External(b, "LECTERN_TEST_S3_ACCESS_KEY"), SecretKey: testenv.External(b, "LECTERN_TEST_S3_SECRET_KEY"),
			Bucket: randomName("benchplayer-")}
		cfg.Elastic = app.ElasticConfig{URL: testenv.External(b, "LECTERN_TEST_ELASTICSEARCH_URL"), IndexPrefix: randomName("benchplayer_") + "_"}
	}
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
	b.Cleanup(func() {
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
	})
	return "http://" + ln.Addr().String()
}

// commitBenchCall sends one request as root (without following redirects) and fails the benchmark
// on another status than want.
func commitBenchCall(b *testing.B, method, url, ct string, body []byte, want int) *http.Response {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.SetBasicAuth(rootUser, rootPass)
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

func commitBenchJSON(b *testing.B, res *http.Response, v any) {
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		b.Fatal(err)
	}
}

// commitLearners prepares n registrations of one SCORM 1.2 course, each launched, with the
// commit URL of its first SCO.
func setupCommitLearners(b *testing.B, base string, n int) []*commitLearner {
	benchTenantCourse(b, base, map[string]string{"imsmanifest.xml": scorm12Manifest, "one/index.html": "<html>one</html>", "two/index.html": "<html>two</html>"})
	learners := make([]*commitLearner, n)
	regs := base + "/engine/api/v1/bench/registrations"
	for i := range learners {
		id := fmt.Sprintf("r%d", i)
		commitBenchCall(b, "POST", regs, "application/json", []byte(`{"courseId":"c","registrationId":"`+id+`","learner":{"id":"`+id+`"}}`), 204)
		var link struct{ LaunchLink string }
		commitBenchJSON(b, commitBenchCall(b, "GET", regs+"/"+id+"/launchLink", "", nil, 200), &link)
		path := link.LaunchLink[strings.Index(link.LaunchLink, "/player/launch/"):]
		session := strings.TrimPrefix(commitBenchCall(b, "GET", base+path, "", nil, 303).Header.Get("Location"), "/player/session/")
		var st struct{ Attempt int64 }
		commitBenchJSON(b, commitBenchCall(b, "GET", base+"/player/runtime/"+session+"/activity?activity=i1", "", nil, 200), &st)
		learners[i] = &commitLearner{url: fmt.Sprintf("%s/player/runtime/%s/commit?activity=i1&attempt=%d", base, session, st.Attempt)}
	}
	return learners
}

// BenchmarkPlayerCommit measures the runtime endpoint with 200 learners committing at once, on
// both backends, beside a bare Fiber handler doing the same I/O-free work (parse and validate
// the commit, answer) over the same loopback HTTP.
func BenchmarkPlayerCommit(b *testing.B) {
	for _, mode := range []string{"embedded", "distributed"} {
		var learners []*commitLearner
		b.Run(mode+"/paced", func(b *testing.B) {
			learners = setupCommitLearners(b, commitBenchServer(b, mode), commitLearners)
			runCommitLoad(b, learners, commitPace)
		})
		b.Run(mode+"/saturated", func(b *testing.B) {
			learners = setupCommitLearners(b, commitBenchServer(b, mode), commitLearners)
			runCommitLoad(b, learners, 0)
		})
	}
	b.Run("bare-fiber", func(b *testing.B) {
		app := fiber.New(fiber.Config{DisableStartupMessage: true})
		app.Post("/commit", func(c *fiber.Ctx) error {
			if _, err := runtime.ParseCommit(runtime.SCORM12, c.Body()); err != nil {
				return c.Status(400).JSON(map[string]any{"result": "false", "errorCode": 201})
			}
			return c.JSON(map[string]any{"result": "true", "errorCode": 0})
		})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go func() { _ = app.Listener(ln) }()
		defer app.Shutdown()
		learners := make([]*commitLearner, commitLearners)
		for i := range learners {
			learners[i] = &commitLearner{url: "http://" + ln.Addr().String() + "/commit"}
		}
		b.Run("paced", func(b *testing.B) { runCommitLoad(b, learners, commitPace) })
		b.Run("saturated", func(b *testing.B) { runCommitLoad(b, learners, 0) })
	})
}

// benchTenantCourse creates tenant bench and imports the package of files as its course c,
// waiting (a minute at most) for the import to complete.
func benchTenantCourse(b *testing.B, base string, files map[string]string) {
	b.Helper()
	commitBenchCall(b, "POST", base+"/api/v1/app_management/tenants", "application/json", []byte(`{"tenant_id":"bench"}`), 201)
	pkg, err := coursetest.Zip(files)
	if err != nil {
		b.Fatal(err)
	}
	form, ct := multipartFile("course.zip", pkg)
	var job struct{ Result string }
	commitBenchJSON(b, commitBenchCall(b, "POST", base+"/engine/api/v1/bench/courses/importJobs?course=c", ct, form, 200), &job)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var st struct{ Status string }
		commitBenchJSON(b, commitBenchCall(b, "GET", base+"/engine/api/v1/bench/courses/importJobs/"+job.Result, "", nil, 200), &st)
		if st.Status == "COMPLETE" {
			return
		}
		if st.Status != "RUNNING" || time.Now().After(deadline) {
			b.Fatalf("import: %s", st.Status)
		}
	}
}
