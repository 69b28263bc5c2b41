package server

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/lrs/oauth"
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

func (s *Server) registerOAuth() {
	const clients = "/api/v1/app_management/tenants/:tenant_id/lrs_oauth_clients"
	s.handle(Route{Method: fiber.MethodPost, Path: clients, Summary: "Register an OAuth 2.0 client of the tenant's record store (its secret is in this answer only)", Tag: "tenants",
		Scope: ScopeRootTenant, Body: "OAuthClientCreate", Success: 201, Response: "OAuthClient"}, s.createOAuthClient)
	s.handle(Route{Method: fiber.MethodGet, Path: clients, Summary: "List the tenant's record-store OAuth clients", Tag: "tenants",
		Scope: ScopeRootTenant, Success: 200, Response: "OAuthClientList"}, s.listOAuthClients)
	s.handle(Route{Method: fiber.MethodGet, Path: clients + "/:client_id", Summary: "One record-store OAuth client", Tag: "tenants",
		Scope: ScopeRootTenant, Success: 200, Response: "OAuthClient"}, s.getOAuthClient)
	s.handle(Route{Method: fiber.MethodDelete, Path: clients + "/:client_id", Summary: "Delete an OAuth client; its access tokens stop working at once", Tag: "tenants",
		Scope: ScopeRootTenant, Success: 204}, s.deleteOAuthClient)
	s.handle(Route{Method: fiber.MethodPost, Path: OAuthTokenPath, Summary: "OAuth 2.0 token endpoint of the record store (client credentials grant, RFC 6749 §4.4)", Tag: "xapi",
		Scope: ScopePublic, FormBody: "OAuthTokenRequest", Success: 200, Response: "OAuthToken", ErrorSchema: "OAuthError"}, s.oauthToken)
}

func (s *Server) oauthService() (*oauth.Service, error) {
	if s.deps.OAuth == nil {
		return nil, errorf(fiber.StatusServiceUnavailable, "this server has no OAuth clients configured")
	}
	return s.deps.OAuth, nil
}

// oauthError maps the oauth package's sentinels of client management.
func oauthError(err error) error {
	switch {
	case errors.Is(err, oauth.ErrNotFound):
		return notFound("%s", err.Error())
	case errors.Is(err, oauth.ErrInvalidClientSpec):
		return badRequest("%s", strings.TrimPrefix(err.Error(), oauth.ErrInvalidClientSpec.Error()+": "))
	}
	return err
}

func (s *Server) createOAuthClient(c *fiber.Ctx) error {
	svc, err := s.oauthService()
	if err != nil {
		return err
	}
	var body OAuthClientCreate
	if err := decodeJSON(c, &body); err != nil {
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
			return badRequest("token_lifetime must be from 1 to %d seconds, not 0", oauth.MaxLifetime)
		}
		spec.Lifetime = *body.TokenLifetime
	}
	cl, err := svc.CreateClient(c.UserContext(), tenantOf(c), spec)
	if err != nil {
		return oauthError(err)
	}
	return c.Status(fiber.StatusCreated).JSON(cl)
}

func (s *Server) listOAuthClients(c *fiber.Ctx) error {
	svc, err := s.oauthService()
	if err != nil {
		return err
	}
	cs, err := svc.ListClients(c.UserContext(), tenantOf(c))
	if err != nil {
		return err
	}
	return c.JSON(OAuthClientList{Clients: cs})
}

func (s *Server) getOAuthClient(c *fiber.Ctx) error {
	svc, err := s.oauthService()
	if err != nil {
		return err
	}
	cl, err := svc.GetClient(c.UserContext(), tenantOf(c), c.Params("client_id"))
	if err != nil {
		return oauthError(err)
	}
	return c.JSON(cl)
}

func (s *Server) deleteOAuthClient(c *fiber.Ctx) error {
	svc, err := s.oauthService()
	if err != nil {
		return err
	}
	if err := svc.DeleteClient(c.UserContext(), tenantOf(c), c.Params("client_id")); err != nil {
		return oauthError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// oauthToken is the token endpoint: a form-encoded client credentials grant, the client
// authenticated by HTTP Basic or by client_id and client_secret in the form (RFC 6749 §2.3.1),
// never both. Errors answer RFC 6749 §5.2 bodies: 401 invalid_client, 400 otherwise.
func (s *Server) oauthToken(c *fiber.Ctx) error {
	svc, err := s.oauthService()
	if err != nil {
		return err
	}
	// RFC 6749 §5.1: token responses, errors included, are never cached.
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderPragma, "no-cache")
	fail := func(code error, format string, args ...any) error {
		status := fiber.StatusBadRequest
		desc := errorf(0, format, args...).Message
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
	tok, err := svc.Issue(c.UserContext(), req)
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
		"OAuthClientCreate": obj(map[string]any{"name": map[string]any{"type": "string", "description": "label; also the name of the client's authority agent"},
			"scopes":         withDefault(scopes, "xAPI scopes the client may ask for", access.DefaultScopes),
			"token_lifetime": withDefault(lifetime, "lifetime of the access tokens in seconds", oauth.DefaultLifetime)}),
		"OAuthClient": obj(map[string]any{"client_id": str(), "client_secret": map[string]any{"type": "string", "description": "shown only in the creation response"},
			"name": str(), "tenant_id": str(), "scopes": scopes, "token_lifetime": lifetime, "create_dt": dateTime()},
			"client_id", "tenant_id", "scopes", "token_lifetime", "create_dt"),
		"OAuthClientList": obj(map[string]any{"clients": map[string]any{"type": "array", "items": ref("OAuthClient")}}, "clients"),
		"OAuthTokenRequest": map[string]any{"type": "object", "required": []string{"grant_type"}, "properties": map[string]any{
			"grant_type":    map[string]any{"type": "string", "enum": []string{oauth.GrantClientCredentials}},
			"scope":         map[string]any{"type": "string", "description": "space-separated subset of the client's scopes; omitted: all of them"},
			"client_id":     map[string]any{"type": "string", "description": "with client_secret, instead of HTTP Basic client authentication"},
			"client_secret": str()}},
		"OAuthToken": obj(map[string]any{"access_token": map[string]any{"type": "string", "description": "send as Authorization: Bearer <access_token> to the record store"},
			"token_type": map[string]any{"type": "string", "enum": []string{"Bearer"}}, "expires_in": map[string]any{"type": "integer"},
			"scope": str()}, "access_token", "token_type", "expires_in", "scope"),
		"OAuthError": obj(map[string]any{"error": map[string]any{"type": "string",
			"enum": []string{"invalid_request", "invalid_client", "unsupported_grant_type", "invalid_scope"}},
			"error_description": str(), "message": str()}, "error", "message"),
	}
}

func withDefault(schema map[string]any, desc string, def any) map[string]any {
	out := map[string]any{"description": desc, "default": def}
	for k, v := range schema {
		out[k] = v
	}
	return out
}
