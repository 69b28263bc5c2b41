package player_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// cmi5AllNA is a course whose only AU is NotApplicable: satisfied at registration.
const cmi5AllNA = `<?xml version="1.0" encoding="utf-8"?>
<courseStructure xmlns="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd">
  <course id="https://example.com/na"><title><langstring lang="en">NA</langstring></title><description><langstring lang="en">NA</langstring></description></course>
  <au id="https://example.com/na/a" moveOn="NotApplicable">
    <title><langstring lang="en">A</langstring></title><description><langstring lang="en">A</langstring></description><url>a.html</url></au>
</courseStructure>`

// lmsStatement is the part of a statement TestCMI5LMSStatements reads.
type lmsStatement struct {
	Verb   struct{ ID string }
	Object struct {
		ID         string
		Definition struct{ Type string }
	}
	Result struct {
		Success, Completion *bool
		Duration            string
		Extensions          map[string]string
	}
	Context struct {
		Registration      string
		Extensions        map[string]any
		ContextActivities struct{ Grouping, Category []struct{ ID string } }
	}
}

func (s lmsStatement) short() string {
	v := s.Verb.ID[strings.LastIndex(s.Verb.ID, "/")+1:]
	if t := s.Object.Definition.Type; t != "" {
		v += ":" + t[strings.LastIndex(t, "/")+1:]
	}
	return v
}

// TestCMI5LMSStatements: the LMS's cmi5 statements (launched, satisfied for blocks and course,
// also at registration; waived; abandoned, by the engine and at the next launch), the LMS's
// own activity ids, and the record store's cmi5 rules for the statements and documents of an
// AU session (403), in both modes.
func TestCMI5LMSStatements(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		files := map[string]string{"cmi5.xml": servertest.Cmi5Course, "a1.html": "a1", "a2.html": "a2", "a3.html": "a3"}
		e.ImportOK("acme", "c", servertest.ZipOf(t, files), "")
		e.ImportOK("acme", "na", servertest.ZipOf(t, map[string]string{"cmi5.xml": cmi5AllNA, "a.html": "a"}), "")
		regs := "/engine/api/v1/acme/registrations"
		register := func(id, courseID string) {
			e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": courseID, "registrationId": id,
				"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create "+id)
		}
		xreg := func(id string) string {
			var b struct{ ID string }
			e.Do("GET", regs+"/"+id+"/xapiRegistrationId", servertest.Root, nil).JSON(t, &b)
			return b.ID
		}
		stmts := func(reg string) []lmsStatement {
			var res struct{ Statements []lmsStatement }
			e.Do("GET", servertest.LRS+"/acme/statements?ascending=true&registration="+xreg(reg), servertest.Root, nil, servertest.V103...).JSON(t, &res)
			return res.Statements
		}
		verbs := func(reg string) string {
			var out []string
			for _, s := range stmts(reg) {
				out = append(out, s.short())
			}
			return strings.Join(out, ",")
		}
		// aus launches a registration (launch link query q) and lists its AUs' launch routes.
		aus := func(reg, q string) []string {
			session := e.Launch(e.LaunchPath(regs + "/" + reg + "/launchLink" + q))
			page := string(e.Get("/player/session/" + session).Body)
			var out []string
			for _, m := range regexp.MustCompile(`"url":"(/player/cmi5/[^"]*)"`).FindAllStringSubmatch(page, -1) {
				out = append(out, strings.ReplaceAll(m[1], `\u0026`, "&"))
			}
			if len(out) != 3 {
				t.Fatalf("AU routes in the player page: %v", out)
			}
			return out
		}

		// moveOn is evaluated at registration (9.6.1.1-3): a course of NotApplicable AUs is
		// satisfied before anything is launched; the object is the LMS's id, the publisher's
		// id is in grouping.
		register("rna", "na")
		if st := stmts("rna"); len(st) != 1 || st[0].short() != "satisfied:course" || !strings.HasPrefix(st[0].Object.ID, "urn:lectern:cmi5:course:") ||
			len(st[0].Context.ContextActivities.Grouping) != 1 || st[0].Context.ContextActivities.Grouping[0].ID != "https://example.com/na" {
			t.Errorf("statements at registration: %+v", st)
		}

		register("r1", "c")
		if v := verbs("r1"); v != "" {
			t.Errorf("a course with a moveOn to meet is not satisfied at registration: %s", v)
		}
		routes := aus("r1", "")
		au := e.Cmi5Start(t, routes[0])
		if !strings.HasPrefix(au.Q.Get("activityId"), "urn:lectern:cmi5:au:") || au.LaunchData.ReturnURL != "" {
			t.Errorf("AnyWindow AU: activityId %q, returnURL %q", au.Q.Get("activityId"), au.LaunchData.ReturnURL)
		}
		// An endpoint written with a trailing slash before the resource still reaches it.
		r := e.Do("GET", au.Endpoint+"//activities/state?"+url.Values{"activityId": {au.Q.Get("activityId")}, "agent": {au.Q.Get("actor")},
			"registration": {au.Q.Get("registration")}, "stateId": {"LMS.LaunchData"}}.Encode(), au.Cred, nil, servertest.V103...)
		e.Expect(r, 200, "LMS.LaunchData through a double slash")
		refused := func(what, req string, r servertest.Resp) {
			t.Helper()
			if r.Status != 403 || !strings.Contains(string(r.Body), req) {
				t.Errorf("%s: %d %s, want 403 naming %s", what, r.Status, r.Body, req)
			}
		}
		refused("a statement before initialized", "9.3.0.0-4", au.Send(au.Statement("experienced", nil)))
		e.Expect(au.Send(au.Statement("initialized", nil)), 200, "initialized")
		refused("initialized twice", "9.3.0.0-2", au.Send(au.Statement("initialized", nil)))
		noSession := au.Statement("experienced", nil)
		delete(noSession["context"].(map[string]any)["extensions"].(map[string]any), "https://w3id.org/xapi/cmi5/context/extensions/sessionid")
		refused("a statement without the session id", "9.6.3.1-4", au.Send(noSession))
		refused("passed below the masteryScore", "9.3.4.0-2", au.Send(au.Statement("passed",
			map[string]any{"success": true, "score": map[string]any{"scaled": 0.5}, "duration": "PT1S"})))
		refused("completed without result.completion", "9.5.3.0-1", au.Send(au.Statement("completed", map[string]any{"duration": "PT1S"})))
		refused("a voiding statement", "6.3.0.0-1", au.Send(map[string]any{"id": "0f9b2c3e-1d4a-4b5c-8d6e-7f8091a2b3c4", "actor": au.Actor,
			"verb": map[string]any{"id": "http://adlnet.gov/expapi/verbs/voided"}, "object": map[string]any{"objectType": "StatementRef", "id": "0f9b2c3e-1d4a-4b5c-8d6e-7f8091a2b3c5"}}))
		launchData := au.Endpoint + "/activities/state?" + url.Values{"activityId": {au.Q.Get("activityId")}, "agent": {au.Q.Get("actor")},
			"registration": {au.Q.Get("registration")}, "stateId": {"LMS.LaunchData"}}.Encode()
		refused("a PUT of LMS.LaunchData", "10.2.1.0-5", e.Do("PUT", launchData, au.Cred, map[string]any{"x": 1}, servertest.V103...))
		prefs := au.Endpoint + "/agents/profile?" + url.Values{"agent": {au.Q.Get("actor")}, "profileId": {"cmi5LearnerPreferences"}}.Encode()
		refused("learner preferences without audioPreference", "11.0.0.0-5", e.Do("PUT", prefs, au.Cred, map[string]any{"languagePreference": "en-US"}, servertest.V103...))
		e.Expect(e.Do("PUT", prefs, au.Cred, map[string]any{"languagePreference": "en-US,fr-FR", "audioPreference": "on"}, append(servertest.V103, "If-None-Match", "*")...), 204, "learner preferences")
		// Completing a1 meets its moveOn; a2 and a3 are NotApplicable: the block, then the
		// course, are satisfied in the statement's session.
		e.Expect(au.Send(au.Statement("completed", map[string]any{"completion": true, "duration": "PT1S"})), 200, "completed")
		st := stmts("r1")
		var got []string
		for _, s := range st {
			got = append(got, s.short())
		}
		if strings.Join(got, ",") != "launched,initialized,completed,satisfied:block,satisfied:course" {
			t.Fatalf("statements after completion: %v", got)
		}
		for i, pub := range map[int]string{3: "https://example.com/c/block", 4: "https://example.com/c"} {
			s := st[i]
			if s.Context.Extensions["https://w3id.org/xapi/cmi5/context/extensions/sessionid"] != au.SessionID() || strings.Contains(s.Object.ID, "example.com") ||
				len(s.Context.ContextActivities.Grouping) != 1 || s.Context.ContextActivities.Grouping[0].ID != pub {
				t.Errorf("satisfied statement %d: %+v", i, s)
			}
		}
		refused("completed twice in a registration", "9.3.0.0-2", au.Send(au.Statement("completed", map[string]any{"completion": true, "duration": "PT1S"})))
		e.Expect(au.Send(au.Statement("terminated", map[string]any{"duration": "PT2S"})), 200, "terminated")
		refused("a statement after terminated", "9.3.0.0-5", au.Send(au.Statement("experienced", nil)))
		refused("the State API after the session", "8.1.2.0-2", e.Do("GET", launchData, au.Cred, nil, servertest.V103...))

		// The OwnWindow AU gets a returnURL that leads back to the player.
		own := e.Cmi5Start(t, routes[1])
		if ru, err := url.Parse(own.LaunchData.ReturnURL); err != nil || !strings.HasPrefix(ru.Path, "/player/cmi5/") || !strings.HasSuffix(ru.Path, "/return") {
			t.Errorf("OwnWindow returnURL %q", own.LaunchData.ReturnURL)
		} else if r := e.Get(ru.RequestURI()); r.Status != 302 || !strings.Contains(r.Header.Get("Location"), "returned=") {
			t.Errorf("returnURL: %d %s", r.Status, r.Header.Get("Location"))
		}

		// Abandon: by the engine, then nothing more for the session; a session left open is
		// abandoned at the AU's next launch.
		a3 := e.Cmi5Start(t, routes[2])
		e.Expect(a3.Send(a3.Statement("initialized", nil)), 200, "initialized a3")
		e.Expect(e.Do("POST", regs+"/r1/cmi5/abandon", servertest.Root, map[string]any{"sessionId": a3.SessionID()}), 204, "abandon")
		refused("a statement after abandoned", "9.3.0.0-5", a3.Send(a3.Statement("experienced", nil)))
		e.Expect(e.Do("POST", regs+"/r1/cmi5/abandon", servertest.Root, map[string]any{"sessionId": a3.SessionID()}), 409, "abandon twice")
		e.Expect(e.Do("POST", regs+"/r1/cmi5/abandon", servertest.Root, map[string]any{"sessionId": "nope"}), 404, "abandon an unknown session")
		left := e.Cmi5Start(t, aus("r1", "")[2])
		e.Cmi5Start(t, aus("r1", "")[2])
		abandoned := 0
		for _, s := range stmts("r1") {
			if s.short() == "abandoned" {
				abandoned++
				if s.Result.Duration == "" || s.Object.ID != a3.Q.Get("activityId") {
					t.Errorf("abandoned statement: %+v", s)
				}
			}
		}
		if abandoned != 2 {
			t.Errorf("abandoned statements: %d, want 2 (the engine's and the session %s left open)", abandoned, left.SessionID())
		}

		// Waive: the waived statement, then the satisfied statements it makes due.
		register("r2", "c")
		e.Expect(e.Do("POST", regs+"/r2/cmi5/waive", servertest.Root, map[string]any{"activityId": "https://example.com/c/a1", "reason": "Tested Out"}), 204, "waive")
		st = stmts("r2")
		got = got[:0]
		for _, s := range st {
			got = append(got, s.short())
		}
		if strings.Join(got, ",") != "waived,satisfied:block,satisfied:course" {
			t.Fatalf("statements after waive: %v", got)
		}
		if w := st[0]; w.Result.Success == nil || !*w.Result.Success || w.Result.Completion == nil || !*w.Result.Completion ||
			w.Result.Extensions["https://w3id.org/xapi/cmi5/result/extensions/reason"] != "Tested Out" ||
			w.Context.Extensions["https://w3id.org/xapi/cmi5/context/extensions/sessionid"] != st[1].Context.Extensions["https://w3id.org/xapi/cmi5/context/extensions/sessionid"] {
			t.Errorf("waived statement: %+v", w)
		}
		e.Expect(e.Do("POST", regs+"/r2/cmi5/waive", servertest.Root, map[string]any{"activityId": "https://example.com/c/a1", "reason": "Tested Out"}), 409, "waive twice")
		e.Expect(e.Do("POST", regs+"/r2/cmi5/waive", servertest.Root, map[string]any{"activityId": "https://example.com/c/nope", "reason": "Tested Out"}), 400, "waive no AU")
		var p struct{ RegistrationCompletion string }
		e.Do("GET", regs+"/r2/progress", servertest.Root, nil).JSON(t, &p)
		if p.RegistrationCompletion != "COMPLETED" {
			t.Errorf("progress after waive: %+v", p)
		}

		// Review and Browse: completed, passed and failed are refused (10.2.2.0-2, -3).
		register("r3", "c")
		rev := e.Cmi5Start(t, aus("r3", "?forceReview=true")[0])
		if rev.LaunchData.LaunchMode != "Review" {
			t.Fatalf("launchMode %q", rev.LaunchData.LaunchMode)
		}
		e.Expect(rev.Send(rev.Statement("initialized", nil)), 200, "initialized in Review")
		refused("completed in Review", "10.2.2.0-3", rev.Send(rev.Statement("completed", map[string]any{"completion": true, "duration": "PT1S"})))
		session := e.Launch(e.LaunchPath("/engine/api/v1/acme/courses/c/preview"))
		m := regexp.MustCompile(`"url":"(/player/cmi5/[^"]*)"`).FindStringSubmatch(string(e.Get("/player/session/" + session).Body))
		browse := e.Cmi5Start(t, strings.ReplaceAll(m[1], `\u0026`, "&"))
		if browse.LaunchData.LaunchMode != "Browse" {
			t.Fatalf("launchMode %q", browse.LaunchData.LaunchMode)
		}
		e.Expect(browse.Send(browse.Statement("initialized", nil)), 200, "initialized in Browse")
		refused("passed in Browse", "10.2.2.0-2", browse.Send(browse.Statement("passed", map[string]any{"success": true, "duration": "PT1S"})))

		// A page script gets its 401 without a Basic challenge (a browser would prompt and
		// hold the request); other clients get the challenge.
		bad := servertest.Auth{Header: "Basic bm86cGU="}
		if r := e.Do("GET", servertest.LRS+"/acme/statements", bad, nil, append(servertest.V103, "Sec-Fetch-Dest", "empty")...); r.Status != 401 || r.Header.Get("WWW-Authenticate") != "" {
			t.Errorf("401 to a page script: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
		}
		if r := e.Do("GET", servertest.LRS+"/acme/statements", bad, nil, servertest.V103...); r.Status != 401 || r.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("401 to a client: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
		}
	})
}
