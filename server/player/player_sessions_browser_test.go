package player_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestConcurrentLaunchInBrowser: the player page of a session a later launch took over learns
// it from its next heartbeat (or commit) and says so: a warning over the content by default,
// the content closed with ForceExitConcurrentLaunches.
func TestConcurrentLaunchInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "b12", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest12, "sco/index.html": servertest.Sco12}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "b12", "registrationId": "r1",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
		// Heartbeats every 200 ms, so the page learns of the second launch at once.
		e.Expect(e.Do("PUT", regs+"/r1/configuration/PlayerCommCommitFrequency", servertest.Root, map[string]any{"value": "200"}), 204, "commit frequency")
		inFrame := `document.getElementById("frame").contentDocument.getElementById("status").textContent`
		warning := `document.getElementById("warning")`

		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, inFrame, "ready|true|Lee, Ann|ab-initio||true", "SCO loaded and committed")
		servertest.WaitJS(t, ctx, warning+".hidden", "true", "no warning while the session is the only one")
		e.Launch(e.LaunchPath(regs + "/r1/launchLink")) // the learner opens the course elsewhere
		servertest.WaitJS(t, ctx, warning+".hidden", "false", "warning after a second launch")
		servertest.WaitJS(t, ctx, warning+".textContent.indexOf('This course was opened in another window') === 0", "true", "warning text")
		servertest.WaitJS(t, ctx, `document.getElementById("frame").hidden`, "false", "the content stays open under the warning")
		// The content's own commits are refused now: the API reports the server's error.
		servertest.Click(t, ctx, `{click: function () { window.API.LMSSetValue("cmi.core.lesson_location", "late"); window.API.LMSCommit(""); }}`)
		servertest.WaitJS(t, ctx, `window.API.LMSGetLastError()`, "101", "commit of the earlier window")

		e.Expect(e.Do("PUT", regs+"/r1/configuration/ForceExitConcurrentLaunches", servertest.Root, map[string]any{"value": "true"}), 204, "force exit")
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, inFrame+`.indexOf("ready|true|") === 0`, "true", "SCO loaded again")
		e.Launch(e.LaunchPath(regs + "/r1/launchLink"))
		servertest.WaitJS(t, ctx, `document.getElementById("done").hidden`, "false", "the earlier window exits")
		servertest.WaitJS(t, ctx, `document.getElementById("frame").hidden`, "true", "the content is closed")
		servertest.WaitJS(t, ctx, `document.getElementById("done").textContent.indexOf("closed here") > 0`, "true", "exit message")
	})
}
