package console_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// progressSampler records the import bar's value every 20 ms into window.seen (the status
// fragment is swapped by htmx, so the bar is looked up by id each time).
const progressSampler = `window.seen=[];setInterval(function(){var p=document.getElementById("import-progress");if(p)window.seen.push(p.value)},20);true`

// TestConsoleCoursesInBrowser: a tenant credential imports a course by upload and watches the
// import bar run to its end and the parser warnings appear, opens the course's activity tree,
// creates a registration, launches it in the player and sees, back in the console, the run-time
// data the SCO committed in the registration's activity tree.
func TestConsoleCoursesInBrowser(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		key, secret := e.Credential("acme")
		files := map[string]string{"imsmanifest.xml": manifest12Warned, "sco/index.html": servertest.Sco12}
		// Enough files for the store to take a few progress steps.
		for i := range 200 {
			files[fmt.Sprintf("sco/media/%03d.txt", i)] = strings.Repeat("x", 2000)
		}
		pkg := filepath.Join(t.TempDir(), "b12.zip")
		if err := os.WriteFile(pkg, servertest.ZipOf(t, files), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx := servertest.Browser(t)
		servertest.ConsoleSignIn(t, ctx, e, key, secret)
		servertest.WaitJS(t, ctx, `document.querySelector("h1").textContent`, "Courses", "a tenant lands on its courses")
		accessible(t, ctx, "courses page")
		if err := chromedp.Do(ctx, chromedp.SendKeys(`#course`, "b12"), chromedp.SetUploadFiles(`#file`, []string{pkg})); err != nil {
			t.Fatal(err)
		}
		servertest.Click(t, ctx, `document.querySelector("#import-form button[type=submit]")`)
		servertest.WaitJS(t, ctx, `location.pathname.indexOf("/console/t/acme/courses/imports/")`, "0", "the import's status page")
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](progressSampler)); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, `document.getElementById("import-status").dataset.status`, "COMPLETE", "the import completes")
		servertest.WaitJS(t, ctx, `document.getElementById("import-progress").value`, "100", "the bar at its end")
		servertest.WaitJS(t, ctx, `document.getElementById("import-progress").max`, "100", "the bar's maximum")
		servertest.WaitJS(t, ctx, `document.getElementById("import-state").textContent`, "Imported: Browser 1.2 (COMPLETE)", "the completed state")
		servertest.WaitJS(t, ctx, `document.getElementById("import-warnings").textContent.indexOf("meta.xml") >= 0`, "true", "the parser warning")
		servertest.WaitJS(t, ctx, `document.getElementById("import-status").hasAttribute("hx-trigger")`, "false", "polling stops")
		seen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.seen.join(",")`))
		if err != nil {
			t.Fatal(err)
		}
		var prev float64 = -1
		distinct := 0
		for _, s := range strings.Split(seen, ",") {
			var v float64
			if _, err := fmt.Sscan(s, &v); err != nil {
				t.Fatalf("bar values %q: %v", seen, err)
			}
			if v < prev {
				t.Fatalf("the bar went back: %s", seen)
			}
			if v != prev {
				distinct++
			}
			prev = v
		}
		t.Logf("bar values seen: %d distinct (%s)", distinct, servertest.Truncate([]byte(seen), 300))
		accessible(t, ctx, "import page")

		servertest.Click(t, ctx, `document.getElementById("import-course-link")`)
		servertest.WaitJS(t, ctx, `document.querySelector("h1").textContent`, "Course b12", "course detail")
		servertest.WaitJS(t, ctx, `document.querySelector("#activity-tree .activity").textContent`, "Browser 1.2", "tree root")
		servertest.WaitJS(t, ctx, `document.querySelector("#activity-tree ul .activity").textContent`, "The Only Lesson", "the SCO in the tree")
		accessible(t, ctx, "course page")

		servertest.Click(t, ctx, `document.querySelector("nav a[href='/console/t/acme/registrations']")`)
		servertest.WaitJS(t, ctx, `document.querySelector("h1").textContent`, "Registrations", "registrations page")
		accessible(t, ctx, "registrations page")
		if err := chromedp.Do(ctx, chromedp.SendKeys(`#reg-id`, "r1"), chromedp.SendKeys(`#learner-id`, "ann"),
			chromedp.SendKeys(`#first-name`, "Ann"), chromedp.SendKeys(`#last-name`, "Lee")); err != nil {
			t.Fatal(err)
		}
		servertest.Click(t, ctx, `document.querySelector("#registration-form button[type=submit]")`)
		servertest.WaitJS(t, ctx, `document.querySelector("[role=status]").textContent`, "Registration r1 was created.", "registration created")
		accessible(t, ctx, "registration page")

		servertest.Click(t, ctx, `document.getElementById("launch")`)
		inFrame := `document.getElementById("frame").contentDocument.getElementById("status").textContent`
		servertest.WaitJS(t, ctx, inFrame, "ready|true|Lee, Ann|ab-initio||true", "the SCO committed in the player")
		// Back in the console, the committed run-time data is in the activity tree.
		servertest.Eventually(t, 20*time.Second, "run-time data on the registration page", func() bool {
			if err := chromedp.Do(ctx, chromedp.Navigate(e.URL+"/console/t/acme/registrations/r1"), chromedp.WaitVisible(`#reg-tree`)); err != nil {
				t.Fatal(err)
			}
			v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(function(){var l=document.querySelector("#activity-results .location");return l?l.textContent+"|"+document.querySelector("#activity-results .score-raw").textContent+"|"+document.getElementById("reg-success").textContent:""})()`))
			if err != nil {
				t.Fatal(err)
			}
			return v == "page-3|92|PASSED"
		})
		servertest.WaitJS(t, ctx, `document.querySelector("#activity-results ul .success").textContent`, "PASSED", "the SCO's success in the tree")
	})
}
