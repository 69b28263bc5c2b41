package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/tenant"
)

// Principal is who a request authenticated as: the root account or one tenant's credential.
type Principal struct {
	Root   bool
	Tenant string
	Key    string
}

func principalOf(c *fiber.Ctx) Principal {
	p, _ := c.Locals("principal").(Principal)
	return p
}

// parseAuthorization accepts HTTP Basic key:secret and Bearer <key>.<secret>.
func parseAuthorization(h string) (key, secret string, ok bool) {
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

func (s *Server) authenticate(c *fiber.Ctx) error {
	h := c.Get(fiber.HeaderAuthorization)
	if h == "" {
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="lectern"`)
		return errorf(fiber.StatusUnauthorized, "credentials are required (HTTP Basic key:secret or Bearer key.secret)")
	}
	key, secret, ok := parseAuthorization(h)
	if !ok {
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="lectern"`)
		return errorf(fiber.StatusUnauthorized, "the Authorization header is malformed")
	}
	p, err := s.principalFor(c, key, secret)
	if errors.Is(err, tenant.ErrBadCredentials) {
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="lectern"`)
		return errorf(fiber.StatusUnauthorized, "invalid credentials")
	}
	if err != nil {
		return err
	}
	c.Locals("principal", p)
	return c.Next()
}

// principalFor checks a key and secret: the root account, else a tenant's credential
// (tenant.ErrBadCredentials when neither).
func (s *Server) principalFor(c *fiber.Ctx, key, secret string) (Principal, error) {
	root := s.deps.Root
	if root.User != "" && equalConstantTime(key, root.User) && equalConstantTime(secret, root.Password) {
		return Principal{Root: true, Key: key}, nil
	}
	tid, err := s.deps.Tenants.Authenticate(c.UserContext(), key, secret)
	if err != nil {
		return Principal{}, err
	}
	return Principal{Tenant: tid, Key: key}, nil
}

// basicAuth is the credentials part of an HTTP Basic Authorization header.
func basicAuth(key, secret string) string {
	return base64.StdEncoding.EncodeToString([]byte(key + ":" + secret))
}
