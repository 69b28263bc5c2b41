package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/lrs/launch"
)

// TestLaunchTokens: content launched with a signed token writes statements and reads those of
// its own learner, in its own tenant only; forged, expired and foreign tokens get 401.
func TestLaunchTokens(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		e.createTenant("other", true)
		iss := launch.NewIssuer("test-secret") // the tests' LECTERN_SECRET_KEY
		now := time.Now()
		_, authz := iss.Issue(launch.Claims{Tenant: "acme", Registration: "reg-1", ActorIFI: "mbox:mailto:ann@example.com"}, time.Hour, now)
		tok := authz[len("Basic "):]
		content := authFromHeader(authz)

		r := e.do("POST", lrs+"/acme/statements", content, statement("ann@example.com", "experienced", "http://example.com/a1"), v103...)
		e.expect(r, 200, "content posts its learner's statement")
		r = e.do("POST", lrs+"/acme/statements", root, statement("bob@example.com", "experienced", "http://example.com/a1"), v103...)
		e.expect(r, 200, "root posts another learner's statement")

		var res statementResult
		r = e.do("GET", lrs+"/acme/statements", content, nil, v103...)
		e.expect(r, 200, "content reads")
		r.json(t, &res)
		if len(res.Statements) != 1 || !strings.Contains(string(r.Body), "ann@example.com") {
			t.Fatalf("launch token sees %d statements: %s", len(res.Statements), r.Body)
		}
		if !strings.Contains(string(r.Body), "launch:reg-1") {
			t.Fatalf("authority of the launch is not recorded: %s", r.Body)
		}
		e.expect(e.do("GET", lrs+"/other/statements", content, nil, v103...), 401, "token on another tenant")
		_, expired := iss.Issue(launch.Claims{Tenant: "acme", Registration: "reg-1"}, -time.Minute, now)
		e.expect(e.do("GET", lrs+"/acme/statements", authFromHeader(expired), nil, v103...), 401, "expired token")
		_, foreign := launch.NewIssuer("another-secret").Issue(launch.Claims{Tenant: "acme"}, time.Hour, now)
		e.expect(e.do("GET", lrs+"/acme/statements", authFromHeader(foreign), nil, v103...), 401, "token signed with another key")
		e.expect(e.do("GET", lrs+"/acme/statements", auth{"Basic " + tok[:len(tok)-4] + "AAAA"}, nil, v103...), 401, "tampered token")
	})
}

func authFromHeader(h string) auth { return auth{header: h} }
