// Package signed makes self-contained, tamper-proof tokens: a JSON payload and its
// HMAC-SHA256, both base64url. Launch links and record-store launch credentials use it, each
// with its own label so a token of one kind is never valid as the other.
package signed

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// ErrInvalid means a token is malformed or its signature does not match.
var ErrInvalid = errors.New("invalid signed token")

// Signer signs and opens tokens with one derived key.
type Signer struct{ key []byte }

// New derives the key from the deployment secret and a label naming the token kind.
func New(secret, label string) *Signer {
	k := sha256.Sum256([]byte(label + "\x00" + secret))
	return &Signer{key: k[:]}
}

func (s *Signer) mac(b []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(b)
	return m.Sum(nil)
}

// Sign returns the token carrying v.
func (s *Signer) Sign(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(s.mac(b))
}

// Open checks token's signature and decodes its payload into v.
func (s *Signer) Open(token string, v any) error {
	body, sig, ok := strings.Cut(token, ".")
	if !ok {
		return ErrInvalid
	}
	b, err1 := base64.RawURLEncoding.DecodeString(body)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(b)) {
		return ErrInvalid
	}
	if json.Unmarshal(b, v) != nil {
		return ErrInvalid
	}
	return nil
}
