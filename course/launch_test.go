package course

import (
	"errors"
	"testing"
	"time"
)

func TestLaunchSigner(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := NewLaunchSigner("secret")
	c := LaunchClaims{Tenant: "acme", CourseID: "intro", Version: 2, Preview: true, Expires: now.Add(time.Minute).Unix(), StartSco: "i2"}
	tok := s.Sign(c)
	got, err := s.Verify(tok, now)
	if err != nil || *got != c {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if _, err := s.Verify(tok, now.Add(2*time.Minute)); !errors.Is(err, ErrBadLaunchToken) {
		t.Fatalf("expired link accepted: %v", err)
	}
	never := s.Sign(LaunchClaims{Tenant: "acme", CourseID: "intro"})
	if _, err := s.Verify(never, now.Add(100*365*24*time.Hour)); err != nil {
		t.Fatalf("expiry 0 must never expire: %v", err)
	}
	if _, err := NewLaunchSigner("other").Verify(tok, now); !errors.Is(err, ErrBadLaunchToken) {
		t.Fatalf("link signed with another key accepted: %v", err)
	}
	if _, err := s.Verify(tok[:len(tok)-2]+"xx", now); !errors.Is(err, ErrBadLaunchToken) {
		t.Fatalf("tampered link accepted: %v", err)
	}
}
