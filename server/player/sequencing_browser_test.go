package player_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/coursetest"
)

// manifestForward is a forward-only course without choice: the learner walks s1, s2, s3 in
// order with Next, and the table of contents only shows where they are.
const manifestForward = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="fwd" version="1" ` + coursetest.NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Forward only</title>
    <item identifier="s1" identifierref="r1" parameters="?s1"><title>One</title></item>
    <item identifier="s2" identifierref="r1" parameters="?s2"><title>Two</title></item>
    <item identifier="s3" identifierref="r1" parameters="?s3"><title>Three</title></item>
    <imsss:sequencing><imsss:controlMode choice="false" flow="true" forwardOnly="true"/></imsss:sequencing>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`

// scoNav is a SCORM 2004 SCO that completes, shows what adl.nav.request_valid answers, and
// asks for continue before it terminates when its button is clicked.
const scoNav = `<!DOCTYPE html><html><body><p id="status">loading</p><button id="go">Go on</button><script>
function find(w){while(!w.API_1484_11&&w.parent&&w.parent!==w){w=w.parent}return w.API_1484_11}
var api=find(window),s=document.getElementById("status"),n=location.search.slice(1);
api.Initialize("");
api.SetValue("cmi.completion_status","completed");
api.SetValue("cmi.location",n);
api.Commit("");
s.textContent="ready|"+n+"|"+api.GetValue("adl.nav.request_valid.continue")+"|"+api.GetValue("adl.nav.request_valid.previous")+"|"+api.GetValue("adl.nav.request_valid.choice.{target=s3}");
document.getElementById("go").onclick=function(){api.SetValue("adl.nav.request","continue");s.textContent="terminated|"+api.Terminate("")};
</script></body></html>`

func TestSequencingInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "fwd", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestForward, "sco.html": scoNav}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "fwd", "registrationId": "r1",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create r1")
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink"))); err != nil {
			t.Fatal(err)
		}
		tocDisabled := `Array.from(document.querySelectorAll("#toc button")).map(function(b){return b.textContent+":"+b.disabled}).join(",")`
		controls := `document.getElementById("prev").disabled+","+document.getElementById("next").disabled`

		// The sequencer starts with s1; request_valid: continue yes, previous no, no choice.
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|s1|true|false|false", "first SCO")
		// The root may be chosen (SB.2.9 checks the choice control of a target's parent, and
		// the root has none; ADL CM-07d): it starts the flow over.
		servertest.WaitJS(t, ctx, tocDisabled, "Forward only:false,One:true,Two:true,Three:true", "table of contents without choice")
		servertest.WaitJS(t, ctx, controls, "true,false", "Previous disabled, Next enabled on s1")
		// Next delivers s2; forwardOnly leaves Previous disabled.
		servertest.Click(t, ctx, `document.getElementById("next")`)
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|s2|true|false|false", "second SCO after Next")
		servertest.WaitJS(t, ctx, controls, "true,false", "Previous disabled on s2 (forwardOnly)")
		// s2 asks for continue and terminates: s3 is delivered.
		servertest.Click(t, ctx, `document.getElementById("frame").contentDocument.getElementById("go")`)
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|s3|true|false|false", "third SCO after s2's adl.nav.request=continue")
		servertest.WaitJS(t, ctx, `document.querySelector("#toc button.current").textContent`, "Three", "current entry")

		// The sequencer's state is the registration's: s1 and s2 were completed in order.
		var detail struct {
			ActivityDetails struct {
				Children []struct {
					ID      string
					Runtime struct{ CompletionStatus, Location string }
				}
			}
		}
		e.Do("GET", regs+"/r1/progress/detail", servertest.Root, nil).JSON(t, &detail)
		got := []string{}
		for _, c := range detail.ActivityDetails.Children {
			got = append(got, c.ID+":"+c.Runtime.Location)
		}
		if strings.Join(got, ",") != "s1:s1,s2:s2,s3:s3" {
			t.Errorf("run-time data after the walk: %v", got)
		}

		// SCORM's defaults (choice, no flow): the course starts with the first SCO a choice
		// may deliver, Previous and Next stay disabled, and the table of contents chooses.
		free := strings.Replace(manifestForward, `<imsss:sequencing><imsss:controlMode choice="false" flow="true" forwardOnly="true"/></imsss:sequencing>`, "", 1)
		e.ImportOK("acme", "free", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": free, "sco.html": scoNav}), "")
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "free", "registrationId": "r2",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create r2")
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r2/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|s1|false|false|true", "first SCO of a course without flow")
		// The root is disabled: without flow a choice of it delivers nothing.
		servertest.WaitJS(t, ctx, tocDisabled, "Forward only:true,One:false,Two:false,Three:false", "table of contents with choice")
		servertest.WaitJS(t, ctx, controls, "true,true", "Previous and Next disabled without flow")
		servertest.Click(t, ctx, `Array.from(document.querySelectorAll("#toc button")).filter(function(b){return b.textContent==="Three"})[0]`)
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|s3|false|false|true", "the SCO chosen in the table of contents")
		servertest.WaitJS(t, ctx, `document.querySelector("#toc button.current").textContent`, "Three", "current entry after the choice")
	})
}

// manifestHide is manifest2004 with the first SCO's adlnav:hideLMSUI: it offers continue and
// previous itself.
var manifestHide = strings.Replace(servertest.Manifest2004, `<title>First</title></item>`,
	`<title>First</title><adlnav:presentation><adlnav:navigationInterface><adlnav:hideLMSUI>continue</adlnav:hideLMSUI>`+
		`<adlnav:hideLMSUI>previous</adlnav:hideLMSUI><adlnav:hideLMSUI>sideways</adlnav:hideLMSUI></adlnav:navigationInterface></adlnav:presentation></item>`, 1)

// TestHideLMSUIInBrowser (issue 24): while a SCO whose item lists adlnav:hideLMSUI runs, the
// page hides the controls it names (continue: Next, previous: Previous) and shows them again
// for a SCO that does not; a value outside the vocabulary is an import warning.
func TestHideLMSUIInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		res := e.ImportOK("acme", "hide", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestHide, "sco.html": servertest.Sco2004}), "")
		if !strings.Contains(fmt.Sprint(res), "sideways") {
			t.Errorf("no import warning for hideLMSUI sideways: %+v", res)
		}
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "hide", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create r1")
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink"))); err != nil {
			t.Fatal(err)
		}
		shown := `document.getElementById("prev").hidden+","+document.getElementById("next").hidden+","+document.getElementById("exit").hidden`
		servertest.WaitJS(t, ctx, `document.getElementById("frame").contentDocument.getElementById("status").textContent.indexOf("ready|one")`, "0", "first SCO")
		servertest.WaitJS(t, ctx, shown, "true,true,false", "Previous and Next hidden for the first SCO")
		servertest.Click(t, ctx, `Array.from(document.querySelectorAll("#toc button")).filter(function(b){return b.textContent==="Second"})[0]`)
		servertest.WaitJS(t, ctx, `document.getElementById("frame").contentDocument.getElementById("status").textContent.indexOf("ready|two")`, "0", "second SCO")
		servertest.WaitJS(t, ctx, shown, "false,false,false", "the controls back for the second SCO")
	})
}

// scoEntry reports its cmi.entry, and suspends when asked (window.suspendMe).
const scoEntry = `<!DOCTYPE html><html><body><p id="status">loading</p><script>
function find(w){while(!w.API_1484_11&&w.parent&&w.parent!==w){w=w.parent}return w.API_1484_11}
var api=find(window),n=location.search.slice(1);
api.Initialize("");
document.getElementById("status").textContent="ready|"+n+"|"+api.GetValue("cmi.entry");
window.suspendMe=function(){return api.SetValue("cmi.exit","suspend")+api.Commit("")};
</script></body></html>`

// TestExitAndSuspendInBrowser (issue 24): in a sequenced course the player's Suspend is the
// learner's suspendAll (the next launch resumes the activity, entry resume), its Exit is
// exitAll (the next launch starts the course again), except that Exit of a SCO that set
// cmi.exit to suspend suspends, so content that asked to come back where the learner left
// it does.
func TestExitAndSuspendInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "two", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest2004, "sco.html": scoEntry}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "two", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create r1")
		launch := func() {
			t.Helper()
			if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink"))); err != nil {
				t.Fatal(err)
			}
		}
		ended := func(what string) {
			t.Helper()
			servertest.WaitJS(t, ctx, `document.getElementById("done").hidden+"|"+document.getElementById("done").textContent`,
				"false|You have finished this course. You can close this window.", what)
		}
		launch()
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|one|ab-initio", "first SCO")
		servertest.Click(t, ctx, `document.getElementById("next")`)
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|two|ab-initio", "second SCO")
		servertest.Click(t, ctx, `document.getElementById("suspend")`)
		ended("the session ends on Suspend")
		launch()
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|two|resume", "the relaunch after Suspend resumes the second SCO")

		// The SCO asks to be suspended; the learner presses Exit.
		servertest.WaitJS(t, ctx, `document.getElementById("frame").contentWindow.suspendMe()`, "truetrue", "the SCO sets cmi.exit suspend")
		servertest.Click(t, ctx, `document.getElementById("exit")`)
		ended("the session ends on Exit")
		launch()
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|two|resume", "the relaunch after Exit of a suspending SCO resumes it")

		// Exit of a SCO that did not ask to be suspended ends the attempt on the course.
		servertest.Click(t, ctx, `document.getElementById("exit")`)
		ended("the session ends on Exit")
		launch()
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|one|ab-initio", "the relaunch after Exit starts the course again")
	})
}
