// Package scripts holds tests of the repository's shell scripts.
package scripts

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// freePort is a loopback port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// fakeElasticsearch starts a process named like an Elasticsearch node (its command line is
// what `services.sh down` looks at) and returns it; it sleeps until killed.
func fakeElasticsearch(t *testing.T, user, args string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("bash", "-c", `exec -a "`+args+`" sleep 120`)
	if os.Getuid() == 0 {
		cmd = exec.Command("runuser", "-u", user, "--", "bash", "-c", `exec -a "`+args+`" sleep 120`)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// alive reports whether the process of cmd still runs (a zombie counts as gone).
func alive(cmd *exec.Cmd) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name's closing parenthesis: Z is a zombie.
	for i := len(b) - 1; i > 0; i-- {
		if b[i] == ')' {
			return i+2 < len(b) && b[i+2] != 'Z'
		}
	}
	return true
}

// TestServicesDownStopsOnlyItsOwn: `services.sh down` stops the Elasticsearch of its own run
// directory and leaves another node of the same user running (another checkout's suite, a
// private test node); it once stopped every Elasticsearch of the user on the machine.
func TestServicesDownStopsOnlyItsOwn(t *testing.T) {
	user := "lectern"
	if os.Getuid() != 0 {
		u, err := exec.Command("id", "-un").Output()
		if err != nil {
			t.Fatal(err)
		}
		user = string(u[:len(u)-1])
	} else if exec.Command("id", user).Run() != nil {
		t.Fatalf("user %s is missing: scripts/services.sh up creates it", user)
	}
	cache := t.TempDir()
	if err := os.Chmod(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(cache, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	ours := fakeElasticsearch(t, user, "java org.elasticsearch.launcher.CliToolLauncher -E http.port=1 -E path.data="+run+"/es/data -E path.logs=x")
	other := fakeElasticsearch(t, user, "java org.elasticsearch.bootstrap.Elasticsearch org.elasticsearch.launcher.CliToolLauncher -E path.data="+run+"2/es/data -E path.logs=y")
	deadline := time.Now().Add(10 * time.Second)
	for !alive(ours) || !alive(other) {
		if time.Now().After(deadline) {
			t.Fatal("the fake nodes did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "services.sh", "down")
	// Ports nothing listens on, so `down` touches none of the suite's real backends.
	cmd.Env = append(os.Environ(), "LECTERN_CACHE="+cache, "LECTERN_SVC_USER="+user, "LECTERN_TEST_ES_PORT="+freePort(t),
		"LECTERN_TEST_REDIS_PORT="+freePort(t), "LECTERN_TEST_PG_PORT="+freePort(t), "LECTERN_TEST_MINIO_PORT="+freePort(t))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("services.sh down: %v\n%s", err, out)
	}
	deadline = time.Now().Add(10 * time.Second)
	for alive(ours) {
		if time.Now().After(deadline) {
			t.Fatal("down left its own Elasticsearch running")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !alive(other) {
		t.Fatal("down stopped another run directory's Elasticsearch")
	}
}
