package player_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// scoAnywhere is a SCORM 1.2 SCO that finds the API in a parent frame or, run in a window of
// its own, through window.opener (the SCORM API discovery algorithm), and finishes suspended
// when it unloads.
const scoAnywhere = `<!DOCTYPE html><html><body><p id="status">loading</p><script>
function find(w){for(var i=0;w&&i<20;i++){if(w.API)return w.API;w=(w.parent&&w.parent!==w)?w.parent:w.opener}return null}
var api=find(window),s=document.getElementById("status"),done=false;
var init=api.LMSInitialize("");
api.LMSSetValue("cmi.core.lesson_location",window.opener?"window":"frame");
api.LMSSetValue("cmi.core.lesson_status","completed");
s.textContent="ready|"+init+"|"+(window.opener?"window":"frame")+"|"+api.LMSCommit("");
window.addEventListener("pagehide",function(){if(!done){done=true;api.LMSSetValue("cmi.core.exit","suspend");api.LMSFinish("")}});
</script></body></html>`

const manifestAnywhere = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="anywhere" version="1" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Anywhere</title>
    <item identifier="sco1" identifierref="r1"><title>Lesson</title></item>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`

// newWindow runs open (which should make the page open a window) and returns a context
// driving the window it opened.
func newWindow(t *testing.T, ctx context.Context, open chromedp.Action[chromedp.Void]) context.Context {
	t.Helper()
	ch := chromedp.WaitNewTarget(ctx, func(i *target.Info) bool { return i.Type == "page" })
	if err := chromedp.Do(ctx, open); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ch:
		wctx, _ := chromedp.NewContext(ctx, chromedp.WithTargetID(id))
		return wctx
	case <-time.After(20 * time.Second):
		t.Fatal("no new window opened")
		return nil
	}
}

// TestPlayerChromeInBrowser shows what the chrome and launch settings make a browser do: an
// activity in a window of its own after the Launch click, reaching the API through
// window.opener; the leave-page prompt; Exit closing the activity's window with its finish
// committed; a reload after exit following RedirectOnRefreshUrl; and the player opened in a
// new window by its launch page, which RedirectLaunchPageOnExit sends to the exit target.
func TestPlayerChromeInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "any", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestAnywhere, "sco.html": scoAnywhere}), "")
		api, regs := "/engine/api/v1/acme", "/engine/api/v1/acme/registrations"
		for _, id := range []string{"r1", "r2"} {
			e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "any", "registrationId": id,
				"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create "+id)
		}
		e.SetSetting(api+"/courses/any", "PlayerScoLaunchType", "NEW_WINDOW_AFTER_CLICK")
		e.SetSetting(api+"/courses/any", "PromptOnPlayerClose", "true")
		e.SetSetting(api+"/courses/any", "RedirectOnRefreshUrl", e.URL+"/healthz?after=refresh")
		e.SetSetting(api+"/courses/any", "PlayerShowProgressBar", "true")
		status := `document.getElementById("status").textContent`

		// The activity waits for the Launch click, then runs in its own window and commits
		// through the player's API (window.opener.API).
		if err := chromedp.Do(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink?redirectOnExitUrl=message"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, `document.getElementById("launch-panel").hidden+"|"+document.getElementById("frame").hidden+"|"+document.getElementById("progress-text").textContent`,
			"false|true|0 of 1 completed", "Launch button instead of the frame")
		sco := newWindow(t, ctx, chromedp.Click(chromedp.ID("launch")))
		servertest.WaitJS(t, sco, status, "ready|true|window|true", "SCO in its own window")
		// The progress bar advances when the SCO reports completion.
		servertest.WaitJS(t, ctx, `document.getElementById("progress-text").textContent`, "1 of 1 completed", "progress bar after the SCO completed")

		// Leaving the page other than by Exit asks first (the click above made the page
		// user-activated, which browsers require for the prompt); dismissed, the player stays.
		dialogs := make(chan string, 4)
		go func() {
			for ev, err := range chromedp.Events(ctx, page.JavascriptDialogOpening) {
				if err != nil {
					return
				}
				dialogs <- string(ev.Type)
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}
		}()
		go func() { _, _ = chromedp.Run(ctx, chromedp.Evaluate[bool](`location.href = "about:blank", true`)) }()
		select {
		case d := <-dialogs:
			if d != "beforeunload" {
				t.Errorf("dialog %q, want beforeunload", d)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no leave-page prompt")
		}
		servertest.WaitJS(t, ctx, `location.pathname.indexOf("/player/session/")`, "0", "player kept after the prompt was dismissed")

		// Exit closes the activity's window, whose finish (exit suspend) is committed, and
		// shows the message without a prompt.
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("exit"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, `document.getElementById("done").hidden`, "false", "exit message")
		var detail struct {
			ActivityDetails struct {
				Children []struct {
					Runtime struct{ Location, Exit string }
				}
			}
		}
		servertest.Eventually(t, 10*time.Second, "the finish commit from the activity's window", func() bool {
			e.Do("GET", regs+"/r1/progress/detail", servertest.Root, nil).JSON(t, &detail)
			rt := detail.ActivityDetails.Children[0].Runtime
			return rt.Location == "window" && rt.Exit == "Suspend"
		})
		select {
		case d := <-dialogs:
			t.Errorf("dialog %q on Exit", d)
		default:
		}

		// A reload after exit goes where RedirectOnRefreshUrl says.
		if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, `location.href`, e.URL+"/healthz?after=refresh", "reload after exit")

		// PlayerLaunchType NEW_WINDOW: the link's page opens the player in a new window; with
		// RedirectLaunchPageOnExit, Exit sends the link's page to the exit target and closes
		// the player's window.
		e.SetSetting(regs+"/r2", "PlayerLaunchType", "NEW_WINDOW")
		e.SetSetting(regs+"/r2", "PlayerScoLaunchType", "FRAMESET")
		e.SetSetting(regs+"/r2", "PromptOnPlayerClose", "false")
		e.SetSetting(regs+"/r2", "RedirectLaunchPageOnExit", "true")
		exitURL := e.URL + "/healthz?after=exit"
		link := e.URL + e.LaunchPath(regs+"/r2/launchLink?redirectOnExitUrl="+url.QueryEscape(exitURL))
		player := newWindow(t, ctx, chromedp.Navigate(link))
		servertest.WaitJS(t, player, `document.getElementById("frame").contentDocument.getElementById("status").textContent`, "ready|true|frame|true", "SCO in the player's window")
		servertest.Click(t, player, `document.getElementById("exit")`)
		servertest.WaitJS(t, ctx, `location.href`, exitURL, "the launch page after exit")
		servertest.Eventually(t, 10*time.Second, "the player's window closed", func() bool {
			targets, err := chromedp.Targets(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range targets {
				if ti.Type == "page" && ti.URL != "" && ti.URL != exitURL {
					return false
				}
			}
			return true
		})
	})
}
