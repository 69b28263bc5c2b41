package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	miniogo "github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/storage/elastic"
)

// buildBinary builds the lectern binary once per test.
func buildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lectern")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func randomHexT(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// distributedEnv is the environment of one distributed deployment on fresh backends: a new
// PostgreSQL database, Redis database, index prefix and bucket, removed when t ends.
func distributedEnv(t testing.TB) []string {
	t.Helper()
	pg := testenv.FreshPostgres(t, testenv.External(t, "LECTERN_TEST_POSTGRES_URL"))
	rd := testenv.FreshRedis(t, testenv.External(t, "LECTERN_TEST_REDIS_URL"))
	esURL := testenv.External(t, "LECTERN_TEST_ELASTICSEARCH_URL")
	s3 := testenv.External(t, "LECTERN_TEST_S3_ENDPOINT")
	s3Key, s3Secret := os.Getenv("LECTERN_TEST_S3_ACCESS_KEY"), os.Getenv("LECTERN_TEST_S3_SECRET_KEY")
	suffix := randomHexT(5)
	prefix, bucket := "start_"+suffix+"_", "start-"+suffix
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if c, err := elastic.New(elastic.Config{URLs: []string{esURL}, IndexPrefix: prefix}); err == nil {
			_ = c.DeleteIndices(ctx, prefix)
		}
		if mc, err := miniogo.New(s3, &miniogo.Options{Creds: credentials.NewStaticV4(s3Key, s3Secret, "")}); err == nil {
			_ = mc.RemoveBucketWithOptions(ctx, bucket, miniogo.RemoveBucketOptions{ForceDelete: true})
		}
	})
	return []string{
		"LECTERN_POSTGRES_URL=" + pg, "LECTERN_REDIS_URL=" + rd,
		"LECTERN_ELASTICSEARCH_URL=" + esURL, "LECTERN_ELASTICSEARCH_INDEX_PREFIX=" + prefix,
		"LECTERN_S3_ENDPOINT=" + s3, "LECTERN_S3_ACCESS_KEY=" + s3Key, "LECTERN_S3_SECRET_KEY=" + s3Secret,
		"LECTERN_S3_BUCKET=" + bucket,
		"LECTERN_ROOT_USER=root", "LECTERN_ROOT_PASSWORD=start-together", "LECTERN_SECRET_KEY=start-together",
		// No embedding model: five processes loading it at once would only cost memory here.
		"LECTERN_MODEL_DIR=" + t.TempDir(), "LECTERN_EMBEDDINGS_URL=", "LECTERN_LOG_LEVEL=info",
	}
}

// roleProc is one running role; ready is closed when it logged that it runs, exited when
// the process ended (err then holds its exit status).
type roleProc struct {
	role   string
	cmd    *exec.Cmd
	ready  chan struct{}
	exited chan struct{}
	err    error
	mu     sync.Mutex
	log    bytes.Buffer
}

func (p *roleProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// startRole starts bin with role in env and follows its log for the line the role writes
// once start-up is over ("listening" or "running"). Its data directory is a fresh one unless
// env names one (a restarted `all` keeps its files). The log kept is the last 4 MiB: a soak
// runs a role for half an hour.
func startRole(t testing.TB, bin, role string, env []string) *roleProc {
	t.Helper()
	p := &roleProc{role: role, ready: make(chan struct{}), exited: make(chan struct{})}
	p.cmd = exec.Command(bin, role)
	p.cmd.Env = append(append(os.Environ(), "LECTERN_DATA_DIR="+t.TempDir()), env...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			if p.log.Len() > 8<<20 {
				keep := append([]byte(nil), p.log.Bytes()[p.log.Len()-4<<20:]...)
				p.log.Reset()
				p.log.Write(keep)
			}
			p.mu.Unlock()
			if strings.Contains(line, `"msg":"listening"`) || strings.Contains(line, `"msg":"running"`) {
				once.Do(func() { close(p.ready) })
			}
		}
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// TestStartTogether starts the five processes of a distributed deployment (one serve, two
// workers, two indexers) at the same moment on fresh backends, as compose does, and checks
// that every one of them comes up: schema creation, indices, aliases and the bucket must
// tolerate concurrent creators. Repeated, because a race does not lose every time.
func TestStartTogether(t *testing.T) {
	testenv.External(t, "LECTERN_TEST_POSTGRES_URL")
	bin := buildBinary(t)
	for try := range 3 {
		env := distributedEnv(t)
		addr := freeAddr(t)
		env = append(env, "LECTERN_ADDR="+addr)
		var procs []*roleProc
		for _, role := range []string{"serve", "worker", "worker", "indexer", "indexer"} {
			procs = append(procs, startRole(t, bin, role, env))
		}
		for _, p := range procs {
			select {
			case <-p.ready:
			case <-p.exited:
				t.Fatalf("try %d: the %s process exited during start-up (%v):\n%s", try+1, p.role, p.err, p.output())
			case <-time.After(90 * time.Second):
				t.Fatalf("try %d: the %s process did not finish start-up within 90 s:\n%s", try+1, p.role, p.output())
			}
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			res, err := http.Get("http://" + addr + "/healthz")
			if err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("try %d: serve did not answer /healthz with 200: %v", try+1, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		for _, p := range procs {
			select {
			case <-p.exited:
				t.Fatalf("try %d: the %s process exited (%v):\n%s", try+1, p.role, p.err, p.output())
			default:
			}
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
}
