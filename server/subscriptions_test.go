package server_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
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
		// A disabled tenant refuses changes and still answers reads.
		e.createTenant("off", false)
		e.expect(e.do("POST", auth, root, map[string]any{"type": "NO_AUTH"}, "tenant_id", "off"), 409, "auth configuration in a disabled tenant")
		e.expect(e.do("GET", subs, root, nil, "tenant_id", "off"), 200, "subscriptions of a disabled tenant")
		e.expect(e.do("DELETE", auth+"/"+basicID, root, nil, "tenant_id", ten), 204, "delete an unused auth configuration")
		r = e.do("GET", auth, root, nil, "tenant_id", ten)
		if strings.Contains(string(r.Body), basicID) {
			t.Fatalf("deleted configuration listed: %s", r.Body)
		}
	})
}

// tokenEndpoint is a loopback OAuth 2.0 token endpoint for the client-credentials grant; it
// counts the tokens it issued.
type tokenEndpoint struct {
	srv    *httptest.Server
	issued atomic.Int32
}

func newTokenEndpoint(t *testing.T, clientID, clientSecret, scope string) *tokenEndpoint {
	te := &tokenEndpoint{}
	te.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if err := r.ParseForm(); err != nil || !ok || id != clientID || secret != clientSecret ||
			r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != scope {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		n := te.issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"Bearer","expires_in":3600}`, n)
	}))
	t.Cleanup(te.srv.Close)
	return te
}

// deliveries reads a subscription's delivery log.
func (e *env) deliveries(tenantID, subID string) []struct {
	MessageID string `json:"message_id"`
	Attempt   int    `json:"attempt"`
	Time      string `json:"attempt_dt"`
	Status    int    `json:"status"`
	Error     string `json:"error"`
	Final     bool   `json:"final"`
} {
	e.t.Helper()
	r := e.do("GET", "/api/v1/app_management/subscriptions/"+subID+"/deliveries", root, nil, "tenant_id", tenantID)
	e.expect(r, 200, "delivery log")
	var l struct {
		Deliveries []struct {
			MessageID string `json:"message_id"`
			Attempt   int    `json:"attempt"`
			Time      string `json:"attempt_dt"`
			Status    int    `json:"status"`
			Error     string `json:"error"`
			Final     bool   `json:"final"`
		} `json:"deliveries"`
	}
	r.json(e.t, &l)
	return l.Deliveries
}

func messageID(t *testing.T, body []byte) string {
	t.Helper()
	var m hookMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("message: %s", body)
	}
	return m.MessageID
}

// TestWebhookDeliveries: every concluded job (FAILED and COMPLETED imports) reaches each
// subscription once, signed, with the JobRead as GET /api/v1/jobs answers it, authenticated
// per the subscription's configuration (NO_AUTH, BASIC_AUTH, OAuth client credentials with
// one token for both messages); a receiver that fails twice gets the message on the third
// attempt with the same message_id; one that always fails is given up after the last attempt.
func TestWebhookDeliveries(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		const ten = "hooks"
		e.createTenant(ten, true)
		e.createTenant("quiet", true)

		flaky := newHookReceiver(t, 2)
		none := e.createAuthConfig(ten, map[string]any{"type": "NO_AUTH"})
		flakyID, flakySecret := e.subscribe(ten, flaky.srv.URL+"/flaky", none)

		basicRec := newHookReceiver(t, 0)
		basicRec.wantAuth = func() string { return "Basic " + base64.StdEncoding.EncodeToString([]byte("hook-user:hook pass")) }
		basicAuth := e.createAuthConfig(ten, map[string]any{"type": "BASIC_AUTH", "key": "hook-user", "secret": "hook pass"})
		basicID, basicSecret := e.subscribe(ten, basicRec.srv.URL, basicAuth)

		tokens := newTokenEndpoint(t, "client-1", "client-secret", "hooks.write")
		oauthRec := newHookReceiver(t, 0)
		oauthRec.wantAuth = func() string { return "Bearer tok-1" }
		oauthAuth := e.createAuthConfig(ten, map[string]any{"type": "OAUTH_2_CLIENT_CREDENTIALS", "key": "client-1", "secret": "client-secret",
			"scope": "hooks.write", "token_url": tokens.srv.URL + "/token"})
		oauthID, oauthSecret := e.subscribe(ten, oauthRec.srv.URL, oauthAuth)

		dead := newHookReceiver(t, 1000)
		deadID, _ := e.subscribe(ten, dead.srv.URL, none)

		// Another tenant's subscription hears nothing of these jobs.
		quiet := newHookReceiver(t, 0)
		e.subscribe("quiet", quiet.srv.URL, e.createAuthConfig("quiet", map[string]any{"type": "NO_AUTH"}))

		// Job 1 fails.
		failed := e.waitContentJob(ten, e.uploadContent(root, ten, "content_id=broken", []byte("%PDF-1.4 not really a pdf"), "broken.pdf"))
		if failed.Status != "FAILED" {
			t.Fatalf("broken import: %+v", failed)
		}
		for _, rec := range []*hookReceiver{flaky, basicRec, oauthRec} {
			eventually(t, 30*time.Second, "the FAILED job's message", func() bool { return len(rec.delivered()) == 1 })
		}
		// Job 2 completes.
		done := e.waitContentJob(ten, e.uploadContent(root, ten, "content_id=kitchen", []byte(kitchenHTML), "k.html"))
		if done.Status != "COMPLETED" {
			t.Fatalf("import: %+v", done)
		}
		for _, rec := range []*hookReceiver{flaky, basicRec, oauthRec} {
			eventually(t, 30*time.Second, "the COMPLETED job's message", func() bool { return len(rec.delivered()) == 2 })
		}

		for _, c := range []struct {
			rec           *hookReceiver
			subID, secret string
		}{{flaky, flakyID, flakySecret}, {basicRec, basicID, basicSecret}, {oauthRec, oauthID, oauthSecret}} {
			got := c.rec.delivered()
			var jobsSeen []string
			ids := map[string]bool{}
			for _, req := range got {
				m := e.checkMessage(ten, c.subID, c.secret, req)
				var j jobRead
				_ = json.Unmarshal(m.Body, &j)
				jobsSeen = append(jobsSeen, j.ID+"/"+j.Status)
				ids[m.MessageID] = true
			}
			if want := []string{failed.ID + "/FAILED", done.ID + "/COMPLETED"}; strings.Join(jobsSeen, " ") != strings.Join(want, " ") || len(ids) != 2 {
				t.Fatalf("subscription %s got %v (message ids %v), want %v", c.subID, jobsSeen, ids, want)
			}
		}
		if n := tokens.issued.Load(); n != 1 {
			t.Fatalf("token endpoint issued %d tokens for two deliveries, want 1 (cached)", n)
		}

		// The flaky receiver saw the first message three times, with one message_id, and the
		// delivery log shows the three attempts.
		all := flaky.all()
		if len(all) != 4 {
			t.Fatalf("flaky receiver got %d requests, want 4", len(all))
		}
		first := messageID(t, all[0].body)
		for i, req := range all[:3] {
			if messageID(t, req.body) != first || string(req.body) != string(all[2].body) || req.header.Get("X-Lectern-Attempt") != fmt.Sprint(i+1) {
				t.Fatalf("attempt %d: %s (attempt header %q), first %s", i+1, req.body, req.header.Get("X-Lectern-Attempt"), all[0].body)
			}
		}
		eventually(t, 10*time.Second, "the flaky delivery log", func() bool { return len(e.deliveries(ten, flakyID)) == 4 })
		log := e.deliveries(ten, flakyID)
		for i, want := range []struct {
			status  int
			attempt int
			final   bool
		}{{500, 1, false}, {500, 2, false}, {204, 3, true}, {204, 1, true}} {
			d := log[i]
			if d.Status != want.status || d.Attempt != want.attempt || d.Final != want.final || (i < 3) != (d.MessageID == first) ||
				(d.Status == 500) != (d.Error != "") || d.Time == "" {
				t.Fatalf("delivery log entry %d: %+v (log %+v)", i, d, log)
			}
		}

		// The dead receiver: 8 attempts per message, the last final with its error.
		eventually(t, 30*time.Second, "the dead receiver's attempts", func() bool { return len(e.deliveries(ten, deadID)) == 16 })
		finals := 0
		for _, d := range e.deliveries(ten, deadID) {
			if d.Status != 500 || !strings.Contains(d.Error, "500") {
				t.Fatalf("dead delivery: %+v", d)
			}
			if d.Final {
				finals++
				if d.Attempt != 8 {
					t.Fatalf("final attempt %d, want 8", d.Attempt)
				}
			}
		}
		if finals != 2 || len(dead.all()) != 16 {
			t.Fatalf("dead receiver: %d final entries, %d requests", finals, len(dead.all()))
		}
		if n := len(quiet.all()); n != 0 {
			t.Fatalf("another tenant's receiver got %d messages", n)
		}
	})
}

// TestWebhookSurvivesRestart: a message whose first attempts failed is delivered, with the
// same message_id, by the next process after a restart (the pending attempt is a durable
// queue task), and its delivery log spans both processes.
func TestWebhookSurvivesRestart(t *testing.T) {
	for name, mode := range modes(t) {
		t.Run(name, func(t *testing.T) {
			cfg := mode(t)
			// Slow enough retries that the process stops while the message is still pending.
			cfg.RetryBaseDelay = 300 * time.Millisecond
			e := start(t, cfg)
			const ten = "restart"
			e.createTenant(ten, true)
			rec := newHookReceiver(t, 1000)
			subID, secret := e.subscribe(ten, rec.srv.URL, e.createAuthConfig(ten, map[string]any{"type": "NO_AUTH"}))
			j := e.waitContentJob(ten, e.uploadContent(root, ten, "content_id=broken", []byte("%PDF-1.4 not really a pdf"), "broken.pdf"))
			eventually(t, 30*time.Second, "two failed attempts", func() bool { return len(e.deliveries(ten, subID)) >= 2 })
			stop(t, e)
			before := rec.all()
			if len(before) < 2 || len(before) >= 8 {
				t.Fatalf("%d attempts before the restart", len(before))
			}
			rec.mu.Lock()
			rec.failFirst = 0
			rec.mu.Unlock()

			e = start(t, cfg)
			eventually(t, 60*time.Second, "delivery after the restart", func() bool { return len(rec.delivered()) == 1 })
			m := e.checkMessage(ten, subID, secret, rec.delivered()[0])
			if m.MessageID != messageID(t, before[0].body) || !strings.Contains(string(m.Body), j.ID) {
				t.Fatalf("after the restart message %s, before %s", m.MessageID, before[0].body)
			}
			eventually(t, 10*time.Second, "the final log entry", func() bool {
				log := e.deliveries(ten, subID)
				return len(log) > 0 && log[len(log)-1].Final && log[len(log)-1].Status == 204
			})
			for _, d := range e.deliveries(ten, subID) {
				if d.MessageID != m.MessageID {
					t.Fatalf("log entry of another message: %+v", d)
				}
			}
		})
	}
}

// TestWebhookCourseImport: an engine course import (the engine API's importJobs, which
// conclude in the course store, not the jobs store) is a job too: its JOB_PROCESSED message
// has a JobRead body of type COURSE_IMPORT, COMPLETED with the course id, or FAILED with the
// import's message as the error.
func TestWebhookCourseImport(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		const ten = "hooked-courses"
		e.createTenant(ten, true)
		rec := newHookReceiver(t, 0)
		subID, secret := e.subscribe(ten, rec.srv.URL, e.createAuthConfig(ten, map[string]any{"type": "NO_AUTH"}))

		startImport := func(r resp) string {
			e.expect(r, 200, "start import")
			var id struct{ Result string }
			r.json(t, &id)
			return id.Result
		}
		okID := startImport(e.upload(ten, "course=hooked-course", scorm12Package(t), "course.zip"))
		eventually(t, 60*time.Second, "the course import's message", func() bool { return len(rec.delivered()) == 1 })
		// Importing the same course again without mayCreateNewVersion fails.
		badID := startImport(e.upload(ten, "course=hooked-course", scorm12Package(t), "course.zip"))
		eventually(t, 60*time.Second, "the failed course import's message", func() bool { return len(rec.delivered()) == 2 })

		for i, want := range []struct{ id, status, course string }{{okID, "COMPLETED", "hooked-course"}, {badID, "FAILED", "hooked-course"}} {
			req := rec.delivered()[i]
			if !postback.Verify([]byte(secret), req.body, req.header.Get("X-Lectern-Signature")) {
				t.Fatalf("signature %q does not verify", req.header.Get("X-Lectern-Signature"))
			}
			var m hookMessage
			if err := json.Unmarshal(req.body, &m); err != nil || m.TenantID != ten || m.SubscriptionID != subID || m.Topic != "JOB_PROCESSED" {
				t.Fatalf("message: %s", req.body)
			}
			var j jobRead
			if err := json.Unmarshal(m.Body, &j); err != nil {
				t.Fatalf("body: %s", m.Body)
			}
			if j.ID != want.id || j.Type != "COURSE_IMPORT" || j.Status != want.status || j.Results["course_id"] != want.course ||
				j.Created == "" || j.Updated == "" || (want.status == "FAILED") != (j.Error != nil && j.Error.Message != "") {
				t.Fatalf("message %d body: %s, want %+v", i, m.Body, want)
			}
		}
	})
}
