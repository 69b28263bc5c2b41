package oauth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

// TestTokensOnEveryRecordStore: tokens are checked against the clock to the millisecond, by a
// second service on a new connection (a restart), and stop at the client's deletion; a token
// signed with another secret or edited is refused.
func TestTokensOnEveryRecordStore(t *testing.T) {
	ctx := context.Background()
	for _, b := range recordstores.All() {
		t.Run(b.Name, func(t *testing.T) {
			connect := b.Fresh(t)
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			svc := New(connect(), "secret", nil)
			svc.now = func() time.Time { return now }
			c, err := svc.CreateClient(ctx, "acme", ClientSpec{Name: "app", Scopes: []string{access.ScopeAll}, Lifetime: 60})
			if err != nil {
				t.Fatal(err)
			}
			tok, err := svc.Issue(ctx, TokenRequest{GrantType: GrantClientCredentials, ClientID: c.ID, ClientSecret: c.Secret,
				Scope: "state statements/read", HasScope: true})
			if err != nil || tok.ExpiresIn != 60 || strings.Join(tok.Scopes, " ") != "statements/read state" {
				t.Fatalf("issue: %+v %v", tok, err)
			}

			restarted := New(connect(), "secret", nil)
			restarted.now = func() time.Time { return now.Add(59999 * time.Millisecond) }
			g, err := restarted.Verify(ctx, tok.AccessToken)
			if err != nil || g.Client.ID != c.ID || g.Client.Tenant != "acme" || len(g.Scopes) != 2 {
				t.Fatalf("verify after a restart: %+v %v", g, err)
			}
			p := g.Principal("https://lms.example.com/lrs/TCAPI")
			if p.Level != access.OAuth || p.Tenant != "acme" || !strings.Contains(string(p.Authority), `"name":"app"`) {
				t.Errorf("principal: %+v %s", p, p.Authority)
			}
			restarted.now = func() time.Time { return now.Add(time.Minute) }
			if _, err := restarted.Verify(ctx, tok.AccessToken); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("token at its expiry: %v", err)
			}
			other := New(connect(), "another secret", nil)
			other.now = svc.now
			if _, err := other.Verify(ctx, tok.AccessToken); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("token checked with another secret: %v", err)
			}
			if _, err := svc.Verify(ctx, tok.AccessToken+"x"); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("edited token: %v", err)
			}
			if _, err := svc.Issue(ctx, TokenRequest{GrantType: GrantClientCredentials, ClientID: c.ID, ClientSecret: c.Secret + "0"}); !errors.Is(err, ErrInvalidClient) {
				t.Errorf("wrong secret: %v", err)
			}
			if err := svc.DeleteClient(ctx, "other", c.ID); !errors.Is(err, ErrNotFound) {
				t.Errorf("delete from another tenant: %v", err)
			}
			if err := svc.DeleteClient(ctx, "acme", c.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Verify(ctx, tok.AccessToken); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("token of a deleted client: %v", err)
			}
		})
	}
}
