package console_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// a11yCheck is JavaScript that lists what a console page lacks for assistive technology and
// keyboard use: a document language, one h1, a label for every form control, an accessible
// name for every button and link, header cells with a scope, and no positive tabindex
// (which breaks the keyboard order).
const a11yCheck = `(function(){
var p=[];
if(!document.documentElement.lang)p.push("html without lang");
if(document.querySelectorAll("h1").length!==1)p.push(document.querySelectorAll("h1").length+" h1 elements");
document.querySelectorAll("input,select,textarea").forEach(function(el){
 if(el.type==="hidden")return;
 var named=(el.labels&&el.labels.length>0)||el.getAttribute("aria-label")||el.getAttribute("aria-labelledby");
 if(!named)p.push("unlabelled "+el.tagName.toLowerCase()+" "+(el.name||el.id));
});
document.querySelectorAll("button,a[href]").forEach(function(el){
 if(!(el.textContent.trim()||el.getAttribute("aria-label")))p.push("unnamed "+el.tagName.toLowerCase()+" "+el.outerHTML.slice(0,80));
});
document.querySelectorAll("th").forEach(function(el){if(!el.getAttribute("scope"))p.push("th without scope: "+el.textContent.trim());});
document.querySelectorAll("[tabindex]").forEach(function(el){if(el.tabIndex>0)p.push("positive tabindex on "+el.tagName);});
return p.join("; ");
})()`

// accessible fails the test when the current page breaks a rule of a11yCheck.
func accessible(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	var problems string
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; {
		problems, err = chromedp.Run(ctx, chromedp.Evaluate[string](a11yCheck))
		// A page that replaces itself as the check starts (a poll that ends in a reload of
		// the page it shows) is checked again once the new one is there.
		if err == nil || !servertest.Navigating(err) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("%s: accessibility check: %v", what, err)
	}
	if problems != "" {
		t.Errorf("%s: %s", what, problems)
	}
}

// TestConsoleTenantsInBrowser: root signs in, creates a tenant, disables and enables it
// (htmx swaps the table in place) and issues a credential, which then signs in and lands
// on its own tenant.
func TestConsoleTenantsInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		// Signing in works from the keyboard alone: the key field has the focus, Tab moves to
		// the secret, Enter submits.
		if err := chromedp.Do(ctx, chromedp.Navigate(e.URL+"/console/"), chromedp.WaitVisible(`#key`)); err != nil {
			t.Fatal(err)
		}
		accessible(t, ctx, "sign-in page")
		servertest.WaitJS(t, ctx, `document.activeElement.id`, "key", "focus on the key field")
		if err := chromedp.Do(ctx, chromedp.KeyEvent(servertest.RootUser), chromedp.KeyEvent("\t"), chromedp.KeyEvent(servertest.RootPass), chromedp.KeyEvent("\r")); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, `document.querySelector("h1").textContent`, "Tenants", "root lands on the tenants")
		accessible(t, ctx, "tenants page")
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(`#tenant_id`, "console-acme"),
			chromedp.Submit(`#tenant_id`)); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, `document.querySelector("[role=status]").textContent`, "Tenant console-acme was created.", "created notice")
		row := `document.getElementById("tenant-console-acme")`
		servertest.WaitJS(t, ctx, row+`.querySelector("td").textContent`, "enabled", "new tenant enabled")
		servertest.Click(t, ctx, row+`.querySelector("button")`)
		servertest.WaitJS(t, ctx, row+`.querySelector("td").textContent`, "disabled", "disabled in place")
		var tn struct{ Enabled bool }
		e.Do("GET", "/api/v1/app_management/tenants/console-acme/credentials", servertest.Root, nil)
		if e.Do("PUT", "/api/v1/app_management/tenants/console-acme", servertest.Root, map[string]any{"enabled": false}).JSON(t, &tn); tn.Enabled {
			t.Fatal("the console's Disable did not reach the tenant")
		}
		servertest.Click(t, ctx, row+`.querySelector("button")`)
		servertest.WaitJS(t, ctx, row+`.querySelector("td").textContent`, "enabled", "enabled again in place")

		servertest.Click(t, ctx, row+`.querySelector("a[href$='/credentials']")`)
		servertest.WaitJS(t, ctx, `document.querySelector("h1").textContent`, "Credentials of console-acme", "credentials page")
		accessible(t, ctx, "credentials page")
		servertest.Click(t, ctx, `document.querySelector("form[action$='/credentials'] button")`)
		servertest.WaitJS(t, ctx, `document.getElementById("issued-key") !== null`, "true", "issued credential shown")
		key, err := chromedp.Run(ctx, chromedp.Text("#issued-key"))
		if err != nil {
			t.Fatal(err)
		}
		secret, err := chromedp.Run(ctx, chromedp.Text("#issued-secret"))
		if err != nil {
			t.Fatal(err)
		}
		// The issued credential works against the API and in the console.
		e.Expect(e.Do("GET", "/api/v1/app_management/tenants/console-acme/credentials", servertest.Basic(key, secret), nil), 403, "tenant credential on a root route")
		servertest.Click(t, ctx, `document.querySelector("form.signout button")`)
		servertest.WaitJS(t, ctx, `location.pathname`, "/console/signin", "signed out")
		servertest.ConsoleSignIn(t, ctx, e, key, secret)
		servertest.WaitJS(t, ctx, `document.querySelector(".tenant code").textContent`, "console-acme", "tenant credential lands on its tenant")
		servertest.WaitJS(t, ctx, `document.querySelector("a[href='/console/tenants']") === null`, "true", "no tenant administration for a tenant credential")
	})
}
