package course

import (
	"encoding/json"
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
	// Nonce makes a link single-use: the player consumes it on the first launch.
	Nonce string `json:"n,omitempty"`
}

// ErrBadLaunchToken means a launch token is forged, malformed or expired.
var ErrBadLaunchToken = errors.New("invalid or expired launch link")

// LaunchSigner signs launch tokens, so a link works without credentials but cannot be altered
// to reach another course, registration or tenant.
type LaunchSigner struct{ s, session, fetch *signed.Signer }

// NewLaunchSigner derives the signing keys from the deployment's secret key.
func NewLaunchSigner(secret string) *LaunchSigner {
	return &LaunchSigner{s: signed.New(secret, "lectern launch v1"), session: signed.New(secret, "lectern player session v1"),
		fetch: signed.New(secret, "lectern cmi5 fetch v1")}
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

// SessionClaims name one launched player session: what the player page, the course files and
// the runtime endpoint of that launch may reach. A launch link is exchanged for a session at
// launch, so a single-use link can be consumed while the session keeps working.
type SessionClaims struct {
	Tenant         string `json:"t"`
	CourseID       string `json:"c"`
	Version        int    `json:"v"`
	RegistrationID string `json:"r,omitempty"`
	// Instance and InstanceKey name the registration instance the session tracks.
	Instance    int    `json:"i,omitempty"`
	InstanceKey string `json:"k,omitempty"`
	// Launch names the registration.Session the server measures this launch by (empty for
	// previews, reviews and sessions signed before sessions were recorded).
	Launch string `json:"l,omitempty"`
	// Preview sessions run the content without storing anything.
	Preview     bool   `json:"p,omitempty"`
	ForceReview bool   `json:"fr,omitempty"`
	StartSco    string `json:"s,omitempty"`
	// Supplemental is the encoded query the player adds to every activity's URL: the launch
	// request's parameters that SupplementalQueryStringParametersForAllActivities names.
	Supplemental   string `json:"q,omitempty"`
	RedirectOnExit string `json:"x,omitempty"`
	// NoCredit launches a completed SCORM 1.2 / AICC registration in no-credit
	// (PlayerLaunchCompletedRegsAsNoCredit): its commits keep the recorded status and score.
	NoCredit bool  `json:"nc,omitempty"`
	Expires  int64 `json:"e"`
}

// SignSession returns the token of a player session.
func (s *LaunchSigner) SignSession(c SessionClaims) string { return s.session.Sign(c) }

// VerifySession checks a session token's signature and expiry at now.
func (s *LaunchSigner) VerifySession(token string, now time.Time) (*SessionClaims, error) {
	var c SessionClaims
	if s.session.Open(token, &c) != nil || c.Expires == 0 || now.Unix() > c.Expires {
		return nil, ErrBadLaunchToken
	}
	return &c, nil
}

// FetchClaims are what a cmi5 fetch URL grants: one record-store credential for the learner,
// once (the nonce is consumed on use), until Expires.
type FetchClaims struct {
	Tenant         string          `json:"t"`
	RegistrationID string          `json:"r,omitempty"`
	Actor          json.RawMessage `json:"a"`
	ActorIFI       string          `json:"i"`
	// Launch is the player session the AU runs in (SessionClaims.Launch).
	Launch  string `json:"l,omitempty"`
	Nonce   string `json:"n"`
	Expires int64  `json:"e"`
	// TokenLife is the lifetime in seconds of the record-store credential the fetch
	// answers with (xAPILaunchTokenLifeInSeconds at launch); 0: until Expires.
	TokenLife int64 `json:"tl,omitempty"`
	// CMI5 is the AU session the credential writes for (nil in fetch URLs signed before
	// the record store checked cmi5 statements).
	CMI5 *CMI5Session `json:"c5,omitempty"`
}

// CMI5Session is what the record store holds the statements of one cmi5 AU session to
// (cmi5 sections 9 and 10): the session, its AU and launch data.
type CMI5Session struct {
	// Registration is the xAPI registration id; Session the session id of the context
	// template; ActivityID the AU's activityId (the LMS's id for it).
	Registration string `json:"r"`
	Session      string `json:"s"`
	ActivityID   string `json:"a"`
	// Mode is the launchMode: Normal, Browse or Review.
	Mode         string   `json:"m"`
	MasteryScore *float64 `json:"ms,omitempty"`
	// Lenient: Cmi5EnforceStatementRules was false at launch; the cmi5 rules are not applied.
	Lenient bool `json:"l,omitempty"`
}

// SignFetch returns the token of a cmi5 fetch URL.
func (s *LaunchSigner) SignFetch(c FetchClaims) string { return s.fetch.Sign(c) }

// VerifyFetch checks a fetch token's signature and expiry at now.
func (s *LaunchSigner) VerifyFetch(token string, now time.Time) (*FetchClaims, error) {
	var c FetchClaims
	if s.fetch.Open(token, &c) != nil || c.Nonce == "" || now.Unix() > c.Expires {
		return nil, ErrBadLaunchToken
	}
	return &c, nil
}
