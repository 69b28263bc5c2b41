package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course/postback"
)

// hookReceiver is a loopback webhook receiver: it records every request and answers 500 to the
// first failFirst ones, and 401 to requests whose Authorization differs from wantAuth (when set).
type hookReceiver struct {
	srv       *httptest.Server
	mu        sync.Mutex
	requests  []hookRequest
	failFirst int
	wantAuth  func() string
}

type hookRequest struct {
	body   []byte
	header http.Header
	status int
}

func newHookReceiver(t *testing.T, failFirst int) *hookReceiver {
	h := &hookReceiver{failFirst: failFirst}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		status := http.StatusNoContent
		switch {
		case h.wantAuth != nil && r.Header.Get("Authorization") != h.wantAuth():
			status = http.StatusUnauthorized
		case len(h.requests) < h.failFirst:
			status = http.StatusInternalServerError
		}
		h.requests = append(h.requests, hookRequest{body: b, header: r.Header.Clone(), status: status})
		w.WriteHeader(status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// delivered returns the requests the receiver accepted.
func (h *hookReceiver) delivered() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hookRequest
	for _, r := range h.requests {
		if r.status/100 == 2 {
			out = append(out, r)
		}
	}
	return out
}

func (h *hookReceiver) all() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookRequest(nil), h.requests...)
}

type hookMessage struct {
	TenantID       string          `json:"tenant_id"`
	SubscriptionID string          `json:"subscription_id"`
	Topic          string          `json:"topic"`
	Body           json.RawMessage `json:"body"`
	MessageID      string          `json:"message_id"`
	Timestamp      time.Time       `json:"timestamp"`
	BodyVersion    string          `json:"body_version"`
	MessageVersion string          `json:"message_version"`
}

func strp(s string) *string { return &s }

func (e *env) createAuthConfig(tenantID string, body map[string]any) string {
	e.t.Helper()
	r := e.do("POST", "/api/v1/app_management/subscription_auth", root, body, "tenant_id", tenantID)
	e.expect(r, 201, "create auth configuration")
	var a struct {
		ID     string  `json:"auth_config_id"`
		Secret *string `json:"secret"`
	}
	r.json(e.t, &a)
	if a.ID == "" || a.Secret != nil || strings.Contains(string(r.Body), "secret") {
		e.t.Fatalf("auth configuration answer: %s", r.Body)
	}
	return a.ID
}

func (e *env) subscribe(tenantID, url, authID string) (id, secret string) {
	e.t.Helper()
	r := e.do("POST", "/api/v1/app_management/subscriptions", root,
		map[string]any{"topic": "JOB_PROCESSED", "url": url, "auth_config_id": authID}, "tenant_id", tenantID)
	e.expect(r, 201, "subscribe")
	var s struct {
		ID     string `json:"subscription_id"`
		Secret string `json:"signing_secret"`
	}
	r.json(e.t, &s)
	if s.ID == "" || s.Secret == "" {
		e.t.Fatalf("subscription answer: %s", r.Body)
	}
	return s.ID, s.Secret
}

// checkMessage verifies a delivered JOB_PROCESSED message: signature, shape, and a body equal
// to what GET /api/v1/jobs/{id} answers.
func (e *env) checkMessage(tenantID, subID, secret string, req hookRequest) hookMessage {
	e.t.Helper()
	if !postback.Verify([]byte(secret), req.body, req.header.Get("X-Lectern-Signature")) {
		e.t.Fatalf("signature %q does not verify", req.header.Get("X-Lectern-Signature"))
	}
	var m hookMessage
	if err := json.Unmarshal(req.body, &m); err != nil {
		e.t.Fatalf("message is not JSON: %s", req.body)
	}
	if m.TenantID != tenantID || m.SubscriptionID != subID || m.Topic != "JOB_PROCESSED" || len(m.MessageID) != 36 ||
		m.Timestamp.IsZero() || m.BodyVersion == "" || m.MessageVersion == "" {
		e.t.Fatalf("message: %s", req.body)
	}
	var j jobRead
	if err := json.Unmarshal(m.Body, &j); err != nil || j.ID == "" {
		e.t.Fatalf("message body: %s", m.Body)
	}
	r := e.do("GET", "/api/v1/jobs/"+j.ID, root, nil, "tenant_id", tenantID)
	e.expect(r, 200, "job of the message")
	var got, want any
	_ = json.Unmarshal(m.Body, &got)
	_ = json.Unmarshal(r.Body, &want)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		e.t.Fatalf("message body %s differs from GET /jobs %s", gb, wb)
	}
	return m
}

func TestSubscriptionsAPI(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		const ten = "subs"
		e.createTenant(ten, true)
		e.createTenant("other", true)
		const auth, subs = "/api/v1/app_management/subscription_auth", "/api/v1/app_management/subscriptions"

		bad := []map[string]any{
			{},
			{"type": "DIGEST"},
			{"type": "BASIC_AUTH", "key": "u"},
			{"type": "BASIC_AUTH", "key": "u", "secret": "p", "token_url": "http://127.0.0.1/t"},
			{"type": "OAUTH_2_CLIENT_CREDENTIALS", "key": "c", "secret": "s", "scope": "x"},
			{"type": "OAUTH_2_CLIENT_CREDENTIALS", "key": "c", "secret": "s", "token_url": "http://127.0.0.1/t"},
			{"type": "OAUTH_2_CLIENT_CREDENTIALS", "key": "c", "secret": "s", "scope": "x", "token_url": "ftp://127.0.0.1/t"},
			{"type": "OAUTH_2_CLIENT_CREDENTIALS", "key": "c", "secret": "s", "scope": "x", "token_url": "http://10.1.2.3/t"},
			{"type": "NO_AUTH", "key": "u"},
			{"type": "NO_AUTH", "scope": ""},
			{"type": "NO_AUTH", "extra": true},
		}
		for _, b := range bad {
			e.expect(e.do("POST", auth, root, b, "tenant_id", ten), 400, "bad auth configuration")
		}
		e.expect(e.do("POST", auth, root, map[string]any{"type": "NO_AUTH"}), 400, "no tenant_id header")

		none := e.createAuthConfig(ten, map[string]any{"type": "NO_AUTH", "key": nil, "secret": nil, "scope": nil, "token_url": nil})
		basicID := e.createAuthConfig(ten, map[string]any{"type": "BASIC_AUTH", "key": "hook-user", "secret": "hook-pass"})
		r := e.do("GET", auth, root, nil, "tenant_id", ten)
		e.expect(r, 200, "list auth configurations")
		if strings.Contains(string(r.Body), "hook-pass") || !strings.Contains(string(r.Body), basicID) || !strings.Contains(string(r.Body), none) {
			t.Fatalf("auth list: %s", r.Body)
		}
		r = e.do("GET", auth, root, nil, "tenant_id", "other")
		e.expect(r, 200, "other tenant's list")
		if strings.Contains(string(r.Body), basicID) {
			t.Fatalf("another tenant sees the configuration: %s", r.Body)
		}

		rec := newHookReceiver(t, 0)
		for _, b := range []map[string]any{
			{"topic": "JOB_CREATED", "url": rec.srv.URL, "auth_config_id": none},
			{"topic": "JOB_PROCESSED", "url": "", "auth_config_id": none},
			{"topic": "JOB_PROCESSED", "url": "gopher://127.0.0.1/", "auth_config_id": none},
			{"topic": "JOB_PROCESSED", "url": "http://169.254.169.254/latest", "auth_config_id": none},
			{"topic": "JOB_PROCESSED", "url": rec.srv.URL},
		} {
			e.expect(e.do("POST", subs, root, b, "tenant_id", ten), 400, "bad subscription")
		}
		e.expect(e.do("POST", subs, root, map[string]any{"topic": "JOB_PROCESSED", "url": rec.srv.URL, "auth_config_id": "nope"},
			"tenant_id", ten), 404, "unknown auth configuration")
		e.expect(e.do("POST", subs, root, map[string]any{"topic": "JOB_PROCESSED", "url": rec.srv.URL, "auth_config_id": none},
			"tenant_id", "other"), 404, "another tenant's auth configuration")

		subID, _ := e.subscribe(ten, rec.srv.URL, basicID)
		r = e.do("GET", subs, root, nil, "tenant_id", ten)
		e.expect(r, 200, "list subscriptions")
		if !strings.Contains(string(r.Body), subID) || strings.Contains(string(r.Body), "signing_secret") {
			t.Fatalf("subscription list: %s", r.Body)
		}
		e.expect(e.do("DELETE", auth+"/"+basicID, root, nil, "tenant_id", ten), 409, "delete an auth configuration in use")
		e.expect(e.do("DELETE", auth+"/nope", root, nil, "tenant_id", ten), 404, "delete an unknown auth configuration")
		e.expect(e.do("GET", subs+"/nope/deliveries", root, nil, "tenant_id", ten), 404, "log of an unknown subscription")
		e.expect(e.do("GET", subs+"/"+subID+"/deliveries", root, nil, "tenant_id", "other"), 404, "another tenant's log")
		e.expect(e.do("DELETE", subs+"/"+subID, root, nil, "tenant_id", "other"), 404, "delete another tenant's subscription")
		e.expect(e.do("DELETE", subs+"/"+subID, root, nil, "tenant_id", ten), 204, "unsubscribe")
		e.expect(e.do("DELETE", subs+"/"+subID, root, nil, "tenant_id", ten), 404, "unsubscribe twice")
		e.expect(e.do("DELETE", auth+"/"+basicID, root, nil, "tenant_id", ten), 204, "delete an unused auth configuration")
		r = e.do("GET", auth, root, nil, "tenant_id", ten)
		if strings.Contains(string(r.Body), basicID) {
			t.Fatalf("deleted configuration listed: %s", r.Body)
		}
	})
}
