package contentapi_test

import (
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// snippetText renders a result's snippet with the matched fragments in brackets, and its
// location.
func snippetText(t *testing.T, hit map[string]any) string {
	t.Helper()
	sn, ok := hit["snippet"].(map[string]any)
	if !ok {
		t.Fatalf("result without snippet: %v", hit)
	}
	frags, ok := sn["fragments"].([]any)
	if !ok {
		t.Fatalf("snippet without fragments: %v", sn)
	}
	var b strings.Builder
	b.WriteString(sn["location"].(string) + ": ")
	for _, f := range frags {
		m := f.(map[string]any)
		if m["match"] == true {
			b.WriteString("[" + m["text"].(string) + "]")
		} else {
			if _, has := m["match"]; has {
				t.Errorf("fragment with match false written out: %v", m)
			}
			b.WriteString(m["text"].(string))
		}
	}
	return b.String()
}

// TestSearchSnippets: return_snippet (a Lectern extension) gives every lexical and semantic
// result an excerpt of its chunk with the words the search matched marked, tenant-wide from
// the version's best chunk, on both backends alike; FIELD searches refuse it.
func TestSearchSnippets(t *testing.T) {
	modelDir, haveModel := servertest.TestModelDir(t)
	servertest.ForEachModeWithModel(t, modelDir, func(t *testing.T, e *servertest.Env) {
		const ten = "snippets"
		e.CreateTenant(ten, true)
		e.ImportContent(ten, "content_id=kitchen", []byte(servertest.KitchenHTML), "kitchen.html")
		e.ImportContent(ten, "content_id=garden", []byte(servertest.GardenMarkdown), "garden.md")

		hits := e.SearchContent(ten, servertest.SQ("search_type", "LEXICAL", "term", "baking cakes", "return_snippet", "true"))
		if len(hits) != 1 || hits[0]["location"] != nil {
			t.Fatalf("tenant-wide keyword search: %v", hits)
		}
		if got, want := snippetText(t, hits[0]), "Kitchen Safety > Baking: [Baking] [Bake] the carrot [cake] at 180 degrees. Let the [cake] cool before icing it."; got != want {
			t.Errorf("keyword snippet:\n got %s\nwant %s", got, want)
		}
		hits = e.SearchContent(ten, servertest.SQ("search_type", "LEXICAL", "term", `"carrots in the soil"`, "return_snippet", "true", "return_match", "true"))
		if len(hits) != 0 {
			t.Fatalf("a phrase that does not occur: %v", hits)
		}
		hits = e.SearchContent(ten, servertest.SQ("search_type", "LEXICAL", "term", `"harvest carrots"`, "content_id", "garden", "version", "1", "return_snippet", "true"))
		if len(hits) != 1 || hits[0]["location"] != "Gardening Guide > Harvest" {
			t.Fatalf("phrase search within one item: %v", hits)
		}
		if got, want := snippetText(t, hits[0]), "Gardening Guide > Harvest: Harvest [Harvest carrots] when the roots are as thick as a finger."; got != want {
			t.Errorf("phrase snippet:\n got %s\nwant %s", got, want)
		}
		// Without return_snippet, no snippet.
		for _, h := range e.SearchContent(ten, servertest.SQ("search_type", "LEXICAL", "term", "carrots")) {
			if _, has := h["snippet"]; has {
				t.Errorf("snippet without return_snippet: %v", h)
			}
		}
		e.Expect(e.Do("GET", "/api/v1/content/search?"+servertest.SQ("search_type", "FIELD", "term", "x", "return_snippet", "true").Encode(), servertest.Root, nil, "tenant_id", ten),
			400, "return_snippet on a field search")
		e.Expect(e.Do("GET", "/api/v1/content/search?"+servertest.SQ("search_type", "LEXICAL", "term", "x", "return_snippet", "maybe").Encode(), servertest.Root, nil, "tenant_id", ten),
			400, "return_snippet not a boolean")
		if !haveModel {
			return
		}
		hits = e.SearchContent(ten, servertest.SQ("search_type", "SEMANTIC", "term", "growing vegetables", "return_snippet", "true", "limit", "1"))
		if len(hits) != 1 || hits[0]["content_id"] != "garden" {
			t.Fatalf("semantic search: %v", hits)
		}
		if got := snippetText(t, hits[0]); !strings.HasPrefix(got, "Gardening Guide > ") || strings.Contains(got, "[") {
			t.Errorf("semantic snippet (the best chunk, nothing marked): %s", got)
		}
	})
}
