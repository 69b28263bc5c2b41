package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/lectern-lms/lectern/internal/testenv"
)

// BenchmarkUploadPeakRSS measures the memory of the server processes while a large course
// package is uploaded and imported: the lectern binary runs as its own process(es), and
// the peak resident set (VmHWM, reset after start-up through /proc/PID/clear_refs) is read
// once the import is complete. Embedded mode is one `all` process; distributed mode (PostgreSQL,
// Redis, MinIO, Elasticsearch of scripts/services.sh) a `serve` process, which receives the
// upload, and a `worker` process, which imports it. The package is a SCORM 1.2 zip of
// incompressible files, generated here; UPLOAD_BENCH_MIB lists its sizes (default
// "256,1024"), so the figures show whether memory grows with the package.
//
// Metrics per case: serve-peak-MiB and serve-base-MiB (the process that takes the upload:
// `all` in embedded mode), worker-peak-MiB (distributed), upload-s and import-s.
func BenchmarkUploadPeakRSS(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc (Linux) to read a process's peak RSS")
	}
	sizes := []int{256, 1024}
	if v := os.Getenv("UPLOAD_BENCH_MIB"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("UPLOAD_BENCH_MIB: %q is not a list of sizes in MiB", v)
			}
			sizes = append(sizes, n)
		}
	}
	dir := b.TempDir()
	bin := buildBinary(b)
	for _, mib := range sizes {
		pkg := filepath.Join(dir, fmt.Sprintf("course-%d.zip", mib))
		writePackage(b, pkg, int64(mib)<<20)
		for _, mode := range []string{"embedded", "distributed"} {
			b.Run(fmt.Sprintf("%s/%dMiB", mode, mib), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					uploadOnce(b, bin, mode, pkg)
				}
			})
		}
		_ = os.Remove(pkg)
	}
}

// writePackage writes a SCORM 1.2 package of incompressible files (stored, as zip tools
// store what does not compress) adding up to size bytes.
func writePackage(b *testing.B, path string, size int64) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	zw := zip.NewWriter(bw)
	const fileSize = 64 << 20
	var files []string
	for n := int64(0); n < size; n += fileSize {
		files = append(files, fmt.Sprintf("media/part%03d.bin", len(files)))
	}
	manifest := `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="bench" version="1.0" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Upload benchmark</title>
    <item identifier="i" identifierref="r"><title>Media</title></item></organization></organizations>
  <resources><resource identifier="r" type="webcontent" adlcp:scormtype="sco" href="index.html"><file href="index.html"/>`
	for _, name := range files {
		manifest += `<file href="` + name + `"/>`
	}
	manifest += "</resource></resources>\n</manifest>\n"
	for name, body := range map[string]string{"imsmanifest.xml": manifest, "index.html": "<html><body>media</body></html>"} {
		w, err := zw.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.WriteString(w, body); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.NewChaCha8([32]byte{1})
	left := size
	for _, name := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			b.Fatal(err)
		}
		n := min(left, fileSize)
		if _, err := io.CopyN(w, rng, n); err != nil {
			b.Fatal(err)
		}
		left -= n
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
}

type benchProc struct {
	cmd *exec.Cmd
}

func (p *benchProc) status(b *testing.B, field string) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, p.cmd.Process.Pid)
	return 0
}

// resetPeak makes VmHWM start again from the current RSS (Linux 4.0+).
func (p *benchProc) resetPeak(b *testing.B) {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0); err != nil {
		b.Fatalf("reset the peak RSS: %v", err)
	}
}

func uploadOnce(b *testing.B, bin, mode, pkg string) {
	b.StopTimer()
	dataDir := b.TempDir()
	addr := freeAddr(b)
	env := []string{"LECTERN_ADDR=" + addr, "LECTERN_DATA_DIR=" + dataDir, "LECTERN_LOG_LEVEL=warn",
		"LECTERN_ROOT_USER=root", "LECTERN_ROOT_PASSWORD=bench-password", "LECTERN_SECRET_KEY=bench-secret",
		"LECTERN_MAX_BODY_BYTES=" + strconv.Itoa(4<<30), "LECTERN_MODEL_DIR=" + filepath.Join(dataDir, "no-model"),
		"LECTERN_WORKER_CONCURRENCY=1"}
	roles := []string{"all"}
	bucket := ""
	if mode == "distributed" {
		roles = []string{"serve", "worker"}
		bucket = fmt.Sprintf("uploadbench-%d", time.Now().UnixNano())
		env = append(env,
			"LECTERN_POSTGRES_URL="+testenv.FreshPostgres(b, testenv.External(b, "LECTERN_TEST_POSTGRES_URL")),
			"LECTERN_REDIS_URL="+benchRedis(b, testenv.External(b, "LECTERN_TEST_REDIS_URL")),
			"LECTERN_S3_ENDPOINT="+testenv.External(b, "LECTERN_TEST_S3_ENDPOINT"),
			"LECTERN_S3_ACCESS_KEY="+testenv.External(b, "LECTERN_TEST_S3_ACCESS_KEY"),
			"LECTERN_S3_SECRET_KEY="+testenv.External(b, "LECTERN_TEST_S3_SECRET_KEY"),
			"LECTERN_S3_BUCKET="+bucket,
			"LECTERN_ELASTICSEARCH_URL="+testenv.External(b, "LECTERN_TEST_ELASTICSEARCH_URL"),
			"LECTERN_ELASTICSEARCH_INDEX_PREFIX="+bucket+"_")
		// Registered before the processes' cleanups, so it runs after them.
		b.Cleanup(func() { removeBucket(b, bucket) })
	}
	var procs []*benchProc
	for _, role := range roles {
		cmd := exec.Command(bin, role)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		})
		procs = append(procs, &benchProc{cmd: cmd})
		// One role at a time: the first creates the schema and the bucket. The worker has no
		// listener: it is ready when it takes the task.
		if role != "worker" {
			waitReady(b, "http://"+addr+"/readyz")
		}
	}
	base := "http://" + addr
	if st, body := benchCall(b, "POST", base+"/api/v1/app_management/tenants", `{"tenant_id":"bench","enabled":true}`); st != 201 {
		b.Fatalf("create tenant: %d %s", st, body)
	}
	baseline := procs[0].status(b, "VmRSS")
	for _, p := range procs {
		p.resetPeak(b)
	}

	b.StartTimer()
	start := time.Now()
	jobID := uploadFile(b, base+"/engine/api/v1/bench/courses/importJobs?course=big", pkg)
	uploaded := time.Since(start)
	deadline := time.Now().Add(30 * time.Minute)
	for {
		st, body := benchCall(b, "GET", base+"/engine/api/v1/bench/courses/importJobs/"+jobID, "")
		var res struct{ Status, Message string }
		_ = json.Unmarshal([]byte(body), &res)
		if st != 200 || res.Status == "ERROR" {
			b.Fatalf("import job: %d %s", st, body)
		}
		if res.Status == "COMPLETE" {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("import not complete after 30 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	imported := time.Since(start)
	b.StopTimer()

	b.ReportMetric(procs[0].status(b, "VmHWM"), "serve-peak-MiB")
	b.ReportMetric(baseline, "serve-base-MiB")
	if len(procs) > 1 {
		b.ReportMetric(procs[1].status(b, "VmHWM"), "worker-peak-MiB")
	}
	b.ReportMetric(uploaded.Seconds(), "upload-s")
	b.ReportMetric(imported.Seconds(), "import-s")
	// The course's files go with the course; the upload was removed by the import.
	if st, body := benchCall(b, "DELETE", base+"/engine/api/v1/bench/courses/big", ""); st != 204 {
		b.Errorf("delete the course: %d %s", st, body)
	}
}

// benchRedis is an emptied Redis database leased for the benchmark (testenv.FreshRedis):
// queues in one database are shared, and an unleased database can be flushed by a test that
// leases it while the benchmark runs (which once emptied the content import benchmark's
// queues in the middle of a run).
func benchRedis(b *testing.B, baseURL string) string {
	return testenv.FreshRedis(b, baseURL)
}

// removeBucket deletes the benchmark's bucket with whatever is left in it.
func removeBucket(b *testing.B, bucket string) {
	ctx := context.Background()
	c, err := minio.New(os.Getenv("LECTERN_TEST_S3_ENDPOINT"), &minio.Options{
		Creds: credentials.NewStaticV4(os.Getenv("LECTERN_TEST_S3_ACCESS_KEY"), os.Getenv("LECTERN_TEST_S3_SECRET_KEY"), "")})
	if err != nil {
		b.Errorf("remove bucket %s: %v", bucket, err)
		return
	}
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err == nil {
			_ = c.RemoveObject(ctx, bucket, o.Key, minio.RemoveObjectOptions{})
		}
	}
	if err := c.RemoveBucket(ctx, bucket); err != nil {
		b.Errorf("remove bucket %s: %v", bucket, err)
	}
}

func waitReady(b *testing.B, url string) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s not ready within 60s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func benchCall(b *testing.B, method, url, body string) (int, string) {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("root:bench-password")))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}

// uploadFile posts the file as a multipart 'file' part with its Content-Length, streamed
// from disk as curl -F does, and returns the import job id.
func uploadFile(b *testing.B, url, path string) string {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	if _, err := mw.CreateFormFile("file", filepath.Base(path)); err != nil {
		b.Fatal(err)
	}
	prefix := append([]byte(nil), head.Bytes()...)
	head.Reset()
	_ = mw.Close()
	req, _ := http.NewRequest("POST", url, io.MultiReader(bytes.NewReader(prefix), f, bytes.NewReader(head.Bytes())))
	req.ContentLength = int64(len(prefix)) + fi.Size() + int64(head.Len())
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("root:bench-password")))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	var id struct{ Result string }
	if res.StatusCode != 200 || json.Unmarshal(out, &id) != nil || id.Result == "" {
		b.Fatalf("upload: %d %s", res.StatusCode, out)
	}
	return id.Result
}
