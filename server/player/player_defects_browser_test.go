package player_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// Issue 23's defects, driven in Chromium with packages built here (the third-party packages
// they were found with are not redistributable; docs/testing.md).

// golfTincan is the tincan.xml of a Tin Can Golf-like package: the launchable course
// activity, and an assessment and a question with no launch of their own.
const golfTincan = `<?xml version="1.0" encoding="utf-8" ?>
<tincan xmlns="http://projecttincan.com/tincan.xsd">
  <activities>
    <activity id="http://id.tincanapi.com/activity/tincan-prototypes/golf-example" type="http://adlnet.gov/expapi/activities/course">
      <name>Tin Can Golf Example</name><description lang="en-US">An example of a simple Tin Can course</description>
      <launch lang="en-us">index.html</launch>
    </activity>
    <activity id="http://id.tincanapi.com/activity/tincan-prototypes/golf-example/GolfAssessment" type="http://adlnet.gov/expapi/activities/assessment">
      <name>Golf Assessment</name><description lang="en-US">An assessment on golf</description>
    </activity>
    <activity id="http://id.tincanapi.com/activity/tincan-prototypes/golf-example/GolfAssessment/interactions.handicap_1" type="http://adlnet.gov/expapi/activities/cmi.interaction">
      <name lang="en-US">Handicap 1</name><interactionType>fill-in</interactionType>
    </activity>
  </activities>
</tincan>`

// golfAU does what Tin Can Golf's assessment does: attempted and experienced statements,
// then passed, with result.completion true, about the course activity; never completed.
const golfAU = `<!DOCTYPE html><html><body><p id="status">loading</p><script>
var q=new URLSearchParams(location.search),s=document.getElementById("status"),course=q.get("activity_id");
function send(verb,object,result){var x=new XMLHttpRequest();x.open("POST",q.get("endpoint")+"statements",false);
x.setRequestHeader("Authorization",q.get("auth"));x.setRequestHeader("X-Experience-API-Version","1.0.1");x.setRequestHeader("Content-Type","application/json");
var st={actor:JSON.parse(q.get("actor")),verb:{id:"http://adlnet.gov/expapi/verbs/"+verb,display:{"en-US":verb}},object:{id:object,objectType:"Activity"},context:{registration:q.get("registration"),contextActivities:{grouping:[{id:course}]}}};
if(result)st.result=result;x.send(JSON.stringify(st));return x.status}
var a=send("attempted",course),b=send("experienced",course+"/GolfBasics.html");
var c=send("passed",course,{score:{scaled:0.8,raw:8,min:0,max:10},success:true,completion:true,duration:"PT1M2S"});
s.textContent="ready|"+a+"|"+b+"|"+c;
</script></body></html>`

// Defect 3: a Tin Can course whose content sends passed with result.completion true on the
// course activity is completed.
func TestTinCanGolfCompletesInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "golf", servertest.ZipOf(t, map[string]string{"tincan.xml": golfTincan, "index.html": golfAU}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "golf", "registrationId": "rg",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/rg/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|200|200|200", "Golf statements")
		p := pollProgress(e, t, regs+"/rg", func(p progressRead) bool { return p.RegistrationCompletion == "COMPLETED" })
		if p.RegistrationCompletion != "COMPLETED" || p.RegistrationSuccess != "PASSED" || p.RegistrationCompletionAmount != 1 {
			t.Errorf("Tin Can Golf after passed with completion: %+v", p)
		}
	})
}

// aiccRunning is an AICC AU that reports its session's running time in every PutParam, as
// real AUs do, then exits.
const aiccRunning = `<!DOCTYPE html><html><body><p id="status">loading</p><script>
var q=new URLSearchParams(location.search),sid=q.get("aicc_sid"),u=q.get("aicc_url"),s=document.getElementById("status");
function post(cmd,data){var x=new XMLHttpRequest();x.open("POST",u,false);x.setRequestHeader("Content-Type","application/x-www-form-urlencoded");
x.send("command="+cmd+"&version=4.0&session_id="+encodeURIComponent(sid)+"&AICC_Data="+encodeURIComponent(data||""));return x.responseText}
post("GetParam");
["00:00:20","00:00:40","00:01:00","00:01:20"].forEach(function(t){post("PutParam","[Core]\r\nLesson_Status=i\r\nTime="+t+"\r\n")});
var g=post("GetParam");post("ExitAU");
s.textContent="ready|"+/Time=([^\r]*)/.exec(g)[1];
</script></body></html>`

// Defect 2 in the browser: four PutParams of one session count their latest time once.
func TestAICCRunningTimeInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		files := servertest.FixtureFiles(t, "aicc_single")
		files["index.html"] = aiccRunning
		e.ImportOK("acme", "fire", servertest.ZipOf(t, files), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "fire", "registrationId": "ra",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
		for _, want := range []string{"ready|0000:01:20", "ready|0000:02:40"} {
			if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/ra/launchLink"))); err != nil {
				t.Fatal(err)
			}
			servertest.WaitJS(t, ctx, servertest.InFramePage, want, "AICC AU's total time")
		}
	})
}

type progressRead struct {
	RegistrationCompletion       string
	RegistrationSuccess          string
	RegistrationCompletionAmount float64
	TotalSecondsTracked          float64
}

// pollProgress reads reg's progress until ok says so (the rollup of a commit or statement
// batch is written after it answers) or five seconds have passed; it returns the last read.
func pollProgress(e *servertest.Env, t *testing.T, reg string, ok func(progressRead) bool) progressRead {
	t.Helper()
	var p progressRead
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		e.Do("GET", reg+"/progress", servertest.Root, nil).JSON(t, &p)
		if ok(p) {
			break
		}
	}
	return p
}

// scoInitFinish is a SCORM 1.2 SCO that only initialises and finishes, as many simple
// third-party SCOs do.
const scoInitFinish = `<!DOCTYPE html><html><body><p id="status">loading</p><script>
function find(w){while(!w.API&&w.parent&&w.parent!==w){w=w.parent}return w.API}
var api=find(window),s=document.getElementById("status");
var i=api.LMSInitialize("");
s.textContent="ready|"+i+"|"+api.LMSGetValue("cmi.core.lesson_status")+"|"+api.LMSFinish("");
</script></body></html>`

// Defect 4 in the browser: LMSFinish without a lesson_status completes the SCO.
func TestSCORM12InitFinishCompletesInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "two", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestTwo12, "sco.html": scoInitFinish}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "two", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|true|not attempted|true", "first SCO")
		p := pollProgress(e, t, regs+"/r1", func(p progressRead) bool { return p.RegistrationCompletionAmount == 0.5 })
		if p.RegistrationCompletion != "INCOMPLETE" || p.RegistrationCompletionAmount != 0.5 {
			t.Errorf("after the first SCO finished: %+v", p)
		}
		servertest.Click(t, ctx, `document.getElementById("next")`)
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|true|not attempted|true", "second SCO")
		p = pollProgress(e, t, regs+"/r1", func(p progressRead) bool { return p.RegistrationCompletion == "COMPLETED" })
		if p.RegistrationCompletion != "COMPLETED" || p.RegistrationCompletionAmount != 1 {
			t.Errorf("after both SCOs finished: %+v", p)
		}
	})
}

// scoResume is a SCORM 2004 SCO named by its query: one completes and exits normally, two
// suspends with suspend data; each shows the entry and suspend data it was launched with.
const scoResume = `<!DOCTYPE html><html><body><p id="status">loading</p><script>
function find(w){while(!w.API_1484_11&&w.parent&&w.parent!==w){w=w.parent}return w.API_1484_11}
var api=find(window),s=document.getElementById("status"),n=location.search.slice(1);
api.Initialize("");
var entry=api.GetValue("cmi.entry"),sd=api.GetValue("cmi.suspend_data");
if(n==="one"){api.SetValue("cmi.completion_status","completed");api.SetValue("cmi.exit","normal")}
else{api.SetValue("cmi.completion_status","incomplete");api.SetValue("cmi.suspend_data","page=3");api.SetValue("cmi.exit","suspend")}
api.Commit("");api.Terminate("");
s.textContent="ready|"+n+"|"+entry+"|"+sd;
</script></body></html>`

// Defect 6 in the browser: a relaunch goes on at the suspended SCO, with entry resume and its
// suspend data, and the completed SCO keeps its completion.
func TestMultiSCORelaunchInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "b2004", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest2004, "sco.html": scoResume}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "b2004", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|one|ab-initio|", "first SCO")
		servertest.Click(t, ctx, `document.getElementById("next")`)
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|two|ab-initio|", "second SCO")
		p := pollProgress(e, t, regs+"/r1", func(p progressRead) bool { return p.RegistrationCompletionAmount == 0.5 })
		if p.RegistrationCompletionAmount != 0.5 {
			t.Fatalf("after the first session: %+v", p)
		}
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|two|resume|page=3", "relaunch at the suspended SCO")
		servertest.WaitJS(t, ctx, `document.querySelector("#toc button.current").textContent`, "Second", "current entry of the table of contents")
		if p := pollProgress(e, t, regs+"/r1", func(progressRead) bool { return true }); p.RegistrationCompletionAmount != 0.5 {
			t.Errorf("after the relaunch: %+v", p)
		}
	})
}

// Defect 5 in the browser: locked SCOs are disabled in the table of contents and skipped by
// Next, and unlock as their prerequisites are met (each SCO only initialises and finishes,
// which completes it).
func TestSCORM12PrerequisitesInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		sco := `<!DOCTYPE html><html><body><p id="status">loading</p><script>
function find(w){while(!w.API&&w.parent&&w.parent!==w){w=w.parent}return w.API}
var api=find(window),s=document.getElementById("status");api.LMSInitialize("");
s.textContent="ready|"+location.search.slice(1)+"|"+api.LMSFinish("");
</script></body></html>`
		e.ImportOK("acme", "pre", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestPrereq12, "sco.html": sco}), "")
		regs := "/engine/api/v1/acme/registrations"
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "pre", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		// startSco names a locked SCO: the player starts at the first one not locked.
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r1/launchLink?startSco=s3"))); err != nil {
			t.Fatal(err)
		}
		disabled := `Array.from(document.querySelectorAll("#toc button")).map(function(b){return b.textContent+":"+b.disabled}).join(",")`
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|s1|true", "first SCO")
		// s1 finished (completed): s3 unlocks, s2 still needs s3.
		servertest.WaitJS(t, ctx, disabled, "One:false,Two:true,Three:false", "table of contents after s1")
		servertest.Click(t, ctx, `document.getElementById("next")`)
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|s3|true", "Next skips the locked s2")
		servertest.WaitJS(t, ctx, disabled, "One:false,Two:false,Three:false", "table of contents after s3")
		servertest.Click(t, ctx, `document.getElementById("prev")`)
		servertest.WaitJS(t, ctx, servertest.InFramePage, "ready|s2|true", "Previous goes to the unlocked s2")
		p := pollProgress(e, t, regs+"/r1", func(p progressRead) bool { return p.RegistrationCompletion == "COMPLETED" })
		if p.RegistrationCompletion != "COMPLETED" {
			t.Errorf("after the three SCOs: %+v", p)
		}
	})
}
