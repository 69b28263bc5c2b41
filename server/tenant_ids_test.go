package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestTenantIDRules: ids that would collide with internal names are refused at creation with
// a 400 naming the rule, so no tenant exists whose imports, content calls and deletion fail
// later; ids that pass work end to end (a content import, then a deletion that completes).
func TestTenantIDRules(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		const base = "/api/v1/app_management/tenants"
		for _, tc := range []struct{ id, rule string }{
			{".lectern-evil", "must start with a letter or a digit"},
			{"_lectern", "must start with a letter or a digit"},
			{"-rf", "must start with a letter or a digit"},
			{".", "must start with a letter or a digit"},
			{"..", "must start with a letter or a digit"},
			{"Report", "reserved"},
			{"a/b", "only letters, digits"},
			{"a b", "only letters, digits"},
			{strings.Repeat("x", 129), "at most 128"},
		} {
			r := e.Do("POST", base, servertest.Root, map[string]any{"tenant_id": tc.id})
			e.Expect(r, 400, "create tenant "+tc.id)
			if !strings.Contains(r.Message(), tc.rule) {
				t.Errorf("tenant %q: message %q does not name the rule (%q)", tc.id, r.Message(), tc.rule)
			}
			r = e.Do("POST", base+"?for_engine=true", servertest.Root, map[string]any{"tenant_id": tc.id})
			e.Expect(r, 400, "create engine tenant "+tc.id)
		}

		// Dots, dashes and underscores inside an id, and upper case, are fine.
		for _, id := range []string{"acme.corp", "Team_1-x.y", strings.Repeat("x", 128)} {
			e.CreateTenant(id, true)
		}
		id := "acme.corp"
		j := e.WaitContentJob(id, e.UploadContent(servertest.Root, id, "", []byte("# Fire safety\n\nKeep exits clear."), "fire.md"))
		if j.Status != "COMPLETED" {
			t.Fatalf("import into %s: %+v", id, j)
		}
		if hits := e.SearchContent(id, servertest.SQ("search_type", "LEXICAL", "term", "exits")); len(hits) != 1 {
			t.Fatalf("search in %s: %v", id, hits)
		}
		r := e.Do("DELETE", base+"/"+id, servertest.Root, nil)
		e.Expect(r, 202, "delete "+id)
		var del servertest.JobRead
		r.JSON(t, &del)
		servertest.Eventually(t, 60*time.Second, "deletion of "+id, func() bool {
			rr := e.Do("GET", "/api/v1/jobs/"+del.ID, servertest.Root, nil)
			e.Expect(rr, 200, "deletion job")
			del = servertest.JobRead{}
			rr.JSON(t, &del)
			return del.Status == "COMPLETED" || del.Status == "FAILED"
		})
		if del.Status != "COMPLETED" {
			t.Fatalf("deletion of %s: %+v", id, del)
		}
	})
}
