package engineapi_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// chromeCourse sets up, in tenant tn, the two-SCO SCORM 1.2 course "multi" and the one-SCO
// course "single", with registrations "rm" and "rs", and returns their launch-link endpoints.
func chromeCourse(e *servertest.Env, t *testing.T, tn string) (multi, single string) {
	t.Helper()
	e.ImportOK(tn, "multi", servertest.Scorm12Package(t), "")
	e.ImportOK(tn, "single", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest12, "sco/index.html": servertest.Sco12}), "")
	regs := "/engine/api/v1/" + tn + "/registrations"
	for id, courseID := range map[string]string{"rm": "multi", "rs": "single"} {
		e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": courseID, "registrationId": id,
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create "+id)
	}
	return regs + "/rm/launchLink", regs + "/rs/launchLink"
}

// playerPage launches a launch-link endpoint and returns the player page's HTML (query is
// added to the player page's URL).
func playerPage(e *servertest.Env, endpoint, query string) string {
	e.T.Helper()
	r := e.Get("/player/session/" + e.Launch(e.LaunchPath(endpoint)) + query)
	e.Expect(r, 200, "player page")
	return string(r.Body)
}

// hasControl reports whether the page has the element with id.
func hasControl(page, id string) bool { return strings.Contains(page, `id="`+id+`"`) }

// chromeValue is a field of the page's configuration (string, boolean or number, as written).
func chromeValue(t *testing.T, page, field string) string {
	t.Helper()
	m := regexp.MustCompile(`"` + field + `":("[^"]*"|true|false|[0-9.]+)`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no %s in the player page: %s", field, page)
	}
	return strings.Trim(m[1], `"`)
}

// showSetting is a row for a PlayerShow* setting: whether control is on the page of the
// multi-SCO and of the single-SCO course by default, then with the setting flipped at
// tenant level, then overridden back at registration level for the multi-SCO course.
func showSetting(id, control string, multiDefault, singleDefault bool) settingEffect {
	return settingEffect{id, func(t *testing.T, e *servertest.Env, tn string) {
		multi, single := chromeCourse(e, t, tn)
		check := func(link string, want bool, what string) {
			t.Helper()
			if got := hasControl(playerPage(e, link, ""), control); got != want {
				t.Errorf("%s: %s on the page = %v, want %v", what, control, got, want)
			}
		}
		check(multi, multiDefault, "default, two SCOs")
		check(single, singleDefault, "default, one SCO")
		flip := "YES"
		if multiDefault {
			flip = "NO"
		}
		e.SetSetting("/engine/api/v1/"+tn, id, flip)
		check(multi, !multiDefault, "tenant "+flip+", two SCOs")
		check(single, !multiDefault, "tenant "+flip+", one SCO")
		back := map[string]string{"YES": "NO", "NO": "YES"}[flip]
		e.SetSetting("/engine/api/v1/"+tn+"/registrations/rm", id, back)
		check(multi, multiDefault, "registration "+back+", two SCOs")
		check(single, !multiDefault, "tenant "+flip+" still, one SCO")
	}}
}

// configSetting is a row for a setting the page carries in its configuration: field's value
// by default, then after the setting is written at the course level of the multi-SCO course.
func configSetting(id, field, def, value, want string) settingEffect {
	return settingEffect{id, func(t *testing.T, e *servertest.Env, tn string) {
		multi, single := chromeCourse(e, t, tn)
		if got := chromeValue(t, playerPage(e, multi, ""), field); got != def {
			t.Errorf("default %s = %q, want %q", field, got, def)
		}
		e.SetSetting("/engine/api/v1/"+tn+"/courses/multi", id, value)
		if got := chromeValue(t, playerPage(e, multi, ""), field); got != want {
			t.Errorf("course setting %s=%s: %s = %q, want %q", id, value, field, got, want)
		}
		if got := chromeValue(t, playerPage(e, single, ""), field); got != def {
			t.Errorf("another course's %s = %q, want the default %q", field, got, def)
		}
	}}
}

// chromeSettingEffects are the rows of the player's chrome and launch settings. What they
// make the browser do (new windows, the leave-page prompt, exit and refresh) is shown by
// TestPlayerChromeInBrowser.
var chromeSettingEffects = []settingEffect{
	showSetting("PlayerShowFinishButton", "exit", true, true),
	showSetting("PlayerShowCloseItem", "close", false, false),
	showSetting("PlayerShowNavBar", "next", true, false),
	showSetting("PlayerShowHelp", "help", false, false),
	showSetting("PlayerShowTitleBar", "title", true, true),
	showSetting("PlayerShowCourseStructure", "toc", true, false),
	{"PlayerShowProgressBar", func(t *testing.T, e *servertest.Env, tn string) {
		multi, _ := chromeCourse(e, t, tn)
		if page := playerPage(e, multi, ""); hasControl(page, "progress") {
			t.Errorf("progress bar by default")
		}
		e.SetSetting("/engine/api/v1/"+tn+"/courses/multi", "PlayerShowProgressBar", "true")
		if page := playerPage(e, multi, ""); !strings.Contains(page, `<span id="progress-text">0 of 2 completed</span>`) {
			t.Errorf("progress bar before any activity is completed: %s", page)
		}
		// The bar starts from the rolled-up progress: one of the two SCOs completed.
		session := e.Launch(e.LaunchPath(multi))
		st := e.Activity(session, "i1")
		if r, a := e.Commit(session, "i1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"passed"}`); r.Status != 200 || a.Result != "true" {
			t.Fatalf("commit: %d %s", r.Status, r.Body)
		}
		page := playerPage(e, multi, "")
		if !strings.Contains(page, `<span id="progress-text">1 of 2 completed</span>`) || !strings.Contains(page, `"completed":["i1"]`) {
			t.Errorf("progress bar after the first SCO passed: %s", page)
		}
	}},
	{"PlayerLaunchType", func(t *testing.T, e *servertest.Env, tn string) {
		multi, _ := chromeCourse(e, t, tn)
		// FRAMESET: the launch link's page is the player.
		if page := playerPage(e, multi, ""); !hasControl(page, "frame") {
			t.Fatalf("default launch is not the player page: %s", page)
		}
		// NEW_WINDOW: the link's page opens the player in a new window at once.
		e.SetSetting("/engine/api/v1/"+tn, "PlayerLaunchType", "NEW_WINDOW")
		page := playerPage(e, multi, "")
		if hasControl(page, "frame") || !regexp.MustCompile(`"url":"/player/session/[^"?]+\?window=1"`).MatchString(page) ||
			chromeValue(t, page, "afterClick") != "false" || chromeValue(t, page, "features") != "" {
			t.Errorf("NEW_WINDOW launch page: %s", page)
		}
		if page := playerPage(e, multi, "?window=1"); !hasControl(page, "frame") {
			t.Errorf("the player's own window is not the player: %s", page)
		}
		// The AFTER_CLICK kinds wait for the Launch button; WITHOUT_BROWSER_TOOLBAR opens a popup.
		e.SetSetting("/engine/api/v1/"+tn+"/registrations/rm", "PlayerLaunchType", "new_window_after_click_without_browser_toolbar")
		page = playerPage(e, multi, "")
		if chromeValue(t, page, "afterClick") != "true" || !strings.Contains(chromeValue(t, page, "features"), "toolbar=no") {
			t.Errorf("NEW_WINDOW_AFTER_CLICK_WITHOUT_BROWSER_TOOLBAR launch page: %s", page)
		}
		e.Expect(e.Do("PUT", "/engine/api/v1/"+tn+"/configuration/PlayerLaunchType", servertest.Root, map[string]any{"value": "POPUP"}), 400, "not a launch type")
	}},
	configSetting("PlayerScoLaunchType", "scoLaunch", "FRAMESET", "NEW_WINDOW", "NEW_WINDOW"),
	configSetting("PromptOnPlayerClose", "promptOnClose", "false", "YES", "true"),
	configSetting("RedirectOnRefreshUrl", "redirectOnRefresh", "", "https://lms.example/again", "https://lms.example/again"),
	configSetting("RedirectLaunchPageOnExit", "redirectLaunchPage", "false", "true", "true"),
	{"SupplementalQueryStringParametersForAllActivities", func(t *testing.T, e *servertest.Env, tn string) {
		multi, _ := chromeCourse(e, t, tn)
		extra := "?lang=fr&course_code=X%201&other=z"
		launch := func() string {
			t.Helper()
			r := e.Get("/player/session/" + e.Launch(e.LaunchPath(multi)+extra))
			e.Expect(r, 200, "player page")
			return string(r.Body)
		}
		if page := launch(); strings.Contains(page, "lang=fr") || strings.Contains(page, "other=z") {
			t.Errorf("launch parameters passed on by default: %s", page)
		}
		e.SetSetting("/engine/api/v1/"+tn, "SupplementalQueryStringParametersForAllActivities", "lang, course_code")
		page := launch()
		// Every activity gets the named parameters (after its own), and only those.
		for _, want := range []string{`/one/index.html?course_code=X+1\u0026lang=fr"`, `/two/index.html?page=2\u0026course_code=X+1\u0026lang=fr"`} {
			if !strings.Contains(page, want) {
				t.Errorf("activity URL %s missing: %s", want, page)
			}
		}
		if strings.Contains(page, "other=z") {
			t.Errorf("a parameter the setting does not name was passed on: %s", page)
		}
	}},
}
