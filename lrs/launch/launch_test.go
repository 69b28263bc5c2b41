package launch

import (
	"encoding/base64"
	"errors"
	"testing"
	"time"
)

func TestIssueVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	iss := NewIssuer("secret")
	tok, auth := iss.Issue(Claims{Tenant: "acme", Registration: "r1", ActorIFI: "mbox:mailto:a@b.c"}, time.Hour, now)
	got, ok := FromAuthorization(auth)
	if !ok || got != tok {
		t.Fatalf("FromAuthorization(%q) = %q, %v", auth, got, ok)
	}
	c, err := iss.Verify(tok, now.Add(59*time.Minute))
	if err != nil || c.Tenant != "acme" || c.Registration != "r1" || c.ActorIFI != "mbox:mailto:a@b.c" {
		t.Fatalf("verify: %+v %v", c, err)
	}
	if _, err := iss.Verify(tok, now.Add(61*time.Minute)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("expired token accepted: %v", err)
	}
	if _, err := NewIssuer("other").Verify(tok, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("token of another key accepted: %v", err)
	}
	// Changing the claims breaks the signature.
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"t":"other","e":9999999999}`)) + tok[len(tok)-44:]
	if _, err := iss.Verify(forged, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("forged token accepted: %v", err)
	}
	for _, h := range []string{"", "Bearer x", "Basic !!!", "Basic " + base64.StdEncoding.EncodeToString([]byte("root:pw"))} {
		if _, ok := FromAuthorization(h); ok {
			t.Errorf("FromAuthorization(%q) accepted a non-launch credential", h)
		}
	}
}
