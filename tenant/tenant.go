// Package tenant is the one tenant registry shared by the course engine, the content service
// and the record store, together with the tenants' API credentials. Tenants and credentials
// are records of the system (empty) tenant in the record store, so the registry works the
// same on SQLite and PostgreSQL and a credential is deleted with its tenant in one cascade.
package tenant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/storage/record"
)

// Sentinel errors of the registry; the HTTP layer maps them to status codes.
var (
	// ErrNotFound means no live tenant (or credential) has the given id.
	ErrNotFound = errors.New("not found")
	// ErrExists means a tenant with the id already exists (or is still being deleted).
	ErrExists = errors.New("already exists")
	// ErrInvalidID means the tenant id cannot be used.
	ErrInvalidID = errors.New("invalid tenant id")
	// ErrDisabled means the tenant is disabled and refuses changes.
	ErrDisabled = errors.New("tenant is disabled")
	// ErrBadCredentials means a key/secret pair did not authenticate.
	ErrBadCredentials = errors.New("invalid credentials")
)

// Record kinds used in the system tenant.
const (
	kindTenant     = "tenant"
	kindCredential = "credential"
	system         = ""
)

// reserved ids would be ambiguous in LRS paths (/lrs/TCAPI/{tenant}/statements).
var reserved = map[string]bool{"statements": true, "about": true, "activities": true, "agents": true, "report": true}

// MaxIDLength bounds tenant ids; they appear in paths, blob keys and index names.
const MaxIDLength = 128

// Tenant is one tenant as the API shows it.
type Tenant struct {
	ID      string    `json:"tenant_id"`
	Enabled bool      `json:"enabled"`
	Created time.Time `json:"create_dt"`
	Updated time.Time `json:"update_dt"`
	// Deleting is true from the DELETE request until the deletion job has removed every trace.
	Deleting bool `json:"-"`
}

type tenantData struct {
	Enabled  bool `json:"enabled"`
	Deleting bool `json:"deleting,omitempty"`
}

// Registry manages tenants and credentials on top of a record store.
type Registry struct {
	store record.Store
}

// NewRegistry returns a registry over store.
func NewRegistry(store record.Store) *Registry { return &Registry{store: store} }

// ValidateID checks a tenant id against the rules that keep it from colliding with internal
// names: non-empty; at most MaxIDLength bytes; only letters, digits, '-', '_' and '.', so it
// is safe in URLs, blob keys and index documents; starting with a letter or digit, because a
// leading '.', '_' or '-' marks internal names (blob bookkeeping such as ".lectern-*" and
// "_lectern", hidden and system indices in Elasticsearch, options on command lines); and not
// one of the words the xAPI paths reserve. Upper case is allowed: content-service tenant ids
// are case-sensitive, and no tenant id becomes an index name. Each error names its rule.
func ValidateID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: tenant_id is required", ErrInvalidID)
	}
	if len(id) > MaxIDLength || !utf8.ValidString(id) {
		return fmt.Errorf("%w: tenant_id must be at most %d characters", ErrInvalidID, MaxIDLength)
	}
	for _, c := range id {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return fmt.Errorf("%w: tenant_id %q may contain only letters, digits, '-', '_' and '.'", ErrInvalidID, id)
		}
	}
	if c := id[0]; c == '.' || c == '_' || c == '-' {
		return fmt.Errorf("%w: tenant_id %q must start with a letter or a digit (a leading '.', '_' or '-' is reserved for internal names)", ErrInvalidID, id)
	}
	if reserved[strings.ToLower(id)] {
		return fmt.Errorf("%w: %q is reserved by the xAPI paths", ErrInvalidID, id)
	}
	return nil
}

func fromRecord(r *record.Record) (*Tenant, error) {
	var d tenantData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, fmt.Errorf("decode tenant %q: %w", r.ID, err)
	}
	return &Tenant{ID: r.ID, Enabled: d.Enabled, Deleting: d.Deleting, Created: r.Created, Updated: r.Updated}, nil
}

// Create registers a tenant. ErrExists when the id is taken, also by a tenant being deleted.
func (g *Registry) Create(ctx context.Context, id string, enabled bool) (*Tenant, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	data, _ := json.Marshal(tenantData{Enabled: enabled})
	r := &record.Record{Tenant: system, Kind: kindTenant, ID: id, Data: data}
	if err := g.store.Create(ctx, r); err != nil {
		if errors.Is(err, record.ErrConflict) {
			return nil, fmt.Errorf("tenant '%s' %w", id, ErrExists)
		}
		return nil, err
	}
	return fromRecord(r)
}

// Get returns a live tenant; a tenant being deleted is ErrNotFound.
func (g *Registry) Get(ctx context.Context, id string) (*Tenant, error) {
	t, _, err := g.get(ctx, id)
	if err == nil && t.Deleting {
		return nil, fmt.Errorf("tenant '%s' %w", id, ErrNotFound)
	}
	return t, err
}

func (g *Registry) get(ctx context.Context, id string) (*Tenant, *record.Record, error) {
	if id == "" {
		return nil, nil, fmt.Errorf("tenant '' %w", ErrNotFound)
	}
	r, err := g.store.Get(ctx, system, kindTenant, id)
	if errors.Is(err, record.ErrNotFound) {
		return nil, nil, fmt.Errorf("tenant '%s' %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, nil, err
	}
	t, err := fromRecord(r)
	return t, r, err
}

// List returns live tenants ordered by id, skipping skip and returning at most limit.
func (g *Registry) List(ctx context.Context, skip, limit int) ([]*Tenant, error) {
	var all []*Tenant
	rs, err := record.All(ctx, g.store, record.Query{Tenant: system, Kind: kindTenant})
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		t, err := fromRecord(r)
		if err != nil {
			return nil, err
		}
		if !t.Deleting {
			all = append(all, t)
		}
	}
	// Registration order would shift with every update; id order is stable for paging.
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	if skip >= len(all) {
		return []*Tenant{}, nil
	}
	all = all[skip:]
	if limit < len(all) {
		all = all[:limit]
	}
	return all, nil
}

// update applies fn to the tenant with compare-and-set, retrying on concurrent changes.
func (g *Registry) update(ctx context.Context, id string, fn func(*tenantData) error) (*Tenant, error) {
	if id == "" {
		return nil, fmt.Errorf("tenant '' %w", ErrNotFound)
	}
	r, err := record.Modify(ctx, g.store, system, kindTenant, id, func(r *record.Record) error {
		t, err := fromRecord(r)
		if err != nil {
			return err
		}
		if t.Deleting {
			return fmt.Errorf("tenant '%s' %w", id, ErrNotFound)
		}
		d := tenantData{Enabled: t.Enabled}
		if err := fn(&d); err != nil {
			return err
		}
		r.Data, _ = json.Marshal(d)
		return nil
	})
	if errors.Is(err, record.ErrNotFound) {
		return nil, fmt.Errorf("tenant '%s' %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return fromRecord(r)
}

// SetEnabled switches a tenant on or off. It is the one change a disabled tenant accepts.
func (g *Registry) SetEnabled(ctx context.Context, id string, enabled bool) (*Tenant, error) {
	return g.update(ctx, id, func(d *tenantData) error { d.Enabled = enabled; return nil })
}

// MarkDeleting hides the tenant from every API and refuses its re-creation until Purge has run.
// A disabled tenant refuses deletion (ErrDisabled).
func (g *Registry) MarkDeleting(ctx context.Context, id string) (*Tenant, error) {
	return g.update(ctx, id, func(d *tenantData) error {
		if !d.Enabled {
			return fmt.Errorf("tenant '%s' %w", id, ErrDisabled)
		}
		d.Deleting = true
		return nil
	})
}

// CancelDeleting undoes MarkDeleting when the deletion could not be started, so the tenant is
// live again and a later DELETE can start it anew.
func (g *Registry) CancelDeleting(ctx context.Context, id string) error {
	_, err := record.Modify(ctx, g.store, system, kindTenant, id, func(r *record.Record) error {
		t, err := fromRecord(r)
		if err != nil {
			return err
		}
		r.Data, _ = json.Marshal(tenantData{Enabled: t.Enabled})
		return nil
	})
	return err
}

// Purge removes the tenant's records and finally its registry entry with its credentials.
// It is idempotent, so a deletion job may run it again after a crash.
func (g *Registry) Purge(ctx context.Context, id string) error {
	if err := g.store.Delete(ctx, id, "", ""); err != nil {
		return fmt.Errorf("delete records of tenant %q: %w", id, err)
	}
	err := g.store.Delete(ctx, system, kindTenant, id)
	if err != nil && !errors.Is(err, record.ErrNotFound) {
		return fmt.Errorf("delete tenant %q: %w", id, err)
	}
	return nil
}

// Credential is a tenant's API key; the secret is only known at creation.
type Credential struct {
	Key     string    `json:"key"`
	Secret  string    `json:"secret,omitempty"`
	Tenant  string    `json:"tenant_id"`
	Created time.Time `json:"create_dt"`
}

type credentialData struct {
	Tenant string `json:"tenant"`
	// Hash is SHA-256 of the secret. Secrets are 256-bit random values, so a slow password
	// hash would add nothing but latency on every request.
	Hash string `json:"hash"`
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

// CreateCredential issues a new key and secret for a live tenant.
func (g *Registry) CreateCredential(ctx context.Context, tenantID string) (*Credential, error) {
	if _, err := g.Get(ctx, tenantID); err != nil {
		return nil, err
	}
	c := &Credential{Key: "lk_" + randomHex(12), Secret: randomHex(32), Tenant: tenantID}
	data, _ := json.Marshal(credentialData{Tenant: tenantID, Hash: hashSecret(c.Secret)})
	r := &record.Record{Tenant: system, Kind: kindCredential, ID: c.Key, Key: tenantID,
		Parent: &record.Ref{Kind: kindTenant, ID: tenantID}, Data: data}
	if err := g.store.Create(ctx, r); err != nil {
		return nil, err
	}
	c.Created = r.Created
	return c, nil
}

// ListCredentials returns a tenant's keys without secrets.
func (g *Registry) ListCredentials(ctx context.Context, tenantID string) ([]*Credential, error) {
	if _, err := g.Get(ctx, tenantID); err != nil {
		return nil, err
	}
	rs, err := record.All(ctx, g.store, record.Query{Tenant: system, Kind: kindCredential, Key: tenantID})
	if err != nil {
		return nil, err
	}
	out := make([]*Credential, 0, len(rs))
	for _, r := range rs {
		out = append(out, &Credential{Key: r.ID, Tenant: tenantID, Created: r.Created})
	}
	return out, nil
}

// DeleteCredential revokes a key of the tenant.
func (g *Registry) DeleteCredential(ctx context.Context, tenantID, key string) error {
	r, err := g.store.Get(ctx, system, kindCredential, key)
	if err == nil && r.Key != tenantID {
		err = record.ErrNotFound
	}
	if err == nil {
		err = g.store.Delete(ctx, system, kindCredential, key)
	}
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return fmt.Errorf("credential '%s' %w for tenant '%s'", key, ErrNotFound, tenantID)
	}
	return err
}

// Authenticate returns the tenant a key/secret pair belongs to, or ErrBadCredentials. The
// comparison is constant-time and an unknown key costs the same hash as a known one.
func (g *Registry) Authenticate(ctx context.Context, key, secret string) (string, error) {
	want := hashSecret(secret)
	have := strings.Repeat("0", len(want))
	tenantID := ""
	if key != "" {
		if r, err := g.store.Get(ctx, system, kindCredential, key); err == nil {
			var d credentialData
			if json.Unmarshal(r.Data, &d) == nil {
				have, tenantID = d.Hash, d.Tenant
			}
		} else if !errors.Is(err, record.ErrNotFound) && !errors.Is(err, record.ErrInvalid) {
			return "", err
		}
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(have)) != 1 || tenantID == "" {
		return "", ErrBadCredentials
	}
	t, err := g.Get(ctx, tenantID)
	if err != nil {
		return "", ErrBadCredentials
	}
	return t.ID, nil
}

// RecordRef is the record of tenant id, the parent of records that go when the tenant goes.
func RecordRef(id string) *record.Ref { return &record.Ref{Kind: kindTenant, ID: id} }
