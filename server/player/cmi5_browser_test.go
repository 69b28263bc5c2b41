package player_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// ltsDist is the folder of the cmi5 LMS test suite's built packages (zips whose AUs use the
// cmi5 client library every AU uses): LECTERN_TEST_CMI5_LTS_DIST, else the copy
// scripts/cmi5-lts.sh builds in the cache. Without them the test fails under CI and is
// skipped elsewhere.
func ltsDist(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("LECTERN_TEST_CMI5_LTS_DIST"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	cache := os.Getenv("LECTERN_CACHE")
	if cache == "" {
		cache = filepath.Join(home, ".cache", "lectern")
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "cmi5-lts", "suite-*", "pkg", "dist", "001-essentials.zip")); len(m) > 0 {
		return filepath.Dir(m[0])
	}
	if os.Getenv("CI") != "" {
		t.Fatal("the cmi5 LMS test suite's packages are not built (scripts/cmi5-lts.sh build)")
	}
	t.Skip("the cmi5 LMS test suite's packages are not built (scripts/cmi5-lts.sh build)")
	return ""
}

// ltsResult reads the result an LTS AU writes into its page (#result), in the document expr
// names: "ok", "fail: <requirement> <message>", or "none" while it runs.
func ltsResult(doc string) string {
	return `(function(){var d=` + doc + `;var r=d&&d.getElementById("result");if(!r)return "none";var j=JSON.parse(r.textContent);` +
		`return j.success&&!j.isError?"ok":"fail: "+(j.reqId||"")+" "+j.msg})()`
}

// TestCMI5AUInBrowser launches real cmi5 AUs (the cmi5 LMS test suite's, built on the cmi5
// client library) from the player in Chromium: an AnyWindow AU in the player's frame, which
// initialises, passes, completes and terminates (the LMS's satisfied statements follow), and
// an OwnWindow AU that takes the whole window and comes back through its returnURL.
func TestCMI5AUInBrowser(t *testing.T) {
	dist := ltsDist(t)
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := servertest.Browser(t)
		e.CreateTenant("acme", true)
		// FULL post-backs in the JSON data model, to hold against progress/detail below.
		e.Expect(e.Do("PUT", "/engine/api/v1/acme/configuration/ApiPostbackDataModelVersion", servertest.Root, map[string]any{"value": "v2"}), 204, "data model v2")
		rc := servertest.NewPostReceiver(t)
		regs := "/engine/api/v1/acme/registrations"
		for _, c := range []struct{ course, pkg string }{{"essentials", "001-essentials.zip"}, {"own", "003-launchMethod-OwnWindow.zip"}} {
			b, err := os.ReadFile(filepath.Join(dist, c.pkg))
			if err != nil {
				t.Fatal(err)
			}
			e.ImportOK("acme", c.course, b, "")
			e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": c.course, "registrationId": "r-" + c.course,
				"learner":  map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"},
				"postBack": map[string]any{"url": rc.URL("/" + c.course), "authType": "HTTPBASIC", "userName": "lms", "password": "pw", "resultsFormat": "FULL"}}), 204, "create registration")
		}
		xreg := func(id string) string {
			var b struct{ ID string }
			e.Do("GET", regs+"/"+id+"/xapiRegistrationId", servertest.Root, nil).JSON(t, &b)
			return b.ID
		}

		// AnyWindow: the AU runs in the player's frame and reaches the record store at the
		// endpoint it was given (no trailing slash: the library appends "/statements").
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r-essentials/launchLink"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, ltsResult(`document.getElementById("frame").contentDocument`), "ok", "001-essentials AU in the frame")
		var res struct {
			Statements []struct {
				Verb   struct{ ID string }
				Object struct {
					ID         string
					Definition struct{ Type string }
				}
			}
		}
		e.Do("GET", servertest.LRS+"/acme/statements?ascending=true&registration="+xreg("r-essentials"), servertest.Root, nil, servertest.V103...).JSON(t, &res)
		var verbs []string
		for _, s := range res.Statements {
			v := s.Verb.ID[strings.LastIndex(s.Verb.ID, "/")+1:]
			if s.Object.Definition.Type != "" {
				v += ":" + s.Object.Definition.Type[strings.LastIndex(s.Object.Definition.Type, "/")+1:]
			}
			verbs = append(verbs, v)
		}
		if got := strings.Join(verbs, ","); got != "launched,initialized,passed,completed,satisfied:block,satisfied:course,terminated" {
			t.Errorf("statements of the AnyWindow session: %s", got)
		}
		var p struct{ RegistrationCompletion, RegistrationSuccess string }
		e.Do("GET", regs+"/r-essentials/progress", servertest.Root, nil).JSON(t, &p)
		if p.RegistrationCompletion != "COMPLETED" || p.RegistrationSuccess != "PASSED" {
			t.Errorf("progress after the AU: %+v", p)
		}
		// The FULL post-back of a public cmi5 AU's session says what progress/detail says (issue
		// 21).
		agreeReport(t, e, rc, regs, "essentials")

		// OwnWindow: the player page gives its window to the AU (window.self is window.top);
		// the AU's returnURL brings the learner back to the player, which exits (one AU).
		if _, err := chromedp.Run(ctx, chromedp.Navigate(e.URL+e.LaunchPath(regs+"/r-own/launchLink?redirectOnExitUrl=message"))); err != nil {
			t.Fatal(err)
		}
		servertest.WaitJS(t, ctx, ltsResult("document"), "ok", "003 OwnWindow AU as the whole window")
		servertest.WaitJS(t, ctx, `location.pathname.indexOf("/player/content/")===0`, "true", "the AU's own page")
		if ret, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("returnURL")?"present":"absent"`)); err != nil || ret != "present" {
			t.Fatalf("the AU shows no returnURL button: %q %v", ret, err)
		}
		servertest.Click(t, ctx, `document.getElementById("returnURL")`)
		servertest.WaitJS(t, ctx, `location.pathname.indexOf("/player/session/")===0&&new URLSearchParams(location.search).has("returned")`, "true", "back in the player")
		servertest.WaitJS(t, ctx, `document.getElementById("done").hidden`, "false", "the player's exit message after returning")
		frameSrc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("frame").getAttribute("src")||""`))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(frameSrc, "/player/cmi5/") {
			t.Errorf("the player launched the AU again after its return: %s", frameSrc)
		}
		// LMS.LaunchData told the AU where to return (and only the OwnWindow AU).
		var body struct{ Statements []json.RawMessage }
		e.Do("GET", servertest.LRS+"/acme/statements?registration="+xreg("r-own")+"&verb="+url.QueryEscape("http://adlnet.gov/expapi/verbs/terminated"), servertest.Root, nil, servertest.V103...).JSON(t, &body)
		if len(body.Statements) != 1 {
			t.Errorf("terminated statements of the OwnWindow session: %d", len(body.Statements))
		}
	})
}
