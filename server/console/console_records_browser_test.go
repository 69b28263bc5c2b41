package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestConsoleRecordsInBrowser: a tenant credential signs in, filters the statements the API
// stored by verb and by agent, opens one and sees its indented JSON; sees a job's state in
// the jobs list; subscribes a loopback receiver to JOB_PROCESSED (the signing secret shown
// once) and watches the delivery of the next job appear in the log, which htmx refreshes.
func TestConsoleRecordsInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		const ten = "crec-browser"
		e.CreateTenant(ten, true)
		key, secret := e.Credential(ten)
		ids := postTenantStatements(e, ten, servertest.Basic(key, secret),
			servertest.Statement("ann@example.com", "completed", "http://example.com/act/1"),
			servertest.Statement("bob@example.com", "attempted", "http://example.com/act/2"),
			servertest.Statement("ann@example.com", "attempted", "http://example.com/act/3"))
		ctx := servertest.Browser(t)
		servertest.ConsoleSignIn(t, ctx, e, key, secret)
		waitNav(t, ctx, `document.querySelector("h1").textContent`, "Courses", "a tenant lands on its first section")
		servertest.Click(t, ctx, `document.querySelector("nav a[href$='/statements']")`)
		waitNav(t, ctx, `document.querySelector("h1").textContent`, "Statements", "the statements section")
		rows := `document.querySelectorAll("#statement-table tbody tr[id]").length`
		waitNav(t, ctx, rows, "3", "every statement listed")
		settledAccessible(t, ctx, "statements page")

		if err := chromedp.Do(ctx, chromedp.SendKeys(`#verb`, "http://adlnet.gov/expapi/verbs/completed"), chromedp.Click(`#filter`)); err != nil {
			t.Fatal(err)
		}
		waitNav(t, ctx, rows, "1", "filtered by verb")
		waitNav(t, ctx, `document.querySelector("#st-`+ids[0]+` td:nth-child(3)").textContent`, "completed", "the completed statement")

		servertest.Click(t, ctx, `document.querySelector("a[href='/console/t/`+ten+`/statements']:not([aria-current])")`)
		waitNav(t, ctx, rows, "3", "filters cleared")
		if err := chromedp.Do(ctx, chromedp.SendKeys(`#mbox`, "bob@example.com"), chromedp.Click(`#filter`)); err != nil {
			t.Fatal(err)
		}
		waitNav(t, ctx, rows, "1", "filtered by agent")
		waitNav(t, ctx, `document.querySelector("#st-`+ids[1]+` td:nth-child(2)").textContent`, "bob@example.com", "bob's statement")

		servertest.Click(t, ctx, `document.querySelector("#st-`+ids[1]+` a")`)
		waitNav(t, ctx, `document.querySelector("h1 code").textContent`, ids[1], "statement page")
		settledAccessible(t, ctx, "statement page")
		json := `document.getElementById("statement-json").textContent`
		waitNav(t, ctx, `JSON.parse(`+json+`).actor.mbox`, "mailto:bob@example.com", "the statement's JSON")
		waitNav(t, ctx, json+`.indexOf('\n  "actor": {\n    "mbox"') >= 0`, "true", "indented JSON")
		waitNav(t, ctx, `document.getElementById("voided").textContent`, "not voided", "voided state")

		// Jobs.
		job := e.WaitContentJob(ten, e.UploadContent(servertest.Root, ten, "content_id=broken", []byte("%PDF-1.4 not really a pdf"), "broken.pdf"))
		servertest.Click(t, ctx, `document.querySelector("nav a[href='/console/t/`+ten+`/jobs']")`)
		waitNav(t, ctx, `document.querySelector("#job-`+job.ID+` .status").textContent`, "FAILED", "the job's state in the list")
		settledAccessible(t, ctx, "jobs page")

		// Webhooks: an authentication configuration, a subscription, its delivery log.
		rec := servertest.NewHookReceiver(t, 0)
		servertest.Click(t, ctx, `document.querySelector("nav a[href='/console/t/`+ten+`/webhooks']")`)
		waitNav(t, ctx, `document.querySelector("h1").textContent`, "Webhooks", "webhooks page")
		settledAccessible(t, ctx, "webhooks page")
		servertest.Click(t, ctx, `document.getElementById("create-auth")`)
		waitNav(t, ctx, `document.querySelector("[role=status]").textContent`, "The authentication configuration was created.", "auth configuration created")
		waitNav(t, ctx, `document.querySelectorAll("#auth-table tbody tr[id]").length`, "1", "auth configuration listed")
		if err := chromedp.Do(ctx, chromedp.SendKeys(`#url`, rec.Srv.URL+"/hook"), chromedp.Click(`#subscribe`)); err != nil {
			t.Fatal(err)
		}
		waitNav(t, ctx, `document.getElementById("signing-secret").textContent.length > 20`, "true", "signing secret shown")
		subID, err := chromedp.Run(ctx, chromedp.Text("#created-id"))
		if err != nil {
			t.Fatal(err)
		}
		servertest.Click(t, ctx, `document.querySelector("#sub-`+subID+` a")`)
		waitNav(t, ctx, `document.querySelector("h1").textContent`, "Delivery log", "delivery log")
		waitNav(t, ctx, `document.querySelectorAll("#delivery-table tr.delivery").length`, "0", "no deliveries yet")
		settledAccessible(t, ctx, "delivery log")
		e.WaitContentJob(ten, e.UploadContent(servertest.Root, ten, "content_id=broken2", []byte("%PDF-1.4 still not a pdf"), "broken.pdf"))
		servertest.Eventually(t, 30*time.Second, "the receiver got the message", func() bool { return len(rec.Delivered()) == 1 })
		mid := servertest.MessageID(t, rec.Delivered()[0].Body)
		waitNav(t, ctx, `document.querySelector("#delivery-table tr.delivery code").textContent`, mid, "the delivery appears in the log")
		waitNav(t, ctx, `document.querySelector("#delivery-table tr.delivery .status").textContent`, "204", "its status")
	})
}

// settledAccessible runs the accessibility check once the page that a click opened has
// loaded: an evaluation still in flight while Chromium swaps the document fails with
// "Inspected target navigated or closed".
func settledAccessible(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	waitNav(t, ctx, `document.readyState`, "complete", what+" loaded")
	for attempt := 0; ; attempt++ {
		problems, err := chromedp.Run(ctx, chromedp.Evaluate[string](a11yCheck))
		if err != nil && strings.Contains(err.Error(), "navigated") && attempt < 3 {
			waitNav(t, ctx, `document.readyState`, "complete", what+" loaded")
			continue
		}
		if err != nil {
			t.Fatalf("%s: accessibility check: %v", what, err)
		}
		if problems != "" {
			t.Errorf("%s: %s", what, problems)
		}
		return
	}
}

// waitNav is waitJS across a navigation: a click that loads another page may swap the
// document while an evaluation is in flight, which is retried rather than failed.
func waitNav(t *testing.T, ctx context.Context, expr, want, what string) {
	t.Helper()
	var got string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string]("(function(){try{return String("+expr+")}catch(e){return 'error: '+e}})()"))
		switch {
		case err != nil && !strings.Contains(err.Error(), "navigated") && !strings.Contains(err.Error(), "context with specified id"):
			t.Fatalf("%s: %v", what, err)
		case err == nil:
			if got = v; got == want {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: %q, want %q", what, got, want)
}
