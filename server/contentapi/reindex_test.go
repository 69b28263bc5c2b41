package contentapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/mappings"
)

// reindexSearches are the searches whose raw answers a rebuild must give back unchanged.
var reindexSearches = []string{"search_type=LEXICAL&term=extinguisher", "search_type=LEXICAL&term=%22assembly+point%22",
	"search_type=FIELD&term=fire+extinguisher+training"}

// searchRaw returns the raw body of a content search.
func searchRaw(e *servertest.Env, tenantID, query string) string {
	e.T.Helper()
	r := e.Do("GET", "/api/v1/content/search?"+query, servertest.Root, nil, "tenant_id", tenantID)
	e.Expect(r, 200, "search "+query)
	return string(r.Body)
}

// reindexAll starts a rebuild through the API, checks its JobRead and waits for it to end.
func reindexAll(e *servertest.Env, tenantID string, versions int) {
	e.T.Helper()
	r := e.Do("POST", "/api/v1/app_management/reindex", servertest.Root, nil)
	e.Expect(r, 202, "start reindex")
	var j servertest.JobRead
	r.JSON(e.T, &j)
	if j.ID == "" || j.Type != "CONTENT_REINDEX" || j.Status != "PENDING" {
		e.T.Fatalf("reindex answer: %s", r.Body)
	}
	if r := e.Do("POST", "/api/v1/app_management/reindex", servertest.NoAuth, nil); r.Status != 401 {
		e.T.Errorf("reindex without credentials: %d %s", r.Status, r.Body)
	}
	servertest.Eventually(e.T, 90*time.Second, "reindex job "+j.ID, func() bool {
		rr := e.Do("GET", "/api/v1/jobs/"+j.ID, servertest.Root, nil, "tenant_id", tenantID)
		e.Expect(rr, 200, "job status")
		j = servertest.JobRead{}
		rr.JSON(e.T, &j)
		return j.Status == "COMPLETED" || j.Status == "FAILED"
	})
	if j.Status != "COMPLETED" || j.Results["versions_done"] != float64(versions) || j.Results["versions_total"] != float64(versions) {
		e.T.Fatalf("reindex job: %+v", j)
	}
}

// TestReindex rebuilds the content index through the API: in both modes over an intact
// index, and in the distributed mode after the index (and a statement index) was deleted
// under the running service: /readyz names what is missing, searches answer 200 with nothing
// instead of failing, imports succeed again, and the rebuild gives back the very same search
// answers as before the loss.
func TestReindex(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.ServerFault = true // /readyz answers 503 on purpose
		ten := servertest.RandomName("reindex-")
		e.CreateTenant(ten, true)
		e.ImportContent(ten, "content_id=fire", firePackage(t), "fire.zip")
		e.ImportContent(ten, "content_id=fire2&tag_id=x", firePackage(t), "fire.zip")
		before := map[string]string{}
		for _, q := range reindexSearches {
			before[q] = searchRaw(e, ten, q)
			if before[q] == "[]" {
				t.Fatalf("search %s finds nothing before the loss", q)
			}
		}
		if r := e.Do("GET", "/readyz", servertest.NoAuth, nil); r.Status != 200 {
			t.Fatalf("readyz before the loss: %d %s", r.Status, r.Body)
		}

		if es := e.App.Elastic; es != nil {
			for _, name := range []string{mappings.Content, mappings.Statements} {
				err := es.Do(t.Context(), "delete index", esapi.IndicesDeleteRequest{Index: []string{es.Index(name)}}, nil)
				if err != nil {
					t.Fatal(err)
				}
			}
			r := e.Do("GET", "/readyz", servertest.NoAuth, nil)
			if r.Status != 503 || !strings.Contains(string(r.Body), es.Alias(mappings.Content)) ||
				!strings.Contains(string(r.Body), es.Alias(mappings.Statements)) {
				t.Fatalf("readyz after the loss: %d %s; want 503 naming both aliases", r.Status, r.Body)
			}
			// As every 503 of an outage: when to ask again (the soak's invariant, TestSoak).
			if r.Header.Get("Retry-After") == "" {
				t.Errorf("readyz's 503 has no Retry-After")
			}
			for _, q := range reindexSearches {
				if got := searchRaw(e, ten, q); got != "[]" {
					t.Errorf("search %s of the lost index = %s, want []", q, got)
				}
			}
			// Statements are not recreated by a running service (a snapshot restore is their way
			// back): their requests answer 503 naming the missing index, never 500.
			r = e.Do("GET", servertest.LRS+"/"+ten+"/statements", servertest.Root, nil, servertest.V200...)
			if r.Status != 503 || !strings.Contains(r.Message(), es.Alias(mappings.Statements)) {
				t.Errorf("statements query of a lost index: %d %s; want 503 naming %s", r.Status, r.Body, es.Alias(mappings.Statements))
			}
			// The next import's index task recreates the content index and succeeds.
			e.ImportContent(ten, "content_id=other", []byte("Unrelated notes about gardening."), "notes.txt")
			r = e.Do("GET", "/readyz", servertest.NoAuth, nil)
			if r.Status != 503 || strings.Contains(string(r.Body), es.Alias(mappings.Content)) {
				t.Errorf("readyz after the content index came back: %d %s; want 503 naming only the statement index", r.Status, r.Body)
			}
			reindexAll(e, ten, 3)

			// A restart (of any role, `lectern reindex` included) does not bring the statement
			// index back empty either: this deployment had one, so its loss stays visible.
			cfg := e.App.Config
			cfg.Logger = nil // its own log
			again := servertest.Start(t, cfg)
			again.ServerFault = true
			r = again.Do("GET", "/readyz", servertest.NoAuth, nil)
			if r.Status != 503 || !strings.Contains(string(r.Body), es.Alias(mappings.Statements)+" (statements: restore it from a snapshot)") {
				t.Errorf("readyz after a restart: %d %s; want 503 naming the statement index and its remedy", r.Status, r.Body)
			}
			if len(again.Logs.Find("statement indices are missing: the statements, xAPI documents and attachments they held cannot be rebuilt from the record or blob stores; restore them from a snapshot (docs/operations.md), or start them empty with `lectern recreate-statements`")) != 1 {
				t.Error("the restart did not log the missing statement index")
			}
			// The operator's explicit choice starts them empty.
			cfg.RecreateStatements = true
			if r := servertest.Start(t, cfg).Do("GET", "/readyz", servertest.NoAuth, nil); r.Status != 200 {
				t.Errorf("readyz after recreate-statements: %d %s", r.Status, r.Body)
			}
		} else {
			e.ImportContent(ten, "content_id=other", []byte("Unrelated notes about gardening."), "notes.txt")
			reindexAll(e, ten, 3)
		}
		for _, q := range reindexSearches {
			if got := searchRaw(e, ten, q); got != before[q] {
				t.Errorf("search %s after reindex:\n%s\nwant\n%s", q, got, before[q])
			}
		}
	})
}

// TestReindexUpgradesContentIndex (distributed): a cluster upgraded from a release whose
// content mapping was older keeps its alias on the older index, which this version's writes
// do not fit; /readyz names it and the remedy, and a reindex moves the alias to this
// version's index and rebuilds it there, leaving the old index for the operator to delete.
func TestReindexUpgradesContentIndex(t *testing.T) {
	// The distributed mode only: the embedded mode's Bleve index has no versions to move
	// between.
	func(t *testing.T, e *servertest.Env) {
		es := e.App.Elastic
		e.ServerFault = true // /readyz answers 503 on purpose
		ten := servertest.RandomName("upgrade-")
		e.CreateTenant(ten, true)
		e.ImportContent(ten, "content_id=fire", firePackage(t), "fire.zip")
		before := searchRaw(e, ten, reindexSearches[0])

		// What an older release left: its index under the alias, this version's index absent.
		ctx := t.Context()
		older := es.Alias(mappings.Content) + "_v1"
		if err := es.Do(ctx, "create "+older, esapi.IndicesCreateRequest{Index: older}, nil); err != nil {
			t.Fatal(err)
		}
		moves := `{"actions":[{"remove":{"index":"` + es.Index(mappings.Content) + `","alias":"` + es.Alias(mappings.Content) + `"}},` +
			`{"add":{"index":"` + older + `","alias":"` + es.Alias(mappings.Content) + `"}}]}`
		if err := es.Do(ctx, "alias the older index", esapi.IndicesUpdateAliasesRequest{Body: strings.NewReader(moves)}, nil); err != nil {
			t.Fatal(err)
		}
		if err := es.Do(ctx, "delete the current index", esapi.IndicesDeleteRequest{Index: []string{es.Index(mappings.Content)}}, nil); err != nil {
			t.Fatal(err)
		}
		r := e.Do("GET", "/readyz", servertest.NoAuth, nil)
		if r.Status != 503 || !strings.Contains(string(r.Body), older) || !strings.Contains(string(r.Body), "lectern reindex") {
			t.Fatalf("readyz with the alias on %s: %d %s; want 503 naming it and the remedy", older, r.Status, r.Body)
		}

		reindexAll(e, ten, 1)
		if target, err := es.AliasTarget(ctx, mappings.Content); err != nil || target != es.Index(mappings.Content) {
			t.Fatalf("after the reindex the alias names %q (%v), want %q", target, err, es.Index(mappings.Content))
		}
		if r := e.Do("GET", "/readyz", servertest.NoAuth, nil); r.Status != 200 {
			t.Errorf("readyz after the reindex: %d %s", r.Status, r.Body)
		}
		if got := searchRaw(e, ten, reindexSearches[0]); got != before {
			t.Errorf("search after the upgrade's reindex:\n%s\nwant\n%s", got, before)
		}
		if err := es.Do(ctx, "older index kept", esapi.IndicesExistsRequest{Index: []string{older}}, nil); err != nil {
			t.Errorf("the older index was deleted: %v", err)
		}
	}(t, servertest.Start(t, servertest.Modes(t)["distributed"](t)))
}
