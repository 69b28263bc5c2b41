package server

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/tenant"
)

func (s *Server) authenticate(c *fiber.Ctx) error {
	h := c.Get(fiber.HeaderAuthorization)
	if h == "" {
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="lectern"`)
		return httpx.Errorf(fiber.StatusUnauthorized, "credentials are required (HTTP Basic key:secret or Bearer key.secret)")
	}
	key, secret, ok := httpx.ParseAuthorization(h)
	if !ok {
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="lectern"`)
		return httpx.Errorf(fiber.StatusUnauthorized, "the Authorization header is malformed")
	}
	if err := httpx.Throttle(c, s.deps.Guard, key); err != nil {
		return err
	}
	p, err := s.principalFor(c.UserContext(), key, secret)
	if errors.Is(err, tenant.ErrBadCredentials) {
		httpx.Attempted(c, s.deps.Guard, key, false)
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="lectern"`)
		return httpx.Errorf(fiber.StatusUnauthorized, "invalid credentials")
	}
	if err != nil {
		return err
	}
	httpx.Attempted(c, s.deps.Guard, key, true)
	httpx.SetPrincipal(c, p)
	return c.Next()
}

// principalFor checks a key and secret: the root account, else a tenant's credential
// (tenant.ErrBadCredentials when neither).
func (s *Server) principalFor(ctx context.Context, key, secret string) (httpx.Principal, error) {
	if s.deps.Root.Match(key, secret) {
		return httpx.Principal{Root: true, Key: key}, nil
	}
	tid, err := s.deps.Tenants.Authenticate(ctx, key, secret)
	if err != nil {
		return httpx.Principal{}, err
	}
	return httpx.Principal{Tenant: tid, Key: key}, nil
}
