package httpx

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Principal is who a request authenticated as: the root account or one tenant's credential.
type Principal struct {
	Root   bool
	Tenant string
	Key    string
}

// The Locals keys of what the root's chain resolves for the handlers.
const (
	localsPrincipal = "principal"
	localsTenant    = "tenant"
)

// PrincipalOf is the request's principal (the zero Principal before authentication).
func PrincipalOf(c *fiber.Ctx) Principal {
	p, _ := c.Locals(localsPrincipal).(Principal)
	return p
}

// SetPrincipal records who the request authenticated as.
func SetPrincipal(c *fiber.Ctx, p Principal) { c.Locals(localsPrincipal, p) }

// TenantOf is the tenant the route's scope resolved, "" when there is none (root on a
// system-wide resource).
func TenantOf(c *fiber.Ctx) string {
	v, _ := c.Locals(localsTenant).(string)
	return v
}

// SetTenant records the tenant the request addresses, once its scope has checked it.
func SetTenant(c *fiber.Ctx, id string) { c.Locals(localsTenant, id) }

// RootCredentials is the platform's root account.
type RootCredentials struct {
	User     string
	Password string
}

// Match reports whether key and secret are the root account's (never when none is set),
// comparing in constant time.
func (r RootCredentials) Match(key, secret string) bool {
	return r.User != "" && equalConstantTime(key, r.User) && equalConstantTime(secret, r.Password)
}

// ParseAuthorization accepts HTTP Basic key:secret and Bearer <key>.<secret>.
func ParseAuthorization(h string) (key, secret string, ok bool) {
	scheme, rest, found := strings.Cut(strings.TrimSpace(h), " ")
	if !found {
		return "", "", false
	}
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(scheme) {
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return "", "", false
		}
		return strings.Cut(string(raw), ":")
	case "bearer":
		// Keys never contain a dot, so the first dot separates key and secret.
		return strings.Cut(rest, ".")
	}
	return "", "", false
}

func equalConstantTime(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// BasicAuth is the credentials part of an HTTP Basic Authorization header.
func BasicAuth(key, secret string) string {
	return base64.StdEncoding.EncodeToString([]byte(key + ":" + secret))
}
