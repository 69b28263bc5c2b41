package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPlayerCommitSurvivesKill takes a SCO through the player's runtime endpoint on the real
// binary: every commit that answered true must be there after a SIGKILL right after the last
// answer and a restart.
func TestPlayerCommitSurvivesKill(t *testing.T) {
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
	base := "http://" + p.addr
	mustCall := func(method, url, body string, want int) string {
		t.Helper()
		status, out := call(t, method, url, user, pass, body)
		if status != want {
			t.Fatalf("%s %s: %d %s", method, url, status, out)
		}
		return out
	}
	mustCall("POST", base+"/api/v1/app_management/tenants", `{"tenant_id":"kill"}`, 201)
	pkg := filepath.Join(t.TempDir(), "course.zip")
	writeZip(t, pkg, map[string]string{"imsmanifest.xml": smokeManifest, "a.html": "<html>a</html>", "b/b.html": "<html>b</html>"})
	env := map[string]string{"LECTERN_ROOT_USER": user, "LECTERN_ROOT_PASSWORD": pass}
	var out, errOut strings.Builder
	if err := run(t.Context(), []string{"import", pkg, "--tenant", "kill", "--course", "c1", "--server", base, "--no-progress"},
		func(k string) string { return env[k] }, &out, &errOut); err != nil {
		t.Fatalf("import: %v\n%s%s", err, out.String(), errOut.String())
	}
	regs := base + "/engine/api/v1/kill/registrations"
	mustCall("POST", regs, `{"courseId":"c1","registrationId":"r1","learner":{"id":"ann"}}`, 204)
	var link struct{ LaunchLink string }
	_ = json.Unmarshal([]byte(mustCall("GET", regs+"/r1/launchLink", "", 200)), &link)
	i := strings.Index(link.LaunchLink, "/player/launch/")
	if i < 0 {
		t.Fatalf("launch link %q", link.LaunchLink)
	}
	// The player runs on the content origin, the launch link's.
	content := link.LaunchLink[:i]
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(link.LaunchLink)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	session := strings.TrimPrefix(res.Header.Get("Location"), "/player/session/")
	if res.StatusCode != 303 || session == "" {
		t.Fatalf("launch: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	// The first SCO of the smoke course.
	var tree struct {
		RootActivity struct{ Children []struct{ ID string } }
	}
	_ = json.Unmarshal([]byte(mustCall("GET", base+"/engine/api/v1/kill/courses/c1/detail", "", 200)), &tree)
	sco := tree.RootActivity.Children[0].ID
	var state struct{ Attempt int64 }
	_ = json.Unmarshal([]byte(mustCall("GET", fmt.Sprintf("%s/player/runtime/%s/activity?activity=%s", content, session, sco), "", 200)), &state)

	const commits = 25
	for n := 1; n <= commits; n++ {
		status := "incomplete"
		if n == commits {
			status = "passed"
		}
		body := fmt.Sprintf(`{"commitSequence":%d,"cmi.core.lesson_status":%q,"cmi.core.lesson_location":"page-%d","cmi.suspend_data":"n=%d","cmi.core.score.raw":"90"}`, n, status, n, n)
		got := mustCall("POST", fmt.Sprintf("%s/player/runtime/%s/commit?activity=%s&attempt=%d", content, session, sco, state.Attempt), body, 200)
		if !strings.Contains(got, `"result":"true"`) {
			t.Fatalf("commit %d: %s", n, got)
		}
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()

	p2 := startBinary(t, bin, data, freeAddr(t))
	var detail struct {
		ActivityDetails struct {
			Children []struct {
				Runtime struct{ CompletionStatus, SuccessStatus, Location, SuspendData, ScoreRaw string }
			}
		}
	}
	_ = json.Unmarshal([]byte(mustCall("GET", "http://"+p2.addr+"/engine/api/v1/kill/registrations/r1/progress/detail", "", 200)), &detail)
	rt := detail.ActivityDetails.Children[0].Runtime
	want := fmt.Sprintf("page-%d", commits)
	if rt.Location != want || rt.SuspendData != fmt.Sprintf("n=%d", commits) || rt.SuccessStatus != "passed" || rt.ScoreRaw != "90" {
		t.Fatalf("after kill -9: %+v, want location %s and passed", rt, want)
	}
}
