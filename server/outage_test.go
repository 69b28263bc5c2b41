package server_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// outageEnv is a distributed Lectern whose four backends are reached through proxies the
// test can cut, so an outage of a shared server can be staged without stopping it.
type outageEnv struct {
	*servertest.Env
	proxies map[string]*testenv.Proxy
}

func startBehindProxies(t *testing.T) outageEnv {
	t.Helper()
	cfg := servertest.Modes(t)["distributed"](t)
	proxies := map[string]*testenv.Proxy{}
	via := func(name, hostport string) string {
		p := testenv.NewProxy(t, hostport)
		proxies[name] = p
		return p.Addr()
	}
	for name, u := range map[string]*string{"postgresql": &cfg.PostgresURL, "redis": &cfg.RedisURL, "elasticsearch": &cfg.Elastic.URL} {
		parsed, err := url.Parse(*u)
		if err != nil {
			t.Fatal(err)
		}
		parsed.Host = via(name, parsed.Host)
		*u = parsed.String()
	}
	cfg.S3.Endpoint = via("minio", cfg.S3.Endpoint)
	return outageEnv{Env: servertest.Start(t, cfg), proxies: proxies}
}

// expectOutage checks the answer to a request that needs a backend that is down: 503, a
// Retry-After, and a message naming the backend.
func (e outageEnv) expectOutage(r servertest.Resp, backend, what string) {
	e.T.Helper()
	e.Expect(r, 503, what)
	if ra := r.Header.Get("Retry-After"); ra == "" {
		e.T.Errorf("%s: 503 without Retry-After", what)
	}
	if !strings.Contains(r.Message(), backend) {
		e.T.Errorf("%s: message %q does not name %s", what, r.Message(), backend)
	}
}

// accept starts a content import and returns its job id.
func (e outageEnv) accept(tenantID, word string) string {
	e.T.Helper()
	r := e.UploadContent(servertest.Root, tenantID, "", []byte("# Notes\n\nThe word of this file is "+word+"."), word+".md")
	e.Expect(r, 202, "import "+word)
	var j servertest.JobRead
	r.JSON(e.T, &j)
	return j.ID
}

// allFound waits until every accepted import has COMPLETED and its word is found.
func (e outageEnv) allFound(tenantID string, words map[string]string) {
	e.T.Helper()
	for word, jobID := range words {
		var j servertest.JobRead
		servertest.Eventually(e.T, 150*time.Second, "import "+word+" after the outage", func() bool {
			rr := e.Do("GET", "/api/v1/jobs/"+jobID, servertest.Root, nil, "tenant_id", tenantID)
			if rr.Status != 200 {
				return false
			}
			j = servertest.JobRead{}
			rr.JSON(e.T, &j)
			return j.Status == "COMPLETED" || j.Status == "FAILED"
		})
		if j.Status != "COMPLETED" {
			e.T.Fatalf("import %s accepted around the outage ended %s: %+v", word, j.Status, j.Error)
		}
		if hits := e.SearchContent(tenantID, servertest.SQ("search_type", "LEXICAL", "term", word)); len(hits) != 1 {
			e.T.Fatalf("import %s is not found after the outage: %v", word, hits)
		}
	}
}

// TestBackendOutage stops each backend in turn (through its proxy): requests that need it
// answer 503 with Retry-After and a message naming it, and once it is back every import
// accepted before or during the outage completes and is found.
func TestBackendOutage(t *testing.T) {
	testenv.External(t, "LECTERN_TEST_POSTGRES_URL")
	statement := `{"actor":{"mbox":"mailto:a@example.com"},"verb":{"id":"http://adlnet.gov/expapi/verbs/experienced"},"object":{"id":"http://example.com/a"}}`
	xapi := []string{"X-Experience-API-Version", "1.0.3"}
	for _, tc := range []struct {
		backend string
		// during runs while the backend is down and returns imports it accepted meanwhile.
		during func(e outageEnv) map[string]string
	}{
		{"redis", func(e outageEnv) map[string]string {
			e.expectOutage(e.UploadContent(servertest.Root, "acme", "", []byte("never queued"), "lost.md"), "redis", "upload while Redis is down")
			// A deletion that cannot be queued is not half done: the tenant stays.
			e.expectOutage(e.Do("DELETE", "/api/v1/app_management/tenants/globex", servertest.Root, nil), "redis", "tenant deletion")
			e.Expect(e.Do("GET", "/api/v1/content", servertest.Root, nil, "tenant_id", "globex"), 200, "tenant after the refused deletion")
			return nil
		}},
		{"elasticsearch", func(e outageEnv) map[string]string {
			e.expectOutage(e.Do("GET", "/api/v1/content/search?search_type=LEXICAL&term=x", servertest.Root, nil, "tenant_id", "acme"), "elasticsearch", "search")
			e.expectOutage(e.Do("POST", "/lrs/TCAPI/statements", servertest.Root, statement, xapi...), "elasticsearch", "statement write")
			// Uploads need no Elasticsearch: accepted now, indexed once it is back.
			accepted := map[string]string{"bravo": e.accept("acme", "bravo")}
			// The indexing attempts that fail meanwhile are logged with their cause, not only
			// counted in the metrics.
			servertest.Eventually(e.T, 60*time.Second, "a logged index attempt failing on Elasticsearch", func() bool {
				for _, r := range e.Logs.Find("job attempt failed", "outcome", "retried") {
					if strings.Contains(r.Attr("err"), "elasticsearch") && r.Attr("task_type") != "" {
						return true
					}
				}
				return false
			})
			return accepted
		}},
		{"postgresql", func(e outageEnv) map[string]string {
			e.expectOutage(e.Do("GET", "/api/v1/app_management/tenants", servertest.Root, nil), "postgresql", "list tenants")
			e.expectOutage(e.UploadContent(servertest.Root, "acme", "", []byte("never stored"), "lost.md"), "postgresql", "upload")
			return nil
		}},
		{"minio", func(e outageEnv) map[string]string {
			e.expectOutage(e.UploadContent(servertest.Root, "acme", "", []byte("never stored"), "lost.md"), "minio", "upload while MinIO is down")
			return nil
		}},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			e := startBehindProxies(t)
			e.CreateTenant("acme", true)
			e.CreateTenant("globex", true)
			// Make sure the LRS default tenant exists, so the statement write needs only ES.
			e.Expect(e.Do("GET", "/lrs/TCAPI/statements?limit=1", servertest.Root, nil, xapi...), 200, "statements before the outage")
			accepted := map[string]string{"alpha": e.accept("acme", "alpha")}
			e.proxies[tc.backend].Cut()
			for w, id := range tc.during(e) {
				accepted[w] = id
			}
			e.proxies[tc.backend].Restore()
			e.allFound("acme", accepted)
			// And the backend serves again.
			accepted[fmt.Sprint("charlie")] = e.accept("acme", "charlie")
			e.allFound("acme", accepted)
		})
	}
}

// TestOpenAPIDocumentsOutage: every authenticated operation documents the 503 of an outage,
// with its Retry-After header.
func TestOpenAPIDocumentsOutage(t *testing.T) {
	e := servertest.Start(t, servertest.Modes(t)["embedded"](t))
	r := e.Do("GET", "/openapi.json", servertest.NoAuth, nil)
	e.Expect(r, 200, "openapi")
	var doc struct {
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Responses map[string]struct {
				Headers map[string]any `json:"headers"`
			} `json:"responses"`
		} `json:"components"`
	}
	r.JSON(t, &doc)
	if _, ok := doc.Components.Responses["Unavailable"].Headers["Retry-After"]; !ok {
		t.Fatal("components.responses.Unavailable lacks the Retry-After header")
	}
	n := 0
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if sec, ok := op["security"].([]any); ok && len(sec) == 0 {
				continue // public: health, the spec itself, xAPI about
			}
			resp, _ := op["responses"].(map[string]any)
			if _, ok := resp["503"]; !ok {
				t.Errorf("%s %s does not document 503", method, path)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no authenticated operations in /openapi.json")
	}
}
