package engineapi_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// tincanPackage is an xAPI course whose course activity is courseIRI and whose one launchable
// module is moduleIRI.
func tincanPackage(t *testing.T, courseIRI, moduleIRI string) []byte {
	return servertest.ZipOf(t, map[string]string{"index.html": "<html>x</html>", "tincan.xml": `<?xml version="1.0" encoding="utf-8"?>
<tincan xmlns="http://projecttincan.com/tincan.xsd"><activities>
  <activity id="` + courseIRI + `" type="http://adlnet.gov/expapi/activities/course"><name>Course</name><launch lang="en-US">index.html</launch></activity>
  <activity id="` + moduleIRI + `" type="http://adlnet.gov/expapi/activities/module"><name>Module</name><launch lang="en-US">index.html?m=1</launch></activity>
</activities></tincan>`})
}

// coursePage lists a tenant's courses (one page) and reports the entries and whether more follow.
func coursePage(e *servertest.Env, tn, query string) (n int, more bool) {
	e.T.Helper()
	var l struct {
		Courses []struct{ ID string } `json:"courses"`
		More    string                `json:"more"`
	}
	r := e.Do("GET", "/engine/api/v1/"+tn+"/courses"+query, servertest.Root, nil)
	e.Expect(r, 200, "course list")
	r.JSON(e.T, &l)
	return len(l.Courses), l.More != ""
}

// warningsAbout returns the parser warnings that mention s.
func warningsAbout(res servertest.ImportResult, s string) []string {
	var out []string
	for _, w := range res.ParserWarnings {
		if strings.Contains(w, s) {
			out = append(out, w)
		}
	}
	return out
}

// settingEffects shows, through HTTP only, what each served setting changes: the behaviour
// with the default, then the configuration API changing the setting, then the changed
// behaviour. Every setting the catalogue serves must have a row (TestSettingEffects checks),
// so a setting that changes nothing cannot be advertised.
var settingEffects = []settingEffect{
	{"ApiResultLimitSinceNotSpecified", func(t *testing.T, e *servertest.Env, tn string) {
		for i := 0; i < 3; i++ {
			e.ImportOK(tn, fmt.Sprintf("c%d", i), servertest.Scorm12Package(t), "")
		}
		if n, more := coursePage(e, tn, ""); n != 3 || more {
			t.Fatalf("default page without since: %d entries, more=%v; want 3, none", n, more)
		}
		e.SetSetting("/engine/api/v1/"+tn, "ApiResultLimitSinceNotSpecified", "2")
		if n, more := coursePage(e, tn, ""); n != 2 || !more {
			t.Fatalf("page of 2 without since: %d entries, more=%v", n, more)
		}
		if n, more := coursePage(e, tn, "?since=2000-01-01"); n != 3 || more {
			t.Fatalf("the setting changed the page with since: %d entries, more=%v", n, more)
		}
	}},
	{"ApiResultLimit", func(t *testing.T, e *servertest.Env, tn string) {
		for i := 0; i < 3; i++ {
			e.ImportOK(tn, fmt.Sprintf("c%d", i), servertest.Scorm12Package(t), "")
		}
		since := "?since=" + url.QueryEscape("2000-01-01T00:00:00Z")
		if n, more := coursePage(e, tn, since); n != 3 || more {
			t.Fatalf("default page with since: %d entries, more=%v; want 3, none", n, more)
		}
		e.SetSetting("/engine/api/v1/"+tn, "ApiResultLimit", "1")
		if n, more := coursePage(e, tn, since); n != 1 || !more {
			t.Fatalf("page of 1 with since: %d entries, more=%v", n, more)
		}
		if n, _ := coursePage(e, tn, ""); n != 3 {
			t.Fatalf("the setting changed the page without since: %d entries", n)
		}
	}},
	{"xAPIEnabled", func(t *testing.T, e *servertest.Env, tn string) {
		e.ImportOK(tn, "a", servertest.Scorm12Package(t), "")
		e.ImportOK(tn, "b", servertest.Scorm12Package(t), "")
		api := "/engine/api/v1/" + tn
		e.Expect(e.Do("GET", api+"/courses/a/xapiActivityId", servertest.Root, nil), 200, "xAPI on by default")
		e.SetSetting(api, "xAPIEnabled", "false")
		r := e.Do("GET", api+"/courses/a/xapiActivityId", servertest.Root, nil)
		e.Expect(r, 404, "xAPI off for the tenant")
		if !strings.Contains(r.Message(), "xAPIEnabled") {
			t.Errorf("404 message does not name the setting: %q", r.Message())
		}
		// A course-level value overrides the tenant's, for that course only.
		e.SetSetting(api+"/courses/b", "xAPIEnabled", "true")
		e.Expect(e.Do("GET", api+"/courses/b/xapiActivityId", servertest.Root, nil), 200, "xAPI on for course b")
		e.Expect(e.Do("GET", api+"/courses/a/xapiActivityId", servertest.Root, nil), 404, "xAPI still off for course a")
	}},
	{"TinCanRootAccount", func(t *testing.T, e *servertest.Env, tn string) {
		acct := servertest.Basic("lrsroot", "pw:with:colons")
		e.Expect(e.Do("GET", servertest.LRS+"/"+tn+"/statements", acct, nil, servertest.V200...), 401, "before the setting")
		e.SetSetting("/engine/api/v1/"+tn, "TinCanRootAccount", "lrsroot:pw:with:colons")
		e.Expect(e.Do("POST", servertest.LRS+"/"+tn+"/statements", acct, servertest.Statement("ann@example.com", "attempted", "http://example.com/a"), servertest.V200...), 200, "root account writes")
		if res := e.Query(servertest.LRS+"/"+tn+"/statements", acct, servertest.V200); len(res.Statements) != 1 {
			t.Fatalf("root account reads %d statements, want 1", len(res.Statements))
		}
	}},
	{"TinCanBasicAccounts", func(t *testing.T, e *servertest.Env, tn string) {
		viewer := servertest.Basic("viewer", "view-pass")
		e.Expect(e.Do("GET", servertest.LRS+"/"+tn+"/statements", viewer, nil, servertest.V200...), 401, "before the setting")
		e.SetSetting("/engine/api/v1/"+tn, "TinCanBasicAccounts", "viewer:view-pass:readonly")
		e.Expect(e.Do("GET", servertest.LRS+"/"+tn+"/statements", viewer, nil, servertest.V200...), 200, "read-only account reads")
		e.Expect(e.Do("POST", servertest.LRS+"/"+tn+"/statements", viewer, servertest.Statement("ann@example.com", "attempted", "http://example.com/a"), servertest.V200...), 403, "read-only account cannot write")
	}},
	{"xAPIBasicAccounts", func(t *testing.T, e *servertest.Env, tn string) {
		writer := servertest.Basic("app", "app-pass")
		e.Expect(e.Do("POST", servertest.LRS+"/"+tn+"/statements", writer, servertest.Statement("ann@example.com", "attempted", "http://example.com/a"), servertest.V200...), 401, "before the setting")
		e.SetSetting("/engine/api/v1/"+tn, "xAPIBasicAccounts", "app:app-pass:readwrite")
		e.Expect(e.Do("POST", servertest.LRS+"/"+tn+"/statements", writer, servertest.Statement("ann@example.com", "attempted", "http://example.com/a"), servertest.V200...), 200, "read-write account writes")
	}},
	{"EnableExistingActivityIdParserWarnings", func(t *testing.T, e *servertest.Env, tn string) {
		const shared, module = "http://example.com/courses/shared", "http://example.com/courses/shared/m1"
		first := e.ImportOK(tn, "first", tincanPackage(t, shared, module), "")
		if w := warningsAbout(first, "already"); len(w) != 0 {
			t.Fatalf("first import warns about existing ids: %v", w)
		}
		// A new version of the same course reuses its own ids: no warning.
		again := e.ImportOK(tn, "first", tincanPackage(t, shared, module), "&mayCreateNewVersion=true")
		if w := warningsAbout(again, "already"); len(w) != 0 {
			t.Fatalf("new version of the same course warns: %v", w)
		}
		// Another course with the same ids: one warning per id, naming the id and the course.
		second := e.ImportOK(tn, "second", tincanPackage(t, shared, module), "")
		for _, id := range []string{shared, module} {
			w := warningsAbout(second, `"`+id+`"`)
			if len(w) != 1 || !strings.Contains(w[0], "'first'") {
				t.Fatalf("warnings about %s: %v (all: %v)", id, w, second.ParserWarnings)
			}
		}
		// An id the tenant's record store already holds statements about.
		const seen = "http://example.com/courses/seen"
		e.Expect(e.Do("POST", servertest.LRS+"/"+tn+"/statements", servertest.Root, servertest.Statement("ann@example.com", "attempted", seen), servertest.V200...), 200, "statement")
		third := e.ImportOK(tn, "third", tincanPackage(t, seen, "http://example.com/courses/seen/m1"), "")
		if w := warningsAbout(third, `"`+seen+`"`); len(w) != 1 || !strings.Contains(w[0], "record store") {
			t.Fatalf("warnings about an id in the record store: %v (all: %v)", w, third.ParserWarnings)
		}
		// Deleting a course releases its ids.
		e.Expect(e.Do("DELETE", "/engine/api/v1/"+tn+"/courses/second", servertest.Root, nil), 204, "delete second")
		e.Expect(e.Do("DELETE", "/engine/api/v1/"+tn+"/courses/first", servertest.Root, nil), 204, "delete first")
		released := e.ImportOK(tn, "fourth", tincanPackage(t, shared, module), "")
		if w := warningsAbout(released, "already"); len(w) != 0 {
			t.Fatalf("ids of deleted courses still warn: %v", w)
		}
		// Switched off, the same situation gives no warning.
		e.SetSetting("/engine/api/v1/"+tn, "EnableExistingActivityIdParserWarnings", "false")
		off := e.ImportOK(tn, "fifth", tincanPackage(t, shared, module), "")
		off2 := e.ImportOK(tn, "sixth", tincanPackage(t, seen, "http://example.com/courses/seen/m1"), "")
		if w := append(warningsAbout(off, "already"), warningsAbout(off2, "already")...); len(w) != 0 {
			t.Fatalf("warnings with the setting off: %v", w)
		}
	}},
}

// testedElsewhere names served settings whose effect test lives with the feature.
var testedElsewhere = map[string]string{
	"ValidateManifestsUsingXsd": "the XSD validation tests of issue 10 (manifest validation)",
	// The rollup settings act through course/rollup (rollup.ParseSettings), which the runtime
	// commit path runs; each mode and value has its table test there.
	"PlayerStatusRollupModeValue":                 "course/rollup TestSCORM12StatusRollupModes, TestSCORM12StatusProvidedByCourseFollowsLastUpdatedSCO",
	"PlayerStatusRollupModeThresholdScore":        "course/rollup TestSCORM12StatusRollupModes (threshold rows)",
	"PlayerScoreRollupModeValue":                  "course/rollup TestSCORM12ScoreRollupModes",
	"PlayerScoreRollupModeNumberOfScoringObjects": "course/rollup TestSCORM12ScoreRollupModes (FIXED_AVERAGE rows)",
	"PlayerScaleRawScore":                         "course/rollup TestSNSetByContentAndRawScore",
	"PlayerCompletionStatOfFailedSuccessStat":     "course/rollup TestSCORM12CompletionOfFailed",
	"WhenToRestartRegistration":                   "server TestPlayerRestartsCompletedInstance",
	"RedirectOnExitUrl":                           "server TestRedirectOnExitSetting",
	"PlayerCommCommitFrequency":                   "server TestRedirectOnExitSetting (the page's commit interval)",

	// The cap applies after hours of doubled waits; the forwarder with a moved clock shows it.
	"TinCanStatementForwardMaxBackoffHours": "lrs/forward TestBackoffIsCappedByMaxBackoff",
}

// settingEffect is one row of the settings-effect table: the setting and the HTTP-only test of
// what it changes.
type settingEffect struct {
	id     string
	effect func(t *testing.T, e *servertest.Env, tn string)
}

// settingEffectGroups are the rows of every feature: settingEffects here, and one slice per
// feature in its own settings_<feature>_test.go, so that features add rows without touching
// each other's tables.
var settingEffectGroups = [][]settingEffect{settingEffects, postbackSettingEffects, sessionsSettingEffects, runtimeSettingEffects, chromeSettingEffects, xapiregSettingEffects, convertSettingEffects, forwardSettingEffects}

func TestSettingEffects(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		covered := map[string]bool{}
		for i, tc := range slices.Concat(settingEffectGroups...) {
			covered[tc.id] = true
			t.Run(tc.id, func(t *testing.T) {
				tn := fmt.Sprintf("settings%d", i)
				e.CreateTenant(tn, true)
				r := e.Do("GET", "/engine/api/v1/"+tn+"/configuration/"+tc.id, servertest.Root, nil)
				e.Expect(r, 200, "setting is served")
				tc.effect(t, e, tn)
			})
		}
		for _, s := range e.App.Settings.Catalogue().All() {
			if !covered[s.ID] && testedElsewhere[s.ID] == "" {
				t.Errorf("setting %s is served but no test shows its effect", s.ID)
			}
		}
	})
}

// TestUnservedSettingsAreRejected: settings of features that do not exist yet (player,
// registrations, postbacks, launch, forwarding, skills) are not advertised, and writing one
// is a 400 naming it, at every level.
func TestUnservedSettingsAreRejected(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		r := e.Do("GET", "/engine/api/v1/acme/configuration", servertest.Root, nil)
		e.Expect(r, 200, "list")
		for _, id := range []string{"xAPIUrlPrefix", "AllowedTenantNameRegex", "ExpireLaunchHistoryAfterDays",
			"xAPIValidations", "ShouldExpireLaunchHistory", "GENERATION__SKILL_TAXONOMY",
			"AllowedTenantNames", "NoSuchSetting"} {
			if strings.Contains(string(r.Body), `"`+id+`"`) {
				t.Errorf("configuration list advertises %s", id)
			}
			for _, base := range []string{"/engine/api/v1/acme", "/engine/api/v1/acme/courses/intro"} {
				r := e.Do("PUT", base+"/configuration/"+id, servertest.Root, map[string]any{"value": "true"})
				e.Expect(r, 400, "PUT "+id)
				if !strings.Contains(r.Message(), id) {
					t.Errorf("PUT %s message does not name the id: %q", id, r.Message())
				}
				r = e.Do("GET", base+"/configuration/"+id, servertest.Root, nil)
				e.Expect(r, 404, "GET "+id)
				if !strings.Contains(r.Message(), id) {
					t.Errorf("GET %s message does not name the id: %q", id, r.Message())
				}
			}
		}
	})
}
