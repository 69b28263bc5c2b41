package player_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/settings"
)

// TestRealCorpusInBrowser takes courses published by several authoring tools (Articulate
// Storyline and Rise, Adobe Captivate, Lectora) in SCORM 1.2, SCORM 2004, cmi5 and xAPI
// through the player in Chromium, generically, as a learner would: start the course and go a
// few steps by its own controls, then leave. What a customer relies on is that the
// registration holds exactly what the content sent, whatever tool published it; the Golf
// and AICC cases of TestRealPackagesInBrowser check that in depth for a few packages, this
// test in breadth (docs/testing.md, "Real packages").
func TestRealCorpusInBrowser(t *testing.T) { forEachRealMode(t, takeRealCorpus) }

// corpusFrame is the document of the content in the player's frame.
const corpusFrame = `document.getElementById("frame").contentDocument`

// visible is a JavaScript function that reports whether an element is shown: published
// players keep hidden copies of their controls (Storyline's start button stays in the DOM
// after the course started). An object that is no element (a course's own navigation
// function) counts as shown.
const visible = `function(el){return !!el&&(!el.getClientRects||el.getClientRects().length>0&&el.ownerDocument.defaultView.getComputedStyle(el).visibility!=="hidden")}`

// corpusCase is one package of the corpus and how a learner gets it going.
type corpusCase struct {
	file, course string
	// learn does what the learner does in the course once it has started talking to the LMS.
	learn func(t *testing.T, ctx context.Context, lms func() string)
	// settings are what an administrator sets for this content (at tenant level for the
	// case; back to their defaults after it).
	settings map[string]string
}

// takeRealCorpus is TestRealCorpusInBrowser in one mode.
func takeRealCorpus(t *testing.T, e *servertest.Env) {
	e.CreateTenant("acme", true)
	e.Expect(e.Do("PUT", "/engine/api/v1/acme/configuration/ApiPostbackDataModelVersion", servertest.Root, map[string]any{"value": "v2"}), 204, "data model v2")
	rc := servertest.NewPostReceiver(t)
	regs := "/engine/api/v1/acme/registrations"

	// SCORM: Storyline 360 3.39 (SCORM 1.2, nj900/portfolio-scorm) and 3.17 (SCORM 2004 3rd
	// edition, svincent240/scorm-tester's SL360_LMS_SCORM_2004), Adobe Captivate (SCORM 2004
	// 3rd edition, Astro1218/SCORM). Storyline: its start button, then its Next twice (a
	// third Next in the 3.39 course got no answer in 30 s); Captivate: its play button, then
	// three slides by its own interface.
	for _, c := range []corpusCase{
		{"storyline-scorm12.zip", "s12", storylineSteps(corpusFrame, 2), nil},
		{"storyline-scorm2004.zip", "s04", storylineSteps(corpusFrame, 2), nil},
		{"captivate-scorm2004.zip", "cp04", captivateSteps(3), nil},
	} {
		t.Run(strings.TrimSuffix(c.file, ".zip"), func(t *testing.T) {
			began := time.Now()
			takeCorpusSCORM(t, e, rc, regs, c)
			t.Logf("%s took %.1f s", c.file, time.Since(began).Seconds())
		})
	}

	// cmi5 and xAPI: Storyline 360 3.72 (cmi5, zahraomrani13/golrang), Articulate Rise (cmi5,
	// Alagnew/TEST3), Lectora Inspire 16 (xAPI, godwin-codeprism/tincan). The cmi5 courses
	// open in the learner's window (launchMethod OwnWindow), so the learner leaves by
	// closing it rather than by the player's Exit. The Storyline course has no Next (its
	// own tabs navigate) and reports completed and passed as it starts: its start button is
	// all a learner needs. Rise: its Start, which opens the first lesson. Lectora: its first
	// page (firstPage).
	for _, c := range []corpusCase{
		{"storyline-cmi5.zip", "sc5", storylineSteps("document", 0), nil},
		{"rise-cmi5.zip", "rc5", riseSteps, nil},
		// Lectora Inspire's runtime reads only the pre-1.0 TinCan form of an account actor.
		{"lectora-xapi.zip", "lx", firstPage, map[string]string{"xAPILaunchActorFormat": "tincan095"}},
	} {
		t.Run(strings.TrimSuffix(c.file, ".zip"), func(t *testing.T) {
			began := time.Now()
			for id, v := range c.settings {
				def, _ := settings.Default().Lookup(id)
				e.SetSetting("/engine/api/v1/acme", id, v)
				t.Cleanup(func() { e.SetSetting("/engine/api/v1/acme", id, def.Default) })
			}
			takeCorpusXAPI(t, e, rc, regs, c)
			t.Logf("%s took %.1f s", c.file, time.Since(began).Seconds())
		})
	}
}

// acceptDialogs accepts every JavaScript dialog the content opens (a dialog stops every
// evaluation in the page until answered) and keeps their messages, which the test logs: a
// dialog is how published content reports it cannot reach its LMS. They are logged when the
// case ends.
func acceptDialogs(t *testing.T, ctx context.Context) {
	var mu sync.Mutex
	var seen []string
	go func() {
		for ev, err := range chromedp.Events(ctx, page.JavascriptDialogOpening) {
			if err != nil {
				return
			}
			mu.Lock()
			seen = append(seen, string(ev.Type)+": "+ev.Message)
			mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	// A dialog opened before the listener began is answered here (an error when there is none).
	_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if len(seen) > 0 {
			t.Logf("the content's dialogs: %q", seen)
		}
	})
}

// stepUntil clicks the control expr yields (null: nothing to click yet) until the LMS has
// heard something new from the content (lms changes) or the deadline passes: each step of a
// learner through a tracked course is followed by the content telling the LMS (a bookmark,
// a statement), which is the test's sign the step was taken.
func stepUntil(t *testing.T, ctx context.Context, expr string, lms func() string, what string) {
	t.Helper()
	before := lms()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function(){var el=(`+expr+`);if(!(`+visible+`)(el))return false;el.click();return true})()`))
		if err != nil && !servertest.Navigating(err) {
			t.Fatalf("%s: %v", what, err)
		}
		for wait := time.Now().Add(3 * time.Second); time.Now().Before(wait); time.Sleep(100 * time.Millisecond) {
			if lms() != before {
				return
			}
		}
	}
	t.Fatalf("%s: the content told the LMS nothing new in 30 s (%.300s)", what, before)
}

// storylineSteps is a learner in a Storyline 360 course whose document is doc: the start
// button when the player shows one (it does when autoplay needs a gesture), then the
// player's Next n times. Storyline 3.17's Next has no id, later ones are #next.
func storylineSteps(doc string, n int) func(t *testing.T, ctx context.Context, lms func() string) {
	return func(t *testing.T, ctx context.Context, lms func() string) {
		next := `(` + doc + `.querySelector("#next")||` + doc + `.querySelector(".slide-control-button-next"))`
		servertest.WaitJS(t, ctx, `!!`+next, "true", "Storyline's Next")
		start := doc + `.querySelector("#mobile-start-button")`
		if shown, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`(`+visible+`)(`+start+`)`)); shown {
			servertest.Click(t, ctx, start)
		}
		for i := 1; i <= n; i++ {
			stepUntil(t, ctx, next, lms, fmt.Sprintf("Storyline's Next, step %d", i))
		}
	}
}

// captivateSteps is a learner in an Adobe Captivate HTML5 course: its play button (shown
// when autoplay needs a gesture; the course starts and bookmarks its first slide), then n
// slides forward by the course's own interface, cpAPIInterface.next, what its playbar's
// Next calls.
func captivateSteps(n int) func(t *testing.T, ctx context.Context, lms func() string) {
	return func(t *testing.T, ctx context.Context, lms func() string) {
		win := `document.getElementById("frame").contentWindow`
		play := corpusFrame + `.getElementById("playImage")`
		servertest.WaitJS(t, ctx, `!!`+win+`.cp&&!!`+play, "true", "Captivate's play button")
		before := lms()
		servertest.Click(t, ctx, play)
		servertest.Eventually(t, 30*time.Second, "Captivate's first slide bookmarked", func() bool { return lms() != before })
		next := `(` + win + `.cpAPIInterface&&{click:function(){` + win + `.cpAPIInterface.next()}})`
		for i := 1; i <= n; i++ {
			stepUntil(t, ctx, next, lms, fmt.Sprintf("Captivate's next slide, step %d", i))
		}
	}
}

// riseSteps is a learner in an Articulate Rise course: its Start, which opens the first
// lesson (the course keeps its place in the URL's fragment).
func riseSteps(t *testing.T, ctx context.Context, lms func() string) {
	rise := `document.querySelector("iframe").contentDocument`
	start := rise + `.querySelector("a.overview__button")`
	servertest.WaitJS(t, ctx, `(`+visible+`)(`+start+`)`, "true", "Rise's Start")
	servertest.Click(t, ctx, start)
	servertest.WaitJS(t, ctx, `document.querySelector("iframe").contentWindow.location.hash.indexOf("#/lessons/")`, "0", "Rise's first lesson")
}

// firstPage is a learner who looks at the course's first page and leaves. Lectora's page
// buttons did not answer a scripted click (its Next is an image inside an SVG link), so the
// Lectora case stops there: its launch, its credential, its actor and its statements are
// what it checks.
func firstPage(*testing.T, context.Context, func() string) {}

// scormRead is what the content's runtime (scorm-again, in the player's page) holds of the
// values a report shows, in the 2004 vocabulary (course/runtime's Status).
type scormRead struct {
	Completion, Success, ScoreRaw, Location string
}

// takeCorpusSCORM takes the SCORM course of c: the learner's steps, then the player's Exit;
// the SCO's runtime values as the content left them in the API must be what progress/detail
// reports, and the registration's completion and success must follow them.
func takeCorpusSCORM(t *testing.T, e *servertest.Env, rc *servertest.PostReceiver, regs string, c corpusCase) {
	ctx := launchReal(t, e, rc, regs, c.course, c.file)
	acceptDialogs(t, ctx)
	// The content's data as scorm-again holds it, split as course/runtime's Status does.
	read := `(function(){if(window.API_1484_11&&API_1484_11.isInitialized()){var m=API_1484_11.cmi;
return JSON.stringify({Completion:m.completion_status||"unknown",Success:m.success_status||"unknown",ScoreRaw:m.score.raw,Location:m.location,s:m.suspend_data})}
if(window.API&&API.isInitialized()){var m=API.cmi.core,st={passed:["completed","passed"],failed:["completed","failed"],completed:["completed","unknown"],incomplete:["incomplete","unknown"],browsed:["incomplete","unknown"]}[m.lesson_status]||[m.lesson_status,"unknown"];
return JSON.stringify({Completion:st[0],Success:st[1],ScoreRaw:m.score.raw,Location:m.lesson_location,s:API.cmi.suspend_data})}return ""})()`
	lms := func() string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](read))
		if err != nil && !servertest.Navigating(err) {
			t.Fatal(err)
		}
		return s
	}
	servertest.WaitJS(t, ctx, read+`!==""`, "true", "the content's LMSInitialize/Initialize")
	c.learn(t, ctx, lms)
	var sent scormRead
	raw := lms()
	if err := json.Unmarshal([]byte(raw), &sent); err != nil {
		t.Fatalf("the content's runtime values %q: %v", raw, err)
	}
	servertest.Click(t, ctx, `document.getElementById("exit")`)
	servertest.WaitJS(t, ctx, `document.getElementById("done").hidden`, "false", "the player's exit message")
	want := map[string]string{"completed": "COMPLETED", "incomplete": "INCOMPLETE"}[sent.Completion]
	if want == "" {
		want = "UNKNOWN"
	}
	p := pollProgress(e, t, regs+"/r-"+c.course, func(p progressRead) bool { return p.RegistrationCompletion == want })
	var d struct {
		ActivityDetails struct {
			Children []struct {
				Runtime struct{ CompletionStatus, SuccessStatus, ScoreRaw, Location string }
			}
		}
	}
	e.Do("GET", regs+"/r-"+c.course+"/progress/detail", servertest.Root, nil).JSON(t, &d)
	if len(d.ActivityDetails.Children) != 1 {
		t.Fatalf("progress/detail activities: %+v", d.ActivityDetails)
	}
	rt := d.ActivityDetails.Children[0].Runtime
	if got := (scormRead{rt.CompletionStatus, rt.SuccessStatus, rt.ScoreRaw, rt.Location}); got != sent {
		t.Errorf("the content sent %+v; progress/detail's runtime holds %+v", sent, got)
	}
	if p.RegistrationCompletion != want || p.RegistrationSuccess != strings.ToUpper(sent.Success) {
		t.Errorf("registration %+v after the content sent %+v", p, sent)
	}
	t.Logf("the content sent %+v; registration %+v", sent, p)
	agreeReport(t, e, rc, regs, c.course)
}

// corpusStatement is what the test reads of a statement in the LRS: the registration's
// progress follows the verbs.
type corpusStatement struct {
	Verb struct{ ID string }
}

// takeCorpusXAPI takes the xAPI or cmi5 course of c: the learner's steps, then leaving (the
// player's Exit, or closing the window when the course has it); the registration's progress
// must follow the statements the content sent to the LRS.
func takeCorpusXAPI(t *testing.T, e *servertest.Env, rc *servertest.PostReceiver, regs string, c corpusCase) {
	ctx := launchReal(t, e, rc, regs, c.course, c.file)
	acceptDialogs(t, ctx)
	var x struct{ ID string }
	e.Do("GET", regs+"/r-"+c.course+"/xapiRegistrationId", servertest.Root, nil).JSON(t, &x)
	statements := func() []corpusStatement {
		var res struct{ Statements []corpusStatement }
		e.Do("GET", servertest.LRS+"/acme/statements?limit=500&registration="+x.ID, servertest.Root, nil, servertest.V103...).JSON(t, &res)
		return res.Statements
	}
	lms := func() string { return fmt.Sprint(len(statements())) }
	verbs := func() map[string]bool {
		v := map[string]bool{}
		for _, s := range statements() {
			v[s.Verb.ID[strings.LastIndex(s.Verb.ID, "/")+1:]] = true
		}
		return v
	}
	servertest.Eventually(t, 30*time.Second, "the content's first statement (initialized, attempted or experienced)", func() bool {
		v := verbs()
		return v["initialized"] || v["attempted"] || v["experienced"]
	})
	c.learn(t, ctx, lms)
	framed, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.getElementById("exit")`))
	if err != nil {
		t.Fatal(err)
	}
	if framed {
		servertest.Click(t, ctx, `document.getElementById("exit")`)
		servertest.WaitJS(t, ctx, `document.getElementById("done").hidden`, "false", "the player's exit message")
	} else if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`location.href="about:blank",true`)); err != nil && !servertest.Navigating(err) {
		t.Fatal(err)
	}
	servertest.WaitJS(t, ctx, `document.readyState`, "complete", "leaving the course")
	// The content's last statements are sent as it unloads: read them once it has said it
	// terminated, or after ten seconds for content that never says so.
	v := verbs()
	for deadline := time.Now().Add(10 * time.Second); !v["terminated"] && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		v = verbs()
	}
	completion, success := "INCOMPLETE", "UNKNOWN"
	if v["completed"] || v["passed"] {
		completion = "COMPLETED"
	}
	if v["passed"] {
		success = "PASSED"
	} else if v["failed"] {
		success = "FAILED"
	}
	p := pollProgress(e, t, regs+"/r-"+c.course, func(p progressRead) bool {
		return p.RegistrationCompletion == completion && p.RegistrationSuccess == success
	})
	if p.RegistrationCompletion != completion || p.RegistrationSuccess != success {
		t.Errorf("registration %+v after the LRS received %v", p, v)
	}
	t.Logf("the LRS received %v; registration %+v", v, p)
	agreeReport(t, e, rc, regs, c.course)
}
