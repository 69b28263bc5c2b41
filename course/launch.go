package course

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
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
type LaunchSigner struct{ key []byte }

// NewLaunchSigner derives the signing key from the deployment's secret key.
func NewLaunchSigner(secret string) *LaunchSigner {
	k := sha256.Sum256([]byte("lectern launch v1\x00" + secret))
	return &LaunchSigner{key: k[:]}
}

func (s *LaunchSigner) mac(b []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(b)
	return m.Sum(nil)
}

// Sign returns the token for c.
func (s *LaunchSigner) Sign(c LaunchClaims) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(s.mac(b))
}

// Verify checks a token's signature and expiry at now.
func (s *LaunchSigner) Verify(token string, now time.Time) (*LaunchClaims, error) {
	body, sig, ok := strings.Cut(token, ".")
	if !ok {
		return nil, ErrBadLaunchToken
	}
	b, err1 := base64.RawURLEncoding.DecodeString(body)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(b)) {
		return nil, ErrBadLaunchToken
	}
	var c LaunchClaims
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, ErrBadLaunchToken
	}
	if c.Expires != 0 && now.Unix() > c.Expires {
		return nil, ErrBadLaunchToken
	}
	return &c, nil
}
