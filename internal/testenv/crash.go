package testenv

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// KillAfterAcks re-runs the calling top-level test in a child process with env=value set (the
// child sees it and only writes, printing "ACK <id>" after each write that returned success),
// collects acknowledgements until want of them or the timeout, then kills the child with
// SIGKILL — no deferred cleanup, no graceful close — and returns the acknowledged ids, for the
// caller to check that every one survived.
func KillAfterAcks(t *testing.T, env, value string, want int, timeout time.Duration) []string {
	t.Helper()
	top := strings.SplitN(t.Name(), "/", 2)[0]
	cmd := exec.Command(os.Args[0], "-test.run=^"+top+"$", "-test.v=false")
	cmd.Env = append(os.Environ(), env+"="+value)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(timeout)
	for sc.Scan() && len(acked) < want && time.Now().Before(deadline) {
		if id, ok := strings.CutPrefix(sc.Text(), "ACK "); ok {
			acked = append(acked, id)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return acked
}
