package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hookKillReceiver serves a 404 at /doc (a URL import that fails fast, so a job concludes)
// and takes webhook messages at /hook: it holds the first one unanswered until the test has
// killed the sender, and accepts the rest.
type hookKillReceiver struct {
	mu       sync.Mutex
	messages []string
	inKill   chan struct{}
	release  chan struct{}
}

func (rc *hookKillReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/hook" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.messages = append(rc.messages, string(b))
	first := len(rc.messages) == 1
	rc.mu.Unlock()
	if first {
		close(rc.inKill)
		<-rc.release
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *hookKillReceiver) got() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.messages...)
}

// TestWebhookSurvivesKill: the embedded binary is killed (SIGKILL) while its first attempt to
// deliver a JOB_PROCESSED message waits for the receiver; after a restart the message arrives
// again, with the same message_id (at least once).
func TestWebhookSurvivesKill(t *testing.T) {
	bin := buildBinary(t)
	rc := &hookKillReceiver{inKill: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(rc)
	t.Cleanup(func() {
		select {
		case <-rc.release:
		default:
			close(rc.release)
		}
		srv.Close()
	})
	data := t.TempDir()
	addr := freeAddr(t)
	cmd := startForwardingBinary(t, bin, data, addr)
	base := "http://" + addr
	do := func(method, path, body string, want int) string {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.SetBasicAuth("root", "kill-test-password")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("tenant_id", "hookkill")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != want {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
		return string(b)
	}
	do("POST", "/api/v1/app_management/tenants", `{"tenant_id":"hookkill"}`, 201)
	var a struct {
		ID string `json:"auth_config_id"`
	}
	_ = json.Unmarshal([]byte(do("POST", "/api/v1/app_management/subscription_auth", `{"type":"NO_AUTH"}`, 201)), &a)
	do("POST", "/api/v1/app_management/subscriptions", `{"topic":"JOB_PROCESSED","url":"`+srv.URL+`/hook","auth_config_id":"`+a.ID+`"}`, 201)
	do("POST", "/api/v1/content", `{"url":"`+srv.URL+`/doc"}`, 202)
	select {
	case <-rc.inKill:
	case <-time.After(60 * time.Second):
		t.Fatal("the first delivery attempt never arrived")
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	close(rc.release)

	startForwardingBinary(t, bin, data, freeAddr(t))
	deadline := time.Now().Add(150 * time.Second) // the dead process's lease, then the queue's retry delay
	for len(rc.got()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no delivery after the restart (%d requests)", len(rc.got()))
		}
		time.Sleep(100 * time.Millisecond)
	}
	msgs := rc.got()
	var first, again struct {
		MessageID string `json:"message_id"`
		Topic     string `json:"topic"`
	}
	if json.Unmarshal([]byte(msgs[0]), &first) != nil || json.Unmarshal([]byte(msgs[1]), &again) != nil ||
		first.MessageID == "" || first.MessageID != again.MessageID || msgs[0] != msgs[1] || again.Topic != "JOB_PROCESSED" {
		t.Fatalf("before the kill %s, after %s", msgs[0], msgs[1])
	}
}
