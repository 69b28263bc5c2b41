package player_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// auHACP is an AICC AU that talks HACP to the aicc_url it was launched with.
const auHACP = `<!DOCTYPE html><html><body><p id="status">loading</p><script>
var q=new URLSearchParams(location.search),sid=q.get("aicc_sid"),u=q.get("aicc_url"),s=document.getElementById("status");
function post(cmd,data){var x=new XMLHttpRequest();x.open("POST",u,false);x.setRequestHeader("Content-Type","application/x-www-form-urlencoded");
x.send("command="+cmd+"&version=4.0&session_id="+encodeURIComponent(sid)+"&AICC_Data="+encodeURIComponent(data||""));return x.responseText}
var g=post("GetParam"),name=/Student_Name=(.*)\r\n/.exec(g)[1];
var p=post("PutParam","[Core]\r\nLesson_Status=passed\r\nScore=77\r\nTime=00:00:10\r\n");
s.textContent="ready|"+name+"|"+p.split("\r\n")[0]+"|"+post("ExitAU").split("\r\n")[0];
</script></body></html>`

// xapiAU is a TinCan activity that sends one statement with the launch parameters it got.
const xapiAU = `<!DOCTYPE html><html><body><p id="status">loading</p><script>
var q=new URLSearchParams(location.search),s=document.getElementById("status");
var x=new XMLHttpRequest();x.open("POST",q.get("endpoint")+"statements",false);
x.setRequestHeader("Authorization",q.get("auth"));x.setRequestHeader("X-Experience-API-Version","1.0.3");x.setRequestHeader("Content-Type","application/json");
x.send(JSON.stringify({actor:JSON.parse(q.get("actor")),verb:{id:"http://adlnet.gov/expapi/verbs/completed"},object:{id:q.get("activity_id")},context:{registration:q.get("registration")}}));
s.textContent="ready|"+x.status;
</script></body></html>`

// cmi5AU follows the cmi5 launch: fetch the credential, read LMS.LaunchData and the learner
// preferences, send "initialized" with the session id of the context template.
const cmi5AU = `<!DOCTYPE html><html><body><p id="status">loading</p><script>
var q=new URLSearchParams(location.search),s=document.getElementById("status");
function req(m,u,h,b){var x=new XMLHttpRequest();x.open(m,u,false);for(var k in h)x.setRequestHeader(k,h[k]);x.send(b||null);return x}
var f=JSON.parse(req("POST",q.get("fetch"),{}).responseText);
var h={"Authorization":"Basic "+f["auth-token"],"X-Experience-API-Version":"1.0.3"};
var st=q.get("endpoint")+"/activities/state?"+new URLSearchParams({activityId:q.get("activityId"),agent:q.get("actor"),registration:q.get("registration"),stateId:"LMS.LaunchData"});
var ld=JSON.parse(req("GET",st,h).responseText);
req("GET",q.get("endpoint")+"/agents/profile?"+new URLSearchParams({agent:q.get("actor"),profileId:"cmi5LearnerPreferences"}),h);
h["Content-Type"]="application/json";
var ctx=ld.contextTemplate;ctx.registration=q.get("registration");ctx.contextActivities.category=[{id:"https://w3id.org/xapi/cmi5/context/categories/cmi5"}];
var p=req("POST",q.get("endpoint")+"/statements",h,JSON.stringify({id:crypto.randomUUID(),timestamp:new Date().toISOString(),actor:JSON.parse(q.get("actor")),verb:{id:"http://adlnet.gov/expapi/verbs/initialized"},object:{id:q.get("activityId")},context:ctx}));
s.textContent="ready|"+ld.launchMode+"|"+p.status+"|"+req("POST",q.get("fetch"),{}).responseText;
</script></body></html>`

func TestPlayerInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.Clock.Freeze() // spans are what the test advances, however busy the machine
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "b12", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest12, "sco/index.html": servertest.Sco12}), "")
		e.ImportOK("acme", "b2004", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest2004, "sco.html": servertest.Sco2004}), "")
		regs := "/engine/api/v1/acme/registrations"
		for id, courseID := range map[string]string{"r12": "b12", "r2004": "b2004"} {
			e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": courseID, "registrationId": id,
				"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create "+id)
		}
		inFrame := `document.getElementById("frame").contentDocument.getElementById("status").textContent`

		// SCORM 1.2, one SCO: launched straight in; its commit reaches the server (LMSCommit
		// answers true), and LMSFinish shows the exit message.
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r12/launchLink?redirectOnExitUrl=message"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, inFrame, "ready|true|Lee, Ann|ab-initio||true", "SCO 1.2 after LMSCommit")
		servertest.WaitJS(t, ctx, `document.getElementById("toc") === null`, "true", "no table of contents for one SCO")
		// The learner stays 25 s (the test clock moves) before finishing: that is the time tracked.
		e.Clock.Advance(25 * time.Second)
		servertest.Click(t, ctx, `document.getElementById("frame").contentDocument.getElementById("finish")`)
		servertest.WaitJS(t, ctx, `document.getElementById("done").hidden`, "false", "exit message after LMSFinish")
		var detail struct {
			ActivityDetails struct {
				Children []struct {
					ID      string
					Runtime struct{ CompletionStatus, SuccessStatus, ScoreRaw, Location, SuspendData, Exit, ScoreScaled string }
				}
			}
		}
		// The exit commit goes by sendBeacon, which the page does not wait for.
		servertest.Eventually(t, 10*time.Second, "the exit commit", func() bool {
			e.Do("GET", regs+"/r12/progress/detail", servertest.Root, nil).JSON(t, &detail)
			return detail.ActivityDetails.Children[0].Runtime.Exit == "Suspend"
		})
		if rt := detail.ActivityDetails.Children[0].Runtime; rt.SuccessStatus != "passed" || rt.ScoreRaw != "92" || rt.Location != "page-3" ||
			rt.SuspendData != "chapter=3" || rt.ScoreScaled != "0.92" {
			t.Errorf("SCORM 1.2 runtime after the browser session: %+v", rt)
		}
		// The course is taken to completion: progress is COMPLETED and PASSED with score and time.
		var p struct {
			RegistrationCompletion, RegistrationSuccess string
			Score                                       *struct{ Scaled float64 }
			TotalSecondsTracked                         float64
		}
		// The progress is written after the run-time data it rolls up (and the exit beacon's
		// measured time after that), in writes of their own: seeing the exit commit in the
		// run-time data does not mean its rollup is stored yet, so the progress is polled too.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			e.Do("GET", regs+"/r12/progress", servertest.Root, nil).JSON(t, &p)
			if p.TotalSecondsTracked >= 25 || time.Now().After(deadline) {
				break
			}
		}
		if p.RegistrationCompletion != "COMPLETED" || p.RegistrationSuccess != "PASSED" || p.Score == nil || p.Score.Scaled != 92 || !servertest.Near(p.TotalSecondsTracked, 25) {
			t.Errorf("SCORM 1.2 progress after the browser session: %+v", p)
		}
		// Relaunch resumes where the learner left.
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r12/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, inFrame, "ready|true|Lee, Ann|resume|chapter=3|true", "SCO 1.2 resumed")

		// SCORM 2004, two SCOs: a table of contents in manifest order under the root (the
		// organization, which a choice may target), Next goes to the second;
		// a bad value is refused by the API with 407.
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r2004/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, `Array.from(document.querySelectorAll("#toc button")).map(function(b){return b.textContent}).join(",")`, "Browser 2004,First,Second", "table of contents")
		servertest.WaitJS(t, ctx, inFrame, "ready|one|true|false|407", "first SCO")
		servertest.Click(t, ctx, `document.getElementById("next")`)
		servertest.WaitJS(t, ctx, inFrame, "ready|two|true|false|407", "second SCO after Next")
		e.Do("GET", regs+"/r2004/progress/detail", servertest.Root, nil).JSON(t, &detail)
		got := []string{}
		for _, c := range detail.ActivityDetails.Children {
			got = append(got, c.ID+":"+c.Runtime.Location+":"+c.Runtime.SuccessStatus+":"+c.Runtime.ScoreScaled)
		}
		if strings.Join(got, ",") != "one:one:passed:0.9,two:two:failed:0.2" {
			t.Errorf("SCORM 2004 runtime after the browser session: %v", got)
		}

		// AICC: the AU gets aicc_sid and aicc_url and reports over HACP.
		aicc := servertest.FixtureFiles(t, "aicc_single")
		aicc["index.html"] = auHACP
		e.ImportOK("acme", "fire", servertest.ZipOf(t, aicc), "")
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "fire", "registrationId": "raicc",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create raicc")
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/raicc/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, inFrame, "ready|Lee, Ann|error=0|error=0", "AICC AU")
		e.Do("GET", regs+"/raicc/progress/detail", servertest.Root, nil).JSON(t, &detail)
		// The AU says passed with 77; the LMS's mastery decision (score 77 under the course's
		// mastery score) is what the run-time view shows, as in the FULL post-back.
		if rt := detail.ActivityDetails.Children[0].Runtime; rt.SuccessStatus != "failed" || rt.ScoreRaw != "77" {
			t.Errorf("AICC runtime after the browser session: %+v", rt)
		}

		// xAPI (TinCan) and cmi5: the content reports to the built-in record store.
		tc := servertest.FixtureFiles(t, "xapi_single")
		tc["index.html"] = xapiAU
		c5 := servertest.FixtureFiles(t, "cmi5_minimal")
		c5["index.html"] = cmi5AU
		e.ImportOK("acme", "tc", servertest.ZipOf(t, tc), "")
		e.ImportOK("acme", "c5", servertest.ZipOf(t, c5), "")
		for id, courseID := range map[string]string{"rtc": "tc", "rc5": "c5"} {
			e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": courseID, "registrationId": id,
				"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create "+id)
		}
		xreg := func(id string) string {
			var b struct{ ID string }
			e.Do("GET", regs+"/"+id+"/xapiRegistrationId", servertest.Root, nil).JSON(t, &b)
			return b.ID
		}
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/rtc/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, inFrame, "ready|200", "TinCan activity")
		if r := e.Do("GET", "/lrs/TCAPI/acme/statements?registration="+xreg("rtc"), servertest.Root, nil, "X-Experience-API-Version", "1.0.3"); !strings.Contains(string(r.Body), "verbs/completed") {
			t.Errorf("TinCan statement: %d %s", r.Status, r.Body)
		}
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/rc5/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, inFrame, `ready|Normal|200|{"error-code":"1","error-text":"this fetch URL was already used"}`, "cmi5 AU")
		if r := e.Do("GET", "/lrs/TCAPI/acme/statements?registration="+xreg("rc5"), servertest.Root, nil, "X-Experience-API-Version", "1.0.3"); !strings.Contains(string(r.Body), "verbs/initialized") ||
			!strings.Contains(string(r.Body), "cmi5/context/extensions/sessionid") {
			t.Errorf("cmi5 statement: %d %s", r.Status, r.Body)
		}

		// Preview runs the same content without tracking.
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath("/engine/api/v1/acme/courses/b12/preview"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, inFrame, "ready|true|Preview|ab-initio||true", "preview SCO")
	})
}
