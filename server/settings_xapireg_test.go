package server_test

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// xapiregCourse creates registration reg with xAPI registration id xreg on the one-activity
// xAPI course "tc" of tenant tn, importing it with the first registration r1.
func (e *env) xapiregCourse(t *testing.T, tn, reg, xreg string) {
	t.Helper()
	if reg == "r1" {
		e.importOK(tn, "tc", zipOf(t, fixtureFiles(t, "xapi_single")), "")
	}
	e.expect(e.do("POST", "/engine/api/v1/"+tn+"/registrations", root, map[string]any{"courseId": "tc", "registrationId": reg,
		"xapiRegistrationId": xreg, "learner": map[string]any{"id": "ann"}}), 204, "create registration "+reg)
}

// xapiLaunchParams launches registration reg of tenant tn and returns the TinCan launch
// parameters of its activity, as the player page hands them to the content.
func (e *env) xapiLaunchParams(t *testing.T, tn, reg string) url.Values {
	t.Helper()
	session := e.launch(e.launchPath("/engine/api/v1/" + tn + "/registrations/" + reg + "/launchLink"))
	return e.firstActivityURL(t, session).Query()
}

// firstActivityURL is the URL the player page of session gives its first activity.
func (e *env) firstActivityURL(t *testing.T, session string) *url.URL {
	t.Helper()
	page := string(e.get("/player/session/" + session).Body)
	m := regexp.MustCompile(`"url":"([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no activity URL in the page: %s", page)
	}
	u, err := url.Parse(strings.ReplaceAll(m[1], `\u0026`, "&"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// statementCount counts the statements of tenant tn matching query (one page).
func (e *env) statementCount(t *testing.T, tn string, query url.Values) int {
	t.Helper()
	var res struct{ Statements []json.RawMessage }
	r := e.do("GET", lrs+"/"+tn+"/statements?"+query.Encode(), root, nil, v103...)
	e.expect(r, 200, "statements")
	r.json(t, &res)
	return len(res.Statements)
}

const golfIRI = "http://example.com/courses/golf"

var xapiregSettingEffects = []settingEffect{
	{"TinCanInteractionsEnabled", func(t *testing.T, e *env, tn string) {
		const xreg = "1a2b3c4d-0000-4000-8000-000000000001"
		e.xapiregCourse(t, tn, "r1", xreg)
		answered := xapiStatement(xreg, "answered", "urn:example:question:1", map[string]any{"response": "b", "success": true, "duration": "PT5S"})
		answered["object"] = map[string]any{"objectType": "Activity", "id": "urn:example:question:1", "definition": map[string]any{
			"type": "http://adlnet.gov/expapi/activities/cmi.interaction", "interactionType": "choice",
			"description": map[string]string{"en-US": "Which club?"}, "correctResponsesPattern": []string{"b"}}}
		answered["context"].(map[string]any)["contextActivities"] = map[string]any{"parent": []any{map[string]any{"id": golfIRI}}}
		e.expect(e.do("POST", lrs+"/"+tn+"/statements", root, answered, v103...), 200, "answered statement")
		interactions := func() []map[string]any {
			var d struct {
				ActivityDetails struct {
					Runtime struct{ RuntimeInteractions []map[string]any }
				}
			}
			r := e.do("GET", "/engine/api/v1/"+tn+"/registrations/r1/progress/detail", root, nil)
			e.expect(r, 200, "progress/detail")
			r.json(t, &d)
			return d.ActivityDetails.Runtime.RuntimeInteractions
		}
		got := interactions()
		if len(got) != 1 || got[0]["id"] != "urn:example:question:1" || got[0]["type"] != "choice" || got[0]["learnerResponse"] != "b" ||
			got[0]["result"] != "correct" || got[0]["description"] != "Which club?" || got[0]["latency"] != "PT5S" {
			t.Fatalf("interactions by default: %v", got)
		}
		e.setSetting("/engine/api/v1/"+tn, "TinCanInteractionsEnabled", "false")
		if got := interactions(); len(got) != 0 {
			t.Fatalf("interactions with TinCanInteractionsEnabled false: %v", got)
		}
	}},
	{"GenerateTinCanLaunchStatements", func(t *testing.T, e *env, tn string) {
		launched := func(xreg string) int {
			return e.statementCount(t, tn, url.Values{"registration": {xreg}, "verb": {"http://adlnet.gov/expapi/verbs/launched"}})
		}
		const x1, x2 = "1a2b3c4d-0000-4000-8000-000000000011", "1a2b3c4d-0000-4000-8000-000000000012"
		e.xapiregCourse(t, tn, "r1", x1)
		e.xapiLaunchParams(t, tn, "r1")
		if n := launched(x1); n != 1 {
			t.Fatalf("launched statements of a launch by default: %d", n)
		}
		e.setSetting("/engine/api/v1/"+tn, "GenerateTinCanLaunchStatements", "false")
		e.xapiregCourse(t, tn, "r2", x2)
		e.xapiLaunchParams(t, tn, "r2")
		if n := launched(x2); n != 0 {
			t.Fatalf("launched statements with GenerateTinCanLaunchStatements false: %d", n)
		}
	}},
	{"xAPILaunchTokenLifeInSeconds", func(t *testing.T, e *env, tn string) {
		// The credential's expiry is in its signed payload: Basic base64("launch:<payload>.<mac>").
		life := func(reg, xreg string) time.Duration {
			e.xapiregCourse(t, tn, reg, xreg)
			q := e.xapiLaunchParams(t, tn, reg)
			raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(q.Get("auth"), "Basic "))
			if err != nil {
				t.Fatal(err)
			}
			payload, _, _ := strings.Cut(strings.TrimPrefix(string(raw), "launch:"), ".")
			b, err := base64.RawURLEncoding.DecodeString(payload)
			var c struct{ E int64 }
			if err != nil || json.Unmarshal(b, &c) != nil {
				t.Fatalf("launch credential %q: %v", raw, err)
			}
			return time.Until(time.Unix(c.E, 0))
		}
		if d := life("r1", "1a2b3c4d-0000-4000-8000-000000000021"); d < 8*time.Hour-time.Minute || d > 8*time.Hour {
			t.Fatalf("default credential life %v, want 8h", d)
		}
		e.setSetting("/engine/api/v1/"+tn, "xAPILaunchTokenLifeInSeconds", "120")
		if d := life("r2", "1a2b3c4d-0000-4000-8000-000000000022"); d < time.Minute || d > 2*time.Minute {
			t.Fatalf("credential life with xAPILaunchTokenLifeInSeconds 120: %v", d)
		}
		e.expect(e.do("PUT", "/engine/api/v1/"+tn+"/configuration/xAPILaunchTokenLifeInSeconds", root, map[string]any{"value": "59"}), 400, "below the minimum")
	}},
	{"Cmi5EnforceStatementRules", func(t *testing.T, e *env, tn string) {
		e.importOK(tn, "c5", zipOf(t, map[string]string{"cmi5.xml": cmi5Course, "a1.html": "a1", "a2.html": "a2", "a3.html": "a3"}), "")
		e.expect(e.do("POST", "/engine/api/v1/"+tn+"/registrations", root, map[string]any{"courseId": "c5", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		launch := func() *cmi5Session {
			session := e.launch(e.launchPath("/engine/api/v1/" + tn + "/registrations/r1/launchLink"))
			return e.cmi5Start(t, e.firstActivityURL(t, session).String())
		}
		// By default a statement before initialized breaks the cmi5 rules: 403.
		au := launch()
		if r := au.send(au.statement("experienced", nil)); r.Status != 403 {
			t.Fatalf("a statement before initialized by default: %d %s", r.Status, r.Body)
		}
		// Off, a session launched afterwards is held to the xAPI rules only; one launched
		// before keeps the rules it was launched with.
		e.setSetting("/engine/api/v1/"+tn, "Cmi5EnforceStatementRules", "false")
		if r := au.send(au.statement("experienced", nil)); r.Status != 403 {
			t.Fatalf("the session launched under the rules, after the change: %d %s", r.Status, r.Body)
		}
		au = launch()
		e.expect(au.send(au.statement("experienced", nil)), 200, "a statement before initialized with the rules off")
		e.expect(au.send(au.statement("completed", nil)), 200, "completed without result.completion with the rules off")
	}},
	{"UseStatementTimestampInRegistrationUpdates", func(t *testing.T, e *env, tn string) {
		completedDate := func(reg, xreg string) string {
			e.xapiregCourse(t, tn, reg, xreg)
			st := xapiStatement(xreg, "completed", golfIRI, nil)
			st["timestamp"] = "2020-01-02T03:04:05Z"
			e.expect(e.do("POST", lrs+"/"+tn+"/statements", root, st, v103...), 200, "completed statement")
			var p struct{ RegistrationCompletion, CompletedDate string }
			e.do("GET", "/engine/api/v1/"+tn+"/registrations/"+reg+"/progress", root, nil).json(t, &p)
			if p.RegistrationCompletion != "COMPLETED" {
				t.Fatalf("progress after completed: %+v", p)
			}
			return p.CompletedDate
		}
		if d := completedDate("r1", "1a2b3c4d-0000-4000-8000-000000000031"); d != "2020-01-02T03:04:05.000Z" {
			t.Fatalf("completedDate by default: %q, want the statement's timestamp", d)
		}
		e.setSetting("/engine/api/v1/"+tn, "UseStatementTimestampInRegistrationUpdates", "false")
		d := completedDate("r2", "1a2b3c4d-0000-4000-8000-000000000032")
		if at, err := time.Parse(time.RFC3339, d); err != nil || time.Since(at) > time.Minute {
			t.Fatalf("completedDate with UseStatementTimestampInRegistrationUpdates false: %q, want when it was stored", d)
		}
	}},
}
