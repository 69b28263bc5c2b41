package lrsapi

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/lrs/oauth"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/tenant"
)

// The record store's route chain (Chain): who the request is (authenticate), which tenant it
// addresses and what it may do there (scope), and which xAPI version it speaks
// (checkVersion). The extension points (hooks.go) decide the first two.

// Chain is the chain of a record-store route (httpx.ScopeLRS), after the body limit:
// authentication, the tenant and permissions, the version header.
func (a *API) Chain(r httpx.Route) []fiber.Handler {
	return []fiber.Handler{a.authenticate, a.scope(r), a.checkVersion}
}

func unauthorized(format string, args ...any) error {
	return httpx.Errorf(fiber.StatusUnauthorized, format, args...)
}

// challengeBasic asks for HTTP Basic credentials with a 401's WWW-Authenticate, except in the
// answer to a script of a web page (Sec-Fetch-Dest: empty: fetch or XMLHttpRequest, such as
// a cmi5 AU or xAPI content), for which a browser would open its own sign-in prompt and hold
// the request until someone answers it, instead of letting the script see the 401.
func challengeBasic(c *fiber.Ctx) {
	if c.Get("Sec-Fetch-Dest") == "empty" {
		return
	}
	c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="lectern-lrs"`)
}

// authenticate resolves the Authorization header, in order: an OAuth 2.0 access token
// (Bearer lat_…), the platform root (LRS root of every tenant), a tenant credential
// (read-write account of its tenant), the addressed tenant's LRS accounts
// (TinCanBasicAccounts…), an OAuth 1.0a header (the OAuth hook), and a launch token.
func (a *API) authenticate(c *fiber.Ctx) error {
	h := c.Get(fiber.HeaderAuthorization)
	if h == "" {
		challengeBasic(c)
		return unauthorized("credentials are required (HTTP Basic, or Bearer with an OAuth 2.0 access token)")
	}
	ctx := c.UserContext()
	hooks := a.hooks
	addressed := strings.ToLower(c.Params("tenant"))
	if addressed == "" {
		addressed = defaultTenant
	}
	var p *access.Principal
	// guessed is the account a Basic (or key.secret Bearer) header claimed: its failures are
	// throttled, the launch tokens tried last included.
	guessed := ""
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	switch {
	case strings.EqualFold(scheme, "bearer") && strings.HasPrefix(strings.TrimSpace(rest), oauth.TokenPrefix):
		var err error
		if p, err = hooks.OAuthAuthority.AuthorityFromOAuth(ctx, addressed, c.Method(), c.OriginalURL(), h); err != nil {
			return err
		}
		if p == nil {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="lectern-lrs", error="invalid_token"`)
			return unauthorized("the OAuth access token is not valid: it expired, its client was deleted, or this server did not issue it")
		}
	case strings.EqualFold(scheme, "basic") || strings.EqualFold(scheme, "bearer"):
		key, secret, ok := httpx.ParseAuthorization(h)
		if !ok {
			break
		}
		if err := httpx.Throttle(c, a.d.Guard, key); err != nil {
			return err
		}
		guessed = key
		root := a.d.Root
		if root.Match(key, secret) {
			p = access.AccountPrincipal(a.HomePage(), root.User, "", access.Root)
			break
		}
		tid, err := a.d.Tenants.Authenticate(ctx, key, secret)
		switch {
		case err == nil:
			p = access.AccountPrincipal(a.HomePage(), key, tid, access.ReadWrite)
		case !errors.Is(err, tenant.ErrBadCredentials):
			return err
		case strings.EqualFold(scheme, "basic"):
			if p, err = hooks.BasicAuthority.AuthorityFromBasicAuth(ctx, addressed, key, secret); err != nil {
				return err
			}
		}
	case strings.EqualFold(scheme, "oauth"):
		var err error
		if p, err = hooks.OAuthAuthority.AuthorityFromOAuth(ctx, addressed, c.Method(), c.OriginalURL(), h); err != nil {
			return err
		}
		if p == nil {
			// Falling through to "invalid credentials" would tell a client its OAuth keys are
			// wrong when the store does not speak OAuth 1.0a at all.
			challengeBasic(c)
			if _, none := hooks.OAuthAuthority.(NoOAuth); none {
				return unauthorized("OAuth is not supported by this record store; authenticate with HTTP Basic (tenant credentials, an LRS account or a launch token)")
			}
			if _, own := hooks.OAuthAuthority.(OAuthClients); own {
				return unauthorized("OAuth 1.0a is not supported; use OAuth 2.0 client credentials (POST %s, then Authorization: Bearer <access_token>) or HTTP Basic", OAuthTokenPath)
			}
			return unauthorized("OAuth credentials were not accepted")
		}
	}
	if p == nil {
		var err error
		if p, err = hooks.Launch.AuthorizeLaunch(ctx, addressed, h); err != nil {
			return err
		}
		if p != nil {
			p.Launch = true
		}
	}
	if guessed != "" {
		httpx.Attempted(c, a.d.Guard, guessed, p != nil)
	}
	if p == nil {
		challengeBasic(c)
		return unauthorized("invalid credentials")
	}
	c.Locals("lrsPrincipal", p)
	return c.Next()
}

func lrsPrincipalOf(c *fiber.Ctx) *access.Principal {
	p, _ := c.Locals("lrsPrincipal").(*access.Principal)
	return p
}

func lrsPermissionsOf(c *fiber.Ctx) access.Permissions {
	p, _ := c.Locals("lrsPermissions").(access.Permissions)
	return p
}

// scope resolves the tenant through the context hooks and applies, in order: permissions
// (403), a credential of another tenant (403), an unknown tenant (404) and a write to a
// disabled tenant (409).
func (a *API) scope(r httpx.Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := lrsPrincipalOf(c)
		hooks := a.hooks
		ctx := c.UserContext()
		lc := hooks.BuildContext.BuildContext(c.Get(hdrVersion), p.Launch)
		lc, err := hooks.PostProcess.PostProcessContext(lc, queryValues(c), c.Params("tenant"))
		if err != nil {
			return err
		}
		id := lc.Tenant
		if id == "" {
			id = p.Tenant
		}
		if id == "" {
			id = defaultTenant
		}
		method := methodOf(c)
		perm := hooks.Permissions.Permissions(ctx, p)
		if err := perm.Check(resourceOf(r.Path), httpx.IsWrite(method)); err != nil {
			return httpx.Errorf(fiber.StatusForbidden, "the credential '%s' %s", p.Name, strings.TrimPrefix(err.Error(), access.ErrForbidden.Error()+": "))
		}
		if p.Tenant != "" && p.Tenant != id {
			return httpx.Errorf(fiber.StatusForbidden, "the credential of tenant '%s' cannot access tenant '%s'", p.Tenant, id)
		}
		t, err := a.d.Tenants.Get(ctx, id)
		if errors.Is(err, tenant.ErrNotFound) && id == defaultTenant && c.Params("tenant") == "" {
			if t, err = a.d.Tenants.Create(ctx, id, true); errors.Is(err, tenant.ErrExists) {
				t, err = a.d.Tenants.Get(ctx, id)
			}
		}
		if err != nil {
			return err
		}
		if !t.Enabled && httpx.IsWrite(method) && !r.AllowDisabled {
			return httpx.Errorf(fiber.StatusConflict, "tenant '%s' is disabled; enable it before changing its data", id)
		}
		if a.d.Statements == nil {
			return httpx.Errorf(fiber.StatusServiceUnavailable, "the LRS has no statements backend configured")
		}
		httpx.SetTenant(c, t.ID)
		c.Locals("lrsPermissions", perm)
		c.Locals("lrsContext", lc)
		return c.Next()
	}
}

// resourceOf is the resource a record-store route serves, for the permissions.
func resourceOf(path string) access.Resource {
	switch {
	case strings.Contains(path, "/Report/"):
		return access.Reports
	case strings.HasSuffix(path, "/activities/state"):
		return access.State
	case strings.HasSuffix(path, "/activities/profile"):
		return access.ActivityProfile
	case strings.HasSuffix(path, "/agents/profile"):
		return access.AgentProfile
	case strings.HasSuffix(path, "/activities"):
		return access.Activities
	case strings.HasSuffix(path, "/agents"):
		return access.Agents
	}
	return access.Statements
}

// checkVersion checks X-Experience-API-Version (400 when missing or unsupported) and that the
// alternate request syntax is used only under 1.0.x.
func (a *API) checkVersion(c *fiber.Ctx) error {
	v, err := xapi.ParseVersionHeader(c.Get(hdrVersion))
	if err != nil {
		return httpx.BadRequest("the X-Experience-API-Version header is missing or names an unsupported version (1.0.x or 2.0.0 are supported)")
	}
	if isAlternate(c) && v == xapi.V200 {
		return httpx.BadRequest("the alternate request syntax (POST ?method=) is not allowed under xAPI 2.0.0")
	}
	c.Locals("xapiVersion", v)
	return c.Next()
}

func xapiVersionOf(c *fiber.Ctx) xapi.Version {
	v, _ := c.Locals("xapiVersion").(xapi.Version)
	return v
}
