package lrsapi_test

import (
	"context"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/server"
	"github.com/lectern-lms/lectern/storage/statements"
)

// noOAuthStateWrites is an integrator's TinCanGetPermissions: the defaults, except that no
// OAuth client may change state documents, whatever its scopes.
type noOAuthStateWrites struct{ calls atomic.Int64 }

func (h *noOAuthStateWrites) Permissions(_ context.Context, p *server.LRSPrincipal) server.LRSPermissions {
	h.calls.Add(1)
	perm := access.DefaultPermissions(p)
	if p.Level == access.OAuth && perm.State == access.ReadWriteAccess {
		perm.State = access.ReadAccess
	}
	return perm
}

// kioskAccount is an integrator's TinCanGetAuthorityFromBasicAuth: one shared read-only
// account in every tenant.
type kioskAccount struct{}

func (kioskAccount) AuthorityFromBasicAuth(_ context.Context, tenantID, user, password string) (*server.LRSPrincipal, error) {
	if user == "kiosk" && password == "kiosk-pass" {
		return access.AccountPrincipal("https://kiosk.example.com", "kiosk", tenantID, access.ReadOnly), nil
	}
	return nil, nil
}

// storedCounter is an integrator's TinCanStatementsStored.
type storedCounter struct{ n atomic.Int64 }

func (s *storedCounter) StatementsStored(_ context.Context, _ string, stored []*statements.Statement) {
	s.n.Add(int64(len(stored)))
}

// TestLRSHooks: the integration hooks of spec/002 replace the defaults through
// app.Config.LRSHooks: permissions (TinCanGetPermissions) narrow what an OAuth scope grants,
// Basic authority (TinCanGetAuthorityFromBasicAuth) adds accounts, and the stored hook
// (TinCanStatementsStored) sees every stored statement.
func TestLRSHooks(t *testing.T) {
	for name, mode := range servertest.Modes(t) {
		t.Run(name, func(t *testing.T) {
			perms, stored := &noOAuthStateWrites{}, &storedCounter{}
			cfg := mode(t)
			cfg.LRSHooks = server.LRSHooks{Permissions: perms, BasicAuthority: kioskAccount{}, Stored: stored}
			e := servertest.Start(t, cfg)
			e.CreateTenant("acme", true)
			state := servertest.LRS + "/acme/activities/state?activityId=" + url.QueryEscape("http://example.com/a") +
				"&agent=" + url.QueryEscape(`{"mbox":"mailto:ann@example.com"}`) + "&stateId=s"

			all := bearerToken(e, e.OAuthClient("acme", map[string]any{"scopes": []string{"all"}}), "")
			e.Expect(e.Do("POST", servertest.LRS+"/acme/statements", all, servertest.Statement("ann@example.com", "attempted", "http://example.com/a"), servertest.V200...), 200, "OAuth client writes statements")
			e.Expect(e.Do("PUT", state, all, map[string]any{"x": 1}, servertest.V200...), 403, "the hook takes state writes from scope all")
			e.Expect(e.Do("PUT", state, servertest.Root, map[string]any{"x": 1}, servertest.V200...), 204, "root still writes state")
			e.Expect(e.Do("GET", state, all, nil, servertest.V200...), 200, "the OAuth client still reads state")
			if perms.calls.Load() == 0 {
				t.Error("the permissions hook was never asked")
			}

			kiosk := servertest.Basic("kiosk", "kiosk-pass")
			if res := e.Query(servertest.LRS+"/acme/statements", kiosk, servertest.V200); len(res.Statements) != 1 {
				t.Errorf("the kiosk account reads %d statements, want 1", len(res.Statements))
			}
			e.Expect(e.Do("POST", servertest.LRS+"/acme/statements", kiosk, servertest.Statement("bob@example.com", "attempted", "http://example.com/a"), servertest.V200...), 403, "the read-only kiosk account writes")
			e.Expect(e.Do("GET", servertest.LRS+"/acme/statements", servertest.Basic("kiosk", "wrong"), nil, servertest.V200...), 401, "wrong kiosk password")

			e.Expect(e.Do("POST", servertest.LRS+"/acme/statements", servertest.Root, []any{servertest.Statement("cy@example.com", "attempted", "http://example.com/a"),
				servertest.Statement("dee@example.com", "attempted", "http://example.com/a")}, servertest.V200...), 200, "root writes two")
			if n := stored.n.Load(); n != 3 {
				t.Errorf("the stored hook saw %d statements, want 3", n)
			}
		})
	}
}
