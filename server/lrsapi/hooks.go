package lrsapi

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/lrs/launch"
	"github.com/lectern-lms/lectern/lrs/oauth"
	"github.com/lectern-lms/lectern/storage/statements"
)

// The extension points of the xAPI record store (spec/002 "Integration hooks"). Each is a small
// interface with a default implementation; Deps.Hooks overrides any of them. They never see
// Fiber: an integrator implements them with plain Go values. Principals, their levels and
// permissions are lrs/access's; the default permissions (TinCanGetPermissions) map the levels
// to access.Permissions (docs/decisions.md "xAPI record store" and "OAuth 2.0 for the record
// store").

// RequestContext is the request context the integration hooks build (TinCanBuildContext and
// TinCanPostProcessContext): the tenant the request addresses and how it was addressed.
type RequestContext struct {
	// Version is the request's X-Experience-API-Version ("1.0.3" or "2.0.0" family).
	Version string
	// Tenant is the internal tenant (the spec's appId); "" lets the credential decide.
	Tenant string
	// OriginalTenant is the tenant segment as sent (the spec's originalAppId).
	OriginalTenant string
	// Sandbox is always false in Lectern (kept for hook parity).
	Sandbox bool
	// IsLaunchLink is true when the request authenticated with a launch token.
	IsLaunchLink bool
}

// HomePage is the homePage of the record store's account agents: the root's, the tenant
// credentials', the launches' and the LMS's authority.
func (a *API) HomePage() string { return access.HomePage(a.d.PublicURL) }

// Hooks are the extension points in effect: Deps.Hooks with the defaults filled in.
func (a *API) Hooks() Hooks { return a.hooks }

func (a *API) withDefaults(h Hooks) Hooks {
	if h.BasicAuthority == nil {
		h.BasicAuthority = access.SettingsAccounts{Settings: a.d.Settings, HomePage: a.HomePage()}
	}
	if h.OAuthAuthority == nil && a.d.OAuth != nil {
		h.OAuthAuthority = OAuthClients{Service: a.d.OAuth, HomePage: a.HomePage()}
	}
	if h.OAuthAuthority == nil {
		h.OAuthAuthority = NoOAuth{}
	}
	if h.Launch == nil && a.d.LaunchTokens != nil {
		h.Launch = LaunchTokens{Issuer: a.d.LaunchTokens, HomePage: a.HomePage()}
	}
	if h.Launch == nil {
		h.Launch = RejectLaunches{}
	}
	if h.BuildContext == nil {
		h.BuildContext = DefaultContext{}
	}
	if h.PostProcess == nil {
		h.PostProcess = DefaultContext{}
	}
	if h.Permissions == nil {
		h.Permissions = DefaultPermissions{}
	}
	if h.Stored == nil {
		h.Stored = NoStoredHook{}
	}
	return h
}

// BasicAuthority resolves HTTP Basic credentials to a principal
// (TinCanGetAuthorityFromBasicAuth). It returns nil, nil when the credentials are unknown;
// tenant is the tenant the request addresses ("default" without a tenant segment).
type BasicAuthority interface {
	AuthorityFromBasicAuth(ctx context.Context, tenant, user, password string) (*access.Principal, error)
}

// OAuthAuthority resolves an OAuth Authorization header to a principal
// (TinCanGetAuthorityFromOAuthCredentials): a "Bearer lat_…" access token of the token
// endpoint, or an "OAuth …" (1.0a) header. The default (OAuthClients) accepts the access
// tokens it issued and no OAuth 1.0a header. It returns nil, nil for credentials it does not
// accept.
type OAuthAuthority interface {
	AuthorityFromOAuth(ctx context.Context, tenant, method, url, authorization string) (*access.Principal, error)
}

// LaunchAuthorizer accepts the short-lived credentials handed to launched content. The
// default rejects every token; the player fills it in. It returns nil, nil when the
// Authorization header is not a launch token it knows.
type LaunchAuthorizer interface {
	AuthorizeLaunch(ctx context.Context, tenant, authorization string) (*access.Principal, error)
}

// ContextBuilder builds the request context (TinCanBuildContext).
type ContextBuilder interface {
	BuildContext(version string, isLaunchLink bool) RequestContext
}

// ContextPostProcessor completes the context from the request parameters and the extra
// endpoint information, the segment between /TCAPI/ and the resource name
// (TinCanPostProcessContext).
type ContextPostProcessor interface {
	PostProcessContext(c RequestContext, params url.Values, endpointInfo string) (RequestContext, error)
}

// PermissionResolver returns a principal's permissions (TinCanGetPermissions).
type PermissionResolver interface {
	Permissions(ctx context.Context, p *access.Principal) access.Permissions
}

// StatementsStoredHook sees every batch of statements right after it is stored
// (TinCanStatementsStored), e.g. to copy them out for analysis. It must not block for long.
type StatementsStoredHook interface {
	StatementsStored(ctx context.Context, tenant string, stored []*statements.Statement)
}

// Hooks are the extension points; nil fields use the defaults.
type Hooks struct {
	BasicAuthority BasicAuthority
	OAuthAuthority OAuthAuthority
	Launch         LaunchAuthorizer
	BuildContext   ContextBuilder
	PostProcess    ContextPostProcessor
	Permissions    PermissionResolver
	Stored         StatementsStoredHook
}

// DefaultPermissions is lrs/access.DefaultPermissions: root and readwrite read and write
// everything of their tenant, readonly reads everything, person has the default write and
// read rules, an OAuth client what its scopes grant.
type DefaultPermissions struct{}

// Permissions implements PermissionResolver.
func (DefaultPermissions) Permissions(_ context.Context, p *access.Principal) access.Permissions {
	return access.DefaultPermissions(p)
}

// DefaultContext builds a context carrying only the version.
type DefaultContext struct{}

// BuildContext implements ContextBuilder.
func (DefaultContext) BuildContext(version string, isLaunchLink bool) RequestContext {
	return RequestContext{Version: version, IsLaunchLink: isLaunchLink}
}

// PostProcessContext implements ContextPostProcessor: the endpoint information is the
// tenant id, lowercased (the platform's engine tenants are lowercase).
func (DefaultContext) PostProcessContext(c RequestContext, _ url.Values, endpointInfo string) (RequestContext, error) {
	c.OriginalTenant = endpointInfo
	c.Tenant = strings.ToLower(endpointInfo)
	c.Sandbox = false
	return c, nil
}

// LaunchTokens is the LaunchAuthorizer of signed launch tokens (lrs/launch): Basic
// "launch:<token>". The content acts as its learner: it may write statements and read those
// its learner appears in (the person rules), within the token's tenant only, and its
// statements carry the launch as authority.
type LaunchTokens struct {
	Issuer   *launch.Issuer
	HomePage string
}

// AuthorizeLaunch implements LaunchAuthorizer.
func (l LaunchTokens) AuthorizeLaunch(_ context.Context, tenantID, authorization string) (*access.Principal, error) {
	tok, ok := launch.FromAuthorization(authorization)
	if !ok {
		return nil, nil
	}
	c, err := l.Issuer.Verify(tok, time.Now())
	if err != nil || (tenantID != "" && tenantID != c.Tenant) {
		return nil, nil // answered 401 like any other invalid credential
	}
	p := access.AccountPrincipal(l.HomePage, "launch:"+c.Registration, c.Tenant, access.Person)
	if c.ActorIFI != "" {
		p.IFI = c.ActorIFI
	}
	p.LaunchSession, p.CMI5 = c.Session, c.CMI5
	return p, nil
}

// RejectLaunches is the default LaunchAuthorizer: no launch token is valid.
type RejectLaunches struct{}

// AuthorizeLaunch implements LaunchAuthorizer.
func (RejectLaunches) AuthorizeLaunch(context.Context, string, string) (*access.Principal, error) {
	return nil, nil
}

// NoOAuth is the OAuthAuthority of a server without OAuth clients (Deps.OAuth nil): every
// OAuth credential gets a 401 saying so.
type NoOAuth struct{}

// AuthorityFromOAuth implements OAuthAuthority.
func (NoOAuth) AuthorityFromOAuth(context.Context, string, string, string, string) (*access.Principal, error) {
	return nil, nil
}

// NoStoredHook is the default StatementsStoredHook: it does nothing.
type NoStoredHook struct{}

// StatementsStored implements StatementsStoredHook.
func (NoStoredHook) StatementsStored(context.Context, string, []*statements.Statement) {}

// OAuthClients is the default OAuthAuthority: the access tokens of the OAuth 2.0 token
// endpoint (lrs/oauth), as Bearer credentials of the client's tenant. OAuth 1.0a headers are
// not accepted.
type OAuthClients struct {
	Service  *oauth.Service
	HomePage string
}

// AuthorityFromOAuth implements OAuthAuthority.
func (o OAuthClients) AuthorityFromOAuth(ctx context.Context, _, _, _, authorization string) (*access.Principal, error) {
	scheme, tok, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	if !strings.EqualFold(scheme, "bearer") {
		return nil, nil
	}
	g, err := o.Service.Verify(ctx, strings.TrimSpace(tok))
	if errors.Is(err, oauth.ErrInvalidToken) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return g.Principal(o.HomePage), nil
}
