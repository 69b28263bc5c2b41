package servertest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/course/coursetest"
)

// Browser starts Debian's Chromium (scripts/install-chromium.sh installs it) for one test.
// Without Chromium the test fails under CI and is skipped elsewhere.
func Browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, b := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(b); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed (scripts/install-chromium.sh)")
		}
		t.Skip("Chromium is not installed (scripts/install-chromium.sh)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// WaitJS polls a JavaScript expression in the player page until it yields want.
func WaitJS(t *testing.T, ctx context.Context, expr, want, what string) {
	t.Helper()
	var got string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string]("(function(){try{return String("+expr+")}catch(e){return 'error: '+e}})()"))
		if err != nil && Navigating(err) {
			// The page is being replaced (a click that navigates): ask the next one.
			got = "navigating: " + err.Error()
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got = v; got == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: %q, want %q", what, got, want)
}

// Navigating reports whether an evaluation failed only because the page it ran in was being
// replaced by a navigation, which a wait outlasts.
func Navigating(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Inspected target navigated or closed") || strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Cannot find context with specified id")
}

// Click clicks the element expr (a JavaScript expression) evaluates to.
func Click(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("("+expr+").click(), true")); err != nil {
		t.Fatalf("click %s: %v", expr, err)
	}
}

// Sco12 is a SCORM 1.2 SCO that initialises, reports, commits on load and finishes (suspended)
// when its button is clicked, showing each result.
const Sco12 = `<!DOCTYPE html><html><body><p id="status">loading</p><button id="finish">Finish</button><script>
function find(w){while(!w.API&&w.parent&&w.parent!==w){w=w.parent}return w.API}
var api=find(window),s=document.getElementById("status");
var init=api.LMSInitialize("");
var who=api.LMSGetValue("cmi.core.student_name")+"|"+api.LMSGetValue("cmi.core.entry")+"|"+api.LMSGetValue("cmi.suspend_data");
api.LMSSetValue("cmi.core.lesson_location","page-3");
api.LMSSetValue("cmi.core.score.raw","92");
api.LMSSetValue("cmi.core.lesson_status","passed");
api.LMSSetValue("cmi.suspend_data","chapter=3");
api.LMSSetValue("cmi.core.session_time","00:01:30");
s.textContent="ready|"+init+"|"+who+"|"+api.LMSCommit("");
document.getElementById("finish").onclick=function(){api.LMSSetValue("cmi.core.exit","suspend");s.textContent="finished|"+api.LMSFinish("")};
</script></body></html>`

// Manifest12 is a SCORM 1.2 manifest of one SCO, sco.html (Sco12).
const Manifest12 = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="b12" version="1" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Browser 1.2</title>
    <item identifier="sco1" identifierref="r1"><title>The Only Lesson</title><adlcp:masteryscore>80</adlcp:masteryscore></item>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="sco/index.html"><file href="sco/index.html"/></resource></resources>
</manifest>`

// Sco2004 reports one SCO of a SCORM 2004 course, named by its query parameter, and terminates.
const Sco2004 = `<!DOCTYPE html><html><body><p id="status">loading</p><script>
function find(w){while(!w.API_1484_11&&w.parent&&w.parent!==w){w=w.parent}return w.API_1484_11}
var api=find(window),s=document.getElementById("status"),n=location.search.slice(1);
api.Initialize("");
api.SetValue("cmi.location",n);
api.SetValue("cmi.completion_status","completed");
api.SetValue("cmi.success_status",n==="one"?"passed":"failed");
api.SetValue("cmi.score.scaled",n==="one"?"0.9":"0.2");
api.SetValue("cmi.session_time","PT2M");
var bad=api.SetValue("cmi.score.scaled","7"),code=api.GetLastError();
s.textContent="ready|"+n+"|"+api.Commit("")+"|"+bad+"|"+code;
</script></body></html>`

// Manifest2004 is a SCORM 2004 course of two SCOs whose organization allows flow, so the
// sequencer lets Previous and Next walk them.
const Manifest2004 = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="b2004" version="1" ` + coursetest.NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Browser 2004</title>
    <item identifier="one" identifierref="r1" parameters="?one"><title>First</title></item>
    <item identifier="two" identifierref="r1" parameters="?two"><title>Second</title></item>
    <imsss:sequencing><imsss:controlMode flow="true"/></imsss:sequencing>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`

// ConsoleSignIn opens the console in the browser and signs in through the form.
func ConsoleSignIn(t *testing.T, ctx context.Context, e *Env, key, secret string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(e.URL+"/console/"),
		chromedp.WaitVisible(`#key`),
		chromedp.SendKeys(`#key`, key),
		chromedp.SendKeys(`#secret`, secret),
		chromedp.Submit(`#secret`)); err != nil {
		t.Fatalf("sign in: %v", err)
	}
}

// InFramePage is the status line of the content in the player's frame.
const InFramePage = `document.getElementById("frame").contentDocument.getElementById("status").textContent`
