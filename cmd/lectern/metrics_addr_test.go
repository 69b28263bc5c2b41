package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestMetricsAddrForWorker runs the worker role, which has no API server, with
// LECTERN_METRICS_ADDR: /metrics answers there without credentials in the exposition format,
// with the queue gauges, and the listener stops with the process on SIGTERM.
func TestMetricsAddrForWorker(t *testing.T) {
	bin := buildBinary(t)
	maddr := freeAddr(t)
	cmd := exec.Command(bin, "worker")
	cmd.Env = append(os.Environ(), "LECTERN_DATA_DIR="+t.TempDir(), "LECTERN_METRICS_ADDR="+maddr, "LECTERN_ROOT_USER=root",
		"LECTERN_ROOT_PASSWORD=metrics-addr", "LECTERN_LOG_LEVEL=warn", "LECTERN_MODEL_DIR="+t.TempDir(), "LECTERN_SHUTDOWN_TIMEOUT=2s")
	for _, k := range []string{"LECTERN_POSTGRES_URL", "LECTERN_REDIS_URL", "LECTERN_S3_ENDPOINT", "LECTERN_ELASTICSEARCH_URL", "LECTERN_EMBEDDINGS_URL"} {
		cmd.Env = append(cmd.Env, k+"=")
	}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("lectern output:\n%s", tail(logs.String(), 3000))
		}
	})
	var body []byte
	waitFor(t, 30*time.Second, "/metrics on LECTERN_METRICS_ADDR", func() bool {
		res, err := http.Get("http://" + maddr + "/metrics")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		body, _ = io.ReadAll(res.Body)
		return res.StatusCode == 200
	})
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("exposition format: %v", err)
	}
	if f := mf["lectern_queue_depth"]; f == nil || len(f.Metric) != 2 {
		t.Fatalf("lectern_queue_depth: %v", f)
	}
	if res, err := http.Get("http://" + maddr + "/openapi.json"); err != nil || res.StatusCode != 404 {
		t.Fatalf("the metrics listener serves only /metrics: %v %v", res, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not stop within 10 s of SIGTERM")
	}
}
