package server_test

import (
	"net/url"
	"strings"
	"testing"
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
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		e.importOK("acme", "intro", scorm12Package(t), "")
		const engine = "/engine/api/v1/acme"
		for _, b := range blocked {
			refused := func(r resp, what string) {
				t.Helper()
				e.expect(r, 400, what)
				if msg := r.message(); !strings.Contains(msg, b.rule) {
					t.Fatalf("%s %s: message %q does not name the rule %q", what, b.url, msg, b.rule)
				}
			}
			refused(e.do("POST", engine+"/registrations", root, map[string]any{"courseId": "intro", "registrationId": "r-" + url.PathEscape(b.rule),
				"learner": map[string]any{"id": "ann"}, "postBack": map[string]any{"url": b.url}}), "registration postBack.url")
			e.expect(e.do("GET", engine+"/registrations/r-"+url.PathEscape(b.rule), root, nil), 404, "the refused registration was not created")

			for _, path := range []string{engine + "/configuration/ApiRollupRegistrationPostBackUrl",
				engine + "/courses/intro/configuration/ApiRollupRegistrationPostBackUrl"} {
				refused(e.do("PUT", path, root, map[string]any{"value": b.url}), "PUT "+path)
				var got struct{ Value string }
				r := e.do("GET", path, root, nil)
				e.expect(r, 200, "GET "+path)
				r.json(t, &got)
				if got.Value != "" {
					t.Fatalf("%s: the refused value was saved: %q", path, got.Value)
				}
			}

			refused(e.do("POST", pairsPath("acme"), root, map[string]any{"destination_url": b.url}), "forwarding destination_url")
			refused(e.do("POST", "/api/v1/app_management/subscriptions", root, map[string]any{"topic": "JOB_PROCESSED", "url": b.url}, "tenant_id", "acme"), "webhook url")
			refused(e.do("POST", engine+"/courses/importJobs?course=remote", root, map[string]any{"url": b.url, "courseName": "remote"}), "course import url")
			refused(e.do("POST", "/api/v1/content", root, map[string]any{"url": b.url}, "tenant_id", "acme"), "content import url")
		}
		var pairs struct {
			Pairs []any `json:"forwarding_pairs"`
		}
		r := e.do("GET", pairsPath("acme"), root, nil)
		e.expect(r, 200, "list forwarding pairs")
		r.json(t, &pairs)
		if len(pairs.Pairs) != 0 {
			t.Fatalf("refused forwarding pairs were saved: %s", r.Body)
		}

		// An allowed destination (the tests' loopback receivers) is still saved.
		e.expect(e.do("PUT", engine+"/configuration/ApiRollupRegistrationPostBackUrl", root, map[string]any{"value": "http://127.0.0.1:9/postback"}), 204, "allowed post-back URL")
	})
}
