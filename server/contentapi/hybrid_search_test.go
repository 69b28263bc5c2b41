package contentapi_test

import (
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestHybridSearch: search_type=HYBRID (a Lectern extension, issue 26) fuses an any-term
// keyword search with a semantic one: a long question the spec's LEXICAL search (every
// lexeme) misses finds its content, results carry match_strength and, within one content
// item, location, on both backends alike; return_match is refused, return_snippet marks the
// matched words.
func TestHybridSearch(t *testing.T) {
	modelDir, haveModel := servertest.TestModelDir(t)
	servertest.ForEachModeWithModel(t, modelDir, func(t *testing.T, e *servertest.Env) {
		const ten = "hybrid"
		e.CreateTenant(ten, true)
		if !haveModel {
			e.Expect(e.Do("GET", "/api/v1/content/search?"+servertest.SQ("search_type", "HYBRID", "term", "cake").Encode(), servertest.Root, nil, "tenant_id", ten),
				503, "hybrid search without a model")
			return
		}
		e.ImportContent(ten, "content_id=kitchen", []byte(servertest.KitchenHTML), "kitchen.html")
		e.ImportContent(ten, "content_id=garden", []byte(servertest.GardenMarkdown), "garden.md")

		const question = "at what temperature should I bake a carrot cake in the oven"
		if hits := e.SearchContent(ten, servertest.SQ("search_type", "LEXICAL", "term", question)); len(hits) != 0 {
			t.Fatalf("LEXICAL needs every lexeme, found %v", hits)
		}
		hits := e.SearchContent(ten, servertest.SQ("search_type", "hybrid", "term", question))
		if len(hits) != 2 || hits[0]["content_id"] != "kitchen" || hits[1]["content_id"] != "garden" {
			t.Fatalf("hybrid tenant-wide: %v", hits)
		}
		prev := 2.0
		for _, h := range hits {
			s, ok := h["match_strength"].(float64)
			if !ok || s <= 0 || s > 1 || s > prev || h["location"] != nil || h["match"] != nil {
				t.Fatalf("hybrid entry: %v", h)
			}
			prev = s
		}
		// Kitchen is first in both parts.
		if s := hits[0]["match_strength"].(float64); s != 1 {
			t.Errorf("kitchen's match strength %v, want 1 (first lexically and semantically)", s)
		}

		hits = e.SearchContent(ten, servertest.SQ("search_type", "HYBRID", "term", question, "content_id", "kitchen", "version", "1", "return_snippet", "true"))
		if len(hits) < 2 || hits[0]["location"] != "Kitchen Safety > Baking" {
			t.Fatalf("hybrid within one item: %v", hits)
		}
		for _, h := range hits {
			if _, ok := h["location"].(string); !ok {
				t.Fatalf("hybrid entry within one item without location: %v", h)
			}
		}
		if got := snippetText(t, hits[0]); !strings.Contains(got, "[Bake] the [carrot] [cake] at 180 degrees") {
			t.Errorf("hybrid snippet %s: want the matched words marked", got)
		}
		hits = e.SearchContent(ten, servertest.SQ("search_type", "HYBRID", "term", question, "skip", "1", "limit", "1"))
		if len(hits) != 1 || hits[0]["content_id"] != "garden" {
			t.Fatalf("hybrid page 2 of 1: %v", hits)
		}
		e.Expect(e.Do("GET", "/api/v1/content/search?"+servertest.SQ("search_type", "HYBRID", "term", "cake", "return_match", "true").Encode(), servertest.Root, nil, "tenant_id", ten),
			400, "return_match on a hybrid search")
		e.Expect(e.Do("GET", "/api/v1/content/search?"+servertest.SQ("search_type", "HYBRID", "term", "cake", "field", "TITLE").Encode(), servertest.Root, nil, "tenant_id", ten),
			400, "field on a hybrid search")
	})
}
