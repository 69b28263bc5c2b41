package engineapi_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

var isoTimestamp = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"`)

// normalisedBody is a response body with its timestamps replaced, for byte comparison.
func normalisedBody(r servertest.Resp) string {
	return isoTimestamp.ReplaceAllString(string(r.Body), `"<time>"`)
}

func TestRegistrations(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.CreateTenant("other", true)
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		base := "/engine/api/v1/acme/registrations"
		const xid = "6F1C6B0A-5F52-4C5B-9E0B-1B2C3D4E5F60"
		create := func(body any) servertest.Resp { return e.Do("POST", base, servertest.Root, body) }

		// Create (JSON): 204; the same id again, an unknown course and bad fields are 400s
		// naming the problem, and leave nothing behind.
		e.Expect(create(map[string]any{"courseId": "intro", "registrationId": "reg-1", "xapiRegistrationId": xid,
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create reg-1")
		for _, c := range []struct {
			name string
			body any
			want string
		}{
			{"reused id", map[string]any{"courseId": "intro", "registrationId": "reg-1", "learner": map[string]any{"id": "bob"}}, "registration 'reg-1' already exists"},
			{"unknown course", map[string]any{"courseId": "nope", "registrationId": "reg-x", "learner": map[string]any{"id": "bob"}}, "course 'nope' does not exist"},
			{"no learner", map[string]any{"courseId": "intro", "registrationId": "reg-x"}, "learner is required"},
			{"no learner id", map[string]any{"courseId": "intro", "registrationId": "reg-x", "learner": map[string]any{"firstName": "B"}}, "learner.id is required"},
			{"no course", map[string]any{"registrationId": "reg-x", "learner": map[string]any{"id": "bob"}}, "courseId is required"},
			{"no id", map[string]any{"courseId": "intro", "learner": map[string]any{"id": "bob"}}, "registrationId is required"},
			{"bad xAPI id", map[string]any{"courseId": "intro", "registrationId": "reg-x", "xapiRegistrationId": "nope", "learner": map[string]any{"id": "bob"}}, "not a UUID"},
			{"bad post-back format", map[string]any{"courseId": "intro", "registrationId": "reg-x", "learner": map[string]any{"id": "bob"},
				"postBack": map[string]any{"url": "http://127.0.0.1/x", "resultsFormat": "XML"}}, "resultsFormat"},
			{"bad post-back url", map[string]any{"courseId": "intro", "registrationId": "reg-x", "learner": map[string]any{"id": "bob"},
				"postBack": map[string]any{"url": "ftp://x"}}, "postBack.url"},
			{"unknown field", map[string]any{"courseId": "intro", "registrationId": "reg-x", "learner": map[string]any{"id": "bob"}, "colour": 1}, "colour"},
		} {
			r := create(c.body)
			e.Expect(r, 400, c.name)
			if !strings.Contains(r.Message(), c.want) {
				t.Errorf("%s: message %q does not say %q", c.name, r.Message(), c.want)
			}
		}
		e.Expect(e.Do("GET", base+"/reg-x", servertest.Root, nil), 404, "rejected registration was not stored")

		// Create (form): the learner id is the registration id; forCredit false gives no-credit.
		r := e.Do("POST", base, servertest.Root, "registration=reg-2&packageId=intro&forCredit=false", "Content-Type", "application/x-www-form-urlencoded")
		e.Expect(r, 204, "create reg-2 from a form")
		e.Expect(e.Do("POST", base, servertest.Root, "registration=reg-3", "Content-Type", "application/x-www-form-urlencoded"), 400, "form without packageId")

		// Exists.
		r = e.Do("GET", base+"/reg-1", servertest.Root, nil)
		e.Expect(r, 200, "exists")
		if string(r.Body) != `{"exists":true}` {
			t.Errorf("exists body %s", r.Body)
		}
		if r = e.Do("GET", base+"/reg-9", servertest.Root, nil); r.Status != 404 || !strings.Contains(r.Message(), "reg-9") {
			t.Errorf("unknown registration: %d %s", r.Status, r.Body)
		}

		// Progress of an instance nothing was tracked in, as raw bytes.
		r = e.Do("GET", base+"/reg-1/progress", servertest.Root, nil)
		e.Expect(r, 200, "progress")
		want := `{"id":"reg-1","instance":0,"updated":"<time>","registrationCompletion":"UNKNOWN","registrationSuccess":"UNKNOWN",` +
			`"totalSecondsTracked":0,"createdDate":"<time>","course":{"id":"intro","version":0,"title":"Intro to Testing",` +
			`"courseLearningStandard":"SCORM_12","updated":"<time>"},"learner":{"id":"ann","firstName":"Ann","lastName":"Lee"},"globalObjectives":[]}`
		if got := normalisedBody(r); got != want {
			t.Errorf("progress body\n got %s\nwant %s", got, want)
		}
		e.Expect(e.Do("GET", base+"/reg-1/progress?instance=1", servertest.Root, nil), 404, "missing instance")
		e.Expect(e.Do("GET", base+"/reg-1/progress?instance=x", servertest.Root, nil), 400, "non-numeric instance")

		// Detail: the activity tree with statuses, static properties and the initial runtime.
		r = e.Do("GET", base+"/reg-2/progress/detail", servertest.Root, nil)
		e.Expect(r, 200, "progress detail")
		var detail struct {
			Learner         struct{ ID string }
			ActivityDetails struct {
				ID       string
				Children []struct {
					ID, ActivityCompletion string
					StaticProperties       struct {
						ScaledPassingScore     *float64
						ScaledPassingScoreUsed bool
					}
					Runtime *struct{ Credit, Entry, TotalTime string }
				}
			}
		}
		r.JSON(t, &detail)
		kids := detail.ActivityDetails.Children
		if detail.Learner.ID != "reg-2" || detail.ActivityDetails.ID != "org1" || len(kids) != 2 || kids[0].ID != "i1" || kids[1].ID != "i2" {
			t.Fatalf("detail tree: %s", r.Body)
		}
		if p := kids[0].StaticProperties.ScaledPassingScore; p == nil || *p != 0.8 || !kids[0].StaticProperties.ScaledPassingScoreUsed ||
			kids[1].StaticProperties.ScaledPassingScore != nil || kids[0].ActivityCompletion != "UNKNOWN" {
			t.Errorf("static properties or status: %s", r.Body)
		}
		if rt := kids[0].Runtime; rt == nil || rt.Credit != "no-credit" || rt.Entry != "abinitio" || rt.TotalTime != "0000:00:00" {
			t.Errorf("initial runtime: %s", r.Body)
		}
		if strings.Contains(string(e.Do("GET", base+"/reg-1/progress", servertest.Root, nil).Body), "activityDetails") {
			t.Error("progress (not detail) carries activityDetails")
		}

		// lastInstance and xapiRegistrationId (lowercased UUID; generated when not given).
		if r = e.Do("GET", base+"/reg-1/lastInstance", servertest.Root, nil); string(r.Body) != `{"result":0}` {
			t.Errorf("lastInstance: %d %s", r.Status, r.Body)
		}
		if r = e.Do("GET", base+"/reg-1/xapiRegistrationId", servertest.Root, nil); string(r.Body) != `{"id":"`+strings.ToLower(xid)+`"}` {
			t.Errorf("xapiRegistrationId: %d %s", r.Status, r.Body)
		}
		var gen struct{ ID string }
		e.Do("GET", base+"/reg-2/xapiRegistrationId", servertest.Root, nil).JSON(t, &gen)
		if len(gen.ID) != 36 {
			t.Errorf("generated xAPI registration id %q", gen.ID)
		}

		// Registration configuration: the cascade tenant → course → registration, and
		// xapiRegistrationId answers 404 once xAPI is off for the registration.
		cfg := base + "/reg-1/configuration/xAPIEnabled"
		e.Expect(e.Do("PUT", cfg, servertest.Root, map[string]any{"value": "false"}), 204, "set registration setting")
		if r = e.Do("GET", cfg, servertest.Root, nil); string(r.Body) != `{"value":"false"}` {
			t.Errorf("registration setting: %s", r.Body)
		}
		if r = e.Do("GET", base+"/reg-2/configuration/xAPIEnabled", servertest.Root, nil); string(r.Body) != `{"value":"true"}` {
			t.Errorf("another registration sees the setting: %s", r.Body)
		}
		e.Expect(e.Do("GET", base+"/reg-1/xapiRegistrationId", servertest.Root, nil), 404, "xAPI disabled for the registration")
		e.Expect(e.Do("PUT", base+"/reg-1/configuration/NoSuchSetting", servertest.Root, map[string]any{"value": "1"}), 400, "unknown setting")
		e.Expect(e.Do("PUT", base+"/reg-9/configuration/xAPIEnabled", servertest.Root, map[string]any{"value": "1"}), 404, "setting on an unknown registration")
		r = e.Do("GET", base+"/reg-1/configuration", servertest.Root, nil)
		e.Expect(r, 200, "registration configuration")
		if !strings.Contains(strings.ToLower(string(r.Body)), `{"id":"xapienabled","value":"false"}`) {
			t.Errorf("configuration list lacks xAPIEnabled: %s", r.Body)
		}

		// List: filters by course and learner, since, and paging with more.
		ids := func(query string) []string {
			r := e.Do("GET", base+"?"+query, servertest.Root, nil)
			e.Expect(r, 200, "list "+query)
			var l struct {
				Registrations []struct{ ID string }
				More          string
			}
			r.JSON(t, &l)
			var out []string
			for _, x := range l.Registrations {
				out = append(out, x.ID)
			}
			if l.More != "" {
				out = append(out, "more:"+l.More)
			}
			return out
		}
		e.ImportOK("acme", "second", servertest.Scorm12Package(t), "")
		e.Expect(create(map[string]any{"courseId": "second", "registrationId": "reg-4", "learner": map[string]any{"id": "ann"}}), 204, "create reg-4")
		for q, want := range map[string]string{
			"":                              "reg-1,reg-2,reg-4",
			"courseId=intro":                "reg-1,reg-2",
			"learnerId=ann":                 "reg-1,reg-4",
			"courseId=second&learnerId=ann": "reg-4",
			"courseId=nope":                 "",
			"since=2999-01-01T00:00:00Z":    "",
		} {
			got := ids(q)
			if !sameSet(got, want) {
				t.Errorf("list %q = %v, want %s", q, got, want)
			}
		}
		e.Expect(e.Do("PUT", "/engine/api/v1/acme/configuration/ApiResultLimitSinceNotSpecified", servertest.Root, map[string]any{"value": "2"}), 204, "page size")
		first := ids("")
		if len(first) != 3 || !strings.HasPrefix(first[2], "more:") {
			t.Fatalf("first page of 2: %v", first)
		}
		rest := ids("more=" + url.QueryEscape(strings.TrimPrefix(first[2], "more:")))
		if !sameSet(append(first[:2:2], rest...), "reg-1,reg-2,reg-4") {
			t.Errorf("pages %v + %v", first, rest)
		}
		e.Expect(e.Do("GET", base+"?more=garbage", servertest.Root, nil), 400, "bad more token")
		e.Expect(e.Do("GET", base+"?since=yesterday", servertest.Root, nil), 400, "bad since")

		// Tenants never see each other's registrations.
		e.Expect(e.Do("GET", "/engine/api/v1/other/registrations/reg-1", servertest.Root, nil), 404, "other tenant")
		if r = e.Do("GET", "/engine/api/v1/other/registrations", servertest.Root, nil); string(r.Body) != `{"registrations":[]}` {
			t.Errorf("other tenant's list: %d %s", r.Status, r.Body)
		}

		// Reset re-pins the registration to the course's latest version.
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "&mayCreateNewVersion=true")
		var p struct {
			Instance int
			Course   struct{ Version int }
		}
		e.Do("GET", base+"/reg-1/progress", servertest.Root, nil).JSON(t, &p)
		if p.Course.Version != 0 {
			t.Errorf("a new course version moved the registration before any reset: %+v", p)
		}
		e.Expect(e.Do("DELETE", base+"/reg-1/progress", servertest.Root, nil), 204, "reset")
		e.Do("GET", base+"/reg-1/progress", servertest.Root, nil).JSON(t, &p)
		if p.Course.Version != 1 || p.Instance != 0 {
			t.Errorf("after reset: %+v", p)
		}
		e.Expect(e.Do("DELETE", base+"/reg-9/progress", servertest.Root, nil), 404, "reset of an unknown registration")

		// Delete; then the registration, its settings and its progress are gone.
		e.Expect(e.Do("DELETE", base+"/reg-1", servertest.Root, nil), 204, "delete")
		e.Expect(e.Do("GET", base+"/reg-1", servertest.Root, nil), 404, "deleted")
		e.Expect(e.Do("DELETE", base+"/reg-1", servertest.Root, nil), 404, "delete twice")
		e.Expect(create(map[string]any{"courseId": "intro", "registrationId": "reg-1", "learner": map[string]any{"id": "ann"}}), 204, "id free again")
		if r = e.Do("GET", cfg, servertest.Root, nil); string(r.Body) != `{"value":"true"}` {
			t.Errorf("a recreated registration inherited the deleted one's setting: %s", r.Body)
		}

		// Deleting a course deletes its registrations.
		e.Expect(e.Do("DELETE", "/engine/api/v1/acme/courses/second", servertest.Root, nil), 204, "delete course")
		e.Expect(e.Do("GET", base+"/reg-4", servertest.Root, nil), 404, "registration of a deleted course")
	})
}

func sameSet(got []string, want string) bool {
	w := map[string]bool{}
	if want != "" {
		for _, x := range strings.Split(want, ",") {
			w[x] = true
		}
	}
	if len(got) != len(w) {
		return false
	}
	for _, g := range got {
		if !w[g] {
			return false
		}
	}
	return true
}
