package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConcurrentLaunchInBrowser: the player page of a session a later launch took over learns
// it from its next heartbeat (or commit) and says so: a warning over the content by default,
// the content closed with ForceExitConcurrentLaunches.
func TestConcurrentLaunchInBrowser(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ctx := browser(t)
		e.createTenant("acme", true)
		e.importOK("acme", "b12", zipOf(t, map[string]string{"imsmanifest.xml": manifest12, "sco/index.html": sco12}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.expect(e.do("POST", regs, root, map[string]any{"courseId": "b12", "registrationId": "r1",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
		// Heartbeats every 200 ms, so the page learns of the second launch at once.
		e.expect(e.do("PUT", regs+"/r1/configuration/PlayerCommCommitFrequency", root, map[string]any{"value": "200"}), 204, "commit frequency")
		inFrame := `document.getElementById("frame").contentDocument.getElementById("status").textContent`
		warning := `document.getElementById("warning")`

		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.url+e.launchPath(regs+"/r1/launchLink"))); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, inFrame, "ready|true|Lee, Ann|ab-initio||true", "SCO loaded and committed")
		waitJS(t, ctx, warning+".hidden", "true", "no warning while the session is the only one")
		e.launch(e.launchPath(regs + "/r1/launchLink")) // the learner opens the course elsewhere
		waitJS(t, ctx, warning+".hidden", "false", "warning after a second launch")
		waitJS(t, ctx, warning+".textContent.indexOf('This course was opened in another window') === 0", "true", "warning text")
		waitJS(t, ctx, `document.getElementById("frame").hidden`, "false", "the content stays open under the warning")
		// The content's own commits are refused now: the API reports the server's error.
		click(t, ctx, `{click: function () { window.API.LMSSetValue("cmi.core.lesson_location", "late"); window.API.LMSCommit(""); }}`)
		waitJS(t, ctx, `window.API.LMSGetLastError()`, "101", "commit of the earlier window")

		e.expect(e.do("PUT", regs+"/r1/configuration/ForceExitConcurrentLaunches", root, map[string]any{"value": "true"}), 204, "force exit")
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.url+e.launchPath(regs+"/r1/launchLink"))); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, inFrame+`.indexOf("ready|true|") === 0`, "true", "SCO loaded again")
		e.launch(e.launchPath(regs + "/r1/launchLink"))
		waitJS(t, ctx, `document.getElementById("done").hidden`, "false", "the earlier window exits")
		waitJS(t, ctx, `document.getElementById("frame").hidden`, "true", "the content is closed")
		waitJS(t, ctx, `document.getElementById("done").textContent.indexOf("closed here") > 0`, "true", "exit message")
	})
}
