package server_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// tincanPackage is an xAPI course whose course activity is courseIRI and whose one launchable
// module is moduleIRI.
func tincanPackage(t *testing.T, courseIRI, moduleIRI string) []byte {
	return zipOf(t, map[string]string{"index.html": "<html>x</html>", "tincan.xml": `<?xml version="1.0" encoding="utf-8"?>
<tincan xmlns="http://projecttincan.com/tincan.xsd"><activities>
  <activity id="` + courseIRI + `" type="http://adlnet.gov/expapi/activities/course"><name>Course</name><launch lang="en-US">index.html</launch></activity>
  <activity id="` + moduleIRI + `" type="http://adlnet.gov/expapi/activities/module"><name>Module</name><launch lang="en-US">index.html?m=1</launch></activity>
</activities></tincan>`})
}

// coursePage lists a tenant's courses (one page) and reports the entries and whether more follow.
func (e *env) coursePage(tn, query string) (n int, more bool) {
	e.t.Helper()
	var l struct {
		Courses []struct{ ID string } `json:"courses"`
		More    string                `json:"more"`
	}
	r := e.do("GET", "/engine/api/v1/"+tn+"/courses"+query, root, nil)
	e.expect(r, 200, "course list")
	r.json(e.t, &l)
	return len(l.Courses), l.More != ""
}

func (e *env) setSetting(path, id, value string) {
	e.t.Helper()
	e.expect(e.do("PUT", path+"/configuration/"+id, root, map[string]any{"value": value}), 204, "set "+id+"="+value)
}

// warningsAbout returns the parser warnings that mention s.
func warningsAbout(res importResult, s string) []string {
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
	{"ApiResultLimitSinceNotSpecified", func(t *testing.T, e *env, tn string) {
		for i := 0; i < 3; i++ {
			e.importOK(tn, fmt.Sprintf("c%d", i), scorm12Package(t), "")
		}
		if n, more := e.coursePage(tn, ""); n != 3 || more {
			t.Fatalf("default page without since: %d entries, more=%v; want 3, none", n, more)
		}
		e.setSetting("/engine/api/v1/"+tn, "ApiResultLimitSinceNotSpecified", "2")
		if n, more := e.coursePage(tn, ""); n != 2 || !more {
			t.Fatalf("page of 2 without since: %d entries, more=%v", n, more)
		}
		if n, more := e.coursePage(tn, "?since=2000-01-01"); n != 3 || more {
			t.Fatalf("the setting changed the page with since: %d entries, more=%v", n, more)
		}
	}},
	{"ApiResultLimit", func(t *testing.T, e *env, tn string) {
		for i := 0; i < 3; i++ {
			e.importOK(tn, fmt.Sprintf("c%d", i), scorm12Package(t), "")
		}
		since := "?since=" + url.QueryEscape("2000-01-01T00:00:00Z")
		if n, more := e.coursePage(tn, since); n != 3 || more {
			t.Fatalf("default page with since: %d entries, more=%v; want 3, none", n, more)
		}
		e.setSetting("/engine/api/v1/"+tn, "ApiResultLimit", "1")
		if n, more := e.coursePage(tn, since); n != 1 || !more {
			t.Fatalf("page of 1 with since: %d entries, more=%v", n, more)
		}
		if n, _ := e.coursePage(tn, ""); n != 3 {
			t.Fatalf("the setting changed the page without since: %d entries", n)
		}
	}},
	{"xAPIEnabled", func(t *testing.T, e *env, tn string) {
		e.importOK(tn, "a", scorm12Package(t), "")
		e.importOK(tn, "b", scorm12Package(t), "")
		api := "/engine/api/v1/" + tn
		e.expect(e.do("GET", api+"/courses/a/xapiActivityId", root, nil), 200, "xAPI on by default")
		e.setSetting(api, "xAPIEnabled", "false")
		r := e.do("GET", api+"/courses/a/xapiActivityId", root, nil)
		e.expect(r, 404, "xAPI off for the tenant")
		if !strings.Contains(r.message(), "xAPIEnabled") {
			t.Errorf("404 message does not name the setting: %q", r.message())
		}
		// A course-level value overrides the tenant's, for that course only.
		e.setSetting(api+"/courses/b", "xAPIEnabled", "true")
		e.expect(e.do("GET", api+"/courses/b/xapiActivityId", root, nil), 200, "xAPI on for course b")
		e.expect(e.do("GET", api+"/courses/a/xapiActivityId", root, nil), 404, "xAPI still off for course a")
	}},
	{"TinCanRootAccount", func(t *testing.T, e *env, tn string) {
		acct := basic("lrsroot", "pw:with:colons")
		e.expect(e.do("GET", lrs+"/"+tn+"/statements", acct, nil, v200...), 401, "before the setting")
		e.setSetting("/engine/api/v1/"+tn, "TinCanRootAccount", "lrsroot:pw:with:colons")
		e.expect(e.do("POST", lrs+"/"+tn+"/statements", acct, statement("ann@example.com", "attempted", "http://example.com/a"), v200...), 200, "root account writes")
		if res := e.query(lrs+"/"+tn+"/statements", acct, v200); len(res.Statements) != 1 {
			t.Fatalf("root account reads %d statements, want 1", len(res.Statements))
		}
	}},
	{"TinCanBasicAccounts", func(t *testing.T, e *env, tn string) {
		viewer := basic("viewer", "view-pass")
		e.expect(e.do("GET", lrs+"/"+tn+"/statements", viewer, nil, v200...), 401, "before the setting")
		e.setSetting("/engine/api/v1/"+tn, "TinCanBasicAccounts", "viewer:view-pass:readonly")
		e.expect(e.do("GET", lrs+"/"+tn+"/statements", viewer, nil, v200...), 200, "read-only account reads")
		e.expect(e.do("POST", lrs+"/"+tn+"/statements", viewer, statement("ann@example.com", "attempted", "http://example.com/a"), v200...), 403, "read-only account cannot write")
	}},
	{"xAPIBasicAccounts", func(t *testing.T, e *env, tn string) {
		writer := basic("app", "app-pass")
		e.expect(e.do("POST", lrs+"/"+tn+"/statements", writer, statement("ann@example.com", "attempted", "http://example.com/a"), v200...), 401, "before the setting")
		e.setSetting("/engine/api/v1/"+tn, "xAPIBasicAccounts", "app:app-pass:readwrite")
		e.expect(e.do("POST", lrs+"/"+tn+"/statements", writer, statement("ann@example.com", "attempted", "http://example.com/a"), v200...), 200, "read-write account writes")
	}},
	{"EnableExistingActivityIdParserWarnings", func(t *testing.T, e *env, tn string) {
		const shared, module = "http://example.com/courses/shared", "http://example.com/courses/shared/m1"
		first := e.importOK(tn, "first", tincanPackage(t, shared, module), "")
		if w := warningsAbout(first, "already"); len(w) != 0 {
			t.Fatalf("first import warns about existing ids: %v", w)
		}
		// A new version of the same course reuses its own ids: no warning.
		again := e.importOK(tn, "first", tincanPackage(t, shared, module), "&mayCreateNewVersion=true")
		if w := warningsAbout(again, "already"); len(w) != 0 {
			t.Fatalf("new version of the same course warns: %v", w)
		}
		// Another course with the same ids: one warning per id, naming the id and the course.
		second := e.importOK(tn, "second", tincanPackage(t, shared, module), "")
		for _, id := range []string{shared, module} {
			w := warningsAbout(second, `"`+id+`"`)
			if len(w) != 1 || !strings.Contains(w[0], "'first'") {
				t.Fatalf("warnings about %s: %v (all: %v)", id, w, second.ParserWarnings)
			}
		}
		// An id the tenant's record store already holds statements about.
		const seen = "http://example.com/courses/seen"
		e.expect(e.do("POST", lrs+"/"+tn+"/statements", root, statement("ann@example.com", "attempted", seen), v200...), 200, "statement")
		third := e.importOK(tn, "third", tincanPackage(t, seen, "http://example.com/courses/seen/m1"), "")
		if w := warningsAbout(third, `"`+seen+`"`); len(w) != 1 || !strings.Contains(w[0], "record store") {
			t.Fatalf("warnings about an id in the record store: %v (all: %v)", w, third.ParserWarnings)
		}
		// Deleting a course releases its ids.
		e.expect(e.do("DELETE", "/engine/api/v1/"+tn+"/courses/second", root, nil), 204, "delete second")
		e.expect(e.do("DELETE", "/engine/api/v1/"+tn+"/courses/first", root, nil), 204, "delete first")
		released := e.importOK(tn, "fourth", tincanPackage(t, shared, module), "")
		if w := warningsAbout(released, "already"); len(w) != 0 {
			t.Fatalf("ids of deleted courses still warn: %v", w)
		}
		// Switched off, the same situation gives no warning.
		e.setSetting("/engine/api/v1/"+tn, "EnableExistingActivityIdParserWarnings", "false")
		off := e.importOK(tn, "fifth", tincanPackage(t, shared, module), "")
		off2 := e.importOK(tn, "sixth", tincanPackage(t, seen, "http://example.com/courses/seen/m1"), "")
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
	effect func(t *testing.T, e *env, tn string)
}

// settingEffectGroups are the rows of every feature: settingEffects here, and one slice per
// feature in its own settings_<feature>_test.go, so that features add rows without touching
// each other's tables.
var settingEffectGroups = [][]settingEffect{settingEffects, postbackSettingEffects, sessionsSettingEffects, runtimeSettingEffects, chromeSettingEffects, xapiregSettingEffects, convertSettingEffects, forwardSettingEffects}

func TestSettingEffects(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		covered := map[string]bool{}
		for i, tc := range slices.Concat(settingEffectGroups...) {
			covered[tc.id] = true
			t.Run(tc.id, func(t *testing.T) {
				tn := fmt.Sprintf("settings%d", i)
				e.createTenant(tn, true)
				r := e.do("GET", "/engine/api/v1/"+tn+"/configuration/"+tc.id, root, nil)
				e.expect(r, 200, "setting is served")
				tc.effect(t, e, tn)
			})
		}
		for _, s := range e.app.Settings.Catalogue().All() {
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
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		e.importOK("acme", "intro", scorm12Package(t), "")
		r := e.do("GET", "/engine/api/v1/acme/configuration", root, nil)
		e.expect(r, 200, "list")
		for _, id := range []string{"xAPIUrlPrefix", "AllowedTenantNameRegex", "ExpireLaunchHistoryAfterDays",
			"xAPIValidations", "ShouldExpireLaunchHistory", "GENERATION__SKILL_TAXONOMY",
			"AllowedTenantNames", "NoSuchSetting"} {
			if strings.Contains(string(r.Body), `"`+id+`"`) {
				t.Errorf("configuration list advertises %s", id)
			}
			for _, base := range []string{"/engine/api/v1/acme", "/engine/api/v1/acme/courses/intro"} {
				r := e.do("PUT", base+"/configuration/"+id, root, map[string]any{"value": "true"})
				e.expect(r, 400, "PUT "+id)
				if !strings.Contains(r.message(), id) {
					t.Errorf("PUT %s message does not name the id: %q", id, r.message())
				}
				r = e.do("GET", base+"/configuration/"+id, root, nil)
				e.expect(r, 404, "GET "+id)
				if !strings.Contains(r.message(), id) {
					t.Errorf("GET %s message does not name the id: %q", id, r.message())
				}
			}
		}
	})
}
