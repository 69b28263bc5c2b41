package lrsapi

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/lrs/oauth"
	"github.com/lectern-lms/lectern/server/httpx"
)

// OAuthTokenPath is the record store's OAuth 2.0 token endpoint (client credentials grant).
const OAuthTokenPath = "/lrs/oauth/token"

// OAuthClientCreate is the body of POST .../tenants/{tenant_id}/lrs_oauth_clients.
type OAuthClientCreate struct {
	Name *string `json:"name"`
	// Scopes are xAPI scopes; omitted: statements/write statements/read/mine.
	Scopes *[]string `json:"scopes"`
	// TokenLifetime is the lifetime of the client's access tokens in seconds (default 3600).
	TokenLifetime *int `json:"token_lifetime"`
}

// OAuthClientList is the body of GET .../lrs_oauth_clients.
type OAuthClientList struct {
	Clients []*oauth.Client `json:"clients"`
}

// OAuthTokenResponse is the token endpoint's success body (RFC 6749 §5.1).
type OAuthTokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope"`
}

// OAuthErrorResponse is the token endpoint's error body (RFC 6749 §5.2), with the message
// every Lectern error carries.
type OAuthErrorResponse struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
	Message     string `json:"message"`
}

func (a *API) registerOAuth(r httpx.Registrar) {
	const clients = "/api/v1/app_management/tenants/:tenant_id/lrs_oauth_clients"
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: clients, Summary: "Register an OAuth 2.0 client of the tenant's record store (its secret is in this answer only)", Tag: "tenants",
		Scope: httpx.ScopeRootTenant, Body: "OAuthClientCreate", Success: 201, Response: "OAuthClient"}, a.createOAuthClient)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: clients, Summary: "List the tenant's record-store OAuth clients", Tag: "tenants",
		Scope: httpx.ScopeRootTenant, Success: 200, Response: "OAuthClientList"}, a.listOAuthClients)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: clients + "/:client_id", Summary: "One record-store OAuth client", Tag: "tenants",
		Scope: httpx.ScopeRootTenant, Success: 200, Response: "OAuthClient"}, a.getOAuthClient)
	r.Handle(httpx.Route{Method: fiber.MethodDelete, Path: clients + "/:client_id", Summary: "Delete an OAuth client; its access tokens stop working at once", Tag: "tenants",
		Scope: httpx.ScopeRootTenant, Success: 204}, a.deleteOAuthClient)
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: OAuthTokenPath, Summary: "OAuth 2.0 token endpoint of the record store (client credentials grant, RFC 6749 §4.4)", Tag: "xapi",
		Scope: httpx.ScopePublic, FormBody: "OAuthTokenRequest", BodyLimit: httpx.MaxCredentialsBody, Success: 200, Response: "OAuthToken", ErrorSchema: "OAuthError"}, a.oauthToken)
}

func (a *API) oauthService() (*oauth.Service, error) {
	if a.d.OAuth == nil {
		return nil, httpx.Errorf(fiber.StatusServiceUnavailable, "this server has no OAuth clients configured")
	}
	return a.d.OAuth, nil
}

// oauthError maps the oauth package's sentinels of client management.
func oauthError(err error) error {
	switch {
	case errors.Is(err, oauth.ErrNotFound):
		return httpx.NotFound("%s", err.Error())
	case errors.Is(err, oauth.ErrInvalidClientSpec):
		return httpx.BadRequest("%s", strings.TrimPrefix(err.Error(), oauth.ErrInvalidClientSpec.Error()+": "))
	}
	return err
}

func (a *API) createOAuthClient(c *fiber.Ctx) error {
	svc, err := a.oauthService()
	if err != nil {
		return err
	}
	var body OAuthClientCreate
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	var spec oauth.ClientSpec
	if body.Name != nil {
		spec.Name = *body.Name
	}
	if body.Scopes != nil {
		spec.Scopes = *body.Scopes
		if spec.Scopes == nil {
			spec.Scopes = []string{} // null: no scopes, which is refused
		}
	}
	if body.TokenLifetime != nil {
		if *body.TokenLifetime == 0 {
			return httpx.BadRequest("token_lifetime must be from 1 to %d seconds, not 0", oauth.MaxLifetime)
		}
		spec.Lifetime = *body.TokenLifetime
	}
	cl, err := svc.CreateClient(c.UserContext(), httpx.TenantOf(c), spec)
	if err != nil {
		return oauthError(err)
	}
	return c.Status(fiber.StatusCreated).JSON(cl)
}

func (a *API) listOAuthClients(c *fiber.Ctx) error {
	svc, err := a.oauthService()
	if err != nil {
		return err
	}
	cs, err := svc.ListClients(c.UserContext(), httpx.TenantOf(c))
	if err != nil {
		return err
	}
	return c.JSON(OAuthClientList{Clients: cs})
}

func (a *API) getOAuthClient(c *fiber.Ctx) error {
	svc, err := a.oauthService()
	if err != nil {
		return err
	}
	cl, err := svc.GetClient(c.UserContext(), httpx.TenantOf(c), c.Params("client_id"))
	if err != nil {
		return oauthError(err)
	}
	return c.JSON(cl)
}

func (a *API) deleteOAuthClient(c *fiber.Ctx) error {
	svc, err := a.oauthService()
	if err != nil {
		return err
	}
	if err := svc.DeleteClient(c.UserContext(), httpx.TenantOf(c), c.Params("client_id")); err != nil {
		return oauthError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// oauthToken is the token endpoint: a form-encoded client credentials grant, the client
// authenticated by HTTP Basic or by client_id and client_secret in the form (RFC 6749 §2.3.1),
// never both. Errors answer RFC 6749 §5.2 bodies: 401 invalid_client, 400 otherwise.
func (a *API) oauthToken(c *fiber.Ctx) error {
	svc, err := a.oauthService()
	if err != nil {
		return err
	}
	// RFC 6749 §5.1: token responses, errors included, are never cached.
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderPragma, "no-cache")
	fail := func(code error, format string, args ...any) error {
		status := fiber.StatusBadRequest
		desc := httpx.Errorf(0, format, args...).Message
		if errors.Is(code, oauth.ErrInvalidClient) {
			status = fiber.StatusUnauthorized
			c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="lectern-lrs-oauth"`)
		}
		return c.Status(status).JSON(OAuthErrorResponse{Error: code.Error(), Description: desc, Message: desc})
	}
	if mt, _, _ := strings.Cut(c.Get(fiber.HeaderContentType), ";"); !strings.EqualFold(strings.TrimSpace(mt), fiber.MIMEApplicationForm) {
		return fail(oauth.ErrInvalidRequest, "the request must be a form (Content-Type application/x-www-form-urlencoded), not %q", c.Get(fiber.HeaderContentType))
	}
	if len(c.Context().QueryArgs().QueryString()) > 0 {
		return fail(oauth.ErrInvalidRequest, "send the parameters in the form body, not in the query string")
	}
	form, err := url.ParseQuery(string(c.Body()))
	if err != nil {
		return fail(oauth.ErrInvalidRequest, "the form is malformed: %v", err)
	}
	for k, v := range form {
		if len(v) > 1 {
			return fail(oauth.ErrInvalidRequest, "parameter %s is given more than once", k)
		}
	}
	req := oauth.TokenRequest{GrantType: form.Get("grant_type"), Scope: form.Get("scope"), HasScope: form.Has("scope")}
	viaForm := form.Has("client_id") || form.Has("client_secret")
	if h := c.Get(fiber.HeaderAuthorization); h != "" {
		if viaForm {
			return fail(oauth.ErrInvalidRequest, "authenticate the client once: HTTP Basic or client_id and client_secret in the form, not both")
		}
		id, secret, ok := clientBasicAuth(h)
		if !ok {
			return fail(oauth.ErrInvalidClient, "the Authorization header must be HTTP Basic with the client id and secret")
		}
		req.ClientID, req.ClientSecret = id, secret
	} else {
		if !viaForm {
			return fail(oauth.ErrInvalidClient, "client authentication is required: HTTP Basic, or client_id and client_secret in the form")
		}
		req.ClientID, req.ClientSecret = form.Get("client_id"), form.Get("client_secret")
	}
	if e := httpx.Throttle(c, a.d.Guard, req.ClientID); e != nil {
		return c.Status(e.Status).JSON(OAuthErrorResponse{Error: "slow_down", Description: e.Message, Message: e.Message})
	}
	tok, err := svc.Issue(c.UserContext(), req)
	if errors.Is(err, oauth.ErrInvalidClient) {
		httpx.Attempted(c, a.d.Guard, req.ClientID, false)
	} else if err == nil {
		httpx.Attempted(c, a.d.Guard, req.ClientID, true)
	}
	for _, code := range []error{oauth.ErrInvalidRequest, oauth.ErrUnsupportedGrantType, oauth.ErrInvalidClient, oauth.ErrInvalidScope} {
		if errors.Is(err, code) {
			return fail(code, "%s", strings.TrimPrefix(err.Error(), code.Error()+": "))
		}
	}
	if err != nil {
		return err
	}
	return c.JSON(OAuthTokenResponse{AccessToken: tok.AccessToken, TokenType: "Bearer", ExpiresIn: tok.ExpiresIn,
		Scope: strings.Join(tok.Scopes, " ")})
}

// clientBasicAuth reads HTTP Basic client credentials; each half is form-encoded first
// (RFC 6749 §2.3.1).
func clientBasicAuth(h string) (id, secret string, ok bool) {
	scheme, rest, found := strings.Cut(strings.TrimSpace(h), " ")
	if !found || !strings.EqualFold(scheme, "basic") {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return "", "", false
	}
	id, secret, ok = strings.Cut(string(raw), ":")
	if !ok {
		return "", "", false
	}
	id, err1 := url.QueryUnescape(id)
	secret, err2 := url.QueryUnescape(secret)
	return id, secret, err1 == nil && err2 == nil
}

// oauthScopeDescriptions documents the xAPI scopes in /openapi.json.
var oauthScopeDescriptions = map[string]string{
	access.ScopeStatementsWrite:    "store statements",
	access.ScopeStatementsRead:     "read every statement of the tenant, activities and agents",
	access.ScopeStatementsReadMine: "read the statements the client appears in (as their authority), activities and agents",
	access.ScopeAllRead:            "read everything: statements, documents, activities, agents",
	access.ScopeAll:                "everything",
	access.ScopeDefine:             "let stored statements update the canonical activity definitions",
	access.ScopeProfile:            "read and write activity and agent profiles",
	access.ScopeState:              "read and write state documents",
}

// oauthSchemas are the OpenAPI components of OAuth client management and the token endpoint.
func oauthSchemas() map[string]any {
	scope := map[string]any{"type": "string", "enum": access.Scopes}
	scopes := map[string]any{"type": "array", "items": scope}
	lifetime := map[string]any{"type": "integer", "minimum": 1, "maximum": oauth.MaxLifetime, "description": "lifetime of the access tokens in seconds"}
	return map[string]any{
		"OAuthClientCreate": httpx.Obj(map[string]any{"name": map[string]any{"type": "string", "description": "label; also the name of the client's authority agent"},
			"scopes":         withDefault(scopes, "xAPI scopes the client may ask for", access.DefaultScopes),
			"token_lifetime": withDefault(lifetime, "lifetime of the access tokens in seconds", oauth.DefaultLifetime)}),
		"OAuthClient": httpx.Obj(map[string]any{"client_id": httpx.Str(), "client_secret": map[string]any{"type": "string", "description": "shown only in the creation response"},
			"name": httpx.Str(), "tenant_id": httpx.Str(), "scopes": scopes, "token_lifetime": lifetime, "create_dt": httpx.DateTime()},
			"client_id", "tenant_id", "scopes", "token_lifetime", "create_dt"),
		"OAuthClientList": httpx.Obj(map[string]any{"clients": map[string]any{"type": "array", "items": httpx.Ref("OAuthClient")}}, "clients"),
		"OAuthTokenRequest": map[string]any{"type": "object", "required": []string{"grant_type"}, "properties": map[string]any{
			"grant_type":    map[string]any{"type": "string", "enum": []string{oauth.GrantClientCredentials}},
			"scope":         map[string]any{"type": "string", "description": "space-separated subset of the client's scopes; omitted: all of them"},
			"client_id":     map[string]any{"type": "string", "description": "with client_secret, instead of HTTP Basic client authentication"},
			"client_secret": httpx.Str()}},
		"OAuthToken": httpx.Obj(map[string]any{"access_token": map[string]any{"type": "string", "description": "send as Authorization: Bearer <access_token> to the record store"},
			"token_type": map[string]any{"type": "string", "enum": []string{"Bearer"}}, "expires_in": map[string]any{"type": "integer"},
			"scope": httpx.Str()}, "access_token", "token_type", "expires_in", "scope"),
		"OAuthError": httpx.Obj(map[string]any{"error": map[string]any{"type": "string",
			"enum": []string{"invalid_request", "invalid_client", "unsupported_grant_type", "invalid_scope", "slow_down"}},
			"error_description": httpx.Str(), "message": httpx.Str()}, "error", "message"),
	}
}

func withDefault(schema map[string]any, desc string, def any) map[string]any {
	out := map[string]any{"description": desc, "default": def}
	for k, v := range schema {
		out[k] = v
	}
	return out
}
