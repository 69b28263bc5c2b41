package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/testenv"
)

// startForwardingBinary runs the embedded binary (all roles) with fixed root credentials and
// loopback allowed as an outbound destination.
func startForwardingBinary(t *testing.T, bin, dataDir, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "LECTERN_ADDR="+addr, "LECTERN_DATA_DIR="+dataDir, "LECTERN_LOG_LEVEL=warn",
		"LECTERN_ROOT_USER=root", "LECTERN_ROOT_PASSWORD=kill-test-password", "LECTERN_OUTBOUND_ALLOW=127.0.0.1/32")
	for _, k := range []string{"LECTERN_POSTGRES_URL", "LECTERN_REDIS_URL", "LECTERN_S3_ENDPOINT", "LECTERN_ELASTICSEARCH_URL"} {
		cmd.Env = append(cmd.Env, k+"=")
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitHealthy(t, addr)
	return cmd
}

// killReceiver stores every statement id once, counts ids it receives again, and on its
// killAt-th POST stores the batch and then waits, without answering, for the test to kill
// the sender: the batch is at the destination but its acknowledgement never arrives.
type killReceiver struct {
	mu      sync.Mutex
	posts   int
	killAt  int
	ids     []string
	seen    map[string]bool
	dups    int
	inKill  chan struct{} // closed when the killAt-th batch is stored
	release chan struct{} // closed by the test after the kill
}

func (rc *killReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var batch []struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&batch); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.posts++
	for _, st := range batch {
		if rc.seen[st.ID] {
			rc.dups++
			continue
		}
		rc.seen[st.ID] = true
		rc.ids = append(rc.ids, st.ID)
	}
	hold := rc.posts == rc.killAt
	rc.mu.Unlock()
	if hold {
		close(rc.inKill)
		<-rc.release
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (rc *killReceiver) state() (ids []string, dups int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.ids...), rc.dups
}

// TestForwardingSurvivesKill: a SIGKILL while a batch is at the destination but not yet
// acknowledged, then a restart: the destination ends with every statement exactly once, in
// stored order. The wire repeats the unacknowledged batch (the position had not moved), and
// nothing else.
func TestForwardingSurvivesKill(t *testing.T) {
	bin := buildBinary(t)
	rc, dest := newKillReceiver(t)

	data := t.TempDir()
	addr := freeAddr(t)
	cmd := startForwardingBinary(t, bin, data, addr)
	base := "http://" + addr
	want := setUpForwarding(t, base, dest.URL)
	select {
	case <-rc.inKill:
	case <-time.After(30 * time.Second):
		t.Fatal("the third batch never arrived")
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	close(rc.release)
	if ids, _ := rc.state(); len(ids) != 15 {
		t.Fatalf("at the kill the destination holds %d statements, want 3 batches of 5", len(ids))
	}

	addr2 := freeAddr(t)
	startForwardingBinary(t, bin, data, addr2)
	rc.waitForAll(t, len(want), 30*time.Second)
	var st struct {
		Status struct {
			Forwarded int `json:"forwarded"`
		} `json:"status"`
	}
	for deadline := time.Now().Add(10 * time.Second); st.Status.Forwarded != len(want) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, out := call(t, "GET", "http://"+addr2+"/api/v1/app_management/tenants/fwdkill/forwarding_pairs/k", "root", "kill-test-password", "")
		_ = json.Unmarshal([]byte(out), &st)
	}
	ids, dups := rc.state()
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("destination holds\n%v\nwant (stored order)\n%v", ids, want)
	}
	if dups != 5 {
		t.Fatalf("%d statements arrived twice, want exactly the 5 of the unacknowledged batch", dups)
	}
	// Two batches acknowledged before the kill (their position survived it) and six after:
	// the unacknowledged batch counts once.
	if st.Status.Forwarded != len(want) {
		t.Fatalf("forwarded: %d, want %d", st.Status.Forwarded, len(want))
	}
}

// setUpForwarding creates tenant fwdkill (batches of 5, 50 ms polls, 1 s request timeout),
// stores 40 statements in one POST and creates pair k to dest; it returns the statement ids
// in stored order.
func setUpForwarding(t *testing.T, base, dest string) []string {
	t.Helper()
	mustCall := func(base, method, path, body string, want int) string {
		t.Helper()
		status, out := call(t, method, base+path, "root", "kill-test-password", body)
		if status != want {
			t.Fatalf("%s %s: %d %s", method, path, status, out)
		}
		return out
	}
	mustCall(base, "POST", "/api/v1/app_management/tenants", `{"tenant_id":"fwdkill"}`, 201)
	mustCall(base, "PUT", "/engine/api/v1/fwdkill/configuration/TinCanStatementForwardStmtBatchSize", `{"value":"5"}`, 204)
	mustCall(base, "PUT", "/engine/api/v1/fwdkill/configuration/TinCanStatementForwardSleepTime", `{"value":"50"}`, 204)
	mustCall(base, "PUT", "/engine/api/v1/fwdkill/configuration/TinCanStatementForwardWebTimeout", `{"value":"1000"}`, 204)
	var stmts []string
	for i := 0; i < 40; i++ {
		stmts = append(stmts, fmt.Sprintf(`{"actor":{"mbox":"mailto:k%d@example.com"},"verb":{"id":"http://adlnet.gov/expapi/verbs/completed"},"object":{"id":"http://example.com/kill/%d"}}`, i, i))
	}
	req, _ := http.NewRequest("POST", base+"/lrs/TCAPI/fwdkill/statements", strings.NewReader("["+strings.Join(stmts, ",")+"]"))
	req.SetBasicAuth("root", "kill-test-password")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Experience-API-Version", "1.0.3")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var want []string
	if err := json.NewDecoder(res.Body).Decode(&want); err != nil || res.StatusCode != 200 || len(want) != 40 {
		t.Fatalf("post statements: %d %v %v", res.StatusCode, err, want)
	}
	mustCall(base, "POST", "/api/v1/app_management/tenants/fwdkill/forwarding_pairs",
		fmt.Sprintf(`{"id":"k","destination_url":%q,"destination_credentials":{"username":"u","password":"p"}}`, dest+"/xapi"), 201)
	return want
}

// waitForAll polls until rc holds n statements.
func (rc *killReceiver) waitForAll(t *testing.T, n int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if ids, _ := rc.state(); len(ids) >= n {
			return
		}
		if time.Now().After(deadline) {
			ids, _ := rc.state()
			t.Fatalf("the destination holds %d of %d statements", len(ids), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newKillReceiver(t *testing.T) (*killReceiver, *httptest.Server) {
	rc := &killReceiver{killAt: 3, seen: map[string]bool{}, inKill: make(chan struct{}), release: make(chan struct{})}
	dest := httptest.NewServer(rc)
	t.Cleanup(func() {
		select {
		case <-rc.release:
		default:
			close(rc.release)
		}
		dest.Close()
	})
	return rc, dest
}

// TestForwardingSurvivesWorkerKillDistributed: the distributed roles (serve, then worker
// processes on PostgreSQL, Redis, Elasticsearch). The worker holding the pair is killed
// while the destination holds an unacknowledged batch; two fresh workers start together.
// One of them takes the pair once the dead worker's lease ran out, and the destination ends
// with every statement once: only the unacknowledged batch crossed the wire twice.
func TestForwardingSurvivesWorkerKillDistributed(t *testing.T) {
	testenv.External(t, "LECTERN_TEST_POSTGRES_URL")
	bin := buildBinary(t)
	rc, dest := newKillReceiver(t)
	env := append(distributedEnv(t), "LECTERN_OUTBOUND_ALLOW=127.0.0.1/32", "LECTERN_ROOT_PASSWORD=kill-test-password")
	addr := freeAddr(t)
	env = append(env, "LECTERN_ADDR="+addr)
	serve := startRole(t, bin, "serve", env)
	worker := startRole(t, bin, "worker", env)
	for _, p := range []*roleProc{serve, worker} {
		select {
		case <-p.ready:
		case <-p.exited:
			t.Fatalf("%s exited: %v\n%s", p.role, p.err, p.output())
		case <-time.After(90 * time.Second):
			t.Fatalf("%s did not start:\n%s", p.role, p.output())
		}
	}
	want := setUpForwarding(t, "http://"+addr, dest.URL)
	select {
	case <-rc.inKill:
	case <-time.After(60 * time.Second):
		t.Fatalf("the third batch never arrived:\n%s", worker.output())
	}
	_ = worker.cmd.Process.Signal(syscall.SIGKILL)
	<-worker.exited
	close(rc.release)
	if ids, _ := rc.state(); len(ids) != 15 {
		t.Fatalf("at the kill the destination holds %d statements, want 3 batches of 5", len(ids))
	}
	startRole(t, bin, "worker", env)
	startRole(t, bin, "worker", env)
	rc.waitForAll(t, len(want), 60*time.Second)
	ids, dups := rc.state()
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("destination holds\n%v\nwant (stored order)\n%v", ids, want)
	}
	if dups != 5 {
		t.Fatalf("%d statements arrived twice, want exactly the 5 of the unacknowledged batch", dups)
	}
}
