package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/cmd/lectern/metrics"
	"github.com/lectern-lms/lectern/server"
	"github.com/lectern-lms/lectern/workers/contentjob"
	"github.com/lectern-lms/lectern/workers/postbackjob"
	"github.com/lectern-lms/lectern/workers/queue"
)

// scrape is one parsed /metrics answer.
type scrape map[string]*dto.MetricFamily

func parseScrape(t *testing.T, body []byte) scrape {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not the text exposition format: %v\n%s", err, servertest.Truncate(body, 2000))
	}
	return mf
}

func scrapeMetrics(e *servertest.Env) scrape {
	e.T.Helper()
	r := e.Do("GET", "/metrics", servertest.Root, nil)
	e.Expect(r, 200, "scrape /metrics")
	return parseScrape(e.T, r.Body)
}

// value sums the series of name whose labels include want: a counter's or gauge's value, a
// histogram's sample count. ok is false when no series matches.
func (s scrape) value(name string, want map[string]string) (v float64, ok bool) {
	f := s[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, w := range want {
			if labels[k] != w {
				match = false
			}
		}
		if !match {
			continue
		}
		ok = true
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		case m.Histogram != nil:
			v += float64(m.Histogram.GetSampleCount())
		}
	}
	return v, ok
}

// labelValues lists the values label takes in the series of name.
func (s scrape) labelValues(name, label string) []string {
	var out []string
	if f := s[name]; f != nil {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == label && !slices.Contains(out, l.GetValue()) {
					out = append(out, l.GetValue())
				}
			}
		}
	}
	return out
}

// moved polls /metrics until the series (name, labels) has grown by at least by since
// before, and fails the test otherwise.
func moved(e *servertest.Env, before scrape, name string, labels map[string]string, by float64, what string) scrape {
	e.T.Helper()
	was, _ := before.value(name, labels)
	var now scrape
	var got float64
	deadline := time.Now().Add(30 * time.Second)
	for {
		now = scrapeMetrics(e)
		got, _ = now.value(name, labels)
		if got >= was+by {
			return now
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("%s: %s%v is %v, want at least %v + %v", what, name, labels, got, was, by)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMetrics scrapes /metrics in both modes around real work done through HTTP (requests,
// a content import, statement writes, a post-back and statement forwarding) and checks that
// each named series moved.
func TestMetrics(t *testing.T) {
	modelDir, ok := servertest.TestModelDir(t)
	if !ok {
		t.Fatal("the embedding metrics need the model: set LECTERN_TEST_MODEL_DIR (scripts/install-model.sh)")
	}
	servertest.ForEachModeWithModel(t, modelDir, func(t *testing.T, e *servertest.Env) {
		// Who may scrape: root only.
		e.Expect(e.Do("GET", "/metrics", servertest.NoAuth, nil), 401, "anonymous scrape")
		e.CreateTenant("metx9", true)
		key, secret := e.Credential("metx9")
		e.Expect(e.Do("GET", "/metrics", servertest.Bearer(key, secret), nil), 403, "tenant scrape")

		before := scrapeMetrics(e)

		// Requests: the route pattern, never the raw path.
		e.Expect(e.Do("GET", "/engine/api/v1/metx9/configuration", servertest.Root, nil), 200, "tenant configuration")
		e.Expect(e.Do("GET", "/no/such/route-abc123", servertest.Root, nil), 404, "unknown route")
		s := moved(e, before, metrics.HTTPRequestDuration, map[string]string{"method": "GET", "route": "/engine/api/v1/:tenant/configuration", "status": "200"}, 1, "request latency")
		moved(e, before, metrics.HTTPRequestDuration, map[string]string{"method": "GET", "route": "unmatched", "status": "404"}, 1, "unmatched request")
		for _, route := range s.labelValues(metrics.HTTPRequestDuration, "route") {
			if strings.Contains(route, "metx9") || strings.Contains(route, "abc123") {
				t.Errorf("route label %q holds a raw path", route)
			}
		}

		// A content import: both jobs, the embedding and the content index.
		e.ImportContent("metx9", "content_id=volcanoes", []byte(servertest.VolcanoVTT), "volcanoes.vtt")
		moved(e, before, metrics.JobDuration, map[string]string{"type": contentjob.TypeImport, "outcome": metrics.JobCompleted}, 1, "content import job")
		moved(e, before, metrics.JobDuration, map[string]string{"type": contentjob.TypeIndex, "outcome": metrics.JobCompleted}, 1, "content index job")
		moved(e, before, metrics.EmbeddingChunks, nil, 1, "chunks embedded")
		moved(e, before, metrics.EmbeddingDuration, nil, 1, "embedding calls timed")
		s = moved(e, before, metrics.IndexDocuments, map[string]string{"index": "content"}, 1, "content index documents")
		if b, ok := s.value(metrics.IndexSizeBytes, map[string]string{"index": "content"}); !ok || b <= 0 {
			t.Errorf("content index size %v (present %v)", b, ok)
		}
		for _, q := range []string{"default", app.IndexQueueName} {
			if _, ok := s.value(metrics.QueueDepth, map[string]string{"queue": q}); !ok {
				t.Errorf("no %s series for queue %q", metrics.QueueDepth, q)
			}
		}

		// Statements: the counter moves by the batch sizes.
		e.PostVerbStatements("metx9", "attempted", 2)
		moved(e, before, metrics.StatementsStored, nil, 2, "statements stored")
		if e.App.Elastic != nil {
			moved(e, before, metrics.IndexDocuments, map[string]string{"index": "statements"}, 2, "statements index documents")
		}

		// Statement forwarding: one delivered POST at least.
		rc := servertest.NewXAPIReceiver(t, "dest-user", "dest-pass")
		e.SetTenant("metx9", "TinCanStatementForwardSleepTime", "50")
		e.CreatePair("metx9", map[string]any{"destination_url": rc.Endpoint(),
			"destination_credentials": map[string]any{"username": "dest-user", "password": "dest-pass"}})
		rc.WaitFor(2)
		moved(e, before, metrics.OutboundDeliveries, map[string]string{"kind": "forward", "outcome": metrics.OutboundDelivered}, 1, "forwarded")

		// A post-back: delivered inline, then refused ones through the queue's handler.
		pr := servertest.NewPostReceiver(t)
		e.ImportOK("metx9", "intro", servertest.Scorm12Package(t), "")
		e.Register("metx9", "reg-metrics", map[string]any{"url": pr.URL("/pb"), "authType": "FORM", "resultsFormat": "COURSE"})
		e.TakeCourse("metx9", "reg-metrics")
		moved(e, before, metrics.OutboundDeliveries, map[string]string{"kind": "postback", "outcome": metrics.OutboundDelivered}, 1, "post-back delivered")
		moved(e, before, metrics.JobDuration, map[string]string{"type": "course:import", "outcome": metrics.JobCompleted}, 1, "course import job")
	})
}

// TestMetricsQueueDepth enqueues a task on an app whose workers are not started, so it stays
// pending, and reads the gauge of that queue through /metrics.
func TestMetricsQueueDepth(t *testing.T) {
	for name, cfg := range servertest.Modes(t) {
		t.Run(name, func(t *testing.T) {
			c := cfg(t)
			ctx := context.Background()
			a, err := app.Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if a.Elastic != nil {
					_ = a.Elastic.DeleteIndices(ctx, c.Elastic.IndexPrefix)
				}
				if c.S3.Bucket != "" {
					_, _ = a.Blobs.DeletePrefix(ctx, "")
				}
				a.Close()
			})
			depth := func() float64 {
				req := httptest.NewRequest("GET", "/metrics", nil)
				req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(servertest.RootUser+":"+servertest.RootPass)))
				res, err := a.Server.App().Test(req, 10_000)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				body, _ := io.ReadAll(res.Body)
				if res.StatusCode != 200 {
					t.Fatalf("scrape: %d %s", res.StatusCode, body)
				}
				v, ok := parseScrape(t, body).value(metrics.QueueDepth, map[string]string{"queue": "default"})
				if !ok {
					t.Fatalf("no %s{queue=\"default\"} in\n%s", metrics.QueueDepth, servertest.Truncate(body, 2000))
				}
				return v
			}
			was := depth()
			b, _ := json.Marshal(map[string]string{"tenant": "nobody", "registration_id": "r"})
			for range 3 {
				if _, err := a.Queue.Enqueue(ctx, queue.NewTask(postbackjob.TypePostback, b)); err != nil {
					t.Fatal(err)
				}
			}
			if got := depth(); got != was+3 {
				t.Fatalf("queue depth %v after enqueueing 3 on %v", got, was)
			}
		})
	}
}

// TestQueueConsole reads asynqmon under /console/queues in the distributed mode: its page and
// its API (the queues) for root, 401 without credentials and 403 for a tenant; the embedded
// mode has no console.
func TestQueueConsole(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		if e.App.Config.RedisURL == "" {
			// The web console's own page says there is none (the in-process queue has no console).
			r := e.Do("GET", server.QueueConsolePath, servertest.Root, nil)
			if r.Status != 404 || !bytes.Contains(r.Body, []byte("there is no console page at /console/queues")) {
				t.Fatalf("queue console in the embedded mode: %d %s", r.Status, servertest.Truncate(r.Body, 300))
			}
			return
		}
		e.CreateTenant("con", true)
		key, secret := e.Credential("con")
		e.Expect(e.Do("GET", server.QueueConsolePath, servertest.NoAuth, nil), 401, "anonymous console")
		e.Expect(e.Do("GET", server.QueueConsolePath+"/api/queues", servertest.Bearer(key, secret), nil), 403, "tenant console")
		r := e.Do("GET", server.QueueConsolePath, servertest.Root, nil)
		if r.Status != 200 || !strings.Contains(r.Header.Get("Content-Type"), "text/html") || !bytes.Contains(r.Body, []byte("<html")) {
			t.Fatalf("console page: %d %s %s", r.Status, r.Header.Get("Content-Type"), servertest.Truncate(r.Body, 300))
		}
		// Its script loads from under the mount point.
		src := regexp.MustCompile(`<script[^>]+src="([^"]+)"`).FindSubmatch(r.Body)
		if src == nil || !strings.HasPrefix(string(src[1]), server.QueueConsolePath+"/") {
			t.Fatalf("console page without a script under %s: %s", server.QueueConsolePath, servertest.Truncate(r.Body, 600))
		}
		if js := e.Do("GET", string(src[1]), servertest.Root, nil); js.Status != 200 || len(js.Body) < 1000 {
			t.Fatalf("console script %s: %d, %d bytes", src[1], js.Status, len(js.Body))
		}
		// A task makes its queue exist on Redis; the console's API then lists it.
		e.Expect(e.Do("DELETE", "/api/v1/app_management/tenants/con", servertest.Root, nil), 202, "a job")
		servertest.Eventually(t, 10*time.Second, "the console to list the default queue", func() bool {
			r := e.Do("GET", server.QueueConsolePath+"/api/queues", servertest.Root, nil)
			if r.Status != 200 {
				t.Fatalf("console API: %d %s", r.Status, servertest.Truncate(r.Body, 300))
			}
			return bytes.Contains(r.Body, []byte(e.App.Config.Elastic.IndexPrefix+"default"))
		})

		// Another deployment on the same Redis (another queue prefix) is invisible and out of
		// reach: not listed, not in the daily stats, its tasks answer 404.
		opt, err := asynq.ParseRedisURI(e.App.Config.RedisURL)
		if err != nil {
			t.Fatal(err)
		}
		other := servertest.RandomName("other") + "-default"
		client := asynq.NewClient(opt)
		defer client.Close()
		if _, err := client.Enqueue(asynq.NewTask("other:job", nil), asynq.Queue(other)); err != nil {
			t.Fatal(err)
		}
		defer asynq.NewInspector(opt).DeleteQueue(other, true)
		for _, path := range []string{"/api/queues", "/api/queue_stats", "/api/servers"} {
			r := e.Do("GET", server.QueueConsolePath+path, servertest.Root, nil)
			if r.Status != 200 || bytes.Contains(r.Body, []byte(other)) {
				t.Errorf("%s shows the other deployment's queue: %d %s", path, r.Status, servertest.Truncate(r.Body, 300))
			}
		}
		if r := e.Do("GET", server.QueueConsolePath+"/api/queues", servertest.Root, nil); !bytes.Contains(r.Body, []byte(e.App.Config.Elastic.IndexPrefix+"default")) {
			t.Errorf("own queue missing: %s", servertest.Truncate(r.Body, 300))
		}
		for _, req := range [][2]string{{"GET", "/api/queues/" + other + "/pending_tasks"}, {"DELETE", "/api/queues/" + other + "/pending_tasks:delete_all"},
			{"POST", "/api/queues/" + other + ":pause"}, {"GET", "/api/queues/" + other}} {
			if r := e.Do(req[0], server.QueueConsolePath+req[1], servertest.Root, nil); r.Status != 404 {
				t.Errorf("%s %s: %d %s", req[0], req[1], r.Status, servertest.Truncate(r.Body, 200))
			}
		}
		if n, err := asynq.NewInspector(opt).GetQueueInfo(other); err != nil || n.Pending != 1 || n.Paused {
			t.Errorf("the other deployment's queue was changed: %+v %v", n, err)
		}

		// Root's console sign-in opens it (the console's own "Queues" link); a browser without
		// one is sent to sign in; a write from another site is refused; a tenant's sign-in is not
		// root.
		anon := &servertest.ConsoleClient{T: t, E: e}
		if p := anon.Send("GET", server.QueueConsolePath, nil, "Accept", "text/html"); p.Status != 303 ||
			p.Header.Get("Location") != "/console/signin?next=%2Fconsole%2Fqueues" {
			t.Errorf("browser without a session: %d %q", p.Status, p.Header.Get("Location"))
		}
		rc := &servertest.ConsoleClient{T: t, E: e}
		servertest.WantPage(t, rc.SignIn(servertest.RootUser, servertest.RootPass), 303)
		servertest.WantPage(t, rc.Send("GET", server.QueueConsolePath, nil, "Accept", "text/html"), 200, "<html")
		servertest.WantPage(t, rc.Send("GET", server.QueueConsolePath+"/api/queues", nil), 200, e.App.Config.Elastic.IndexPrefix+"default")
		own := e.App.Config.Elastic.IndexPrefix + "default"
		servertest.WantPage(t, rc.Send("POST", server.QueueConsolePath+"/api/queues/"+own+":pause", nil, "Sec-Fetch-Site", "same-site"), 403, "another site")
		servertest.WantPage(t, rc.Send("POST", server.QueueConsolePath+"/api/queues/"+own+":pause", nil, "Sec-Fetch-Site", "same-origin"), 204)
		servertest.WantPage(t, rc.Send("POST", server.QueueConsolePath+"/api/queues/"+own+":resume", nil, "Sec-Fetch-Site", "same-origin"), 204)
		tc := &servertest.ConsoleClient{T: t, E: e}
		e.CreateTenant("con2", true)
		k2, s2 := e.Credential("con2")
		servertest.WantPage(t, tc.SignIn(k2, s2), 303)
		if p := tc.Send("GET", server.QueueConsolePath+"/api/queues", nil); p.Status != 401 {
			t.Errorf("a tenant's console session: %d", p.Status)
		}
	})
}

// TestMetricsLabelsStayWhole: after many requests of every method on reused connections (and
// some at once), every series of the request histogram still names a method of the fixed
// vocabulary, a route pattern and a status. The method once pointed into Fiber's request
// buffer, so later requests rewrote old series' labels ("GETT", "POS").
func TestMetricsLabelsStayWhole(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("labels", true)
		cfg := "/engine/api/v1/labels/configuration"
		for range 20 {
			e.Do("GET", cfg, servertest.Root, nil)
			e.Do("POST", "/engine/api/v1/labels/courses/importJobs", servertest.Root, map[string]any{})
			e.Do("DELETE", "/engine/api/v1/labels/registrations/nope", servertest.Root, nil)
			e.Do("PUT", cfg+"/nope", servertest.Root, map[string]any{"value": "x"})
			e.Do("OPTIONS", cfg, servertest.Root, nil)
			e.Do("HEAD", cfg, servertest.Root, nil)
			e.Do("PROPFIND", "/engine/api/v1/labels/x", servertest.Root, nil)
			e.Do("PATCH", cfg, servertest.Root, nil)
		}
		// Some at once, on their own connections.
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					m := []string{"GET", "POST", "DELETE", "MKCOL"}[i%4]
					req, err := http.NewRequest(m, e.Origin(cfg)+cfg, nil)
					if err != nil {
						return
					}
					if res, err := http.DefaultClient.Do(req); err == nil {
						io.Copy(io.Discard, res.Body)
						res.Body.Close()
					}
				}
			}()
		}
		wg.Wait()
		valid := map[string]bool{"GET": true, "POST": true, "PUT": true, "DELETE": true, "HEAD": true, "OPTIONS": true, "PATCH": true, "OTHER": true}
		status := regexp.MustCompile(`^[1-5][0-9][0-9]$`)
		// Scrape twice: the first scrape's own request must not rewrite what the second reads.
		for range 2 {
			s := scrapeMetrics(e)
			f := s[metrics.HTTPRequestDuration]
			if f == nil || len(f.Metric) == 0 {
				t.Fatal("no request series")
			}
			for _, m := range f.Metric {
				l := map[string]string{}
				for _, p := range m.Label {
					l[p.GetName()] = p.GetValue()
				}
				if !valid[l["method"]] || !status.MatchString(l["status"]) ||
					(l["route"] != "unmatched" && !strings.HasPrefix(l["route"], "/")) || strings.Contains(l["route"], "labels/") {
					t.Errorf("series with labels %v", l)
				}
			}
			for _, want := range []string{"GET", "POST", "DELETE", "PUT", "HEAD"} {
				if !slices.Contains(s.labelValues(metrics.HTTPRequestDuration, "method"), want) {
					t.Errorf("no series with method %s", want)
				}
			}
		}
	})
}
