package server

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
// interface with a default implementation; Deps.LRS overrides any of them. They never see
// Fiber: an integrator implements them with plain Go values.

// LRSLevel is the permission level of an LRS principal (lrs/access.Level).
type LRSLevel = access.Level

// The permission levels. The default permissions (TinCanGetPermissions) map them to
// LRSPermissions; see docs/decisions.md "xAPI record store" and "OAuth 2.0 for the record
// store".
const (
	LRSRoot      = access.Root
	LRSReadWrite = access.ReadWrite
	LRSReadOnly  = access.ReadOnly
	LRSPerson    = access.Person
	// LRSOAuth is an OAuth 2.0 client, whose access token's scopes decide.
	LRSOAuth = access.OAuth
)

// LRSPrincipal is who an LRS request authenticated as (lrs/access.Principal).
type LRSPrincipal = access.Principal

// LRSPermissions is what a principal may do within its tenant (lrs/access.Permissions).
type LRSPermissions = access.Permissions

// LRSContext is the request context the integration hooks build (TinCanBuildContext and
// TinCanPostProcessContext): the tenant the request addresses and how it was addressed.
type LRSContext struct {
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

// LRSBasicAuthority resolves HTTP Basic credentials to a principal
// (TinCanGetAuthorityFromBasicAuth). It returns nil, nil when the credentials are unknown;
// tenant is the tenant the request addresses ("default" without a tenant segment).
type LRSBasicAuthority interface {
	AuthorityFromBasicAuth(ctx context.Context, tenant, user, password string) (*LRSPrincipal, error)
}

// LRSOAuthAuthority resolves an OAuth Authorization header to a principal
// (TinCanGetAuthorityFromOAuthCredentials): a "Bearer lat_…" access token of the token
// endpoint, or an "OAuth …" (1.0a) header. The default (OAuthClients) accepts the access
// tokens it issued and no OAuth 1.0a header. It returns nil, nil for credentials it does not
// accept.
type LRSOAuthAuthority interface {
	AuthorityFromOAuth(ctx context.Context, tenant, method, url, authorization string) (*LRSPrincipal, error)
}

// LaunchAuthorizer accepts the short-lived credentials handed to launched content. The
// default rejects every token; the player fills it in. It returns nil, nil when the
// Authorization header is not a launch token it knows.
type LaunchAuthorizer interface {
	AuthorizeLaunch(ctx context.Context, tenant, authorization string) (*LRSPrincipal, error)
}

// LRSContextBuilder builds the request context (TinCanBuildContext).
type LRSContextBuilder interface {
	BuildContext(version string, isLaunchLink bool) LRSContext
}

// LRSContextPostProcessor completes the context from the request parameters and the extra
// endpoint information, the segment between /TCAPI/ and the resource name
// (TinCanPostProcessContext).
type LRSContextPostProcessor interface {
	PostProcessContext(c LRSContext, params url.Values, endpointInfo string) (LRSContext, error)
}

// LRSPermissionResolver returns a principal's permissions (TinCanGetPermissions).
type LRSPermissionResolver interface {
	Permissions(ctx context.Context, p *LRSPrincipal) LRSPermissions
}

// StatementsStoredHook sees every batch of statements right after it is stored
// (TinCanStatementsStored), e.g. to copy them out for analysis. It must not block for long.
type StatementsStoredHook interface {
	StatementsStored(ctx context.Context, tenant string, stored []*statements.Statement)
}

// LRSHooks are the extension points; nil fields use the defaults.
type LRSHooks struct {
	BasicAuthority LRSBasicAuthority
	OAuthAuthority LRSOAuthAuthority
	Launch         LaunchAuthorizer
	BuildContext   LRSContextBuilder
	PostProcess    LRSContextPostProcessor
	Permissions    LRSPermissionResolver
	Stored         StatementsStoredHook
}

// DefaultLRSPermissions is lrs/access.DefaultPermissions: root and readwrite read and write
// everything of their tenant, readonly reads everything, person has the default write and
// read rules, an OAuth client what its scopes grant.
type DefaultLRSPermissions struct{}

// Permissions implements LRSPermissionResolver.
func (DefaultLRSPermissions) Permissions(_ context.Context, p *LRSPrincipal) LRSPermissions {
	return access.DefaultPermissions(p)
}

// DefaultLRSContext builds a context carrying only the version.
type DefaultLRSContext struct{}

// BuildContext implements LRSContextBuilder.
func (DefaultLRSContext) BuildContext(version string, isLaunchLink bool) LRSContext {
	return LRSContext{Version: version, IsLaunchLink: isLaunchLink}
}

// PostProcessContext implements LRSContextPostProcessor: the endpoint information is the
// tenant id, lowercased (the platform's engine tenants are lowercase).
func (DefaultLRSContext) PostProcessContext(c LRSContext, _ url.Values, endpointInfo string) (LRSContext, error) {
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
func (l LaunchTokens) AuthorizeLaunch(_ context.Context, tenantID, authorization string) (*LRSPrincipal, error) {
	tok, ok := launch.FromAuthorization(authorization)
	if !ok {
		return nil, nil
	}
	c, err := l.Issuer.Verify(tok, time.Now())
	if err != nil || (tenantID != "" && tenantID != c.Tenant) {
		return nil, nil // answered 401 like any other invalid credential
	}
	p := accountPrincipal(l.HomePage, "launch:"+c.Registration, c.Tenant, LRSPerson)
	if c.ActorIFI != "" {
		p.IFI = c.ActorIFI
	}
	p.LaunchSession = c.Session
	return p, nil
}

// RejectLaunches is the default LaunchAuthorizer: no launch token is valid.
type RejectLaunches struct{}

// AuthorizeLaunch implements LaunchAuthorizer.
func (RejectLaunches) AuthorizeLaunch(context.Context, string, string) (*LRSPrincipal, error) {
	return nil, nil
}

// NoOAuth is the LRSOAuthAuthority of a server without OAuth clients (Deps.OAuth nil): every
// OAuth credential gets a 401 saying so.
type NoOAuth struct{}

// AuthorityFromOAuth implements LRSOAuthAuthority.
func (NoOAuth) AuthorityFromOAuth(context.Context, string, string, string, string) (*LRSPrincipal, error) {
	return nil, nil
}

// NoStoredHook is the default StatementsStoredHook: it does nothing.
type NoStoredHook struct{}

// StatementsStored implements StatementsStoredHook.
func (NoStoredHook) StatementsStored(context.Context, string, []*statements.Statement) {}

// OAuthClients is the default LRSOAuthAuthority: the access tokens of the OAuth 2.0 token
// endpoint (lrs/oauth), as Bearer credentials of the client's tenant. OAuth 1.0a headers are
// not accepted.
type OAuthClients struct {
	Service  *oauth.Service
	HomePage string
}

// AuthorityFromOAuth implements LRSOAuthAuthority.
func (o OAuthClients) AuthorityFromOAuth(ctx context.Context, _, _, _, authorization string) (*LRSPrincipal, error) {
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
