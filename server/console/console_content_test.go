package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestConsoleContent: a tenant credential imports content from the console (upload, the job
// followed in place), lists it, opens a version with its generated fields, changes its tags
// and active flag, regenerates its fields, and searches it in the playground: highlighted
// words, the field search, the API's timing, and the API's own messages (a bad search, the
// 503 of a semantic search without a model, a bad URL).
func TestConsoleContent(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		const ten = "cc-acme"
		e.CreateTenant(ten, true)
		key, secret := e.Credential(ten)
		cc := &servertest.ConsoleClient{T: t, E: e}
		cc.SignIn(key, secret)
		if p := cc.Send("GET", "/console/", nil); p.Header.Get("Location") != "/console/t/"+ten+"/courses" {
			t.Fatalf("a tenant credential lands on %q, want its first section", p.Header.Get("Location"))
		}
		base := "/console/t/" + ten
		servertest.WantPage(t, cc.Send("GET", base+"/content", nil), 200, `<a href="/console/t/cc-acme/content" aria-current="page">Content</a>`,
			`<a href="/console/t/cc-acme/search">Search</a>`, `<td colspan="6">No content yet.</td>`,
			`<input id="import-file" name="file" type="file">`, `<div id="job-area" aria-live="polite"></div>`)

		// Import by upload through htmx: the job fragment, polled until COMPLETED.
		p := cc.SendFile(base+"/content", "file", "kitchen.html", []byte(servertest.KitchenHTML), url.Values{"content_id": {"kitchen"}, "tags": {"food, safety"}}, "HX-Request", "true")
		servertest.WantPage(t, p, 200, "CONTENT_IMPORT job")
		done := cc.FollowJob(ten, p.Body)
		if !strings.Contains(done, `<strong class="job-state">COMPLETED</strong>`) || !strings.Contains(done, `href="/console/t/cc-acme/content/kitchen/1"`) {
			t.Fatalf("completed import: %s", done)
		}
		// Without htmx the form redirects to the job's page.
		p = cc.SendFile(base+"/content", "file", "garden.md", []byte(servertest.GardenMarkdown), url.Values{"content_id": {"garden"}})
		if p.Status != 303 || !strings.HasPrefix(p.Header.Get("Location"), base+"/content-jobs/") {
			t.Fatalf("import without htmx: %d %s", p.Status, p.Header.Get("Location"))
		}
		jp := cc.Send("GET", p.Header.Get("Location"), nil)
		servertest.WantPage(t, jp, 200, "<h1>Job <code>", `<div id="job-area" aria-live="polite">`)
		cc.FollowJob(ten, jp.Body)
		// The API's message for a bad URL, and for neither file nor URL.
		servertest.WantPage(t, cc.SendFile(base+"/content", "", "", nil, url.Values{"url": {"ftp://example.com/x"}}), 400, `<p role="alert" class="error">`)
		servertest.WantPage(t, cc.SendFile(base+"/content", "", "", nil, nil), 400, "choose a file to upload or enter the URL")

		// Import from a URL, without htmx: the job's page.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/markdown")
			io.WriteString(w, servertest.VolcanoVTT)
		}))
		defer srv.Close()
		p = cc.SendFile(base+"/content", "", "", nil, url.Values{"url": {srv.URL + "/volcano.vtt"}, "content_id": {"volcano"}})
		if p.Status != 303 {
			t.Fatalf("URL import: %d %s", p.Status, p.Body)
		}
		cc.FollowJob(ten, cc.Send("GET", p.Header.Get("Location"), nil).Body)

		servertest.WantPage(t, cc.Send("GET", base+"/content", nil), 200, `<th scope="row"><a href="/console/t/cc-acme/content/kitchen/1">kitchen</a></th><td>1</td><td>Kitchen Safety Basics</td>`,
			`<code>food</code>, <code>safety</code>`, `<a href="/console/t/cc-acme/content/volcano/1">volcano</a>`)
		// Keyset paging: the API's more token becomes the next page's link.
		p = cc.Send("GET", base+"/content?limit=2", nil)
		next := regexp.MustCompile(`<a href="([^"]+)" rel="next">Next page</a>`).FindStringSubmatch(p.Body)
		if next == nil || strings.Count(p.Body, `<th scope="row">`) != 2 {
			t.Fatalf("first page of 2: %s", p.Body)
		}
		p = cc.Send("GET", strings.ReplaceAll(next[1], "&amp;", "&"), nil)
		if strings.Count(p.Body, `<th scope="row">`) != 1 || strings.Contains(p.Body, `rel="next"`) {
			t.Fatalf("last page: %s", p.Body)
		}
		// The version page: details and the four generated fields.
		vp := cc.Send("GET", base+"/content/kitchen/1", nil)
		servertest.WantPage(t, vp, 200, `<h1>Content <code>kitchen</code> version 1</h1>`, `<dd><code>html</code></dd>`,
			`<tr id="field-TITLE"><th scope="row">TITLE</th>`+"\n"+`<td>Kitchen Safety Basics</td>`, `<tr id="field-SKILLS">`,
			`<input id="version-tags" name="tags" value="food, safety">`, `name="active" value="true" checked`, "&#34;web_pages&#34;: 1")
		if strings.Contains(vp.Body, "not generated yet") {
			t.Errorf("a field of an imported version is missing: %s", vp.Body)
		}
		// Tags and active flag through PATCH.
		servertest.WantPage(t, cc.Send("POST", base+"/content/kitchen/1", url.Values{"tags": {"food"}}), 200, "The tags and the active flag were saved.",
			`<input id="version-tags" name="tags" value="food">`)
		var v struct {
			Tags   []string
			Active bool
		}
		e.Do("GET", "/api/v1/content/kitchen/versions/1", servertest.Root, nil, "tenant_id", ten).JSON(t, &v)
		if len(v.Tags) != 1 || v.Tags[0] != "food" || v.Active {
			t.Fatalf("after the console's save: %+v", v)
		}
		servertest.WantPage(t, cc.Send("POST", base+"/content/kitchen/1", url.Values{"tags": {"food"}, "active": {"true"}}), 200, `name="active" value="true" checked`)
		servertest.WantPage(t, cc.Send("POST", base+"/content/kitchen/1", url.Values{"tags": {" "}, "active": {"true"}}), 200)
		servertest.WantPage(t, cc.Send("GET", base+"/content/nope/1", nil), 404, "not found")
		// Regenerating the fields is a FIELD_GENERATION job, followed like an import.
		p = cc.Send("POST", base+"/content/kitchen/1/fields", url.Values{}, "HX-Request", "true")
		servertest.WantPage(t, p, 200, "FIELD_GENERATION job")
		if done := cc.FollowJob(ten, p.Body); !strings.Contains(done, "COMPLETED") {
			t.Fatalf("field generation: %s", done)
		}

		// Search playground.
		sp := cc.Send("GET", base+"/search", nil)
		servertest.WantPage(t, sp, 200, `<h1>Search</h1>`, `<input type="radio" name="search_type" value="LEXICAL" checked>`, `<label for="search-term">term</label>`)
		if strings.Contains(sp.Body, "<h2>Results</h2>") {
			t.Error("results before any search")
		}
		sp = cc.Send("GET", base+"/search?"+servertest.SQ("search_type", "LEXICAL", "term", "baking cakes").Encode(), nil)
		servertest.WantPage(t, sp, 200, `<a href="/console/t/cc-acme/content/kitchen/1">kitchen</a> version 1`,
			`<mark>Bake</mark> the carrot <mark>cake</mark>`, `Matched words: <mark>Baking</mark>, <mark>Bake</mark>, <mark>cake</mark>`,
			`The API answered in <strong id="search-time">`, "return_snippet=true", `<p id="search-count">1 result</p>`)
		// htmx gets the results alone; the phrase's location within one item.
		sp = cc.Send("GET", base+"/search?"+servertest.SQ("search_type", "LEXICAL", "term", `"carrot cake"`, "content_id", "kitchen", "version", "1").Encode(), nil, "HX-Request", "true")
		servertest.WantPage(t, sp, 200, `location <span class="location">Kitchen Safety &gt; Baking</span>`, `<mark>carrot cake</mark>`, "Match regex: <code>")
		if strings.Contains(sp.Body, "<html") || strings.Contains(sp.Body, "<form") {
			t.Error("an htmx search got more than the results")
		}
		servertest.WantPage(t, cc.Send("GET", base+"/search?"+servertest.SQ("search_type", "FIELD", "term", "kitchen safety basics", "field", "TITLE").Encode(), nil), 200,
			`<strong>TITLE</strong>: <mark>Kitchen Safety Basics</mark>`, `<input type="checkbox" name="field" value="TITLE" checked>`)
		servertest.WantPage(t, cc.Send("GET", base+"/search?"+servertest.SQ("search_type", "LEXICAL", "term", "plumbing").Encode(), nil), 200, `<p id="search-count">0 results</p>`)
		// The API's messages: a 400, and the 503 of a semantic search without a model.
		servertest.WantPage(t, cc.Send("GET", base+"/search?"+servertest.SQ("search_type", "LEXICAL", "term", "x", "content_id", "kitchen").Encode(), nil), 400,
			`<p role="alert" class="error" id="search-error">400: give both content_id and version, or neither</p>`)
		servertest.WantPage(t, cc.Send("GET", base+"/search?"+servertest.SQ("search_type", "SEMANTIC", "term", "cake").Encode(), nil), 503,
			`<p role="alert" class="error" id="search-error">503: semantic search is unavailable`)
		servertest.WantPage(t, cc.Send("GET", base+"/search?"+servertest.SQ("search_type", "SEMANTIC", "term", "cake").Encode(), nil, "HX-Request", "true"), 200,
			`id="search-error">503: semantic search is unavailable`)
		// Another tenant's pages stay closed to this credential.
		servertest.WantPage(t, cc.Send("GET", "/console/t/other/search?term=x", nil), 403, "cannot access tenant")
	})
}
