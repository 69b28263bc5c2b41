package engineapi_test

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// xapiregCourse creates registration reg with xAPI registration id xreg on the one-activity
// xAPI course "tc" of tenant tn, importing it with the first registration r1.
func xapiregCourse(e *servertest.Env, t *testing.T, tn, reg, xreg string) {
	t.Helper()
	if reg == "r1" {
		e.ImportOK(tn, "tc", servertest.ZipOf(t, servertest.FixtureFiles(t, "xapi_single")), "")
	}
	e.Expect(e.Do("POST", "/engine/api/v1/"+tn+"/registrations", servertest.Root, map[string]any{"courseId": "tc", "registrationId": reg,
		"xapiRegistrationId": xreg, "learner": map[string]any{"id": "ann"}}), 204, "create registration "+reg)
}

// xapiLaunchParams launches registration reg of tenant tn and returns the TinCan launch
// parameters of its activity, as the player page hands them to the content.
func xapiLaunchParams(e *servertest.Env, t *testing.T, tn, reg string) url.Values {
	t.Helper()
	session := e.Launch(e.LaunchPath("/engine/api/v1/" + tn + "/registrations/" + reg + "/launchLink"))
	return firstActivityURL(e, t, session).Query()
}

// firstActivityURL is the URL the player page of session gives its first activity.
func firstActivityURL(e *servertest.Env, t *testing.T, session string) *url.URL {
	t.Helper()
	page := string(e.Get("/player/session/" + session).Body)
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
func statementCount(e *servertest.Env, t *testing.T, tn string, query url.Values) int {
	t.Helper()
	var res struct{ Statements []json.RawMessage }
	r := e.Do("GET", servertest.LRS+"/"+tn+"/statements?"+query.Encode(), servertest.Root, nil, servertest.V103...)
	e.Expect(r, 200, "statements")
	r.JSON(t, &res)
	return len(res.Statements)
}

const golfIRI = "http://example.com/courses/golf"

var xapiregSettingEffects = []settingEffect{
	{"TinCanInteractionsEnabled", func(t *testing.T, e *servertest.Env, tn string) {
		const xreg = "1a2b3c4d-0000-4000-8000-000000000001"
		xapiregCourse(e, t, tn, "r1", xreg)
		answered := servertest.XapiStatement(xreg, "answered", "urn:example:question:1", map[string]any{"response": "b", "success": true, "duration": "PT5S"})
		answered["object"] = map[string]any{"objectType": "Activity", "id": "urn:example:question:1", "definition": map[string]any{
			"type": "http://adlnet.gov/expapi/activities/cmi.interaction", "interactionType": "choice",
			"description": map[string]string{"en-US": "Which club?"}, "correctResponsesPattern": []string{"b"}}}
		answered["context"].(map[string]any)["contextActivities"] = map[string]any{"parent": []any{map[string]any{"id": golfIRI}}}
		e.Expect(e.Do("POST", servertest.LRS+"/"+tn+"/statements", servertest.Root, answered, servertest.V103...), 200, "answered statement")
		interactions := func() []map[string]any {
			var d struct {
				ActivityDetails struct {
					Runtime struct{ RuntimeInteractions []map[string]any }
				}
			}
			r := e.Do("GET", "/engine/api/v1/"+tn+"/registrations/r1/progress/detail", servertest.Root, nil)
			e.Expect(r, 200, "progress/detail")
			r.JSON(t, &d)
			return d.ActivityDetails.Runtime.RuntimeInteractions
		}
		got := interactions()
		if len(got) != 1 || got[0]["id"] != "urn:example:question:1" || got[0]["type"] != "choice" || got[0]["learnerResponse"] != "b" ||
			got[0]["result"] != "correct" || got[0]["description"] != "Which club?" || got[0]["latency"] != "PT5S" {
			t.Fatalf("interactions by default: %v", got)
		}
		e.SetSetting("/engine/api/v1/"+tn, "TinCanInteractionsEnabled", "false")
		if got := interactions(); len(got) != 0 {
			t.Fatalf("interactions with TinCanInteractionsEnabled false: %v", got)
		}
	}},
	{"GenerateTinCanLaunchStatements", func(t *testing.T, e *servertest.Env, tn string) {
		launched := func(xreg string) int {
			return statementCount(e, t, tn, url.Values{"registration": {xreg}, "verb": {"http://adlnet.gov/expapi/verbs/launched"}})
		}
		const x1, x2 = "1a2b3c4d-0000-4000-8000-000000000011", "1a2b3c4d-0000-4000-8000-000000000012"
		xapiregCourse(e, t, tn, "r1", x1)
		xapiLaunchParams(e, t, tn, "r1")
		if n := launched(x1); n != 1 {
			t.Fatalf("launched statements of a launch by default: %d", n)
		}
		e.SetSetting("/engine/api/v1/"+tn, "GenerateTinCanLaunchStatements", "false")
		xapiregCourse(e, t, tn, "r2", x2)
		xapiLaunchParams(e, t, tn, "r2")
		if n := launched(x2); n != 0 {
			t.Fatalf("launched statements with GenerateTinCanLaunchStatements false: %d", n)
		}
	}},
	{"xAPILaunchActorFormat", func(t *testing.T, e *servertest.Env, tn string) {
		const x1, x2 = "1a2b3c4d-0000-4000-8000-000000000031", "1a2b3c4d-0000-4000-8000-000000000032"
		xapiregCourse(e, t, tn, "r1", x1)
		q := xapiLaunchParams(e, t, tn, "r1")
		var agent struct {
			ObjectType string
			Account    struct{ HomePage, Name string }
		}
		if err := json.Unmarshal([]byte(q.Get("actor")), &agent); err != nil || agent.ObjectType != "Agent" || agent.Account.HomePage == "" || agent.Account.Name != "ann" {
			t.Fatalf("actor by default: %s (%v), want an xAPI account agent", q.Get("actor"), err)
		}
		e.SetSetting("/engine/api/v1/"+tn, "xAPILaunchActorFormat", "tincan095")
		xapiregCourse(e, t, tn, "a2", x2)
		q = xapiLaunchParams(e, t, tn, "a2")
		want := `{"account":[{"accountName":"ann","accountServiceHomePage":"` + agent.Account.HomePage + `"}],"objectType":"Agent"}`
		if got := q.Get("actor"); got != want {
			t.Fatalf("actor with xAPILaunchActorFormat tincan095: %s, want %s", got, want)
		}
		// The launched statement keeps the xAPI form: the statement must be valid.
		if n := statementCount(e, t, tn, url.Values{"registration": {x2}, "verb": {"http://adlnet.gov/expapi/verbs/launched"}}); n != 1 {
			t.Fatalf("launched statements with xAPILaunchActorFormat tincan095: %d", n)
		}
	}},
	{"xAPILaunchTokenLifeInSeconds", func(t *testing.T, e *servertest.Env, tn string) {
		// The credential's expiry is in its signed payload: Basic base64("launch:<payload>.<mac>").
		life := func(reg, xreg string) time.Duration {
			xapiregCourse(e, t, tn, reg, xreg)
			q := xapiLaunchParams(e, t, tn, reg)
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
		e.SetSetting("/engine/api/v1/"+tn, "xAPILaunchTokenLifeInSeconds", "120")
		if d := life("r2", "1a2b3c4d-0000-4000-8000-000000000022"); d < time.Minute || d > 2*time.Minute {
			t.Fatalf("credential life with xAPILaunchTokenLifeInSeconds 120: %v", d)
		}
		e.Expect(e.Do("PUT", "/engine/api/v1/"+tn+"/configuration/xAPILaunchTokenLifeInSeconds", servertest.Root, map[string]any{"value": "59"}), 400, "below the minimum")
	}},
	{"Cmi5EnforceStatementRules", func(t *testing.T, e *servertest.Env, tn string) {
		e.ImportOK(tn, "c5", servertest.ZipOf(t, map[string]string{"cmi5.xml": servertest.Cmi5Course, "a1.html": "a1", "a2.html": "a2", "a3.html": "a3"}), "")
		e.Expect(e.Do("POST", "/engine/api/v1/"+tn+"/registrations", servertest.Root, map[string]any{"courseId": "c5", "registrationId": "r1",
			"learner": map[string]any{"id": "ann"}}), 204, "create registration")
		launch := func() *servertest.Cmi5Session {
			session := e.Launch(e.LaunchPath("/engine/api/v1/" + tn + "/registrations/r1/launchLink"))
			return e.Cmi5Start(t, firstActivityURL(e, t, session).String())
		}
		// By default a statement before initialized breaks the cmi5 rules: 403.
		au := launch()
		if r := au.Send(au.Statement("experienced", nil)); r.Status != 403 {
			t.Fatalf("a statement before initialized by default: %d %s", r.Status, r.Body)
		}
		// Off, a session launched afterwards is held to the xAPI rules only; one launched
		// before keeps the rules it was launched with.
		e.SetSetting("/engine/api/v1/"+tn, "Cmi5EnforceStatementRules", "false")
		if r := au.Send(au.Statement("experienced", nil)); r.Status != 403 {
			t.Fatalf("the session launched under the rules, after the change: %d %s", r.Status, r.Body)
		}
		au = launch()
		e.Expect(au.Send(au.Statement("experienced", nil)), 200, "a statement before initialized with the rules off")
		e.Expect(au.Send(au.Statement("completed", nil)), 200, "completed without result.completion with the rules off")
	}},
	{"UseStatementTimestampInRegistrationUpdates", func(t *testing.T, e *servertest.Env, tn string) {
		completedDate := func(reg, xreg string) string {
			xapiregCourse(e, t, tn, reg, xreg)
			st := servertest.XapiStatement(xreg, "completed", golfIRI, nil)
			st["timestamp"] = "2020-01-02T03:04:05Z"
			e.Expect(e.Do("POST", servertest.LRS+"/"+tn+"/statements", servertest.Root, st, servertest.V103...), 200, "completed statement")
			var p struct{ RegistrationCompletion, CompletedDate string }
			e.Do("GET", "/engine/api/v1/"+tn+"/registrations/"+reg+"/progress", servertest.Root, nil).JSON(t, &p)
			if p.RegistrationCompletion != "COMPLETED" {
				t.Fatalf("progress after completed: %+v", p)
			}
			return p.CompletedDate
		}
		if d := completedDate("r1", "1a2b3c4d-0000-4000-8000-000000000031"); d != "2020-01-02T03:04:05.000Z" {
			t.Fatalf("completedDate by default: %q, want the statement's timestamp", d)
		}
		e.SetSetting("/engine/api/v1/"+tn, "UseStatementTimestampInRegistrationUpdates", "false")
		d := completedDate("r2", "1a2b3c4d-0000-4000-8000-000000000032")
		if at, err := time.Parse(time.RFC3339, d); err != nil || time.Since(at) > time.Minute {
			t.Fatalf("completedDate with UseStatementTimestampInRegistrationUpdates false: %q, want when it was stored", d)
		}
	}},
}
