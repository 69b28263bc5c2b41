package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/lrs/oauth"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/storage/statements"
	"github.com/lectern-lms/lectern/tenant"
)

// LRSBase is the mount path of the xAPI record store. Resources live at
// LRSBase/<resource> (tenant from the credential) and LRSBase/<tenant>/<resource>.
const LRSBase = "/lrs/TCAPI"

// DefaultLRSTenant is the tenant the platform root credentials address at LRSBase without
// a tenant segment; it is created on first use.
const DefaultLRSTenant = "default"

const (
	hdrVersion           = "X-Experience-API-Version"
	hdrConsistentThrough = "X-Experience-API-Consistent-Through"
	hdrHash              = "X-Experience-API-Hash"
)

// lrsResource is one xAPI resource: its path below the base and a handler per method.
type lrsResource struct {
	path    string
	summary string
	methods []lrsMethod
}

type lrsMethod struct {
	method   string
	summary  string
	body     string
	response string
	success  int
	media    []string
	query    []Param
	h        fiber.Handler
}

func (s *Server) registerLRS() {
	// The prelude reads form bodies (alternate request syntax): the limit comes first.
	s.app.Use(LRSBase, s.limitPrefix(int64(s.deps.RecordBodyLimit)))
	s.app.Use(LRSBase, s.lrsPrelude)
	// The report extension (lrs_reports.go) is registered with the xAPI resources; with the
	// tenant-less prefix first, /Report/activities wins over /<tenant>/activities.
	resources := append(s.lrsResources(), s.lrsReportResources()...)
	for _, prefix := range []string{LRSBase, LRSBase + "/:tenant"} {
		for _, res := range resources {
			byMethod := map[string]fiber.Handler{}
			for _, m := range res.methods {
				byMethod[m.method] = m.h
			}
			for _, m := range res.methods {
				r := Route{Method: m.method, Path: prefix + res.path, Summary: m.summary, Tag: "xapi",
					Scope: ScopeLRS, Body: m.body, Response: m.response, Success: m.success, Query: m.query,
					Head: m.method == fiber.MethodGet, Media: m.media}
				if m.method == fiber.MethodPost {
					// POST ?method=X answers as X does (alternate request syntax).
					for _, o := range res.methods {
						if o.method != m.method {
							r.Answers = append(r.Answers, Answer{Status: o.success, Schema: o.response, Media: o.media})
						}
					}
				}
				if prefix != LRSBase {
					r.Summary += " (tenant from the path)"
				}
				h := m.h
				if m.method == fiber.MethodPost {
					h = lrsDispatch(byMethod)
				}
				if res.path == "/about" {
					r.Scope = ScopePublic
				}
				s.handle(r, h)
			}
		}
	}
}

// lrsDispatch serves a resource's POST: either a real POST or the alternate request syntax
// (POST ?method=X, 1.0.x only), which runs X's handler.
func lrsDispatch(byMethod map[string]fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		m := lrsMethodOf(c)
		h, ok := byMethod[m]
		if !ok || (m == fiber.MethodHead && byMethod[fiber.MethodGet] == nil) {
			return badRequest("method %s is not allowed on this resource", m)
		}
		if m == fiber.MethodHead {
			h = byMethod[fiber.MethodGet]
			c.Response().SkipBody = true
		}
		return h(c)
	}
}

// lrsMethodOf is the request's method, after the alternate request syntax.
func lrsMethodOf(c *fiber.Ctx) string {
	if m, ok := c.Locals("lrsMethod").(string); ok {
		return m
	}
	return c.Method()
}

func isAlternate(c *fiber.Ctx) bool {
	_, ok := c.Locals("lrsMethod").(string)
	return ok
}

func (s *Server) lrsChain(r Route) []fiber.Handler {
	return []fiber.Handler{s.lrsAuthenticate, s.lrsScope(r), s.lrsVersion}
}

var corsAllowHeaders = strings.Join([]string{"Authorization", "Content-Type", hdrVersion, "If-Match", "If-None-Match",
	"X-Requested-With", "Accept", "Accept-Language"}, ", ")

var corsExposeHeaders = strings.Join([]string{"ETag", "Last-Modified", hdrConsistentThrough, hdrVersion, "Content-Type", "Location"}, ", ")

// responseVersion is the X-Experience-API-Version a response carries: the request's family,
// else the deployment's default version (the 1.0.3 and 2.0 conformance suites each expect
// their own version on a request that names none, so which one an LRS reports is a choice
// for its operator: LECTERN_XAPI_DEFAULT_VERSION).
func (s *Server) responseVersion(h string) string {
	v, err := xapi.ParseVersionHeader(h)
	switch {
	case err == nil && v != xapi.V200:
		return string(xapi.V103)
	case err == nil:
		return string(xapi.V200)
	case s.deps.XAPIDefaultVersion == string(xapi.V103):
		return string(xapi.V103)
	}
	return string(xapi.V200)
}

// lrsPrelude runs for everything under LRSBase: CORS, the version response header, the
// preflight, and the alternate request syntax (rewritten into an ordinary request).
func (s *Server) lrsPrelude(c *fiber.Ctx) error {
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" {
		origin = "*"
	} else {
		c.Vary(fiber.HeaderOrigin)
	}
	c.Set(fiber.HeaderAccessControlAllowOrigin, origin)
	c.Set(fiber.HeaderAccessControlExposeHeaders, corsExposeHeaders)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	if c.Method() == fiber.MethodOptions {
		c.Set(fiber.HeaderAccessControlAllowMethods, "GET, HEAD, PUT, POST, DELETE, OPTIONS")
		c.Set(fiber.HeaderAccessControlAllowHeaders, corsAllowHeaders)
		c.Set(fiber.HeaderAccessControlMaxAge, "86400")
		c.Set(hdrVersion, s.responseVersion(c.Get(hdrVersion)))
		return c.SendStatus(fiber.StatusNoContent)
	}
	if c.Method() == fiber.MethodPost && len(c.Context().QueryArgs().Peek("method")) > 0 {
		if err := s.lrsAlternate(c); err != nil {
			c.Set(hdrVersion, s.responseVersion(c.Get(hdrVersion)))
			return err
		}
	}
	c.Set(hdrVersion, s.responseVersion(c.Get(hdrVersion)))
	return c.Next()
}

// alternateHeaders are the form fields the alternate request syntax treats as headers.
var alternateHeaders = map[string]string{
	"authorization": fiber.HeaderAuthorization, "x-experience-api-version": hdrVersion,
	"content-type": fiber.HeaderContentType, "content-length": "", "if-match": fiber.HeaderIfMatch,
	"if-none-match": fiber.HeaderIfNoneMatch,
}

// lrsAlternate rewrites a POST ?method=X request (xAPI 1.0.3 "Alternate Request Syntax"):
// header fields and the content field of the form become headers and body, the other
// fields query parameters. Whether the version allows it is checked by lrsVersion.
func (s *Server) lrsAlternate(c *fiber.Ctx) error {
	q := queryValues(c)
	m := strings.ToUpper(q.Get("method"))
	switch m {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodPut, fiber.MethodPost, fiber.MethodDelete:
	default:
		return badRequest("alternate request syntax: method must be GET, HEAD, PUT, POST or DELETE, not %q", q.Get("method"))
	}
	if len(q) != 1 || len(q["method"]) != 1 {
		return badRequest("alternate request syntax: the query may hold only the method parameter; send the others as form fields")
	}
	ct := c.Get(fiber.HeaderContentType)
	if mt, _, _ := strings.Cut(ct, ";"); !strings.EqualFold(strings.TrimSpace(mt), fiber.MIMEApplicationForm) {
		return badRequest("alternate request syntax: Content-Type must be application/x-www-form-urlencoded")
	}
	form, err := url.ParseQuery(string(c.Body()))
	if err != nil {
		return badRequest("alternate request syntax: the form is malformed: %v", err)
	}
	req := &c.Request().Header
	params := url.Values{}
	var content []byte
	hasContent, hasType := false, false
	for k, vs := range form {
		v := vs[len(vs)-1]
		if h, ok := alternateHeaders[strings.ToLower(k)]; ok {
			if h == fiber.HeaderContentType {
				hasType = true
			}
			if h != "" {
				req.Set(h, v)
			}
			continue
		}
		if k == "content" {
			content, hasContent = []byte(v), true
			continue
		}
		params[k] = vs
	}
	if !hasType {
		req.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	}
	if !hasContent {
		content = nil
	}
	c.Request().SetBody(content)
	c.Request().URI().SetQueryString(params.Encode())
	c.Locals("lrsMethod", m)
	return nil
}

// queryValues copies the query parameters (Fiber's strings are only valid during the request).
func queryValues(c *fiber.Ctx) url.Values {
	out := url.Values{}
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		out[string(k)] = append(out[string(k)], string(v))
	})
	return out
}

func (s *Server) lrsHomePage() string {
	base := strings.TrimRight(s.deps.PublicURL, "/")
	if base == "" {
		base = "https://lectern.invalid"
	}
	return base + LRSBase
}

func (s *Server) hooks() LRSHooks {
	h := s.deps.LRS
	if h.BasicAuthority == nil {
		h.BasicAuthority = SettingsAccounts{Settings: s.deps.Settings, HomePage: s.lrsHomePage()}
	}
	if h.OAuthAuthority == nil && s.deps.OAuth != nil {
		h.OAuthAuthority = OAuthClients{Service: s.deps.OAuth, HomePage: s.lrsHomePage()}
	}
	if h.OAuthAuthority == nil {
		h.OAuthAuthority = NoOAuth{}
	}
	if h.Launch == nil && s.deps.LaunchTokens != nil {
		h.Launch = LaunchTokens{Issuer: s.deps.LaunchTokens, HomePage: s.lrsHomePage()}
	}
	if h.Launch == nil {
		h.Launch = RejectLaunches{}
	}
	if h.BuildContext == nil {
		h.BuildContext = DefaultLRSContext{}
	}
	if h.PostProcess == nil {
		h.PostProcess = DefaultLRSContext{}
	}
	if h.Permissions == nil {
		h.Permissions = DefaultLRSPermissions{}
	}
	if h.Stored == nil {
		h.Stored = NoStoredHook{}
	}
	return h
}

func lrsUnauthorized(format string, args ...any) error {
	return errorf(fiber.StatusUnauthorized, format, args...)
}

// lrsAuthenticate resolves the Authorization header, in order: an OAuth 2.0 access token
// (Bearer lat_…), the platform root (LRS root of every tenant), a tenant credential
// (read-write account of its tenant), the addressed tenant's LRS accounts
// (TinCanBasicAccounts…), an OAuth 1.0a header (the OAuth hook), and a launch token.
func (s *Server) lrsAuthenticate(c *fiber.Ctx) error {
	h := c.Get(fiber.HeaderAuthorization)
	if h == "" {
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="lectern-lrs"`)
		return lrsUnauthorized("credentials are required (HTTP Basic, or Bearer with an OAuth 2.0 access token)")
	}
	ctx := c.UserContext()
	hooks := s.hooks()
	addressed := strings.ToLower(c.Params("tenant"))
	if addressed == "" {
		addressed = DefaultLRSTenant
	}
	var p *LRSPrincipal
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	switch {
	case strings.EqualFold(scheme, "bearer") && strings.HasPrefix(strings.TrimSpace(rest), oauth.TokenPrefix):
		var err error
		if p, err = hooks.OAuthAuthority.AuthorityFromOAuth(ctx, addressed, c.Method(), c.OriginalURL(), h); err != nil {
			return err
		}
		if p == nil {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="lectern-lrs", error="invalid_token"`)
			return lrsUnauthorized("the OAuth access token is not valid: it expired, its client was deleted, or this server did not issue it")
		}
	case strings.EqualFold(scheme, "basic") || strings.EqualFold(scheme, "bearer"):
		key, secret, ok := httpx.ParseAuthorization(h)
		if !ok {
			break
		}
		root := s.deps.Root
		if root.Match(key, secret) {
			p = accountPrincipal(s.lrsHomePage(), root.User, "", LRSRoot)
			break
		}
		tid, err := s.deps.Tenants.Authenticate(ctx, key, secret)
		switch {
		case err == nil:
			p = accountPrincipal(s.lrsHomePage(), key, tid, LRSReadWrite)
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
			c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="lectern-lrs"`)
			if _, none := hooks.OAuthAuthority.(NoOAuth); none {
				return lrsUnauthorized("OAuth is not supported by this record store; authenticate with HTTP Basic (tenant credentials, an LRS account or a launch token)")
			}
			if _, own := hooks.OAuthAuthority.(OAuthClients); own {
				return lrsUnauthorized("OAuth 1.0a is not supported; use OAuth 2.0 client credentials (POST %s, then Authorization: Bearer <access_token>) or HTTP Basic", OAuthTokenPath)
			}
			return lrsUnauthorized("OAuth credentials were not accepted")
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
	if p == nil {
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="lectern-lrs"`)
		return lrsUnauthorized("invalid credentials")
	}
	c.Locals("lrsPrincipal", p)
	return c.Next()
}

func lrsPrincipalOf(c *fiber.Ctx) *LRSPrincipal {
	p, _ := c.Locals("lrsPrincipal").(*LRSPrincipal)
	return p
}

func lrsPermissionsOf(c *fiber.Ctx) LRSPermissions {
	p, _ := c.Locals("lrsPermissions").(LRSPermissions)
	return p
}

// lrsScope resolves the tenant through the context hooks and applies, in order: permissions
// (403), a credential of another tenant (403), an unknown tenant (404) and a write to a
// disabled tenant (409).
func (s *Server) lrsScope(r Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := lrsPrincipalOf(c)
		hooks := s.hooks()
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
			id = DefaultLRSTenant
		}
		method := lrsMethodOf(c)
		perm := hooks.Permissions.Permissions(ctx, p)
		if err := perm.Check(lrsResourceOf(r.Path), httpx.IsWrite(method)); err != nil {
			return errorf(fiber.StatusForbidden, "the credential '%s' %s", p.Name, strings.TrimPrefix(err.Error(), access.ErrForbidden.Error()+": "))
		}
		if p.Tenant != "" && p.Tenant != id {
			return errorf(fiber.StatusForbidden, "the credential of tenant '%s' cannot access tenant '%s'", p.Tenant, id)
		}
		t, err := s.deps.Tenants.Get(ctx, id)
		if errors.Is(err, tenant.ErrNotFound) && id == DefaultLRSTenant && c.Params("tenant") == "" {
			if t, err = s.deps.Tenants.Create(ctx, id, true); errors.Is(err, tenant.ErrExists) {
				t, err = s.deps.Tenants.Get(ctx, id)
			}
		}
		if err != nil {
			return err
		}
		if !t.Enabled && httpx.IsWrite(method) && !r.AllowDisabled {
			return errorf(fiber.StatusConflict, "tenant '%s' is disabled; enable it before changing its data", id)
		}
		if s.deps.Statements == nil {
			return errorf(fiber.StatusServiceUnavailable, "the LRS has no statements backend configured")
		}
		httpx.SetTenant(c, t.ID)
		c.Locals("lrsPermissions", perm)
		c.Locals("lrsContext", lc)
		return c.Next()
	}
}

// lrsResourceOf is the resource a record-store route serves, for the permissions.
func lrsResourceOf(path string) access.Resource {
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

// lrsVersion checks X-Experience-API-Version (400 when missing or unsupported) and that the
// alternate request syntax is used only under 1.0.x.
func (s *Server) lrsVersion(c *fiber.Ctx) error {
	v, err := xapi.ParseVersionHeader(c.Get(hdrVersion))
	if err != nil {
		return badRequest("the X-Experience-API-Version header is missing or names an unsupported version (1.0.x or 2.0.0 are supported)")
	}
	if isAlternate(c) && v == xapi.V200 {
		return badRequest("the alternate request syntax (POST ?method=) is not allowed under xAPI 2.0.0")
	}
	c.Locals("xapiVersion", v)
	return c.Next()
}

func xapiVersionOf(c *fiber.Ctx) xapi.Version {
	v, _ := c.Locals("xapiVersion").(xapi.Version)
	return v
}

// lrsError maps the statements port's sentinels and xAPI validation errors.
func lrsError(err error) error {
	var xe *xapi.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &xe):
		return badRequest("%s", xe.Error())
	case errors.Is(err, statements.ErrNotFound):
		return notFound("%s", err.Error())
	case errors.Is(err, statements.ErrConflict):
		return errorf(fiber.StatusConflict, "%s", err.Error())
	case errors.Is(err, statements.ErrPrecondition):
		return errorf(fiber.StatusPreconditionFailed, "%s", err.Error())
	case errors.Is(err, statements.ErrInvalid):
		return badRequest("%s", err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return errorf(fiber.StatusServiceUnavailable, "the statements backend did not answer in time")
	}
	return err
}

// checkParams rejects parameters not in allowed (exact case) and repeated ones.
func checkParams(q url.Values, allowed ...string) error {
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for k, v := range q {
		if !ok[k] {
			return badRequest("unknown query parameter '%s' (parameters are case-sensitive)", k)
		}
		if len(v) > 1 {
			return badRequest("query parameter '%s' is given more than once", k)
		}
	}
	return nil
}

// httpDate formats a Last-Modified value.
func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }
