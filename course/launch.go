package course

import (
	"errors"
	"time"

	"github.com/lectern-lms/lectern/internal/signed"
)

// LaunchClaims is what a launch link grants: one course version (preview) or one
// registration, until Expires (zero: never), with the launch options of the request.
type LaunchClaims struct {
	Tenant         string `json:"t"`
	CourseID       string `json:"c"`
	Version        int    `json:"v"`
	RegistrationID string `json:"r,omitempty"`
	Preview        bool   `json:"p,omitempty"`
	Expires        int64  `json:"e,omitempty"`
	ForceReview    bool   `json:"fr,omitempty"`
	StartSco       string `json:"s,omitempty"`
	RedirectOnExit string `json:"x,omitempty"`
}

// ErrBadLaunchToken means a launch token is forged, malformed or expired.
var ErrBadLaunchToken = errors.New("invalid or expired launch link")

// LaunchSigner signs launch tokens, so a link works without credentials but cannot be altered
// to reach another course, registration or tenant.
type LaunchSigner struct{ s *signed.Signer }

// NewLaunchSigner derives the signing key from the deployment's secret key.
func NewLaunchSigner(secret string) *LaunchSigner {
	return &LaunchSigner{s: signed.New(secret, "lectern launch v1")}
}

// Sign returns the token for c.
func (s *LaunchSigner) Sign(c LaunchClaims) string { return s.s.Sign(c) }

// Verify checks a token's signature and expiry at now.
func (s *LaunchSigner) Verify(token string, now time.Time) (*LaunchClaims, error) {
	var c LaunchClaims
	if s.s.Open(token, &c) != nil {
		return nil, ErrBadLaunchToken
	}
	if c.Expires != 0 && now.Unix() > c.Expires {
		return nil, ErrBadLaunchToken
	}
	return &c, nil
}
