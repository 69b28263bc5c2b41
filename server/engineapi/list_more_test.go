package engineapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestListMoreCarriesFilters: a client follows the more link alone. The registration list's
// token keeps courseId, learnerId and since, the course list's keeps since (its page size is
// the since one on every page); a filter given beside more must equal the token's.
func TestListMoreCarriesFilters(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		for _, id := range []string{"intro", "second", "third"} {
			e.ImportOK("acme", id, servertest.Scorm12Package(t), "")
		}
		eng := "/engine/api/v1/acme"
		for _, r := range []struct{ id, course, learner string }{
			{"reg-1", "intro", "ann"}, {"reg-2", "second", "ann"}, {"reg-3", "intro", "bob"},
			{"reg-4", "intro", "ann"}, {"reg-5", "second", "bob"}, {"reg-6", "intro", "ann"},
		} {
			e.Expect(e.Do("POST", eng+"/registrations", servertest.Root, map[string]any{"courseId": r.course, "registrationId": r.id,
				"learner": map[string]any{"id": r.learner}}), 204, "create "+r.id)
		}
		e.Expect(e.Do("PUT", eng+"/configuration/ApiResultLimitSinceNotSpecified", servertest.Root, map[string]any{"value": "1"}), 204, "page size")
		e.Expect(e.Do("PUT", eng+"/configuration/ApiResultLimit", servertest.Root, map[string]any{"value": "1"}), 204, "since page size")

		// follow lists path?query, then each more link alone, and returns the ids in order.
		follow := func(path, query, field string) []string {
			t.Helper()
			var out []string
			for pages := 0; pages < 20; pages++ {
				r := e.Do("GET", eng+path+"?"+query, servertest.Root, nil)
				e.Expect(r, 200, path+"?"+query)
				var l map[string]any
				r.JSON(t, &l)
				for _, x := range l[field].([]any) {
					out = append(out, x.(map[string]any)["id"].(string))
				}
				more, _ := l["more"].(string)
				if more == "" {
					return out
				}
				query = "more=" + url.QueryEscape(more)
			}
			t.Fatalf("%s?%s: paging does not end", path, query)
			return nil
		}
		for q, want := range map[string]string{
			"courseId=intro":                           "reg-1,reg-3,reg-4,reg-6",
			"learnerId=ann":                            "reg-1,reg-2,reg-4,reg-6",
			"courseId=intro&learnerId=ann":             "reg-1,reg-4,reg-6",
			"courseId=second&learnerId=bob":            "reg-5",
			"since=2000-01-01T00:00:00Z&learnerId=bob": "reg-3,reg-5",
		} {
			if got := strings.Join(follow("/registrations", q, "registrations"), ","); got != want {
				t.Errorf("registrations?%s followed by more alone = %s, want %s", q, got, want)
			}
		}
		if got := strings.Join(follow("/courses", "since=2000-01-01T00:00:00Z", "courses"), ","); got != "intro,second,third" {
			t.Errorf("courses?since followed by more alone = %s, want intro,second,third", got)
		}

		// Beside more, the same filter is accepted and another one is a 400 naming it.
		r := e.Do("GET", eng+"/registrations?courseId=intro", servertest.Root, nil)
		var l struct{ More string }
		r.JSON(t, &l)
		more := "more=" + url.QueryEscape(l.More)
		e.Expect(e.Do("GET", eng+"/registrations?courseId=intro&"+more, servertest.Root, nil), 200, "more with the same courseId")
		for _, q := range []string{"courseId=second", "learnerId=ann", "since=2000-01-01T00:00:00Z"} {
			r := e.Do("GET", eng+"/registrations?"+q+"&"+more, servertest.Root, nil)
			e.Expect(r, 400, "more with "+q)
			if name, _, _ := strings.Cut(q, "="); !strings.Contains(string(r.Body), "'"+name+"'") {
				t.Errorf("more with %s: message does not name %s: %s", q, name, r.Body)
			}
		}
	})
}
