package player_test

import (
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestContentAccessEndsWithRegistration: a player session's signed token lasts its session's
// lifetime (24 h by default), but the course files stop loading as soon as the registration
// is deleted, or its course (which takes the registration along): 410 with a message, and
// the files are not cacheable past that point (no-cache: every load asks again).
func TestContentAccessEndsWithRegistration(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		e.ImportOK("acme", "other", servertest.Scorm12Package(t), "")
		const engine = "/engine/api/v1/acme"
		session := func(course, reg string) string {
			e.Expect(e.Do("POST", engine+"/registrations", servertest.Root, map[string]any{"courseId": course, "registrationId": reg,
				"learner": map[string]any{"id": "ann"}}), 204, "registration "+reg)
			return e.Launch(e.LaunchPath(engine + "/registrations/" + reg + "/launchLink"))
		}
		loads := func(session, what string) {
			t.Helper()
			if r := e.Get("/player/session/" + session); r.Status != 200 {
				t.Fatalf("%s: the player page answered %d", what, r.Status)
			}
			r := e.Get("/player/content/" + session + "/one/index.html")
			if r.Status != 200 || string(r.Body) != "<html>one</html>" {
				t.Fatalf("%s: %d %s", what, r.Status, r.Body)
			}
			if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "no-cache") {
				t.Fatalf("%s: Cache-Control %q lets a browser reuse the file without asking", what, cc)
			}
		}
		gone := func(session, what string) {
			t.Helper()
			r := e.Get("/player/content/" + session + "/one/index.html")
			if r.Status != 410 || !strings.Contains(r.Message(), "deleted") {
				t.Fatalf("%s: %d %s, want 410 saying the registration was deleted", what, r.Status, r.Body)
			}
			// The player's page, which lists the course's activities, ends with it.
			r = e.Get("/player/session/" + session)
			if r.Status != 410 || !strings.Contains(string(r.Body), "deleted") || strings.Contains(string(r.Body), "toc") {
				t.Fatalf("%s: the player page answered %d %s, want 410 saying the registration was deleted", what, r.Status, r.Body)
			}
		}

		s1 := session("intro", "r1")
		loads(s1, "a launched registration")
		e.Expect(e.Do("DELETE", engine+"/registrations/r1", servertest.Root, nil), 204, "delete registration")
		gone(s1, "after its registration was deleted")

		s2 := session("other", "r2")
		loads(s2, "a launched registration of another course")
		e.Expect(e.Do("DELETE", engine+"/courses/other", servertest.Root, nil), 204, "delete course")
		gone(s2, "after its course was deleted")
	})
}
