package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/mappings"
)

// reindexSearches are the searches whose raw answers a rebuild must give back unchanged.
var reindexSearches = []string{"search_type=LEXICAL&term=extinguisher", "search_type=LEXICAL&term=%22assembly+point%22",
	"search_type=FIELD&term=fire+extinguisher+training"}

// searchRaw returns the raw body of a content search.
func (e *env) searchRaw(tenantID, query string) string {
	e.t.Helper()
	r := e.do("GET", "/api/v1/content/search?"+query, root, nil, "tenant_id", tenantID)
	e.expect(r, 200, "search "+query)
	return string(r.Body)
}

// reindexAll starts a rebuild through the API, checks its JobRead and waits for it to end.
func (e *env) reindexAll(tenantID string, versions int) {
	e.t.Helper()
	r := e.do("POST", "/api/v1/app_management/reindex", root, nil)
	e.expect(r, 202, "start reindex")
	var j jobRead
	r.json(e.t, &j)
	if j.ID == "" || j.Type != "CONTENT_REINDEX" || j.Status != "PENDING" {
		e.t.Fatalf("reindex answer: %s", r.Body)
	}
	if r := e.do("POST", "/api/v1/app_management/reindex", noAuth, nil); r.Status != 401 {
		e.t.Errorf("reindex without credentials: %d %s", r.Status, r.Body)
	}
	eventually(e.t, 90*time.Second, "reindex job "+j.ID, func() bool {
		rr := e.do("GET", "/api/v1/jobs/"+j.ID, root, nil, "tenant_id", tenantID)
		e.expect(rr, 200, "job status")
		j = jobRead{}
		rr.json(e.t, &j)
		return j.Status == "COMPLETED" || j.Status == "FAILED"
	})
	if j.Status != "COMPLETED" || j.Results["versions_done"] != float64(versions) || j.Results["versions_total"] != float64(versions) {
		e.t.Fatalf("reindex job: %+v", j)
	}
}

// TestReindex rebuilds the content index through the API: in both modes over an intact
// index, and in the distributed mode after the index (and a statement index) was deleted
// under the running service: /readyz names what is missing, searches answer 200 with nothing
// instead of failing, imports succeed again, and the rebuild gives back the very same search
// answers as before the loss.
func TestReindex(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.serverFault = true // /readyz answers 503 on purpose
		ten := randomName("reindex-")
		e.createTenant(ten, true)
		e.importContent(ten, "content_id=fire", firePackage(t), "fire.zip")
		e.importContent(ten, "content_id=fire2&tag_id=x", firePackage(t), "fire.zip")
		before := map[string]string{}
		for _, q := range reindexSearches {
			before[q] = e.searchRaw(ten, q)
			if before[q] == "[]" {
				t.Fatalf("search %s finds nothing before the loss", q)
			}
		}
		if r := e.do("GET", "/readyz", noAuth, nil); r.Status != 200 {
			t.Fatalf("readyz before the loss: %d %s", r.Status, r.Body)
		}

		if es := e.app.Elastic; es != nil {
			for _, name := range []string{mappings.Content, mappings.Statements} {
				err := es.Do(t.Context(), "delete index", esapi.IndicesDeleteRequest{Index: []string{es.Index(name)}}, nil)
				if err != nil {
					t.Fatal(err)
				}
			}
			r := e.do("GET", "/readyz", noAuth, nil)
			if r.Status != 503 || !strings.Contains(string(r.Body), es.Alias(mappings.Content)) ||
				!strings.Contains(string(r.Body), es.Alias(mappings.Statements)) {
				t.Fatalf("readyz after the loss: %d %s; want 503 naming both aliases", r.Status, r.Body)
			}
			for _, q := range reindexSearches {
				if got := e.searchRaw(ten, q); got != "[]" {
					t.Errorf("search %s of the lost index = %s, want []", q, got)
				}
			}
			// Statements are not recreated by a running service (a snapshot restore is their way
			// back): their requests answer 503 naming the missing index, never 500.
			r = e.do("GET", lrs+"/"+ten+"/statements", root, nil, v200...)
			if r.Status != 503 || !strings.Contains(r.message(), es.Alias(mappings.Statements)) {
				t.Errorf("statements query of a lost index: %d %s; want 503 naming %s", r.Status, r.Body, es.Alias(mappings.Statements))
			}
			// The next import's index task recreates the content index and succeeds.
			e.importContent(ten, "content_id=other", []byte("Unrelated notes about gardening."), "notes.txt")
			r = e.do("GET", "/readyz", noAuth, nil)
			if r.Status != 503 || strings.Contains(string(r.Body), es.Alias(mappings.Content)) {
				t.Errorf("readyz after the content index came back: %d %s; want 503 naming only the statement index", r.Status, r.Body)
			}
			e.reindexAll(ten, 3)

			// A restart (of any role, `lectern reindex` included) does not bring the statement
			// index back empty either: this deployment had one, so its loss stays visible.
			cfg := e.app.Config
			cfg.Logger = nil // its own log
			again := start(t, cfg)
			again.serverFault = true
			r = again.do("GET", "/readyz", noAuth, nil)
			if r.Status != 503 || !strings.Contains(string(r.Body), es.Alias(mappings.Statements)+" (statements: restore it from a snapshot)") {
				t.Errorf("readyz after a restart: %d %s; want 503 naming the statement index and its remedy", r.Status, r.Body)
			}
			if len(again.logs.find("statement indices are missing: the statements, xAPI documents and attachments they held cannot be rebuilt from the record or blob stores; restore them from a snapshot (docs/operations.md), or start them empty with `lectern recreate-statements`")) != 1 {
				t.Error("the restart did not log the missing statement index")
			}
			// The operator's explicit choice starts them empty.
			cfg.RecreateStatements = true
			if r := start(t, cfg).do("GET", "/readyz", noAuth, nil); r.Status != 200 {
				t.Errorf("readyz after recreate-statements: %d %s", r.Status, r.Body)
			}
		} else {
			e.importContent(ten, "content_id=other", []byte("Unrelated notes about gardening."), "notes.txt")
			e.reindexAll(ten, 3)
		}
		for _, q := range reindexSearches {
			if got := e.searchRaw(ten, q); got != before[q] {
				t.Errorf("search %s after reindex:\n%s\nwant\n%s", q, got, before[q])
			}
		}
	})
}
