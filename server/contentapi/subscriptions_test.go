package contentapi_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/postback"
)

func strp(s string) *string { return &s }

func createAuthConfig(e *servertest.Env, tenantID string, body map[string]any) string {
	e.T.Helper()
	r := e.Do("POST", "/api/v1/app_management/subscription_auth", servertest.Root, body, "tenant_id", tenantID)
	e.Expect(r, 201, "create auth configuration")
	var a struct {
		ID     string  `json:"auth_config_id"`
		Secret *string `json:"secret"`
	}
	r.JSON(e.T, &a)
	if a.ID == "" || a.Secret != nil || strings.Contains(string(r.Body), "secret") {
		e.T.Fatalf("auth configuration answer: %s", r.Body)
	}
	return a.ID
}

func subscribe(e *servertest.Env, tenantID, url, authID string) (id, secret string) {
	e.T.Helper()
	r := e.Do("POST", "/api/v1/app_management/subscriptions", servertest.Root,
		map[string]any{"topic": "JOB_PROCESSED", "url": url, "auth_config_id": authID}, "tenant_id", tenantID)
	e.Expect(r, 201, "subscribe")
	var s struct {
		ID     string `json:"subscription_id"`
		Secret string `json:"signing_secret"`
	}
	r.JSON(e.T, &s)
	if s.ID == "" || s.Secret == "" {
		e.T.Fatalf("subscription answer: %s", r.Body)
	}
	return s.ID, s.Secret
}

// checkMessage verifies a delivered JOB_PROCESSED message: signature, shape, and a body equal
// to what GET /api/v1/jobs/{id} answers.
func checkMessage(e *servertest.Env, tenantID, subID, secret string, req servertest.HookRequest) servertest.HookMessage {
	e.T.Helper()
	if !postback.Verify([]byte(secret), req.Body, req.Header.Get("X-Lectern-Signature")) {
		e.T.Fatalf("signature %q does not verify", req.Header.Get("X-Lectern-Signature"))
	}
	var m servertest.HookMessage
	if err := json.Unmarshal(req.Body, &m); err != nil {
		e.T.Fatalf("message is not JSON: %s", req.Body)
	}
	if m.TenantID != tenantID || m.SubscriptionID != subID || m.Topic != "JOB_PROCESSED" || len(m.MessageID) != 36 ||
		m.Timestamp.IsZero() || m.BodyVersion == "" || m.MessageVersion == "" {
		e.T.Fatalf("message: %s", req.Body)
	}
	var j servertest.JobRead
	if err := json.Unmarshal(m.Body, &j); err != nil || j.ID == "" {
		e.T.Fatalf("message body: %s", m.Body)
	}
	r := e.Do("GET", "/api/v1/jobs/"+j.ID, servertest.Root, nil, "tenant_id", tenantID)
	e.Expect(r, 200, "job of the message")
	var got, want any
	_ = json.Unmarshal(m.Body, &got)
	_ = json.Unmarshal(r.Body, &want)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		e.T.Fatalf("message body %s differs from GET /jobs %s", gb, wb)
	}
	return m
}

func TestSubscriptionsAPI(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		const ten = "subs"
		e.CreateTenant(ten, true)
		e.CreateTenant("other", true)
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
			e.Expect(e.Do("POST", auth, servertest.Root, b, "tenant_id", ten), 400, "bad auth configuration")
		}
		e.Expect(e.Do("POST", auth, servertest.Root, map[string]any{"type": "NO_AUTH"}), 400, "no tenant_id header")

		none := createAuthConfig(e, ten, map[string]any{"type": "NO_AUTH", "key": nil, "secret": nil, "scope": nil, "token_url": nil})
		basicID := createAuthConfig(e, ten, map[string]any{"type": "BASIC_AUTH", "key": "hook-user", "secret": "hook-pass"})
		r := e.Do("GET", auth, servertest.Root, nil, "tenant_id", ten)
		e.Expect(r, 200, "list auth configurations")
		if strings.Contains(string(r.Body), "hook-pass") || !strings.Contains(string(r.Body), basicID) || !strings.Contains(string(r.Body), none) {
			t.Fatalf("auth list: %s", r.Body)
		}
		r = e.Do("GET", auth, servertest.Root, nil, "tenant_id", "other")
		e.Expect(r, 200, "other tenant's list")
		if strings.Contains(string(r.Body), basicID) {
			t.Fatalf("another tenant sees the configuration: %s", r.Body)
		}

		rec := servertest.NewHookReceiver(t, 0)
		for _, b := range []map[string]any{
			{"topic": "JOB_CREATED", "url": rec.Srv.URL, "auth_config_id": none},
			{"topic": "JOB_PROCESSED", "url": "", "auth_config_id": none},
			{"topic": "JOB_PROCESSED", "url": "gopher://127.0.0.1/", "auth_config_id": none},
			{"topic": "JOB_PROCESSED", "url": "http://169.254.169.254/latest", "auth_config_id": none},
			{"topic": "JOB_PROCESSED", "url": rec.Srv.URL},
		} {
			e.Expect(e.Do("POST", subs, servertest.Root, b, "tenant_id", ten), 400, "bad subscription")
		}
		e.Expect(e.Do("POST", subs, servertest.Root, map[string]any{"topic": "JOB_PROCESSED", "url": rec.Srv.URL, "auth_config_id": "nope"},
			"tenant_id", ten), 404, "unknown auth configuration")
		e.Expect(e.Do("POST", subs, servertest.Root, map[string]any{"topic": "JOB_PROCESSED", "url": rec.Srv.URL, "auth_config_id": none},
			"tenant_id", "other"), 404, "another tenant's auth configuration")

		subID, _ := subscribe(e, ten, rec.Srv.URL, basicID)
		r = e.Do("GET", subs, servertest.Root, nil, "tenant_id", ten)
		e.Expect(r, 200, "list subscriptions")
		if !strings.Contains(string(r.Body), subID) || strings.Contains(string(r.Body), "signing_secret") {
			t.Fatalf("subscription list: %s", r.Body)
		}
		e.Expect(e.Do("DELETE", auth+"/"+basicID, servertest.Root, nil, "tenant_id", ten), 409, "delete an auth configuration in use")
		e.Expect(e.Do("DELETE", auth+"/nope", servertest.Root, nil, "tenant_id", ten), 404, "delete an unknown auth configuration")
		e.Expect(e.Do("GET", subs+"/nope/deliveries", servertest.Root, nil, "tenant_id", ten), 404, "log of an unknown subscription")
		e.Expect(e.Do("GET", subs+"/"+subID+"/deliveries", servertest.Root, nil, "tenant_id", "other"), 404, "another tenant's log")
		e.Expect(e.Do("DELETE", subs+"/"+subID, servertest.Root, nil, "tenant_id", "other"), 404, "delete another tenant's subscription")
		e.Expect(e.Do("DELETE", subs+"/"+subID, servertest.Root, nil, "tenant_id", ten), 204, "unsubscribe")
		e.Expect(e.Do("DELETE", subs+"/"+subID, servertest.Root, nil, "tenant_id", ten), 404, "unsubscribe twice")
		// A disabled tenant refuses changes and still answers reads.
		e.CreateTenant("off", false)
		e.Expect(e.Do("POST", auth, servertest.Root, map[string]any{"type": "NO_AUTH"}, "tenant_id", "off"), 409, "auth configuration in a disabled tenant")
		e.Expect(e.Do("GET", subs, servertest.Root, nil, "tenant_id", "off"), 200, "subscriptions of a disabled tenant")
		e.Expect(e.Do("DELETE", auth+"/"+basicID, servertest.Root, nil, "tenant_id", ten), 204, "delete an unused auth configuration")
		r = e.Do("GET", auth, servertest.Root, nil, "tenant_id", ten)
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

// TestWebhookDeliveries: every concluded job (FAILED and COMPLETED imports) reaches each
// subscription once, signed, with the JobRead as GET /api/v1/jobs answers it, authenticated
// per the subscription's configuration (NO_AUTH, BASIC_AUTH, OAuth client credentials with
// one token for both messages); a receiver that fails twice gets the message on the third
// attempt with the same message_id; one that always fails is given up after the last attempt.
func TestWebhookDeliveries(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		const ten = "hooks"
		e.CreateTenant(ten, true)
		e.CreateTenant("quiet", true)

		flaky := servertest.NewHookReceiver(t, 2)
		none := createAuthConfig(e, ten, map[string]any{"type": "NO_AUTH"})
		flakyID, flakySecret := subscribe(e, ten, flaky.Srv.URL+"/flaky", none)

		basicRec := servertest.NewHookReceiver(t, 0)
		basicRec.WantAuth = func() string { return "Basic " + base64.StdEncoding.EncodeToString([]byte("hook-user:hook pass")) }
		basicAuth := createAuthConfig(e, ten, map[string]any{"type": "BASIC_AUTH", "key": "hook-user", "secret": "hook pass"})
		basicID, basicSecret := subscribe(e, ten, basicRec.Srv.URL, basicAuth)

		tokens := newTokenEndpoint(t, "client-1", "client-secret", "hooks.write")
		oauthRec := servertest.NewHookReceiver(t, 0)
		oauthRec.WantAuth = func() string { return "Bearer tok-1" }
		oauthAuth := createAuthConfig(e, ten, map[string]any{"type": "OAUTH_2_CLIENT_CREDENTIALS", "key": "client-1", "secret": "client-secret",
			"scope": "hooks.write", "token_url": tokens.srv.URL + "/token"})
		oauthID, oauthSecret := subscribe(e, ten, oauthRec.Srv.URL, oauthAuth)

		dead := servertest.NewHookReceiver(t, 1000)
		deadID, _ := subscribe(e, ten, dead.Srv.URL, none)

		// Another tenant's subscription hears nothing of these jobs.
		quiet := servertest.NewHookReceiver(t, 0)
		subscribe(e, "quiet", quiet.Srv.URL, createAuthConfig(e, "quiet", map[string]any{"type": "NO_AUTH"}))

		// Job 1 fails.
		failed := e.WaitContentJob(ten, e.UploadContent(servertest.Root, ten, "content_id=broken", []byte("%PDF-1.4 not really a pdf"), "broken.pdf"))
		if failed.Status != "FAILED" {
			t.Fatalf("broken import: %+v", failed)
		}
		for _, rec := range []*servertest.HookReceiver{flaky, basicRec, oauthRec} {
			servertest.Eventually(t, 30*time.Second, "the FAILED job's message", func() bool { return len(rec.Delivered()) == 1 })
		}
		// Job 2 completes.
		done := e.WaitContentJob(ten, e.UploadContent(servertest.Root, ten, "content_id=kitchen", []byte(servertest.KitchenHTML), "k.html"))
		if done.Status != "COMPLETED" {
			t.Fatalf("import: %+v", done)
		}
		for _, rec := range []*servertest.HookReceiver{flaky, basicRec, oauthRec} {
			servertest.Eventually(t, 30*time.Second, "the COMPLETED job's message", func() bool { return len(rec.Delivered()) == 2 })
		}

		for _, c := range []struct {
			rec           *servertest.HookReceiver
			subID, secret string
		}{{flaky, flakyID, flakySecret}, {basicRec, basicID, basicSecret}, {oauthRec, oauthID, oauthSecret}} {
			got := c.rec.Delivered()
			var jobsSeen []string
			ids := map[string]bool{}
			for _, req := range got {
				m := checkMessage(e, ten, c.subID, c.secret, req)
				var j servertest.JobRead
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
		all := flaky.All()
		if len(all) != 4 {
			t.Fatalf("flaky receiver got %d requests, want 4", len(all))
		}
		first := servertest.MessageID(t, all[0].Body)
		for i, req := range all[:3] {
			if servertest.MessageID(t, req.Body) != first || string(req.Body) != string(all[2].Body) || req.Header.Get("X-Lectern-Attempt") != fmt.Sprint(i+1) {
				t.Fatalf("attempt %d: %s (attempt header %q), first %s", i+1, req.Body, req.Header.Get("X-Lectern-Attempt"), all[0].Body)
			}
		}
		servertest.Eventually(t, 10*time.Second, "the flaky delivery log", func() bool { return len(e.Deliveries(ten, flakyID)) == 4 })
		log := e.Deliveries(ten, flakyID)
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
		servertest.Eventually(t, 30*time.Second, "the dead receiver's attempts", func() bool { return len(e.Deliveries(ten, deadID)) == 16 })
		finals := 0
		for _, d := range e.Deliveries(ten, deadID) {
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
		if finals != 2 || len(dead.All()) != 16 {
			t.Fatalf("dead receiver: %d final entries, %d requests", finals, len(dead.All()))
		}
		if n := len(quiet.All()); n != 0 {
			t.Fatalf("another tenant's receiver got %d messages", n)
		}
	})
}

// TestWebhookSurvivesRestart: a message whose first attempts failed is delivered, with the
// same message_id, by the next process after a restart (the pending attempt is a durable
// queue task), and its delivery log spans both processes.
func TestWebhookSurvivesRestart(t *testing.T) {
	for name, mode := range servertest.Modes(t) {
		t.Run(name, func(t *testing.T) {
			cfg := mode(t)
			// Slow enough retries that the process stops while the message is still pending.
			cfg.RetryBaseDelay = 300 * time.Millisecond
			e := servertest.Start(t, cfg)
			const ten = "restart"
			e.CreateTenant(ten, true)
			rec := servertest.NewHookReceiver(t, 1000)
			subID, secret := subscribe(e, ten, rec.Srv.URL, createAuthConfig(e, ten, map[string]any{"type": "NO_AUTH"}))
			j := e.WaitContentJob(ten, e.UploadContent(servertest.Root, ten, "content_id=broken", []byte("%PDF-1.4 not really a pdf"), "broken.pdf"))
			servertest.Eventually(t, 30*time.Second, "two failed attempts", func() bool { return len(e.Deliveries(ten, subID)) >= 2 })
			servertest.Stop(t, e)
			before := rec.All()
			if len(before) < 2 || len(before) >= 8 {
				t.Fatalf("%d attempts before the restart", len(before))
			}
			rec.Mu.Lock()
			rec.FailFirst = 0
			rec.Mu.Unlock()

			e = servertest.Start(t, cfg)
			servertest.Eventually(t, 60*time.Second, "delivery after the restart", func() bool { return len(rec.Delivered()) == 1 })
			m := checkMessage(e, ten, subID, secret, rec.Delivered()[0])
			if m.MessageID != servertest.MessageID(t, before[0].Body) || !strings.Contains(string(m.Body), j.ID) {
				t.Fatalf("after the restart message %s, before %s", m.MessageID, before[0].Body)
			}
			servertest.Eventually(t, 10*time.Second, "the final log entry", func() bool {
				log := e.Deliveries(ten, subID)
				return len(log) > 0 && log[len(log)-1].Final && log[len(log)-1].Status == 204
			})
			for _, d := range e.Deliveries(ten, subID) {
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
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		const ten = "hooked-courses"
		e.CreateTenant(ten, true)
		rec := servertest.NewHookReceiver(t, 0)
		subID, secret := subscribe(e, ten, rec.Srv.URL, createAuthConfig(e, ten, map[string]any{"type": "NO_AUTH"}))

		startImport := func(r servertest.Resp) string {
			e.Expect(r, 200, "start import")
			var id struct{ Result string }
			r.JSON(t, &id)
			return id.Result
		}
		okID := startImport(e.Upload(ten, "course=hooked-course", servertest.Scorm12Package(t), "course.zip"))
		servertest.Eventually(t, 60*time.Second, "the course import's message", func() bool { return len(rec.Delivered()) == 1 })
		// Importing the same course again without mayCreateNewVersion fails.
		badID := startImport(e.Upload(ten, "course=hooked-course", servertest.Scorm12Package(t), "course.zip"))
		servertest.Eventually(t, 60*time.Second, "the failed course import's message", func() bool { return len(rec.Delivered()) == 2 })

		for i, want := range []struct{ id, status, course string }{{okID, "COMPLETED", "hooked-course"}, {badID, "FAILED", "hooked-course"}} {
			req := rec.Delivered()[i]
			if !postback.Verify([]byte(secret), req.Body, req.Header.Get("X-Lectern-Signature")) {
				t.Fatalf("signature %q does not verify", req.Header.Get("X-Lectern-Signature"))
			}
			var m servertest.HookMessage
			if err := json.Unmarshal(req.Body, &m); err != nil || m.TenantID != ten || m.SubscriptionID != subID || m.Topic != "JOB_PROCESSED" {
				t.Fatalf("message: %s", req.Body)
			}
			var j servertest.JobRead
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
