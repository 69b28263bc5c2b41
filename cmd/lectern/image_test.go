package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestComposeFile: every image compose/ pulls is pinned to a release (not a moving tag), and
// no healthcheck calls a tool its image lacks (MinIO images carry no curl since late 2023, so
// MinIO never turned healthy and every Lectern role waited for it forever).
func TestComposeFile(t *testing.T) {
	b, err := os.ReadFile("../../compose/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	images := regexp.MustCompile(`(?m)^\s+image:\s*(\S+)`).FindAllStringSubmatch(string(b), -1)
	if len(images) == 0 {
		t.Fatal("no image in compose/docker-compose.yml")
	}
	for _, m := range images {
		_, tag, ok := strings.Cut(m[1], ":")
		if !ok || tag == "latest" || !regexp.MustCompile(`\d+\.\d+|RELEASE\.\d{4}`).MatchString(tag) {
			t.Errorf("image %s is not pinned to a release", m[1])
		}
	}
	minio := regexp.MustCompile(`(?s)\n  minio:\n(.*?)\n  \w`).FindStringSubmatch(string(b))
	if minio == nil {
		t.Fatal("no minio service")
	}
	if hc := regexp.MustCompile(`healthcheck:.*`).FindString(minio[1]); !strings.Contains(hc, `"mc", "ready", "local"`) {
		t.Errorf("MinIO's healthcheck must use the mc its image carries: %s", hc)
	}
	df, err := os.ReadFile("../../compose/lectern.Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"scripts/image-contents.sh /out", "LECTERN_MODEL_DIR=/usr/share/lectern/model"} {
		if !strings.Contains(string(df), want) {
			t.Errorf("compose/lectern.Dockerfile lacks %q", want)
		}
	}
}

// TestImageContents assembles what the Lectern image holds (scripts/image-contents.sh, the
// script compose/lectern.Dockerfile runs) into a directory of its own and serves from it, with
// a home that holds nothing else: the console's sign-in page and its scripts, the player's
// SCORM runtime on the content origin, and semantic search with the bundled model all answer.
// An image built from a fresh clone once had neither the browser assets (the console answered
// 503) nor the model (semantic search 503).
func TestImageContents(t *testing.T) {
	dest := t.TempDir()
	build := exec.Command("../../scripts/image-contents.sh", dest)
	build.Stderr = os.Stderr
	if out, err := build.Output(); err != nil {
		t.Fatalf("image-contents.sh: %v\n%s", err, out)
	}
	addr, content := freeAddr(t), freeAddr(t)
	cmd := exec.Command(filepath.Join(dest, "bin", "lectern"), "all")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "LECTERN_ADDR=" + addr, "LECTERN_CONTENT_ADDR=" + content,
		"LECTERN_DATA_DIR=" + t.TempDir(), "LECTERN_LOG_LEVEL=warn", "LECTERN_ROOT_USER=root", "LECTERN_ROOT_PASSWORD=image-test",
		"LECTERN_SECRET_KEY=image-test", "LECTERN_MODEL_DIR=" + filepath.Join(dest, "share", "lectern", "model")}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	go func() {
		for s := bufio.NewScanner(out); s.Scan(); {
		}
	}()
	waitHealthy(t, addr)
	base := "http://" + addr

	get := func(u string) (int, string) {
		t.Helper()
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(res.Body).WriteTo(&b)
		return res.StatusCode, b.String()
	}
	if st, body := get(base + "/console/signin"); st != 200 || !strings.Contains(body, `<label for="key">`) {
		t.Errorf("console sign-in page: %d %.300s", st, body)
	}
	if st, body := get(base + "/console/assets/htmx.min.js"); st != 200 || len(body) < 10_000 {
		t.Errorf("console script: %d, %d bytes", st, len(body))
	}
	if st, body := get("http://" + content + "/player/assets/scorm-again.js"); st != 200 || len(body) < 10_000 {
		t.Errorf("player runtime on the content origin: %d, %d bytes", st, len(body))
	}

	if st, body := call(t, "POST", base+"/api/v1/app_management/tenants", "root", "image-test", `{"tenant_id":"smoke"}`); st != 201 {
		t.Fatalf("create tenant: %d %s", st, body)
	}
	id := uploadContent(t, base, "root", "image-test", "kettles.md", []byte("# Kettles\n\nA kettle boils water for tea on the stove."))
	deadline := time.Now().Add(120 * time.Second)
	j := jobStatus(t, base, "root", "image-test", id)
	for ; j.Status != "COMPLETED"; j = jobStatus(t, base, "root", "image-test", id) {
		if j.Status == "FAILED" || time.Now().After(deadline) {
			t.Fatalf("content import: %+v", j)
		}
		time.Sleep(100 * time.Millisecond)
	}
	contentID, _ := j.Results["content_id"].(string)
	req, _ := http.NewRequest("GET", base+"/api/v1/content/search?search_type=SEMANTIC&term=heating+water+for+a+hot+drink", nil)
	req.SetBasicAuth("root", "image-test")
	req.Header.Set("tenant_id", "smoke")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(res.Body).WriteTo(&b)
	if res.StatusCode != 200 || contentID == "" || !strings.Contains(b.String(), `"content_id":"`+contentID+`"`) {
		t.Errorf("semantic search with the bundled model: %d %.300s", res.StatusCode, b.String())
	}
}
