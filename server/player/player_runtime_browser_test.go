package player_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestPlayerRuntimeSettingsInBrowser: the run-time settings the player page applies, in
// Chromium with real content: PlayerFinishCausesImmediateCommit (LMSFinish commits at once,
// or only at the next scheduled commit or when the page goes away), PlayerSuspendDataMaxLength
// (SetValue refuses longer suspend data with 405) and PlayerCommMaxFailedSubmissions (the
// learner is told after that many failed commits; the commits fail because the registration
// was deleted under the running session).
func TestPlayerRuntimeSettingsInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "b12", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest12, "sco/index.html": servertest.Sco12}), "")
		api, regs := "/engine/api/v1/acme", "/engine/api/v1/acme/registrations"
		for _, id := range []string{"now", "later", "lost"} {
			e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "b12", "registrationId": id,
				"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create "+id)
		}
		// No scheduled commit happens during the test: what arrives comes from the content or the page.
		e.SetSetting(api, "PlayerCommCommitFrequency", "3600000")
		navigate := func(u string) {
			t.Helper()
			if _, err := chromedp.Run(ctx, chromedp.Navigate(u)); err != nil {
				t.Fatal(err)
			}
		}
		frame := `document.getElementById("frame").contentWindow`
		exitOf := func(id string) string {
			var d struct {
				ActivityDetails struct {
					Children []struct{ Runtime struct{ Exit string } }
				}
			}
			e.Do("GET", regs+"/"+id+"/progress/detail", servertest.Root, nil).JSON(t, &d)
			return d.ActivityDetails.Children[0].Runtime.Exit
		}
		finish := func(id string) {
			t.Helper()
			navigate(e.URL + e.LaunchPath(regs+"/"+id+"/launchLink?redirectOnExitUrl=message"))
			servertest.WaitJS(t, ctx, frame+`.document.getElementById("status").textContent`, "ready|true|Lee, Ann|ab-initio||true", id+": SCO ready")
			servertest.Click(t, ctx, frame+`.document.getElementById("finish")`)
			// LMSFinish of a single SCO exits the player, which unloads the content's frame:
			// the exit message is what the learner sees (the finish commit is checked on the server).
			servertest.WaitJS(t, ctx, `document.getElementById("done").hidden`, "false", id+": exit message")
		}

		// By default LMSFinish commits at once (the exit flag arrives while the page stays).
		finish("now")
		servertest.Eventually(t, 10*time.Second, "the finish commit", func() bool { return exitOf("now") == "Suspend" })

		// With PlayerFinishCausesImmediateCommit false the finish commit waits: it is not there
		// while the page stays, and arrives when the page goes away.
		e.SetSetting(regs+"/later", "PlayerFinishCausesImmediateCommit", "false")
		finish("later")
		if got := exitOf("later"); got == "Suspend" {
			t.Errorf("the finish commit was sent at LMSFinish")
		}
		navigate("about:blank")
		servertest.Eventually(t, 10*time.Second, "the held finish commit after leaving the page", func() bool { return exitOf("later") == "Suspend" })

		// PlayerSuspendDataMaxLength 4096 and PlayerCommMaxFailedSubmissions 3 (registration level).
		e.SetSetting(regs+"/lost", "PlayerSuspendDataMaxLength", "4096")
		e.SetSetting(regs+"/lost", "PlayerCommMaxFailedSubmissions", "3")
		navigate(e.URL + e.LaunchPath(regs+"/lost/launchLink"))
		servertest.WaitJS(t, ctx, frame+`.document.getElementById("status").textContent`, "ready|true|Lee, Ann|ab-initio||true", "lost: SCO ready")
		servertest.WaitJS(t, ctx, `(function(a){return a.LMSSetValue("cmi.suspend_data","é".repeat(4097))+"|"+a.LMSGetLastError()+"|"+a.LMSSetValue("cmi.suspend_data","é".repeat(4096))})(`+frame+`.api)`,
			"false|405|true", "suspend data over the limit")
		e.Expect(e.Do("DELETE", regs+"/lost", servertest.Root, nil), 204, "delete the registration under the session")
		unsaved := `document.getElementById("unsaved").hidden`
		for i := 1; i <= 3; i++ {
			servertest.WaitJS(t, ctx, frame+`.api.LMSCommit("")`, "false", "failed commit")
			want := "true"
			if i == 3 {
				want = "false"
			}
			servertest.WaitJS(t, ctx, unsaved, want, "warning after failed commits")
		}
		servertest.WaitJS(t, ctx, `document.getElementById("unsaved").textContent.indexOf("not being saved") >= 0`, "true", "warning text")
	})
}
