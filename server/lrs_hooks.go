package server

import (
	"time"

	"context"
	"encoding/json"
	"github.com/lectern-lms/lectern/lrs/launch"
	"net/url"
	"strings"

	"github.com/lectern-lms/lectern/storage/statements"
)

// The extension points of the xAPI record store (spec/002 "Integration hooks"). Each is a small
// interface with a default implementation; Deps.LRS overrides any of them. They never see
// Fiber: an integrator implements them with plain Go values.

// LRSLevel is the permission level of an LRS principal.
type LRSLevel string

// The permission levels. The default permissions (TinCanGetPermissions) map them to
// LRSPermissions; see docs/decisions.md "xAPI record store".
const (
	// LRSRoot reads and writes every statement and document of the tenant (any tenant for the
	// platform root credentials).
	LRSRoot LRSLevel = "root"
	// LRSReadWrite is an application: it writes any statement (the default write rule) and reads
	// every statement of its tenant. Tenant credentials have this level.
	LRSReadWrite LRSLevel = "readwrite"
	// LRSReadOnly reads every statement and document of its tenant and writes nothing.
	LRSReadOnly LRSLevel = "readonly"
	// LRSPerson has the spec's default permissions: it writes any statement about any actor
	// and reads only the statements it appears in (the default read rule). Launch tokens of
	// content have this level.
	LRSPerson LRSLevel = "person"
)

// LRSPrincipal is who an LRS request authenticated as: the asserter of the statements it
// writes.
type LRSPrincipal struct {
	// Name identifies the principal in logs and messages (account name, credential key).
	Name string
	// Tenant is the tenant the credential belongs to; "" means any tenant (platform root).
	Tenant string
	Level  LRSLevel
	// Authority is the agent recorded as the authority of the statements it writes.
	Authority json.RawMessage
	// IFI is the identity the default read rule matches ("account:<homePage>|<name>" form).
	IFI string
	// Launch is true for a launch token of content.
	Launch bool
	// LaunchSession is the player session a launch token was issued in: the statements it
	// stores are signs of life of that session (time tracked).
	LaunchSession string
}

// LRSPermissions is what a principal may do within its tenant.
type LRSPermissions struct {
	// Write allows storing statements and changing documents.
	Write bool
	// Read allows reading documents, activities and agents, and the statements the principal
	// appears in (actor, authority, group member, instructor, team, context agent…).
	Read bool
	// ReadAll extends Read to every statement of the tenant.
	ReadAll bool
}

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
// (TinCanGetAuthorityFromOAuthCredentials). The default accepts nothing (nil, nil): OAuth is a
// seam for integrators.
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

// DefaultLRSPermissions maps the levels: root and readwrite read and write everything of
// their tenant, readonly reads everything, person has the default write and read rules.
type DefaultLRSPermissions struct{}

// Permissions implements LRSPermissionResolver.
func (DefaultLRSPermissions) Permissions(_ context.Context, p *LRSPrincipal) LRSPermissions {
	switch p.Level {
	case LRSRoot, LRSReadWrite:
		return LRSPermissions{Write: true, Read: true, ReadAll: true}
	case LRSReadOnly:
		return LRSPermissions{Read: true, ReadAll: true}
	case LRSPerson:
		return LRSPermissions{Write: true, Read: true}
	}
	return LRSPermissions{}
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

// NoOAuth is the default LRSOAuthAuthority: OAuth is not supported, and a request that tries it
// gets a 401 saying so.
type NoOAuth struct{}

// AuthorityFromOAuth implements LRSOAuthAuthority.
func (NoOAuth) AuthorityFromOAuth(context.Context, string, string, string, string) (*LRSPrincipal, error) {
	return nil, nil
}

// NoStoredHook is the default StatementsStoredHook: it does nothing.
type NoStoredHook struct{}

// StatementsStored implements StatementsStoredHook.
func (NoStoredHook) StatementsStored(context.Context, string, []*statements.Statement) {}
