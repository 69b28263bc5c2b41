package console_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestConsoleContentInBrowser: a tenant credential imports an HTML page from the console,
// sees its job complete in the page (htmx polling), opens the version with its generated
// fields, and searches it in the playground: a lexical search shows the query's word
// highlighted (<mark>) and the API's timing, a field search marks the value, and a semantic
// search ranks the page by meaning.
func TestConsoleContentInBrowser(t *testing.T) {
	modelDir, haveModel := servertest.TestModelDir(t)
	servertest.ForEachModeWithModel(t, modelDir, func(t *testing.T, e *servertest.Env) {
		const ten = "browser-content"
		e.CreateTenant(ten, true)
		key, secret := e.Credential(ten)
		file := filepath.Join(t.TempDir(), "kitchen.html")
		if err := os.WriteFile(file, []byte(servertest.KitchenHTML), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx := servertest.Browser(t)
		servertest.ConsoleSignIn(t, ctx, e, key, secret)
		// A tenant credential lands on its first section (Courses); Content is a click away.
		servertest.WaitJS(t, ctx, `document.querySelector("h1").textContent`, "Courses", "a tenant credential lands on its tenant")
		servertest.Click(t, ctx, `document.querySelector("nav a[href$='/content']")`)
		servertest.WaitJS(t, ctx, `document.querySelector("h1").textContent`, "Content", "the content section")
		accessible(t, ctx, "content page")

		// Import by upload; the job's state is polled in place until COMPLETED.
		if err := chromedp.Do(ctx,
			chromedp.SetUploadFiles(`#import-file`, []string{file}),
			chromedp.SendKeys(`#import-content-id`, "kitchen"),
			chromedp.SendKeys(`#import-tags`, "food")); err != nil {
			t.Fatal(err)
		}
		servertest.Click(t, ctx, `document.querySelector("#import-form button[type=submit]")`)
		state := `(document.querySelector("#job-area .job-state")||{}).textContent`
		servertest.WaitJS(t, ctx, state+` !== undefined`, "true", "the import job appears in the page")
		servertest.WaitJS(t, ctx, state, "COMPLETED", "the import job completes in the page")
		servertest.WaitJS(t, ctx, `document.querySelector("#job-area progress") === null`, "true", "no progress bar once completed")
		servertest.WaitJS(t, ctx, `location.pathname`, "/console/t/browser-content/content", "the job was followed in place")

		// The version page with its generated fields.
		servertest.Click(t, ctx, `document.querySelector("#job-area a.job-version")`)
		servertest.WaitJS(t, ctx, `document.querySelector("h1").textContent`, "Content kitchen version 1", "version page")
		servertest.WaitJS(t, ctx, `document.querySelector("#field-TITLE td").textContent`, "Kitchen Safety Basics", "generated TITLE")
		servertest.WaitJS(t, ctx, `document.querySelectorAll("#fields-table td.off").length`, "0", "every field generated")
		accessible(t, ctx, "version page")

		// A lexical search: the hit's snippet marks the query's word, and the time is shown.
		servertest.Click(t, ctx, `document.querySelector("nav a[href$='/search']")`)
		servertest.WaitJS(t, ctx, `document.querySelector("h1").textContent`, "Search", "search page")
		accessible(t, ctx, "search page")
		search := func(typ, term string) {
			t.Helper()
			servertest.Click(t, ctx, `document.querySelector("input[name=search_type][value=`+typ+`]")`)
			if err := chromedp.Do(ctx, chromedp.SetValue(`#search-term`, term)); err != nil {
				t.Fatal(err)
			}
			servertest.Click(t, ctx, `document.querySelector("#search-form button[type=submit]")`)
			servertest.WaitJS(t, ctx, `(document.querySelector("#search-request")||{}).textContent.indexOf("search_type=`+typ+`") > 0`, "true", typ+" search answered")
		}
		search("LEXICAL", "cake")
		marks := `Array.from(document.querySelectorAll("#search-hits .snippet mark")).map(function(m){return m.textContent}).join(",")`
		servertest.WaitJS(t, ctx, marks, "cake,cake", "the query's word highlighted in the hit")
		servertest.WaitJS(t, ctx, `document.querySelector("#search-hits .hit a").textContent`, "kitchen", "the hit")
		elapsed, err := chromedp.Run(ctx, chromedp.Text("#search-time"))
		if err != nil || !strings.HasSuffix(elapsed, " ms") {
			t.Fatalf("search timing %q: %v", elapsed, err)
		}
		servertest.WaitJS(t, ctx, `location.search.indexOf("term=cake") > 0`, "true", "the search is in the address")
		accessible(t, ctx, "search results")

		servertest.Click(t, ctx, `document.querySelector("input[name=field][value=TITLE]")`)
		search("FIELD", "kitchen safety basics")
		servertest.WaitJS(t, ctx, `document.querySelectorAll("#search-hits .field").length`, "1", "one TITLE hit")
		servertest.WaitJS(t, ctx, `document.querySelector("#search-hits .field mark").textContent`, "Kitchen Safety Basics", "field search marks the value")

		search("SEMANTIC", "baking desserts in the oven")
		if haveModel {
			servertest.WaitJS(t, ctx, `document.querySelector("#search-hits .hit a").textContent`, "kitchen", "semantic hit")
			servertest.WaitJS(t, ctx, `/match_strength 0\.\d{3}/.test(document.querySelector("#search-hits .hit").textContent)`, "true", "match strength shown")
		} else {
			servertest.WaitJS(t, ctx, `document.querySelector("#search-error").textContent.indexOf("503: semantic search is unavailable") === 0`, "true", "503 shown")
		}
		if haveModel {
			// The fused search: a keyword of the page and a paraphrase in one query.
			search("HYBRID", "cake baking in the oven")
			servertest.WaitJS(t, ctx, `document.querySelector("#search-hits .hit a").textContent`, "kitchen", "hybrid hit")
			servertest.WaitJS(t, ctx, `/match_strength [01]\.\d{3}/.test(document.querySelector("#search-hits .hit").textContent)`, "true", "hybrid match strength shown")
		}
	})
}
