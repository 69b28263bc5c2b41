package server_test

import (
	"context"
	"net/url"
	"sync/atomic"
	"testing"

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
	for name, mode := range modes(t) {
		t.Run(name, func(t *testing.T) {
			perms, stored := &noOAuthStateWrites{}, &storedCounter{}
			cfg := mode(t)
			cfg.LRSHooks = server.LRSHooks{Permissions: perms, BasicAuthority: kioskAccount{}, Stored: stored}
			e := start(t, cfg)
			e.createTenant("acme", true)
			state := lrs + "/acme/activities/state?activityId=" + url.QueryEscape("http://example.com/a") +
				"&agent=" + url.QueryEscape(`{"mbox":"mailto:ann@example.com"}`) + "&stateId=s"

			all := e.bearerToken(e.oauthClient("acme", map[string]any{"scopes": []string{"all"}}), "")
			e.expect(e.do("POST", lrs+"/acme/statements", all, statement("ann@example.com", "attempted", "http://example.com/a"), v200...), 200, "OAuth client writes statements")
			e.expect(e.do("PUT", state, all, map[string]any{"x": 1}, v200...), 403, "the hook takes state writes from scope all")
			e.expect(e.do("PUT", state, root, map[string]any{"x": 1}, v200...), 204, "root still writes state")
			e.expect(e.do("GET", state, all, nil, v200...), 200, "the OAuth client still reads state")
			if perms.calls.Load() == 0 {
				t.Error("the permissions hook was never asked")
			}

			kiosk := basic("kiosk", "kiosk-pass")
			if res := e.query(lrs+"/acme/statements", kiosk, v200); len(res.Statements) != 1 {
				t.Errorf("the kiosk account reads %d statements, want 1", len(res.Statements))
			}
			e.expect(e.do("POST", lrs+"/acme/statements", kiosk, statement("bob@example.com", "attempted", "http://example.com/a"), v200...), 403, "the read-only kiosk account writes")
			e.expect(e.do("GET", lrs+"/acme/statements", basic("kiosk", "wrong"), nil, v200...), 401, "wrong kiosk password")

			e.expect(e.do("POST", lrs+"/acme/statements", root, []any{statement("cy@example.com", "attempted", "http://example.com/a"),
				statement("dee@example.com", "attempted", "http://example.com/a")}, v200...), 200, "root writes two")
			if n := stored.n.Load(); n != 3 {
				t.Errorf("the stored hook saw %d statements, want 3", n)
			}
		})
	}
}
