package player_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/runtime"
)

// realPackagesEnv names the folder of the real-package corpus: third-party courses that the
// repository may not hold (docs/testing.md, "Real packages"). The test runs only when it is
// set; CI has no such folder, so this is a release check, like the search evaluation's
// collections.
const realPackagesEnv = "LECTERN_TEST_REAL_PACKAGES"

// realPackage reads name from the corpus, or skips the case when the corpus lacks it (each
// case names the package it needs; the corpus may hold only some).
func realPackage(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(os.Getenv(realPackagesEnv), name))
	if os.IsNotExist(err) {
		t.Skipf("%s is not in the real-package corpus", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golfFrame is the document of the SCO in the player's frame.
const golfFrame = `document.getElementById("frame").contentWindow`

// TestRealPackagesInBrowser takes real third-party courses (Rustici Software's "Golf
// Explained" SCORM and Tin Can examples, AICC courses published by Articulate Storyline and
// iSpring) through the player in Chromium as a learner would, across the content origin
// split: the course's pages, its own navigation and assessment, the player's Next and Exit.
// Each registration must hold what the course sent, and its last FULL post-back must say what
// progress/detail says (issue 21's agreement, on real content).
func TestRealPackagesInBrowser(t *testing.T) { forEachRealMode(t, takeRealPackages) }

// forEachRealMode runs f in each mode on a server that takes real courses, or skips without
// the corpus.
func forEachRealMode(t *testing.T, f func(t *testing.T, e *servertest.Env)) {
	if os.Getenv(realPackagesEnv) == "" {
		t.Skipf("%s is not set: the real-package corpus is kept outside the repository (docs/testing.md)", realPackagesEnv)
	}
	for mode, cfg := range servertest.Modes(t) {
		t.Run(mode, func(t *testing.T) {
			c := cfg(t)
			// Real courses run to tens of megabytes (the iSpring course is 31 MB): the
			// product's default upload limit (LECTERN_MAX_BODY_BYTES), not the tests' 8 MiB.
			c.BodyLimit = 512 << 20
			f(t, servertest.Start(t, c))
		})
	}
}

// takeRealPackages is TestRealPackagesInBrowser in one mode.
func takeRealPackages(t *testing.T, e *servertest.Env) {
	e.CreateTenant("acme", true)
	e.Expect(e.Do("PUT", "/engine/api/v1/acme/configuration/ApiPostbackDataModelVersion", servertest.Root, map[string]any{"value": "v2"}), 204, "data model v2")
	rc := servertest.NewPostReceiver(t)
	regs := "/engine/api/v1/acme/registrations"

	// One SCO of sixteen pages ending in an assessment, in SCORM 1.2 and in SCORM 2004 3rd
	// edition: the SCO's own Next button pages through (reaching the last page completes
	// it), the learner answers every question right (the SCO records the score), then the
	// SCO's Exit button finishes.
	for _, c := range []struct{ course, file string }{{"sb", "singlescobasic.zip"}, {"b4", "RuntimeBasicCalls_SCORM20043rdEdition.zip"}} {
		t.Run(strings.TrimSuffix(c.file, ".zip"), func(t *testing.T) {
			takeGolfSCO(t, e, rc, regs, c.course, c.file)
		})
	}

	// SCORM 1.2, eighteen SCOs that call only LMSInitialize on load and LMSFinish on unload
	// (issue 23, defect 4: such SCOs complete when they finish): the player's Next takes the
	// learner through every one, the player's Exit unloads the last.
	t.Run("RuntimeMinimumCalls_SCORM12", func(t *testing.T) {
		ctx := launchReal(t, e, rc, regs, "mc", "RuntimeMinimumCalls_SCORM12.zip")
		servertest.WaitJS(t, ctx, `document.querySelectorAll("#toc button").length>1`, "true", "the table of contents")
		entries, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#toc button").length`))
		if err != nil {
			t.Fatal(err)
		}
		titles := walkSCOs(t, ctx, entries)
		servertest.Click(t, ctx, `document.getElementById("exit")`)
		p := pollProgress(e, t, regs+"/r-mc", func(p progressRead) bool { return p.RegistrationCompletion == "COMPLETED" })
		if p.RegistrationCompletion != "COMPLETED" || p.RegistrationCompletionAmount != 1 {
			t.Errorf("progress after visiting the %d SCOs (%s): %+v", entries, strings.Join(titles, ", "), p)
		}
		agreeReport(t, e, rc, regs, "mc")
	})

	// The same course taken half way in one browser, then relaunched in a fresh browser
	// profile (issue 23, defect 6): the player goes on at the SCO the learner used last,
	// and the SCOs completed before keep their completion (no new attempt on them).
	t.Run("RuntimeMinimumCalls_SCORM12/relaunch", func(t *testing.T) {
		e.ImportOK("acme", "mc2", realPackage(t, "RuntimeMinimumCalls_SCORM12.zip"), "")
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "mc2", "registrationId": "r-mc2",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
		launch := func() context.Context {
			ctx := servertest.Browser(t)
			if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r-mc2/launchLink?redirectOnExitUrl=message"))); err != nil {
				t.Fatal(err)
			}
			servertest.WaitJS(t, ctx, `document.querySelectorAll("#toc button").length>1`, "true", "the table of contents")
			return ctx
		}
		ctx := launch()
		entries, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#toc button").length`))
		if err != nil {
			t.Fatal(err)
		}
		half := entries / 2
		titles := walkSCOs(t, ctx, half)
		// The last SCO visited is finished (LMSFinish on unload) when the player exits.
		servertest.Click(t, ctx, `document.getElementById("exit")`)
		want := float64(half) / float64(entries)
		p := pollProgress(e, t, regs+"/r-mc2", func(p progressRead) bool { return p.RegistrationCompletionAmount == want })
		if p.RegistrationCompletionAmount != want {
			t.Fatalf("after %d of %d SCOs: %+v", half, entries, p)
		}
		ctx = launch()
		servertest.WaitJS(t, ctx, `(function(){var w=document.getElementById("frame").contentWindow;return w.initialized===true})()`, "true", "the relaunched SCO initialised")
		servertest.WaitJS(t, ctx, `document.querySelector("#toc button.current").textContent`, titles[len(titles)-1], "the relaunch goes on at the SCO used last")
		if p := pollProgress(e, t, regs+"/r-mc2", func(progressRead) bool { return true }); p.RegistrationCompletionAmount != want {
			t.Errorf("after the relaunch: %+v, want completion amount %v", p, want)
		}
		var d struct {
			ActivityDetails struct {
				Children []struct {
					Children []struct {
						Title, ActivityCompletion string
					}
				}
			}
		}
		e.Do("GET", regs+"/r-mc2/progress/detail", servertest.Root, nil).JSON(t, &d)
		done := map[string]bool{}
		for _, c := range d.ActivityDetails.Children {
			for _, sco := range c.Children {
				done[sco.Title] = sco.ActivityCompletion == "COMPLETED"
			}
		}
		for _, title := range titles {
			if !done[title] {
				t.Errorf("SCO %q is no longer completed after the relaunch (%v)", title, done)
			}
		}
	})

	// xAPI (Tin Can): Rustici's Tin Can Golf example with TinCanJS from npm (issue 23,
	// defect 3: its course activity gets "passed" with result.completion true). The
	// course's Next button pages through (each page saves a bookmark in the State API),
	// every assessment question answered right, then "Save & Exit" (its confirm answered).
	t.Run("GolfExample_TCAPI", func(t *testing.T) {
		const course = "tc"
		ctx := launchReal(t, e, rc, regs, course, "GolfExample_TCAPI.zip")
		page := golfFrame
		servertest.WaitJS(t, ctx, page+`.bookmarkingData.getPage()`, "0", "the course's first page")
		pages, err := chromedp.Run(ctx, chromedp.Evaluate[int](page+`.pageArray.length`))
		if err != nil || pages < 2 {
			t.Fatalf("the course's page list: %d %v", pages, err)
		}
		for i := 1; i < pages; i++ {
			servertest.Click(t, ctx, page+`.document.getElementById("butNext")`)
			servertest.WaitJS(t, ctx, page+`.bookmarkingData.getPage()`, fmt.Sprint(i), fmt.Sprintf("page %d", i))
		}
		quiz := page + `.document.getElementById("contentFrame").contentWindow`
		answerGolfAssessment(t, ctx, quiz)
		servertest.Click(t, ctx, quiz+`.document.querySelector("input[type=button][value^=Submit]")`)
		p := pollProgress(e, t, regs+"/r-"+course, func(p progressRead) bool {
			return p.RegistrationCompletion == "COMPLETED" && p.RegistrationSuccess == "PASSED"
		})
		if p.RegistrationCompletion != "COMPLETED" || p.RegistrationSuccess != "PASSED" {
			t.Errorf("progress after the assessment: %+v", p)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](page+`.confirm=function(){return true},true`)); err != nil {
			t.Fatal(err)
		}
		servertest.Click(t, ctx, page+`.document.getElementById("exitButton")`)
		servertest.Eventually(t, 10*time.Second, "the terminated statement", func() bool {
			var res struct {
				Statements []struct{ Verb struct{ ID string } }
			}
			var x struct{ ID string }
			e.Do("GET", regs+"/r-"+course+"/xapiRegistrationId", servertest.Root, nil).JSON(t, &x)
			e.Do("GET", servertest.LRS+"/acme/statements?verb=http://adlnet.gov/expapi/verbs/terminated&registration="+x.ID, servertest.Root, nil, servertest.V103...).JSON(t, &res)
			return len(res.Statements) > 0
		})
		agreeReport(t, e, rc, regs, course)
	})

	// AICC (HACP), issue 23's defect 2 on real content: Articulate Storyline 360's AICC
	// output. The learner starts the course and takes its five slides by the course's Next;
	// its last slide sends lesson_status C. Storyline's PutParams each carry the session's
	// running time: the AU's total time must be the running time, at most the time the
	// learner spent, not the sum of every PutParam.
	t.Run("storyline-aicc", func(t *testing.T) {
		const course = "sl"
		began := time.Now()
		ctx := launchReal(t, e, rc, regs, course, "storyline-aicc.zip")
		story := golfFrame + `.document`
		servertest.WaitJS(t, ctx, `!!`+story+`.querySelector("#mobile-start-button")&&!!`+story+`.querySelector("#next")`, "true", "Storyline's player")
		servertest.Click(t, ctx, story+`.querySelector("#mobile-start-button")`)
		a := clickUntil(t, ctx, e, regs+"/r-"+course, story+`.querySelector("#next")`, func(a aiccRead) bool { return a.RegistrationCompletion == "COMPLETED" })
		exitAICC(t, ctx, e, regs+"/r-"+course, began, a.RegistrationCompletion == "COMPLETED")
		agreeReport(t, e, rc, regs, course)
	})

	// AICC (HACP): iSpring Presenter's AICC output of a 22-slide course. Its score is the
	// share of slides viewed; the learner views the first slide and goes on to the
	// second. The stored copy of this course lacks its video (docs/testing.md), so the
	// second slide cannot be finished and the course goes no further: the registration
	// must hold what the course sent (incomplete, 2 of 22 slides) and its time.
	t.Run("ispring-aicc-ergonomics", func(t *testing.T) {
		const course = "is"
		began := time.Now()
		ctx := launchReal(t, e, rc, regs, course, "ispring-aicc-ergonomics.zip")
		deck := golfFrame + `.document`
		servertest.WaitJS(t, ctx, `!!`+deck+`.querySelector("button.next")`, "true", "iSpring's player")
		want := 100 * 2.0 / 22
		seen := func(a aiccRead) bool { return math.Abs(a.Score.Scaled-want) < 1e-3 }
		// The course refuses Next until its first slide has played ("You have to view the
		// entire slide to continue", with an OK button): close that and ask again.
		ok := `Array.from(` + deck + `.querySelectorAll("button")).filter(function(b){return b.textContent.trim()==="OK"&&b.offsetParent})`
		a := clickUntil(t, ctx, e, regs+"/r-"+course, `(`+ok+`[0]||`+deck+`.querySelector("button.next"))`, seen)
		if !seen(a) || a.RegistrationCompletion != "INCOMPLETE" {
			t.Errorf("after two of 22 slides: %+v, want INCOMPLETE with score %.4f", a, want)
		}
		exitAICC(t, ctx, e, regs+"/r-"+course, began, false)
		agreeReport(t, e, rc, regs, course)
	})
}

// aiccRead is what progress/detail says of a one-AU AICC registration.
type aiccRead struct {
	RegistrationCompletion string
	Score                  struct{ Scaled float64 }
	ActivityDetails        struct {
		Children []struct {
			Runtime struct{ TotalTime, CompletionStatus string }
		}
	}
}

// pollAICC reads reg's progress/detail until ok says so or wait has passed; it returns the
// last read.
func pollAICC(e *servertest.Env, t *testing.T, reg string, wait time.Duration, ok func(aiccRead) bool) aiccRead {
	t.Helper()
	var a aiccRead
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		a = aiccRead{}
		e.Do("GET", reg+"/progress/detail", servertest.Root, nil).JSON(t, &a)
		if ok(a) {
			break
		}
	}
	return a
}

// clickUntil clicks the course's own button expr, then waits up to two seconds for
// progress/detail of reg to say what ok wants, ten times at most (a course may ignore a click
// while it plays); it returns the last read.
func clickUntil(t *testing.T, ctx context.Context, e *servertest.Env, reg, expr string, ok func(aiccRead) bool) aiccRead {
	t.Helper()
	var a aiccRead
	for i := 0; i < 10 && !ok(a); i++ {
		servertest.Click(t, ctx, expr)
		a = pollAICC(e, t, reg, 2*time.Second, ok)
	}
	return a
}

// exitAICC leaves the AU of reg by the player's Exit (the AU sends ExitAU as it unloads),
// then checks the AU's total time against the time since began, when the test launched it:
// the AU counts only time it ran, so its total can be no more (issue 23, defect 2: each
// PutParam's running time was added to the total, 3–4 times too much).
func exitAICC(t *testing.T, ctx context.Context, e *servertest.Env, reg string, began time.Time, completed bool) {
	t.Helper()
	servertest.Click(t, ctx, `document.getElementById("exit")`)
	a := pollAICC(e, t, reg, 5*time.Second, func(a aiccRead) bool { return len(a.ActivityDetails.Children) == 1 })
	spent := time.Since(began).Seconds()
	if len(a.ActivityDetails.Children) != 1 {
		t.Fatalf("progress/detail: %+v", a)
	}
	if completed != (a.RegistrationCompletion == "COMPLETED") {
		t.Errorf("registration completion %s after the course said completed=%v", a.RegistrationCompletion, completed)
	}
	total := runtime.TimespanSeconds(a.ActivityDetails.Children[0].Runtime.TotalTime)
	if total <= 0 || total > spent {
		t.Errorf("the AU's total time is %s (%.0f s); the learner spent %.1f s in it", a.ActivityDetails.Children[0].Runtime.TotalTime, total, spent)
	}
}

// agreeReport waits (up to ten seconds: post-backs are sent after the write that changed the
// progress) for the last FULL post-back of course's registration to say what its
// progress/detail says.
func agreeReport(t *testing.T, e *servertest.Env, rc *servertest.PostReceiver, regs, course string) {
	t.Helper()
	var diffs []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if got := rc.At("/" + course); len(got) == 0 {
			diffs = []string{"no post-back received"}
		} else {
			r := e.Do("GET", regs+"/r-"+course+"/progress/detail", servertest.Root, nil)
			e.Expect(r, 200, "progress/detail")
			var err error
			if diffs, err = servertest.ReportDiff(got[len(got)-1].Body, r.Body); err != nil {
				t.Fatal(err)
			}
		}
		if len(diffs) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(diffs) > 0 {
		t.Errorf("the post-back and progress/detail of %s disagree:\n%s", course, strings.Join(diffs, "\n"))
	}
}

// takeGolfSCO takes a registration of file, one Golf SCO (SCORM 1.2 or 2004), as
// TestRealPackagesInBrowser describes.
func takeGolfSCO(t *testing.T, e *servertest.Env, rc *servertest.PostReceiver, regs, course, file string) {
	ctx := launchReal(t, e, rc, regs, course, file)
	sco := golfFrame
	servertest.WaitJS(t, ctx, sco+`.currentPage`, "0", "the SCO's first page")
	pages, err := chromedp.Run(ctx, chromedp.Evaluate[int](sco+`.pageArray.length`))
	if err != nil || pages < 2 {
		t.Fatalf("the SCO's page list: %d %v", pages, err)
	}
	for i := 1; i < pages; i++ {
		servertest.Click(t, ctx, sco+`.document.getElementById("butNext")`)
		servertest.WaitJS(t, ctx, sco+`.currentPage`, fmt.Sprint(i), fmt.Sprintf("page %d", i))
	}
	quiz := sco + `.document.getElementById("contentFrame").contentWindow`
	questions := answerGolfAssessment(t, ctx, quiz)
	servertest.Click(t, ctx, quiz+`.document.querySelector("input[type=button][value^=Submit],button")`)
	servertest.WaitJS(t, ctx, `!!`+quiz+`.document.querySelector("#test h3")&&`+quiz+`.document.querySelector("#test h3").textContent`, "Score: 100", "the assessment's score")
	servertest.Click(t, ctx, sco+`.document.getElementById("butExit")`)
	p := pollProgress(e, t, regs+"/r-"+course, func(p progressRead) bool {
		return p.RegistrationCompletion == "COMPLETED" && p.RegistrationSuccess == "PASSED"
	})
	if p.RegistrationCompletion != "COMPLETED" || p.RegistrationSuccess != "PASSED" || p.TotalSecondsTracked <= 0 {
		t.Errorf("progress after the course: %+v", p)
	}
	var d struct {
		Score           struct{ Scaled float64 }
		ActivityDetails struct {
			Children []struct {
				Runtime struct {
					ScoreRaw, Location, TotalTime string
				}
			}
		}
	}
	e.Do("GET", regs+"/r-"+course+"/progress/detail", servertest.Root, nil).JSON(t, &d)
	if len(d.ActivityDetails.Children) != 1 {
		t.Fatalf("progress/detail activities: %+v", d.ActivityDetails)
	}
	rt := d.ActivityDetails.Children[0].Runtime
	// The SCO reports the score alone (its page defines no RecordQuestion, so its assessment
	// records no interactions) and its bookmark.
	if d.Score.Scaled != 100 || rt.Location != fmt.Sprint(pages-1) {
		t.Errorf("score %v (SCO raw %q), location %q (the assessment has %d questions, the SCO %d pages)", d.Score.Scaled, rt.ScoreRaw, rt.Location, questions, pages)
	}
	// The SCO's total time, which scorm-again keeps in the standard's own form (SCORM 2004:
	// an ISO 8601 duration), is shown as every other time of the report is (issue 23, defect 7).
	if !regexp.MustCompile(`^\d{4}:\d{2}:\d{2}$`).MatchString(rt.TotalTime) {
		t.Errorf("the SCO's total time %q, want HHHH:MM:SS", rt.TotalTime)
	}
	agreeReport(t, e, rc, regs, course)
}

// walkSCOs takes the learner through the first n SCOs of the Golf multi-SCO course in the
// player of ctx, by the player's Next, and returns their titles in the table of contents.
// Each SCO must have loaded and initialised (the Golf SCOs keep that in their global
// "initialized") before the next: two items of that course launch the same file, so a new
// page is told by a mark the test leaves on the previous one.
func walkSCOs(t *testing.T, ctx context.Context, n int) []string {
	t.Helper()
	current := `document.querySelector("#toc button.current")?document.querySelector("#toc button.current").textContent:""`
	var titles []string
	for i := 0; i < n; i++ {
		if i > 0 {
			servertest.Click(t, ctx, `document.getElementById("next")`)
		}
		loaded := `(function(){var w=document.getElementById("frame").contentWindow;return !w.testMark&&w.initialized===true})()`
		servertest.WaitJS(t, ctx, loaded, "true", fmt.Sprintf("SCO %d initialised", i+1))
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("frame").contentWindow.testMark=true`)); err != nil {
			t.Fatal(err)
		}
		title, err := chromedp.Run(ctx, chromedp.Evaluate[string](current))
		if err != nil {
			t.Fatal(err)
		}
		titles = append(titles, title)
	}
	return titles
}

// launchReal imports file from the corpus as course, registers Ann Lee with a FULL post-back
// to rc at /course, and opens the registration's launch link in a fresh browser.
func launchReal(t *testing.T, e *servertest.Env, rc *servertest.PostReceiver, regs, course, file string) context.Context {
	t.Helper()
	e.ImportOK("acme", course, realPackage(t, file), "")
	e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": course, "registrationId": "r-" + course,
		"learner":  map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"},
		"postBack": map[string]any{"url": rc.URL("/" + course), "authType": "HTTPBASIC", "userName": "lms", "password": "pw", "resultsFormat": "FULL"}}),
		204, "create registration")
	ctx := servertest.Browser(t)
	if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r-"+course+"/launchLink?redirectOnExitUrl=message"))); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// answerGolfAssessment answers every question of the Golf assessment in the window quiz
// right, as a learner who knows the answers (the page marks them for its own demonstration),
// and returns how many there are; the test then presses Submit.
func answerGolfAssessment(t *testing.T, ctx context.Context, quiz string) int {
	t.Helper()
	// The page writes its questions and the Submit button while it loads: answer once it has.
	servertest.WaitJS(t, ctx, quiz+`.document.readyState==="complete"&&!!`+quiz+`.document.querySelector("input[type=button][value^=Submit]")`, "true", "the assessment")
	answer := `(function(w){var d=w.document;w.test.Questions.forEach(function(q){if(q.Type==="numeric"){d.getElementById("question_"+q.Id+"_Text").value=q.CorrectAnswer}});
d.querySelectorAll(".correctAnswer input[type=radio]").forEach(function(r){r.checked=true});return w.test.Questions.length})(` + quiz + `)`
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](answer))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
