// Package oauth is the record store's OAuth 2.0 client-credentials grant (RFC 6749 §4.4):
// clients registered per tenant with their xAPI scopes, access tokens issued to them, and the
// check of a presented token. Clients are records (the secret stored as a SHA-256 hash);
// access tokens are HMAC-signed with a key derived from the deployment secret, so they
// survive a restart without being stored, and every check reads the client back, so
// deleting a client revokes its tokens at once.
package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/signed"
	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/storage/record"
)

// The errors of the token endpoint (RFC 6749 §5.2) and of client management. The HTTP layer
// answers each with its error code.
var (
	// ErrInvalidRequest: a required parameter is missing, repeated or malformed.
	ErrInvalidRequest = errors.New("invalid_request")
	// ErrInvalidClient: unknown client, wrong secret or no client authentication.
	ErrInvalidClient = errors.New("invalid_client")
	// ErrUnsupportedGrantType: a grant type other than client_credentials.
	ErrUnsupportedGrantType = errors.New("unsupported_grant_type")
	// ErrInvalidScope: a scope that is unknown or beyond the client's scopes.
	ErrInvalidScope = errors.New("invalid_scope")
	// ErrInvalidToken: an access token that is forged, malformed, expired or revoked.
	ErrInvalidToken = errors.New("invalid_token")
	// ErrNotFound: no such client in the tenant.
	ErrNotFound = errors.New("not found")
	// ErrInvalidClientSpec: a client registration with bad values.
	ErrInvalidClientSpec = errors.New("invalid client registration")
)

// GrantClientCredentials is the only grant type the token endpoint serves.
const GrantClientCredentials = "client_credentials"

// TokenPrefix starts every access token, so the record store tells a bearer access token
// from a tenant credential's "Bearer key.secret" without a lookup.
const TokenPrefix = "lat_"

const kindClient = "lrs_oauth_client"

// The token lifetimes a client may have, in seconds.
const (
	DefaultLifetime = 3600
	MaxLifetime     = 86400
)

// Client is a registered OAuth client of one tenant.
type Client struct {
	ID string `json:"client_id"`
	// Secret is returned once, by CreateClient.
	Secret string `json:"client_secret,omitempty"`
	// Name is a label for people; it is also the name of the client's authority agent.
	Name   string   `json:"name,omitempty"`
	Tenant string   `json:"tenant_id"`
	Scopes []string `json:"scopes"`
	// Lifetime is how long its access tokens are valid, in seconds.
	Lifetime int       `json:"token_lifetime"`
	Created  time.Time `json:"create_dt"`
}

// ClientSpec is what a new client is registered with; zero values take the defaults
// (access.DefaultScopes, DefaultLifetime).
type ClientSpec struct {
	Name     string
	Scopes   []string
	Lifetime int
}

type clientData struct {
	Name     string   `json:"name,omitempty"`
	Tenant   string   `json:"tenant"`
	Hash     string   `json:"hash"`
	Scopes   []string `json:"scopes"`
	Lifetime int      `json:"lifetime"`
}

// Token is an issued access token.
type Token struct {
	AccessToken string
	// ExpiresIn is its lifetime in seconds.
	ExpiresIn int
	Scopes    []string
}

// Grant is what a valid access token grants.
type Grant struct {
	Client *Client
	// Scopes are the token's scopes that the client still has.
	Scopes  []string
	Expires time.Time
}

type claims struct {
	Client string `json:"c"`
	Tenant string `json:"t"`
	Scope  string `json:"s"`
	// Issued and Expires are Unix milliseconds.
	Issued  int64 `json:"i"`
	Expires int64 `json:"e"`
}

// Service registers clients and issues and checks their tokens.
type Service struct {
	store  record.Store
	signer *signed.Signer
	// parent names the record a client belongs to (its tenant's), so deleting the tenant
	// deletes its clients.
	parent func(tenant string) *record.Ref
	now    func() time.Time
}

// New builds the service on the record store, with the deployment secret as the source of
// the token key. parent returns the record of a tenant (nil: none).
func New(store record.Store, secret string, parent func(tenant string) *record.Ref) *Service {
	if parent == nil {
		parent = func(string) *record.Ref { return nil }
	}
	return &Service{store: store, signer: signed.New(secret, "lectern lrs oauth2 access token v1"), parent: parent, now: time.Now}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

func hashSecret(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// CreateClient registers a client of tenantID (which the caller has checked exists) and
// returns it with its secret.
func (s *Service) CreateClient(ctx context.Context, tenantID string, spec ClientSpec) (*Client, error) {
	scopes := spec.Scopes
	if scopes == nil {
		scopes = access.DefaultScopes
	}
	scopes, err := access.NormalizeScopes(scopes)
	if err != nil {
		return nil, fmt.Errorf("%w: scopes: %w", ErrInvalidClientSpec, err)
	}
	if len(scopes) == 0 {
		return nil, fmt.Errorf("%w: scopes: name at least one scope (or leave the property out for %s)",
			ErrInvalidClientSpec, strings.Join(access.DefaultScopes, " "))
	}
	lifetime := spec.Lifetime
	if lifetime == 0 {
		lifetime = DefaultLifetime
	}
	if lifetime < 1 || lifetime > MaxLifetime {
		return nil, fmt.Errorf("%w: token_lifetime must be from 1 to %d seconds, not %d", ErrInvalidClientSpec, MaxLifetime, spec.Lifetime)
	}
	if len(spec.Name) > 200 {
		return nil, fmt.Errorf("%w: name is longer than 200 characters", ErrInvalidClientSpec)
	}
	c := &Client{ID: "lc_" + randomHex(12), Secret: randomHex(32), Name: spec.Name, Tenant: tenantID,
		Scopes: scopes, Lifetime: lifetime}
	data, _ := json.Marshal(clientData{Name: c.Name, Tenant: tenantID, Hash: hashSecret(c.Secret), Scopes: scopes, Lifetime: lifetime})
	r := &record.Record{Kind: kindClient, ID: c.ID, Key: tenantID, Parent: s.parent(tenantID), Data: data}
	if err := s.store.Create(ctx, r); err != nil {
		return nil, fmt.Errorf("store OAuth client: %w", err)
	}
	c.Created = r.Created
	return c, nil
}

// client reads a client with its secret hash; ErrNotFound when absent.
func (s *Service) client(ctx context.Context, id string) (*Client, string, error) {
	if id == "" {
		return nil, "", ErrNotFound
	}
	r, err := s.store.Get(ctx, "", kindClient, id)
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return nil, "", ErrNotFound
	}
	if err != nil {
		return nil, "", err
	}
	var d clientData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, "", fmt.Errorf("decode OAuth client %q: %w", id, err)
	}
	return &Client{ID: r.ID, Name: d.Name, Tenant: d.Tenant, Scopes: d.Scopes, Lifetime: d.Lifetime, Created: r.Created}, d.Hash, nil
}

// GetClient returns one client of tenantID, without its secret.
func (s *Service) GetClient(ctx context.Context, tenantID, id string) (*Client, error) {
	c, _, err := s.client(ctx, id)
	if err == nil && c.Tenant != tenantID {
		err = ErrNotFound
	}
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("OAuth client '%s' %w in tenant '%s'", id, ErrNotFound, tenantID)
	}
	return c, err
}

// ListClients returns the clients of tenantID, without secrets, oldest first.
func (s *Service) ListClients(ctx context.Context, tenantID string) ([]*Client, error) {
	out, err := record.AllAs(ctx, s.store, record.Query{Kind: kindClient, Key: tenantID}, func(r *record.Record) (*Client, error) {
		var d clientData
		if err := json.Unmarshal(r.Data, &d); err != nil {
			return nil, fmt.Errorf("decode OAuth client %q: %w", r.ID, err)
		}
		return &Client{ID: r.ID, Name: d.Name, Tenant: d.Tenant, Scopes: d.Scopes, Lifetime: d.Lifetime, Created: r.Created}, nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b *Client) int { return a.Created.Compare(b.Created) })
	return out, nil
}

// DeleteClient removes a client of tenantID; its access tokens stop working at once.
func (s *Service) DeleteClient(ctx context.Context, tenantID, id string) error {
	if _, err := s.GetClient(ctx, tenantID, id); err != nil {
		return err
	}
	err := s.store.Delete(ctx, "", kindClient, id)
	if errors.Is(err, record.ErrNotFound) {
		return fmt.Errorf("OAuth client '%s' %w in tenant '%s'", id, ErrNotFound, tenantID)
	}
	return err
}

// TokenRequest is a token endpoint request, already read from its form and Authorization
// header.
type TokenRequest struct {
	GrantType    string
	ClientID     string
	ClientSecret string
	// Scope is the scope parameter; "" asks for every scope of the client.
	Scope    string
	HasScope bool
}

// Issue runs the client-credentials grant: it authenticates the client and returns a token
// for the requested scopes (all of the client's when none are asked for). Errors wrap
// ErrInvalidRequest, ErrUnsupportedGrantType, ErrInvalidClient or ErrInvalidScope.
func (s *Service) Issue(ctx context.Context, req TokenRequest) (*Token, error) {
	switch req.GrantType {
	case GrantClientCredentials:
	case "":
		return nil, fmt.Errorf("%w: grant_type is required (client_credentials)", ErrInvalidRequest)
	default:
		return nil, fmt.Errorf("%w: grant_type %q is not supported; this server issues tokens for client_credentials only", ErrUnsupportedGrantType, req.GrantType)
	}
	c, hash, err := s.client(ctx, req.ClientID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	have := strings.Repeat("0", sha256.Size*2)
	if err == nil {
		have = hash
	}
	// The hash is compared even for an unknown client, so the time does not tell which it was.
	if subtle.ConstantTimeCompare([]byte(hashSecret(req.ClientSecret)), []byte(have)) != 1 || err != nil {
		return nil, fmt.Errorf("%w: unknown client or wrong client secret", ErrInvalidClient)
	}
	scopes := c.Scopes
	if req.HasScope {
		asked, err := access.ParseScopes(req.Scope)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidScope, err)
		}
		if len(asked) == 0 {
			return nil, fmt.Errorf("%w: scope is empty; leave it out for every scope of the client", ErrInvalidScope)
		}
		for _, a := range asked {
			if !access.Covers(c.Scopes, a) {
				return nil, fmt.Errorf("%w: the client may not ask for %q (its scopes: %s)", ErrInvalidScope, a, strings.Join(c.Scopes, " "))
			}
		}
		scopes = asked
	}
	now := s.now()
	scope := strings.Join(scopes, " ")
	tok := TokenPrefix + s.signer.Sign(claims{Client: c.ID, Tenant: c.Tenant, Scope: scope, Issued: now.UnixMilli(),
		Expires: now.Add(time.Duration(c.Lifetime) * time.Second).UnixMilli()})
	return &Token{AccessToken: tok, ExpiresIn: c.Lifetime, Scopes: scopes}, nil
}

// Verify checks an access token: signed by this deployment, not expired, its client still
// registered in the token's tenant. Any failure wraps ErrInvalidToken.
func (s *Service) Verify(ctx context.Context, token string) (*Grant, error) {
	body, ok := strings.CutPrefix(token, TokenPrefix)
	var cl claims
	if !ok || s.signer.Open(body, &cl) != nil {
		return nil, fmt.Errorf("%w: not an access token of this server", ErrInvalidToken)
	}
	exp := time.UnixMilli(cl.Expires)
	if !s.now().Before(exp) {
		return nil, fmt.Errorf("%w: the access token expired", ErrInvalidToken)
	}
	c, _, err := s.client(ctx, cl.Client)
	if errors.Is(err, ErrNotFound) || (err == nil && c.Tenant != cl.Tenant) {
		return nil, fmt.Errorf("%w: the client of the access token was deleted", ErrInvalidToken)
	}
	if err != nil {
		return nil, err
	}
	var scopes []string
	for _, sc := range strings.Fields(cl.Scope) {
		// A scope the client lost since the token was issued is not granted any more.
		if access.Covers(c.Scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	return &Grant{Client: c, Scopes: scopes, Expires: exp}, nil
}

// Principal is the record-store principal of a grant: level OAuth with the grant's scopes,
// its authority the agent of the client's account on homePage (named after the client when
// it has a name).
func (g *Grant) Principal(homePage string) *access.Principal {
	p := access.AccountPrincipal(homePage, g.Client.ID, g.Client.Tenant, access.OAuth)
	agent := map[string]any{"objectType": "Agent", "account": map[string]string{"homePage": homePage, "name": g.Client.ID}}
	if g.Client.Name != "" {
		agent["name"] = g.Client.Name
	}
	p.Authority, _ = json.Marshal(agent)
	p.Scopes = g.Scopes
	return p
}
