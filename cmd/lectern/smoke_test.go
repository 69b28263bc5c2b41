package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/content/extract/extracttest"
)

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type proc struct {
	cmd    *exec.Cmd
	stdout *bufio.Scanner
	addr   string
}

func startBinary(t *testing.T, bin, dataDir, addr string) *proc {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "LECTERN_ADDR="+addr, "LECTERN_DATA_DIR="+dataDir, "LECTERN_LOG_LEVEL=warn")
	for _, k := range []string{"LECTERN_POSTGRES_URL", "LECTERN_REDIS_URL", "LECTERN_S3_ENDPOINT", "LECTERN_ELASTICSEARCH_URL", "LECTERN_ROOT_USER", "LECTERN_ROOT_PASSWORD"} {
		cmd.Env = append(cmd.Env, k+"=")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p := &proc{cmd: cmd, stdout: bufio.NewScanner(out), addr: addr}
	waitHealthy(t, addr)
	return p
}

// waitHealthy polls a started lectern's /healthz until it answers 200, for 30 s at most.
func waitHealthy(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("lectern did not answer /healthz within 30s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func call(t *testing.T, method, url, user, pass, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestSmoke builds the binary, starts it on a clean data directory, reads the root
// credentials it prints, creates a tenant over HTTP, kills the process with SIGKILL and
// checks the tenant is still there after a restart that prints no new credentials.
func TestSmoke(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	p := startBinary(t, bin, data, freeAddr(t))

	var user, pass string
	for (user == "" || pass == "") && p.stdout.Scan() {
		line := strings.TrimSpace(p.stdout.Text())
		if v, ok := strings.CutPrefix(line, "LECTERN_ROOT_USER="); ok {
			user = v
		}
		if v, ok := strings.CutPrefix(line, "LECTERN_ROOT_PASSWORD="); ok {
			pass = v
		}
	}
	if user == "" || pass == "" {
		t.Fatal("the binary did not print root credentials on first start")
	}
	base := "http://" + p.addr
	status, body := call(t, "POST", base+"/api/v1/app_management/tenants", user, pass, `{"tenant_id":"smoke"}`)
	if status != 201 || !strings.Contains(body, `"tenant_id":"smoke"`) {
		t.Fatalf("create tenant: %d %s", status, body)
	}
	if status, _ := call(t, "POST", base+"/api/v1/app_management/tenants", user, pass+"x", `{"tenant_id":"x"}`); status != 401 {
		t.Fatalf("wrong root password: %d", status)
	}

	// The import command uploads a package and prints the imported tree.
	pkg := filepath.Join(t.TempDir(), "course.zip")
	writeZip(t, pkg, map[string]string{"imsmanifest.xml": smokeManifest, "a.html": "<html>a</html>", "b/b.html": "<html>b</html>"})
	var out, errOut bytes.Buffer
	env := map[string]string{"LECTERN_ROOT_USER": user, "LECTERN_ROOT_PASSWORD": pass}
	err := run(t.Context(), []string{"import", pkg, "--tenant", "smoke", "--course", "cli-course", "--server", base, "--no-progress"},
		func(k string) string { return env[k] }, &out, &errOut)
	if err != nil {
		t.Fatalf("lectern import: %v\n%s%s", err, out.String(), errOut.String())
	}
	for _, want := range []string{`imported "Smoke Course" as course cli-course version 0 (SCORM_12)`, "└─ Page B (b) ", "→ b/b.html"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("import output lacks %q:\n%s", want, out.String())
		}
	}
	err = run(t.Context(), []string{"import", pkg, "--tenant", "smoke", "--course", "cli-course", "--server", base, "--no-progress"},
		func(k string) string { return env[k] }, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "mayCreateNewVersion") {
		t.Fatalf("second import without --new-version: %v", err)
	}

	// Content is read by the binary's own extract subcommand: a hostile PDF fails its job
	// with a message, a normal one next to it is imported.
	hostile := uploadContent(t, base, user, pass, "self-reference.pdf", extracttest.SelfReferencingPageTree().Data)
	normal := uploadContent(t, base, user, pass, "gloves.pdf", extracttest.TextPDF("Gloves protect hands"))
	deadline := time.Now().Add(60 * time.Second)
	for {
		h, n := jobStatus(t, base, user, pass, hostile), jobStatus(t, base, user, pass, normal)
		if h.Status == "FAILED" && n.Results["content_id"] != nil {
			if h.Error == nil || !strings.Contains(h.Error.Message, "page tree refers to itself") {
				t.Fatalf("hostile job error %+v", h.Error)
			}
			break
		}
		if h.Status == "COMPLETED" || n.Status == "FAILED" || time.Now().After(deadline) {
			t.Fatalf("content jobs: hostile %+v, normal %+v", h, n)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// kill -9: the acknowledged tenant must survive.
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
	// `lectern reindex` rebuilds the (embedded) content index from the stored version while
	// no server holds it, and exits.
	over := map[string]string{"LECTERN_DATA_DIR": data, "LECTERN_LOG_LEVEL": "warn", "LECTERN_POSTGRES_URL": "",
		"LECTERN_REDIS_URL": "", "LECTERN_S3_ENDPOINT": "", "LECTERN_ELASTICSEARCH_URL": "", "LECTERN_ROOT_USER": "", "LECTERN_ROOT_PASSWORD": ""}
	out.Reset()
	err = run(t.Context(), []string{"reindex"}, func(k string) string {
		if v, ok := over[k]; ok {
			return v
		}
		return os.Getenv(k)
	}, &out, io.Discard)
	if err != nil || !strings.Contains(out.String(), "reindexed 1 of 1 content versions: done") {
		t.Fatalf("lectern reindex: %v\n%s", err, out.String())
	}
	p2 := startBinary(t, bin, data, freeAddr(t))
	status, body = call(t, "GET", "http://"+p2.addr+"/api/v1/app_management/tenants", user, pass, "")
	if status != 200 || !strings.Contains(body, `"smoke"`) {
		t.Fatalf("after kill -9 and restart: %d %s", status, body)
	}
	// A graceful stop ends the output; nothing in it may repeat the credentials.
	_ = p2.cmd.Process.Signal(syscall.SIGTERM)
	var rest bytes.Buffer
	for p2.stdout.Scan() {
		rest.WriteString(p2.stdout.Text())
	}
	if err := p2.cmd.Wait(); err != nil {
		t.Fatalf("lectern did not exit cleanly on SIGTERM: %v", err)
	}
	if strings.Contains(rest.String(), "LECTERN_ROOT_PASSWORD") {
		t.Fatal("root credentials printed again on the second start")
	}
}

// uploadContent posts a file to POST /api/v1/content for tenant smoke and returns the job id.
func uploadContent(t *testing.T, base, user, pass, name string, data []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", base+"/api/v1/content", &body)
	req.SetBasicAuth(user, pass)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("tenant_id", "smoke")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var j struct{ ID string }
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 202 || json.Unmarshal(b, &j) != nil || j.ID == "" {
		t.Fatalf("upload %s: %d %s", name, res.StatusCode, b)
	}
	return j.ID
}

type smokeJob struct {
	Status  string
	Results map[string]any
	Error   *struct{ Code, Message string }
}

func jobStatus(t *testing.T, base, user, pass, id string) smokeJob {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/v1/jobs/"+id, nil)
	req.SetBasicAuth(user, pass)
	req.Header.Set("tenant_id", "smoke")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var j smokeJob
	if b, _ := io.ReadAll(res.Body); res.StatusCode != 200 || json.Unmarshal(b, &j) != nil {
		t.Fatalf("job %s: %d %s", id, res.StatusCode, b)
	}
	return j
}

func TestConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		env  map[string]string
		want string
	}{
		"unknown role":               {args: []string{"bogus"}, want: `unknown role "bogus"`},
		"half S3":                    {env: map[string]string{"LECTERN_S3_ENDPOINT": "127.0.0.1:1"}, want: "half configured"},
		"half root":                  {env: map[string]string{"LECTERN_ROOT_USER": "admin"}, want: "LECTERN_ROOT_PASSWORD"},
		"bad body limit":             {env: map[string]string{"LECTERN_MAX_BODY_BYTES": "lots"}, want: "LECTERN_MAX_BODY_BYTES"},
		"prefix without ES":          {env: map[string]string{"LECTERN_ELASTICSEARCH_INDEX_PREFIX": "x_"}, want: "LECTERN_ELASTICSEARCH_URL"},
		"bad extract time":           {env: map[string]string{"LECTERN_EXTRACT_TIMEOUT": "5"}, want: "LECTERN_EXTRACT_TIMEOUT must be a positive duration"},
		"bad shutdown timeout":       {env: map[string]string{"LECTERN_SHUTDOWN_TIMEOUT": "0s"}, want: "LECTERN_SHUTDOWN_TIMEOUT must be a positive duration"},
		"tiny extract mem":           {env: map[string]string{"LECTERN_EXTRACT_MEMORY_MB": "8"}, want: "LECTERN_EXTRACT_MEMORY_MB must be at least 32"},
		"queue prefix without Redis": {env: map[string]string{"LECTERN_QUEUE_PREFIX": "x_"}, want: "LECTERN_REDIS_URL"},
		"bad queue prefix":           {env: map[string]string{"LECTERN_REDIS_URL": "redis://127.0.0.1:1/0", "LECTERN_QUEUE_PREFIX": "a b"}, want: "LECTERN_QUEUE_PREFIX"},
		"bad schema dir":             {env: map[string]string{"LECTERN_SCHEMA_DIR": "/nonexistent/schemas"}, want: "LECTERN_SCHEMA_DIR"},
	} {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{"LECTERN_DATA_DIR": t.TempDir(), "LECTERN_ADDR": "127.0.0.1:0"}
			for k, v := range tc.env {
				env[k] = v
			}
			err := run(t.Context(), tc.args, func(k string) string { return env[k] }, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

const smokeManifest = `<?xml version="1.0"?>
<manifest identifier="smoke" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
 <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
 <organizations default="o"><organization identifier="o"><title>Smoke Course</title>
  <item identifier="a" identifierref="ra"><title>Page A</title></item>
  <item identifier="b" identifierref="rb"><title>Page B</title></item>
 </organization></organizations>
 <resources>
  <resource identifier="ra" type="webcontent" adlcp:scormtype="sco" href="a.html"><file href="a.html"/></resource>
  <resource identifier="rb" type="webcontent" adlcp:scormtype="sco" href="b/b.html"><file href="b/b.html"/></resource>
 </resources>
</manifest>`

func writeZip(t *testing.T, path string, files map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := zip.NewWriter(f)
	for name, body := range files {
		e, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(e, body)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
