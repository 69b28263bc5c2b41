package server_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// TestOutboundDestinationsCheckedWhenSaved: every URL the server will later send to or
// download from (a registration's postBack.url, the post-back URL setting at each level, a
// forwarding destination, a webhook, a course or content import URL) is checked against the
// outbound policy when it is saved, by the policy that refuses it at send time: a loopback,
// private or cloud-metadata destination is a 400 that names the rule, and nothing is saved.
// The test configuration allows 127.0.0.1 only (the tests' own receivers).
func TestOutboundDestinationsCheckedWhenSaved(t *testing.T) {
	blocked := []struct{ url, rule string }{
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata address"},
		{"http://[::1]:8080/hook", "loopback address"},
		{"http://10.20.30.40/hook", "private address"},
	}
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "intro", servertest.Scorm12Package(t), "")
		const engine = "/engine/api/v1/acme"
		for _, b := range blocked {
			refused := func(r servertest.Resp, what string) {
				t.Helper()
				e.Expect(r, 400, what)
				if msg := r.Message(); !strings.Contains(msg, b.rule) {
					t.Fatalf("%s %s: message %q does not name the rule %q", what, b.url, msg, b.rule)
				}
			}
			refused(e.Do("POST", engine+"/registrations", servertest.Root, map[string]any{"courseId": "intro", "registrationId": "r-" + url.PathEscape(b.rule),
				"learner": map[string]any{"id": "ann"}, "postBack": map[string]any{"url": b.url}}), "registration postBack.url")
			e.Expect(e.Do("GET", engine+"/registrations/r-"+url.PathEscape(b.rule), servertest.Root, nil), 404, "the refused registration was not created")

			for _, path := range []string{engine + "/configuration/ApiRollupRegistrationPostBackUrl",
				engine + "/courses/intro/configuration/ApiRollupRegistrationPostBackUrl"} {
				refused(e.Do("PUT", path, servertest.Root, map[string]any{"value": b.url}), "PUT "+path)
				var got struct{ Value string }
				r := e.Do("GET", path, servertest.Root, nil)
				e.Expect(r, 200, "GET "+path)
				r.JSON(t, &got)
				if got.Value != "" {
					t.Fatalf("%s: the refused value was saved: %q", path, got.Value)
				}
			}

			refused(e.Do("POST", servertest.PairsPath("acme"), servertest.Root, map[string]any{"destination_url": b.url}), "forwarding destination_url")
			refused(e.Do("POST", "/api/v1/app_management/subscriptions", servertest.Root, map[string]any{"topic": "JOB_PROCESSED", "url": b.url}, "tenant_id", "acme"), "webhook url")
			refused(e.Do("POST", engine+"/courses/importJobs?course=remote", servertest.Root, map[string]any{"url": b.url, "courseName": "remote"}), "course import url")
			refused(e.Do("POST", "/api/v1/content", servertest.Root, map[string]any{"url": b.url}, "tenant_id", "acme"), "content import url")
		}
		var pairs struct {
			Pairs []any `json:"forwarding_pairs"`
		}
		r := e.Do("GET", servertest.PairsPath("acme"), servertest.Root, nil)
		e.Expect(r, 200, "list forwarding pairs")
		r.JSON(t, &pairs)
		if len(pairs.Pairs) != 0 {
			t.Fatalf("refused forwarding pairs were saved: %s", r.Body)
		}

		// An allowed destination (the tests' loopback receivers) is still saved.
		e.Expect(e.Do("PUT", engine+"/configuration/ApiRollupRegistrationPostBackUrl", servertest.Root, map[string]any{"value": "http://127.0.0.1:9/postback"}), 204, "allowed post-back URL")
	})
}
