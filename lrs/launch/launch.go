// Package launch issues and checks the short-lived credentials the player hands to launched
// content (xAPI and cmi5 AUs), so content can reach the record store without any of the
// tenant's real credentials. A token is HMAC-signed and self-contained: checking it needs no
// storage, and it names one tenant, registration and actor until it expires.
package launch

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/internal/signed"
)

// User is the Basic-auth user name of a launch credential; the password is the token.
const User = "launch"

// ErrInvalid means a token is forged, malformed, expired or for another tenant.
var ErrInvalid = errors.New("invalid or expired launch token")

// Claims is what a token grants.
type Claims struct {
	Tenant       string `json:"t"`
	Registration string `json:"r,omitempty"`
	// ActivityID is the launched activity's IRI.
	ActivityID string `json:"a,omitempty"`
	// Actor is the learner's agent object; ActorIFI its identifier (lrs/xapi.IFI form), which
	// the record store's default read rule matches.
	Actor    json.RawMessage `json:"ac,omitempty"`
	ActorIFI string          `json:"i,omitempty"`
	// Session is the player session (registration.Session) the content was launched in:
	// its statements are signs of life of that session.
	Session string `json:"s,omitempty"`
	Expires int64  `json:"e"`
	// CMI5 is the cmi5 AU session of a credential a cmi5 fetch URL issued: the record
	// store holds its statements to the cmi5 rules.
	CMI5 *course.CMI5Session `json:"c5,omitempty"`
}

// Issuer signs and checks tokens with a key derived from the deployment's secret key.
type Issuer struct{ s *signed.Signer }

// NewIssuer derives the key; its label keeps it apart from other keys derived from the secret.
func NewIssuer(secret string) *Issuer { return &Issuer{s: signed.New(secret, "lectern lrs launch v1")} }

// Issue returns the token for c, valid for ttl from now, and the Authorization header value
// content sends with it (cmi5's auth-token is the part after "Basic ").
func (i *Issuer) Issue(c Claims, ttl time.Duration, now time.Time) (token, authorization string) {
	c.Expires = now.Add(ttl).Unix()
	token = i.s.Sign(c)
	return token, "Basic " + base64.StdEncoding.EncodeToString([]byte(User+":"+token))
}

// Verify checks a token at now.
func (i *Issuer) Verify(token string, now time.Time) (*Claims, error) {
	var c Claims
	if i.s.Open(token, &c) != nil || c.Tenant == "" || now.Unix() > c.Expires {
		return nil, ErrInvalid
	}
	return &c, nil
}

// FromAuthorization extracts the token of a Basic launch credential; ok is false for any
// other Authorization header.
func FromAuthorization(h string) (token string, ok bool) {
	scheme, rest, found := strings.Cut(strings.TrimSpace(h), " ")
	if !found || !strings.EqualFold(scheme, "basic") {
		return "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return "", false
	}
	user, tok, found := strings.Cut(string(raw), ":")
	if !found || user != User {
		return "", false
	}
	return tok, true
}
