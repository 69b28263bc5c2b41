package lrsapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/lrs/launch"
)

// TestLaunchTokens: content launched with a signed token writes statements and reads those of
// its own learner, in its own tenant only; forged, expired and foreign tokens get 401.
func TestLaunchTokens(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.CreateTenant("other", true)
		iss := launch.NewIssuer("test-secret") // the tests' LECTERN_SECRET_KEY
		now := time.Now()
		_, authz := iss.Issue(launch.Claims{Tenant: "acme", Registration: "reg-1", ActorIFI: "mbox:mailto:ann@example.com"}, time.Hour, now)
		tok := authz[len("Basic "):]
		content := servertest.AuthFromHeader(authz)

		r := e.Do("POST", servertest.LRS+"/acme/statements", content, servertest.Statement("ann@example.com", "experienced", "http://example.com/a1"), servertest.V103...)
		e.Expect(r, 200, "content posts its learner's statement")
		r = e.Do("POST", servertest.LRS+"/acme/statements", servertest.Root, servertest.Statement("bob@example.com", "experienced", "http://example.com/a1"), servertest.V103...)
		e.Expect(r, 200, "root posts another learner's statement")

		var res servertest.StatementResult
		r = e.Do("GET", servertest.LRS+"/acme/statements", content, nil, servertest.V103...)
		e.Expect(r, 200, "content reads")
		r.JSON(t, &res)
		if len(res.Statements) != 1 || !strings.Contains(string(r.Body), "ann@example.com") {
			t.Fatalf("launch token sees %d statements: %s", len(res.Statements), r.Body)
		}
		if !strings.Contains(string(r.Body), "launch:reg-1") {
			t.Fatalf("authority of the launch is not recorded: %s", r.Body)
		}
		e.Expect(e.Do("GET", servertest.LRS+"/other/statements", content, nil, servertest.V103...), 401, "token on another tenant")
		_, expired := iss.Issue(launch.Claims{Tenant: "acme", Registration: "reg-1"}, -time.Minute, now)
		e.Expect(e.Do("GET", servertest.LRS+"/acme/statements", servertest.AuthFromHeader(expired), nil, servertest.V103...), 401, "expired token")
		_, foreign := launch.NewIssuer("another-secret").Issue(launch.Claims{Tenant: "acme"}, time.Hour, now)
		e.Expect(e.Do("GET", servertest.LRS+"/acme/statements", servertest.AuthFromHeader(foreign), nil, servertest.V103...), 401, "token signed with another key")
		e.Expect(e.Do("GET", servertest.LRS+"/acme/statements", servertest.Auth{Header: "Basic " + tok[:len(tok)-4] + "AAAA"}, nil, servertest.V103...), 401, "tampered token")
	})
}
