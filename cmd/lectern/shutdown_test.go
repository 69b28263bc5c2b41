package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/sqlite"
	"github.com/lectern-lms/lectern/workers/queue/inproc"
)

// shutdownSections is the size of the content the shutdown test imports: each section is one
// search chunk of about a thousand characters, so embedding them all keeps the index job
// running for many seconds on a test machine.
const shutdownSections = 500

// shutdownTimeout is the LECTERN_SHUTDOWN_TIMEOUT of the test's processes.
const shutdownTimeout = 2 * time.Second

// bigMarkdown is a markdown document of n sections; section i carries the word marker<i>
// exactly once.
func bigMarkdown(n int) []byte {
	var b bytes.Buffer
	b.WriteString("# Field guide\n\n")
	words := strings.Fields("the learner reads about rivers mountains weather soil plants animals maps tools safety history")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "## Part %d\n\nmarker%d ", i, i)
		for j := 0; j < 140; j++ {
			b.WriteString(words[(i*7+j)%len(words)])
			b.WriteByte(' ')
		}
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

// TestGracefulShutdownHandsBackJob runs the real binary in each mode, imports content big
// enough that its index job (embedding every chunk) runs for a long time, sends SIGTERM in
// the middle of it, and checks that the process exits within LECTERN_SHUTDOWN_TIMEOUT, that
// the job went back to its queue untouched (pending, no attempt counted), and that a new
// process finishes it: every section indexed exactly once, the job completed once.
func TestGracefulShutdownHandsBackJob(t *testing.T) {
	modelDir := os.Getenv("LECTERN_TEST_MODEL_DIR")
	if modelDir == "" {
		t.Fatal("LECTERN_TEST_MODEL_DIR is not set: the index job needs the embedding model (scripts/install-model.sh)")
	}
	bin := buildBinary(t)
	doc := bigMarkdown(shutdownSections)
	for _, mode := range []string{"embedded", "distributed"} {
		t.Run(mode, func(t *testing.T) {
			dataDir := t.TempDir()
			env := []string{"LECTERN_DATA_DIR=" + dataDir, "LECTERN_ROOT_USER=root", "LECTERN_ROOT_PASSWORD=shutdown-test",
				"LECTERN_SECRET_KEY=shutdown-test", "LECTERN_LOG_LEVEL=info", "LECTERN_SHUTDOWN_TIMEOUT=" + shutdownTimeout.String()}
			var redisURL, queueName string
			if mode == "distributed" {
				env = append(env, distributedEnv(t)...)
				for _, kv := range env {
					if v, ok := strings.CutPrefix(kv, "LECTERN_REDIS_URL="); ok {
						redisURL = v
					}
					if v, ok := strings.CutPrefix(kv, "LECTERN_ELASTICSEARCH_INDEX_PREFIX="); ok {
						queueName = v + "index"
					}
				}
			} else {
				for _, k := range []string{"LECTERN_POSTGRES_URL", "LECTERN_REDIS_URL", "LECTERN_S3_ENDPOINT", "LECTERN_ELASTICSEARCH_URL"} {
					env = append(env, k+"=")
				}
			}
			// Later entries win: this test's credentials and model, whatever distributedEnv chose.
			env = append(env, "LECTERN_ROOT_USER=root", "LECTERN_ROOT_PASSWORD=shutdown-test", "LECTERN_SECRET_KEY=shutdown-test",
				"LECTERN_MODEL_DIR="+modelDir, "LECTERN_EMBEDDINGS_URL=")

			addr := freeAddr(t)
			first := startShutdownBinary(t, bin, addr, env)
			base := "http://" + addr
			if st, body := call(t, "POST", base+"/api/v1/app_management/tenants", "root", "shutdown-test", `{"tenant_id":"calm","enabled":true}`); st != 201 {
				t.Fatalf("create tenant: %d %s", st, body)
			}
			jobID := uploadBig(t, base, doc)

			// Mid-job: the import task has completed (so the index task was enqueued), the
			// index queue has no pending task (a worker holds it), and the job, which the index
			// task completes after embedding every chunk, has not ended.
			waitFor(t, 60*time.Second, "the index task to be taken", func() bool {
				m := scrapeMetrics(t, base)
				return m.value("lectern_job_duration_seconds", map[string]string{"type": "content:import", "outcome": "completed"}) == 1 &&
					m.value("lectern_queue_depth", map[string]string{"queue": "index"}) == 0
			})
			if s := contentJobStatus(t, base, jobID); s == "COMPLETED" || s == "FAILED" {
				_, body := getJSON(t, base+"/api/v1/jobs/"+jobID, nil)
				t.Fatalf("the job ended (%s) before SIGTERM: %s", s, body)
			}
			sent := time.Now()
			if err := first.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- first.Wait() }()
			select {
			case err := <-exited:
				took := time.Since(sent)
				t.Logf("%s: exited %v after SIGTERM (%v)", mode, took.Round(time.Millisecond), err)
				if err != nil {
					t.Fatalf("exit status after SIGTERM: %v", err)
				}
				if took > shutdownTimeout+2*time.Second {
					t.Fatalf("stopping took %v; LECTERN_SHUTDOWN_TIMEOUT is %v", took, shutdownTimeout)
				}
			case <-time.After(shutdownTimeout + 10*time.Second):
				t.Fatalf("still running %v after SIGTERM", shutdownTimeout+10*time.Second)
			}

			// Handed back: the index task is pending again and no attempt was counted.
			if mode == "embedded" {
				checkInprocHandedBack(t, dataDir)
			} else {
				checkAsynqHandedBack(t, redisURL, queueName)
			}

			restarted := time.Now()
			startShutdownBinary(t, bin, addr, env)
			defer func() {
				t.Logf("%s: the new process finished the job in %v", mode, time.Since(restarted).Round(time.Millisecond))
			}()
			waitFor(t, 5*time.Minute, "the job to finish in the new process", func() bool {
				s := contentJobStatus(t, base, jobID)
				if s == "FAILED" {
					t.Fatalf("the job failed in the new process")
				}
				return s == "COMPLETED"
			})
			// Complete and not duplicated: the first, a middle and the last section are each
			// found exactly once.
			for _, i := range []int{0, shutdownSections / 2, shutdownSections - 1} {
				q := url.Values{"search_type": {"LEXICAL"}, "term": {fmt.Sprintf("marker%d", i)}, "content_id": {"fieldguide"}, "version": {"1"}}
				st, body := getJSON(t, base+"/api/v1/content/search?"+q.Encode(), nil)
				var hits []map[string]any
				if st != 200 || json.Unmarshal(body, &hits) != nil {
					t.Fatalf("search marker%d: %d %s", i, st, body)
				}
				if len(hits) != 1 {
					t.Fatalf("marker%d found %d times, want once: %s", i, len(hits), body)
				}
			}
			st, body := getJSON(t, base+"/api/v1/content?limit=10", nil)
			if st != 200 || strings.Count(string(body), `"content_id":"fieldguide"`) != 1 {
				t.Fatalf("content list after the restart (want one version): %d %s", st, body)
			}
		})
	}
}

type scraped map[string]*dto.MetricFamily

// scrapeMetrics reads the process's /metrics as root.
func scrapeMetrics(t *testing.T, base string) scraped {
	t.Helper()
	st, body := getJSON(t, base+"/metrics", nil)
	if st != 200 {
		t.Fatalf("/metrics: %d %s", st, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	return mf
}

// value sums the matching series: a gauge's value or a histogram's sample count.
func (s scraped) value(name string, want map[string]string) float64 {
	var v float64
	f := s[name]
	if f == nil {
		return -1
	}
	for _, m := range f.Metric {
		match := true
		for k, w := range want {
			found := false
			for _, l := range m.Label {
				found = found || l.GetName() == k && l.GetValue() == w
			}
			match = match && found
		}
		if !match {
			continue
		}
		if m.Gauge != nil {
			v += m.Gauge.GetValue()
		}
		if m.Histogram != nil {
			v += float64(m.Histogram.GetSampleCount())
		}
	}
	return v
}

// startShutdownBinary starts `lectern` (all roles) with env and waits for /healthz.
func startShutdownBinary(t *testing.T, bin, addr string, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(append(os.Environ(), "LECTERN_ADDR="+addr), env...)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("lectern output:\n%s", tail(logs.String(), 4000))
		}
	})
	waitHealthy(t, addr)
	return cmd
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// uploadBig posts doc as content "fieldguide" of tenant calm and returns the job id.
func uploadBig(t *testing.T, base string, doc []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "fieldguide.md")
	_, _ = fw.Write(doc)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", base+"/api/v1/content?content_id=fieldguide", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("tenant_id", "calm")
	req.SetBasicAuth("root", "shutdown-test")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var j struct{ ID string }
	if res.StatusCode != 202 || json.Unmarshal(b, &j) != nil || j.ID == "" {
		t.Fatalf("content import: %d %s", res.StatusCode, b)
	}
	return j.ID
}

// getJSON GETs u as root for tenant calm.
func getJSON(t *testing.T, u string, _ any) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("tenant_id", "calm")
	req.SetBasicAuth("root", "shutdown-test")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func contentJobStatus(t *testing.T, base, id string) string {
	t.Helper()
	st, body := getJSON(t, base+"/api/v1/jobs/"+id, nil)
	var j struct{ Status string }
	if st != 200 || json.Unmarshal(body, &j) != nil {
		t.Fatalf("job %s: %d %s", id, st, body)
	}
	return j.Status
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkInprocHandedBack reads the stopped process's record store: the index queue holds one
// task, pending, with no attempt counted.
func checkInprocHandedBack(t *testing.T, dataDir string) {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(dataDir, "lectern.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	page, err := store.List(context.Background(), record.Query{Kind: inproc.Kind + ":index"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != 1 {
		t.Fatalf("%d index tasks in the store, want 1", len(page.Records))
	}
	var d struct {
		State   string `json:"state"`
		Retried int    `json:"retried"`
	}
	r := page.Records[0]
	if err := json.Unmarshal(r.Data, &d); err != nil {
		t.Fatal(err)
	}
	if r.Key != "pending" || d.Retried != 0 {
		t.Fatalf("index task after SIGTERM: key %q, data %s; want pending with no attempt counted", r.Key, r.Data)
	}
}

// checkAsynqHandedBack asks Redis: the index queue holds one pending task, none active, with
// no attempt counted.
func checkAsynqHandedBack(t *testing.T, redisURL, queueName string) {
	t.Helper()
	opt, err := asynq.ParseRedisURI(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	in := asynq.NewInspector(opt)
	defer in.Close()
	info, err := in.GetQueueInfo(queueName)
	if err != nil {
		t.Fatal(err)
	}
	if info.Pending != 1 || info.Active != 0 || info.Retry != 0 {
		t.Fatalf("queue %s after SIGTERM: %d pending, %d active, %d retry; want the task pending", queueName, info.Pending, info.Active, info.Retry)
	}
	tasks, err := in.ListPendingTasks(queueName)
	if err != nil || len(tasks) != 1 || tasks[0].Retried != 0 {
		t.Fatalf("pending tasks %+v (%v); want one with no attempt counted", tasks, err)
	}
}
