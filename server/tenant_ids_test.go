package server_test

import (
	"strings"
	"testing"
	"time"
)

// TestTenantIDRules: ids that would collide with internal names are refused at creation with
// a 400 naming the rule, so no tenant exists whose imports, content calls and deletion fail
// later; ids that pass work end to end (a content import, then a deletion that completes).
func TestTenantIDRules(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
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
			r := e.do("POST", base, root, map[string]any{"tenant_id": tc.id})
			e.expect(r, 400, "create tenant "+tc.id)
			if !strings.Contains(r.message(), tc.rule) {
				t.Errorf("tenant %q: message %q does not name the rule (%q)", tc.id, r.message(), tc.rule)
			}
			r = e.do("POST", base+"?for_engine=true", root, map[string]any{"tenant_id": tc.id})
			e.expect(r, 400, "create engine tenant "+tc.id)
		}

		// Dots, dashes and underscores inside an id, and upper case, are fine.
		for _, id := range []string{"acme.corp", "Team_1-x.y", strings.Repeat("x", 128)} {
			e.createTenant(id, true)
		}
		id := "acme.corp"
		j := e.waitContentJob(id, e.uploadContent(root, id, "", []byte("# Fire safety\n\nKeep exits clear."), "fire.md"))
		if j.Status != "COMPLETED" {
			t.Fatalf("import into %s: %+v", id, j)
		}
		if hits := e.searchContent(id, sq("search_type", "LEXICAL", "term", "exits")); len(hits) != 1 {
			t.Fatalf("search in %s: %v", id, hits)
		}
		r := e.do("DELETE", base+"/"+id, root, nil)
		e.expect(r, 202, "delete "+id)
		var del jobRead
		r.json(t, &del)
		eventually(t, 60*time.Second, "deletion of "+id, func() bool {
			rr := e.do("GET", "/api/v1/jobs/"+del.ID, root, nil)
			e.expect(rr, 200, "deletion job")
			del = jobRead{}
			rr.json(t, &del)
			return del.Status == "COMPLETED" || del.Status == "FAILED"
		})
		if del.Status != "COMPLETED" {
			t.Fatalf("deletion of %s: %+v", id, del)
		}
	})
}
