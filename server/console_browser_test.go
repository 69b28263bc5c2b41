package server_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
)

// consoleSignIn opens the console in the browser and signs in through the form.
func consoleSignIn(t *testing.T, ctx context.Context, e *env, key, secret string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/console/"),
		chromedp.WaitVisible(`#key`),
		chromedp.SendKeys(`#key`, key),
		chromedp.SendKeys(`#secret`, secret),
		chromedp.Submit(`#secret`)); err != nil {
		t.Fatalf("sign in: %v", err)
	}
}

// TestConsoleTenantsInBrowser: root signs in, creates a tenant, disables and enables it
// (htmx swaps the table in place) and issues a credential, which then signs in and lands
// on its own tenant.
func TestConsoleTenantsInBrowser(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ctx := browser(t)
		consoleSignIn(t, ctx, e, rootUser, rootPass)
		waitJS(t, ctx, `document.querySelector("h1").textContent`, "Tenants", "root lands on the tenants")
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(`#tenant_id`, "console-acme"),
			chromedp.Submit(`#tenant_id`)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, `document.querySelector("[role=status]").textContent`, "Tenant console-acme was created.", "created notice")
		row := `document.getElementById("tenant-console-acme")`
		waitJS(t, ctx, row+`.querySelector("td").textContent`, "enabled", "new tenant enabled")
		click(t, ctx, row+`.querySelector("button")`)
		waitJS(t, ctx, row+`.querySelector("td").textContent`, "disabled", "disabled in place")
		var tn struct{ Enabled bool }
		e.do("GET", "/api/v1/app_management/tenants/console-acme/credentials", root, nil)
		if e.do("PUT", "/api/v1/app_management/tenants/console-acme", root, map[string]any{"enabled": false}).json(t, &tn); tn.Enabled {
			t.Fatal("the console's Disable did not reach the tenant")
		}
		click(t, ctx, row+`.querySelector("button")`)
		waitJS(t, ctx, row+`.querySelector("td").textContent`, "enabled", "enabled again in place")

		click(t, ctx, row+`.querySelector("a[href$='/credentials']")`)
		waitJS(t, ctx, `document.querySelector("h1").textContent`, "Credentials of console-acme", "credentials page")
		click(t, ctx, `document.querySelector("form[action$='/credentials'] button")`)
		waitJS(t, ctx, `document.getElementById("issued-key") !== null`, "true", "issued credential shown")
		key, err := chromedp.Run(ctx, chromedp.Text("#issued-key"))
		if err != nil {
			t.Fatal(err)
		}
		secret, err := chromedp.Run(ctx, chromedp.Text("#issued-secret"))
		if err != nil {
			t.Fatal(err)
		}
		// The issued credential works against the API and in the console.
		e.expect(e.do("GET", "/api/v1/app_management/tenants/console-acme/credentials", basic(key, secret), nil), 403, "tenant credential on a root route")
		click(t, ctx, `document.querySelector("form.signout button")`)
		waitJS(t, ctx, `location.pathname`, "/console/signin", "signed out")
		consoleSignIn(t, ctx, e, key, secret)
		waitJS(t, ctx, `document.querySelector(".tenant code").textContent`, "console-acme", "tenant credential lands on its tenant")
		waitJS(t, ctx, `document.querySelector("a[href='/console/tenants']") === null`, "true", "no tenant administration for a tenant credential")
	})
}
