package player_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/coursetest"
)

// resumeDialect is what a five-SCO course needs of one SCORM version: its manifest header, how
// its SCO finds the API and the names of the data model elements it uses.
type resumeDialect struct {
	name, manifestNS, schema, scormType string
	api, initialize, get, set, commit   string
	entry, location, status, exit       string
	completed, incomplete               string
}

var resumeDialects = []resumeDialect{
	{name: "1.2", manifestNS: `xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"`,
		schema: "1.2", scormType: `adlcp:scormtype="sco"`, api: "API", initialize: "LMSInitialize", get: "LMSGetValue", set: "LMSSetValue",
		commit: "LMSCommit", entry: "cmi.core.entry", location: "cmi.core.lesson_location", status: "cmi.core.lesson_status",
		exit: "cmi.core.exit", completed: "completed", incomplete: "incomplete"},
	{name: "2004", manifestNS: coursetest.NS2004, schema: "2004 4th Edition", scormType: `adlcp:scormType="sco"`, api: "API_1484_11",
		initialize: "Initialize", get: "GetValue", set: "SetValue", commit: "Commit", entry: "cmi.entry", location: "cmi.location",
		status: "cmi.completion_status", exit: "cmi.exit", completed: "completed", incomplete: "incomplete"},
}

var resumeSCOs = []string{"one", "two", "three", "four", "five"}

// manifest is a course of the five SCOs, each the same page named by its query.
func (d resumeDialect) manifest() string {
	var items strings.Builder
	for _, n := range resumeSCOs {
		fmt.Fprintf(&items, `<item identifier="%s" identifierref="r1" parameters="?%s"><title>SCO %s</title></item>`, n, n, n)
	}
	if d.name == "2004" {
		// SCORM 2004 is sequenced: Next needs the organization to allow flow.
		items.WriteString(`<imsss:sequencing><imsss:controlMode flow="true"/></imsss:sequencing>`)
	}
	return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="five" version="1" ` + d.manifestNS + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>` + d.schema + `</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Five SCOs</title>` + items.String() + `</organization></organizations>
  <resources><resource identifier="r1" type="webcontent" ` + d.scormType + ` href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`
}

// sco shows what it was launched with (entry, location, suspend data, status) and offers
// work(kind) to the test: "complete" finishes it, "half" leaves it suspended half way.
func (d resumeDialect) sco() string {
	return strings.NewReplacer("API", d.api, "INIT", d.initialize, "GET", d.get, "SET", d.set, "COMMIT", d.commit,
		"ENTRY", d.entry, "LOCATION", d.location, "STATUS", d.status, "EXIT", d.exit, "COMPLETED", d.completed, "INCOMPLETE", d.incomplete).Replace(
		`<!DOCTYPE html><html><body><p id="status">loading</p><script>
function find(w){while(!w.API&&w.parent&&w.parent!==w){w=w.parent}return w.API}
var api=find(window),s=document.getElementById("status"),n=location.search.slice(1);
api.INIT("");
s.textContent="ready|"+n+"|"+api.GET("ENTRY")+"|"+api.GET("LOCATION")+"|"+api.GET("cmi.suspend_data")+"|"+api.GET("STATUS");
window.work=function(kind){
 if(kind==="complete"){api.SET("LOCATION","end-"+n);api.SET("STATUS","COMPLETED");api.SET("EXIT","")}
 else{api.SET("LOCATION","half-"+n);api.SET("cmi.suspend_data","state of "+n);api.SET("STATUS","INCOMPLETE");api.SET("EXIT","suspend")}
 s.textContent="worked|"+n+"|"+api.COMMIT("");
};
</script></body></html>`)
}

// scoState is one SCO's run-time data as progress/detail reports it.
type scoState struct {
	ID      string
	Runtime struct{ CompletionStatus, Location, SuspendData, Exit string }
}

func scoStates(e *servertest.Env, t *testing.T, reg string) []scoState {
	t.Helper()
	var detail struct{ ActivityDetails struct{ Children []scoState } }
	e.Do("GET", reg+"/progress/detail", servertest.Root, nil).JSON(t, &detail)
	return detail.ActivityDetails.Children
}

// TestFiveSCOSuspendResumeInBrowser (issue 23, item 3): a learner completes two SCOs of five,
// leaves the third half way (suspended) and exits; a relaunch in a fresh browser profile
// (nothing kept in the browser) opens the third SCO with entry resume, its location and suspend
// data, and no SCO's state changed on the way: the two completed stay completed, the last two
// untouched.
func TestFiveSCOSuspendResumeInBrowser(t *testing.T) {
	for _, d := range resumeDialects {
		t.Run(d.name, func(t *testing.T) {
			servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
				e.CreateTenant("acme", true)
				e.ImportOK("acme", "five", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": d.manifest(), "sco.html": d.sco()}), "")
				regs := "/engine/api/v1/acme/registrations"
				e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "five", "registrationId": "r1",
					"learner": map[string]any{"id": "ann"}}), 204, "create registration")
				ctx := servertest.Browser(t)
				if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink"))); err != nil {
					t.Fatal(err)
				}
				notAttempted := "not attempted"
				if d.name == "2004" {
					notAttempted = "unknown"
				}
				for i, kind := range []string{"complete", "complete", "half"} {
					n := resumeSCOs[i]
					if i > 0 {
						servertest.Click(t, ctx, `document.getElementById("next")`)
					}
					servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|"+n+"|ab-initio|||"+notAttempted, "first launch of SCO "+n)
					if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`document.getElementById("frame").contentWindow.work("`+kind+`")`)); err != nil {
						t.Fatal(err)
					}
					servertest.WaitJS(t, ctx, servertest.InFramePage, "worked|"+n+"|true", "SCO "+n+" committed")
				}
				servertest.Click(t, ctx, `document.getElementById("exit")`)
				servertest.WaitJS(t, ctx, `document.getElementById("done").hidden`, "false", "the exit message")
				// The exit's commit (the third SCO's finish) goes by sendBeacon.
				var before []scoState
				servertest.Eventually(t, 10*time.Second, "the third SCO suspended", func() bool {
					before = scoStates(e, t, regs+"/r1")
					return len(before) == 5 && before[2].Runtime.Exit == "Suspend"
				})
				want := []struct{ completion, location, suspend string }{
					{"completed", "end-one", ""}, {"completed", "end-two", ""}, {"incomplete", "half-three", "state of three"}, {"unknown", "", ""}, {"unknown", "", ""}}
				for i, w := range want {
					rt := before[i].Runtime
					if strings.ToLower(rt.CompletionStatus) != w.completion || rt.Location != w.location || rt.SuspendData != w.suspend {
						t.Errorf("after the first session, SCO %s: %+v, want %+v", before[i].ID, rt, w)
					}
				}

				// A fresh profile: no cookie, storage or cache of the first session.
				ctx2 := servertest.Browser(t)
				if _, err := chromedp.Run(ctx2, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink"))); err != nil {
					t.Fatal(err)
				}
				servertest.WaitJS(t, ctx2, servertest.InFramePage, "ready|three|resume|half-three|state of three|"+d.incomplete, "the relaunch resumes SCO three")
				servertest.WaitJS(t, ctx2, `document.querySelector("#toc button.current").textContent`, "SCO three", "current entry of the table of contents")
				after := scoStates(e, t, regs+"/r1")
				for i := range before {
					if i != 2 && after[i] != before[i] {
						t.Errorf("the relaunch touched SCO %s: %+v, was %+v", before[i].ID, after[i].Runtime, before[i].Runtime)
					}
				}
			})
		})
	}
}
