// Package lrsapi is the HTTP side of the xAPI learning record store (/lrs/...): the
// statements, documents, activities, agents and about resources, the report extension, the
// OAuth 2.0 token endpoint with the management of its clients, and the management of
// statement forwarding. It translates HTTP to the record store's use cases (lrs/ingest,
// lrs/report) and ports (storage/statements); its routes go through the root's registrar,
// which gives them their body limit and, for the xAPI resources, the chain of Chain.
package lrsapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/internal/throttle"
	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/lrs/forward"
	"github.com/lectern-lms/lectern/lrs/launch"
	"github.com/lectern-lms/lectern/lrs/oauth"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/storage/statements"
	"github.com/lectern-lms/lectern/tenant"
)

// Base is the mount path of the xAPI record store. Resources live at
// Base/<resource> (tenant from the credential) and Base/<tenant>/<resource>.
const Base = access.Base

// defaultTenant is the tenant the platform root credentials address at Base without
// a tenant segment; it is created on first use.
const defaultTenant = "default"

const (
	hdrVersion           = "X-Experience-API-Version"
	hdrConsistentThrough = "X-Experience-API-Consistent-Through"
	hdrHash              = "X-Experience-API-Hash"
)

// Deps is what the record store's HTTP side needs; the root builds it from server.Deps.
type Deps struct {
	Tenants *tenant.Registry
	// Root is the platform's root account, an LRS root of every tenant.
	Root httpx.RootCredentials
	// Guard throttles failed Basic credentials and OAuth client secrets per account and per
	// source; nil throttles nothing.
	Guard *throttle.Guard
	// Statements is the record store's backend (statements, documents, activities).
	Statements statements.Backend
	// Settings holds the tenants' LRS accounts (the default BasicAuthority).
	Settings *settings.Store
	// Forward keeps the statement forwarding pairs (the forwarder itself runs in the worker).
	Forward *forward.Manager
	// OAuth keeps the OAuth 2.0 clients and issues their access tokens; nil leaves the token
	// endpoint answering 503 and OAuth credentials rejected.
	OAuth *oauth.Service
	// LaunchTokens signs the credentials of launched content; nil rejects them.
	LaunchTokens *launch.Issuer
	// Hooks override the extension points; zero fields use the defaults.
	Hooks Hooks
	// PublicURL is the origin of the authority agents' homePage.
	PublicURL string
	// DefaultVersion is the xAPI version ("1.0.3" or "2.0.0", the default) reported on a
	// request that names none.
	DefaultVersion string
	Logger         *slog.Logger
	// Counted receives the number of statements each write stored (the metrics); nil counts
	// nothing.
	Counted func(n int)
	// Engine is the course engine's part of the record store's writes (the learner's path);
	// nil leaves them to the record store alone.
	Engine Engine
}

// Engine is what the course engine does around the record store's writes: the cmi5 rules
// for the credential of an AU session, and what follows a stored batch. learner.Service
// implements it.
type Engine interface {
	// CheckCMI5Statements sees the statements of a cmi5 AU session's credential (p.CMI5 set)
	// before they are stored: an error wrapping access.ErrForbidden refuses the write with
	// 403 (the cmi5 statement rules).
	CheckCMI5Statements(ctx context.Context, tenant string, p *access.Principal, original []json.RawMessage, batch []*statements.Statement) error
	// CheckCMI5Document sees the document requests of a cmi5 AU session's credential (p.CMI5
	// set; method GET, PUT, POST or DELETE, k.ID empty for a DELETE of every state document)
	// before they run: an error wrapping access.ErrForbidden refuses them with 403.
	CheckCMI5Document(ctx context.Context, tenant string, p *access.Principal, method string, k statements.DocKey, contentType string, body []byte) error
	// StatementsWritten runs after every statement write of the API, once the Stored hook has
	// seen the batch (player sessions kept alive by their launch credential, xAPI and cmi5
	// registrations rolled up); p is who wrote. Unless a Stored hook other than the default
	// asks for every statement, batch holds only those with a registration or a voided
	// statement, so a large batch is not kept whole for it (lrs/ingest's Request.Keep).
	StatementsWritten(ctx context.Context, tenant string, p *access.Principal, batch []*statements.Statement)
}

// API is the xAPI record store's HTTP side: the xAPI resources and the report extension
// under Base, its authentication and tenant resolution (the route chain of
// httpx.ScopeLRS), the OAuth 2.0 token endpoint with the management of its clients, and
// the management of statement forwarding.
type API struct {
	d Deps
	// hooks are Deps.Hooks with their defaults.
	hooks Hooks
}

// New returns the record store's API over d.
func New(d Deps) *API {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	a := &API{d: d}
	a.hooks = a.withDefaults(d.Hooks)
	return a
}

// Register registers the xAPI resources with their prelude (CORS, the version header, the
// alternate request syntax), the OAuth endpoints and the forwarding management. The prelude
// reads form bodies: the root limits the bodies under Base before it.
func (a *API) Register(reg httpx.Registrar) {
	a.registerResources(reg)
	a.registerOAuth(reg)
	a.registerForwarding(reg)
}

// Schemas are the OpenAPI components of the record store's bodies, for /openapi.json.
func Schemas() map[string]any {
	out := map[string]any{}
	for _, part := range []map[string]any{lrsSchemas(), oauthSchemas(), forwardSchemas(), reportSchemas()} {
		maps.Copy(out, part)
	}
	return out
}

// OAuthScopes describes the xAPI scopes the token endpoint grants, for /openapi.json.
func OAuthScopes() map[string]string { return maps.Clone(oauthScopeDescriptions) }

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
	query    []httpx.Param
	h        fiber.Handler
}

func (a *API) registerResources(reg httpx.Registrar) {
	reg.Router().Use(Base, a.prelude)
	// The report extension (reports.go) is registered with the xAPI resources; with the
	// tenant-less prefix first, /Report/activities wins over /<tenant>/activities.
	resources := append(a.lrsResources(), a.lrsReportResources()...)
	for _, prefix := range []string{Base, Base + "/:tenant"} {
		for _, res := range resources {
			byMethod := map[string]fiber.Handler{}
			for _, m := range res.methods {
				byMethod[m.method] = m.h
			}
			for _, m := range res.methods {
				r := httpx.Route{Method: m.method, Path: prefix + res.path, Summary: m.summary, Tag: "xapi",
					Scope: httpx.ScopeLRS, Body: m.body, Response: m.response, Success: m.success, Query: m.query,
					Head: m.method == fiber.MethodGet, Media: m.media}
				if m.method == fiber.MethodPost {
					// POST ?method=X answers as X does (alternate request syntax).
					for _, o := range res.methods {
						if o.method != m.method {
							r.Answers = append(r.Answers, httpx.Answer{Status: o.success, Schema: o.response, Media: o.media})
						}
					}
				}
				if prefix != Base {
					r.Summary += " (tenant from the path)"
				}
				h := m.h
				if m.method == fiber.MethodPost {
					h = dispatch(byMethod)
				}
				if res.path == "/about" {
					r.Scope = httpx.ScopePublic
				}
				reg.Handle(r, h)
			}
		}
	}
}

// collapseSlashes replaces each run of slashes in p with one.
func collapseSlashes(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && i > 0 && p[i-1] == '/' {
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// dispatch serves a resource's POST: either a real POST or the alternate request syntax
// (POST ?method=X, 1.0.x only), which runs X's handler.
func dispatch(byMethod map[string]fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		m := methodOf(c)
		h, ok := byMethod[m]
		if !ok || (m == fiber.MethodHead && byMethod[fiber.MethodGet] == nil) {
			return httpx.BadRequest("method %s is not allowed on this resource", m)
		}
		if m == fiber.MethodHead {
			h = byMethod[fiber.MethodGet]
			c.Response().SkipBody = true
		}
		return h(c)
	}
}

// methodOf is the request's method, after the alternate request syntax.
func methodOf(c *fiber.Ctx) string {
	if m, ok := c.Locals("lrsMethod").(string); ok {
		return m
	}
	return c.Method()
}

func isAlternate(c *fiber.Ctx) bool {
	_, ok := c.Locals("lrsMethod").(string)
	return ok
}

var corsAllowHeaders = strings.Join([]string{"Authorization", "Content-Type", hdrVersion, "If-Match", "If-None-Match",
	"X-Requested-With", "Accept", "Accept-Language"}, ", ")

var corsExposeHeaders = strings.Join([]string{"ETag", "Last-Modified", hdrConsistentThrough, hdrVersion, "Content-Type", "Location"}, ", ")

// responseVersion is the X-Experience-API-Version a response carries: the request's family,
// else the deployment's default version (the 1.0.3 and 2.0 conformance suites each expect
// their own version on a request that names none, so which one an LRS reports is a choice
// for its operator: LECTERN_XAPI_DEFAULT_VERSION).
func (a *API) responseVersion(h string) string {
	v, err := xapi.ParseVersionHeader(h)
	switch {
	case err == nil && v != xapi.V200:
		return string(xapi.V103)
	case err == nil:
		return string(xapi.V200)
	case a.d.DefaultVersion == string(xapi.V103):
		return string(xapi.V103)
	}
	return string(xapi.V200)
}

// prelude runs for everything under Base: CORS, the version response header, the
// preflight, and the alternate request syntax (rewritten into an ordinary request).
func (a *API) prelude(c *fiber.Ctx) error {
	if p := c.Path(); strings.Contains(p, "//") {
		// A resource after an endpoint ending in "/" ("…/acme//activities/state", as cmi5
		// clients build it from such an endpoint) is the resource.
		c.Path(collapseSlashes(p))
	}
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
		c.Set(hdrVersion, a.responseVersion(c.Get(hdrVersion)))
		return c.SendStatus(fiber.StatusNoContent)
	}
	if c.Method() == fiber.MethodPost && len(c.Context().QueryArgs().Peek("method")) > 0 {
		if err := a.alternate(c); err != nil {
			c.Set(hdrVersion, a.responseVersion(c.Get(hdrVersion)))
			return err
		}
	}
	c.Set(hdrVersion, a.responseVersion(c.Get(hdrVersion)))
	return c.Next()
}

// alternateHeaders are the form fields the alternate request syntax treats as headers.
var alternateHeaders = map[string]string{
	"authorization": fiber.HeaderAuthorization, "x-experience-api-version": hdrVersion,
	"content-type": fiber.HeaderContentType, "content-length": "", "if-match": fiber.HeaderIfMatch,
	"if-none-match": fiber.HeaderIfNoneMatch,
}

// alternate rewrites a POST ?method=X request (xAPI 1.0.3 "Alternate Request Syntax"):
// header fields and the content field of the form become headers and body, the other
// fields query parameters. Whether the version allows it is checked by checkVersion.
func (a *API) alternate(c *fiber.Ctx) error {
	q := queryValues(c)
	m := strings.ToUpper(q.Get("method"))
	switch m {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodPut, fiber.MethodPost, fiber.MethodDelete:
	default:
		return httpx.BadRequest("alternate request syntax: method must be GET, HEAD, PUT, POST or DELETE, not %q", q.Get("method"))
	}
	if len(q) != 1 || len(q["method"]) != 1 {
		return httpx.BadRequest("alternate request syntax: the query may hold only the method parameter; send the others as form fields")
	}
	ct := c.Get(fiber.HeaderContentType)
	if mt, _, _ := strings.Cut(ct, ";"); !strings.EqualFold(strings.TrimSpace(mt), fiber.MIMEApplicationForm) {
		return httpx.BadRequest("alternate request syntax: Content-Type must be application/x-www-form-urlencoded")
	}
	form, err := url.ParseQuery(string(c.Body()))
	if err != nil {
		return httpx.BadRequest("alternate request syntax: the form is malformed: %v", err)
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

// lrsError maps the statements port's sentinels and xAPI validation errors.
func lrsError(err error) error {
	var xe *xapi.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &xe):
		return httpx.BadRequest("%s", xe.Error())
	case errors.Is(err, access.ErrForbidden):
		return httpx.Errorf(fiber.StatusForbidden, "%s", err.Error())
	case errors.Is(err, statements.ErrNotFound):
		return httpx.NotFound("%s", err.Error())
	case errors.Is(err, statements.ErrConflict):
		return httpx.Errorf(fiber.StatusConflict, "%s", err.Error())
	case errors.Is(err, statements.ErrPrecondition):
		return httpx.Errorf(fiber.StatusPreconditionFailed, "%s", err.Error())
	case errors.Is(err, statements.ErrInvalid):
		return httpx.BadRequest("%s", err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return httpx.Errorf(fiber.StatusServiceUnavailable, "the statements backend did not answer in time")
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
			return httpx.BadRequest("unknown query parameter '%s' (parameters are case-sensitive)", k)
		}
		if len(v) > 1 {
			return httpx.BadRequest("query parameter '%s' is given more than once", k)
		}
	}
	return nil
}

// httpDate formats a Last-Modified value.
func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }
