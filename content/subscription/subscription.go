// Package subscription keeps a tenant's webhook subscriptions of the content service (spec/001
// "Subscription authentication configuration", "Webhook message", "Events"): the
// authentication configurations outgoing webhook requests use, the subscriptions that name a
// topic and a receiver URL, and the delivery log of each subscription. Secrets are sealed at
// rest and never shown after creation. Delivery itself is workers/webhookjob.
package subscription

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lectern-lms/lectern/storage/record"
)

// Sentinel errors.
var (
	// ErrNotFound means the tenant has no auth configuration or subscription with that id.
	ErrNotFound = errors.New("not found")
	// ErrInvalid means a member of a request is unusable (the message names it).
	ErrInvalid = errors.New("invalid")
	// ErrInUse means an auth configuration is still named by a subscription.
	ErrInUse = errors.New("in use")
)

// Authentication types (spec/001).
const (
	AuthBasic  = "BASIC_AUTH"
	AuthOAuth2 = "OAUTH_2_CLIENT_CREDENTIALS"
	AuthNone   = "NO_AUTH"
)

// TopicJobProcessed is the one topic: a job concluded, successfully or failed.
const TopicJobProcessed = "JOB_PROCESSED"

// Record kinds. A subscription's Key is its auth_config_id, so "is this configuration in use"
// is one keyed List; deliveries are children of their subscription and go with it.
const (
	KindAuth         = "webhook_auth"
	KindSubscription = "webhook_subscription"
	KindDelivery     = "webhook_delivery"
)

// Sealer encrypts secrets at rest (course/settings.Sealer).
type Sealer interface {
	Seal(v string) string
	Open(v string) (string, error)
}

// Auth is one authentication configuration. Secret is in clear in memory only.
type Auth struct {
	ID       string
	Tenant   string
	Type     string
	Key      *string
	Secret   *string
	Scope    *string
	TokenURL *string
	Created  time.Time
}

// Subscription is one webhook subscription. Secret signs the messages (HMAC-SHA256); it is
// in clear in memory only and shown once, at creation.
type Subscription struct {
	ID           string
	Tenant       string
	Topic        string
	URL          string
	AuthConfigID string
	Secret       string
	Created      time.Time
}

// Delivery is one attempt to deliver a message, as the delivery log shows it.
type Delivery struct {
	MessageID string    `json:"message_id"`
	Attempt   int       `json:"attempt"`
	Time      time.Time `json:"attempt_dt"`
	// Status is the receiver's HTTP status, 0 when no response arrived.
	Status int `json:"status"`
	// Error is empty for a 2xx answer; otherwise why the attempt failed.
	Error string `json:"error"`
	// Final is true when no further attempt follows (delivered, or given up).
	Final bool `json:"final"`
}

type authData struct {
	Type     string  `json:"type"`
	Key      *string `json:"key"`
	Secret   *string `json:"secret_sealed"`
	Scope    *string `json:"scope"`
	TokenURL *string `json:"token_url"`
}

type subData struct {
	Topic        string `json:"topic"`
	URL          string `json:"url"`
	AuthConfigID string `json:"auth_config_id"`
	Secret       string `json:"secret_sealed"`
}

// Store keeps subscriptions in the record store.
type Store struct {
	Records record.Store
	Sealer  Sealer
}

// NewID returns a random UUID (version 4).
func NewID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func present(s *string) bool { return s != nil }

// ValidateAuth applies the spec's rules: BASIC_AUTH needs key and secret; OAuth client
// credentials need scope and token_url (key and secret are the client id and secret); NO_AUTH
// needs every property null.
func ValidateAuth(a *Auth) error {
	switch a.Type {
	case AuthBasic:
		if !present(a.Key) || !present(a.Secret) {
			return fmt.Errorf("%w: BASIC_AUTH requires key and secret", ErrInvalid)
		}
		if present(a.Scope) || present(a.TokenURL) {
			return fmt.Errorf("%w: BASIC_AUTH takes no scope or token_url", ErrInvalid)
		}
	case AuthOAuth2:
		if !present(a.Scope) || !present(a.TokenURL) {
			return fmt.Errorf("%w: OAUTH_2_CLIENT_CREDENTIALS requires scope and token_url", ErrInvalid)
		}
		if !present(a.Key) || !present(a.Secret) {
			return fmt.Errorf("%w: OAUTH_2_CLIENT_CREDENTIALS requires key and secret (the client id and secret)", ErrInvalid)
		}
	case AuthNone:
		if present(a.Key) || present(a.Secret) || present(a.Scope) || present(a.TokenURL) {
			return fmt.Errorf("%w: NO_AUTH requires key, secret, scope and token_url to be null", ErrInvalid)
		}
	case "":
		return fmt.Errorf("%w: type is required (%s, %s or %s)", ErrInvalid, AuthOAuth2, AuthBasic, AuthNone)
	default:
		return fmt.Errorf("%w: type %q is not one of %s, %s, %s", ErrInvalid, a.Type, AuthOAuth2, AuthBasic, AuthNone)
	}
	return nil
}

// CreateAuth stores a validated configuration under a new id.
func (s *Store) CreateAuth(ctx context.Context, a *Auth) error {
	if err := ValidateAuth(a); err != nil {
		return err
	}
	a.ID = NewID()
	d := authData{Type: a.Type, Key: a.Key, Scope: a.Scope, TokenURL: a.TokenURL}
	if a.Secret != nil {
		sealed := s.Sealer.Seal(*a.Secret)
		d.Secret = &sealed
	}
	b, _ := json.Marshal(d)
	r := &record.Record{Tenant: a.Tenant, Kind: KindAuth, ID: a.ID, Data: b}
	if err := s.Records.Create(ctx, r); err != nil {
		return err
	}
	a.Created = r.Created
	return nil
}

func (s *Store) toAuth(r *record.Record) (*Auth, error) {
	var d authData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, fmt.Errorf("decode auth configuration %s: %w", r.ID, err)
	}
	a := &Auth{ID: r.ID, Tenant: r.Tenant, Type: d.Type, Key: d.Key, Scope: d.Scope, TokenURL: d.TokenURL, Created: r.Created}
	if d.Secret != nil {
		v, err := s.Sealer.Open(*d.Secret)
		if err != nil {
			return nil, fmt.Errorf("open auth configuration %s: %w", r.ID, err)
		}
		a.Secret = &v
	}
	return a, nil
}

// GetAuth returns one configuration or ErrNotFound.
func (s *Store) GetAuth(ctx context.Context, tenant, id string) (*Auth, error) {
	r, err := s.Records.Get(ctx, tenant, KindAuth, id)
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return nil, fmt.Errorf("auth configuration '%s' %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return s.toAuth(r)
}

// ListAuth returns the tenant's configurations, oldest first.
func (s *Store) ListAuth(ctx context.Context, tenant string) ([]*Auth, error) {
	return record.AllAs(ctx, s.Records, record.Query{Tenant: tenant, Kind: KindAuth}, s.toAuth)
}

// DeleteAuth removes a configuration; ErrInUse while a subscription names it. (A subscription
// created concurrently with the delete can slip through; delivery then fails for good, which
// its delivery log shows.)
func (s *Store) DeleteAuth(ctx context.Context, tenant, id string) error {
	if _, err := s.GetAuth(ctx, tenant, id); err != nil {
		return err
	}
	p, err := s.Records.List(ctx, record.Query{Tenant: tenant, Kind: KindSubscription, Key: id, Limit: 1})
	if err != nil {
		return err
	}
	if len(p.Records) > 0 {
		return fmt.Errorf("auth configuration '%s' is %w by subscription '%s'", id, ErrInUse, p.Records[0].ID)
	}
	err = s.Records.Delete(ctx, tenant, KindAuth, id)
	if errors.Is(err, record.ErrNotFound) {
		return fmt.Errorf("auth configuration '%s' %w", id, ErrNotFound)
	}
	return err
}

// CreateSubscription stores a subscription with a new id and signing secret. The caller has
// checked the URL against the outbound policy; the auth configuration must exist.
func (s *Store) CreateSubscription(ctx context.Context, sub *Subscription) error {
	if sub.Topic != TopicJobProcessed {
		return fmt.Errorf("%w: topic %q is not one of %s", ErrInvalid, sub.Topic, TopicJobProcessed)
	}
	if sub.AuthConfigID == "" {
		return fmt.Errorf("%w: auth_config_id is required (create one with type NO_AUTH for none)", ErrInvalid)
	}
	if _, err := s.GetAuth(ctx, sub.Tenant, sub.AuthConfigID); err != nil {
		return err
	}
	sub.ID = NewID()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	sub.Secret = hex.EncodeToString(b)
	d, _ := json.Marshal(subData{Topic: sub.Topic, URL: sub.URL, AuthConfigID: sub.AuthConfigID, Secret: s.Sealer.Seal(sub.Secret)})
	r := &record.Record{Tenant: sub.Tenant, Kind: KindSubscription, ID: sub.ID, Key: sub.AuthConfigID, Data: d}
	if err := s.Records.Create(ctx, r); err != nil {
		return err
	}
	sub.Created = r.Created
	return nil
}

func (s *Store) toSub(r *record.Record) (*Subscription, error) {
	var d subData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, fmt.Errorf("decode subscription %s: %w", r.ID, err)
	}
	secret, err := s.Sealer.Open(d.Secret)
	if err != nil {
		return nil, fmt.Errorf("open subscription %s: %w", r.ID, err)
	}
	return &Subscription{ID: r.ID, Tenant: r.Tenant, Topic: d.Topic, URL: d.URL, AuthConfigID: d.AuthConfigID,
		Secret: secret, Created: r.Created}, nil
}

// GetSubscription returns one subscription or ErrNotFound.
func (s *Store) GetSubscription(ctx context.Context, tenant, id string) (*Subscription, error) {
	r, err := s.Records.Get(ctx, tenant, KindSubscription, id)
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return nil, fmt.Errorf("subscription '%s' %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return s.toSub(r)
}

// ListSubscriptions returns the tenant's subscriptions, oldest first.
func (s *Store) ListSubscriptions(ctx context.Context, tenant string) ([]*Subscription, error) {
	return record.AllAs(ctx, s.Records, record.Query{Tenant: tenant, Kind: KindSubscription}, s.toSub)
}

// DeleteSubscription removes a subscription and its delivery log; pending deliveries find it
// gone and stop.
func (s *Store) DeleteSubscription(ctx context.Context, tenant, id string) error {
	err := s.Records.Delete(ctx, tenant, KindSubscription, id)
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return fmt.Errorf("subscription '%s' %w", id, ErrNotFound)
	}
	return err
}

// LogDelivery appends one attempt to the subscription's delivery log. The id is the message
// and attempt, so a redelivered task records its attempt once.
func (s *Store) LogDelivery(ctx context.Context, tenant, subscriptionID string, d Delivery) error {
	b, _ := json.Marshal(d)
	r := &record.Record{Tenant: tenant, Kind: KindDelivery, ID: fmt.Sprintf("%s.%d", d.MessageID, d.Attempt),
		Parent: &record.Ref{Kind: KindSubscription, ID: subscriptionID}, Data: b}
	err := s.Records.Create(ctx, r)
	if errors.Is(err, record.ErrConflict) {
		return nil
	}
	return err
}

// Deliveries returns a subscription's delivery log in the order the attempts were recorded.
func (s *Store) Deliveries(ctx context.Context, tenant, subscriptionID string) ([]Delivery, error) {
	if _, err := s.Records.Get(ctx, tenant, KindSubscription, subscriptionID); err != nil {
		if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
			return nil, fmt.Errorf("subscription '%s' %w", subscriptionID, ErrNotFound)
		}
		return nil, err
	}
	return record.AllAs(ctx, s.Records, record.Query{Tenant: tenant, Kind: KindDelivery,
		Parent: &record.Ref{Kind: KindSubscription, ID: subscriptionID}}, func(r *record.Record) (Delivery, error) {
		var d Delivery
		if err := json.Unmarshal(r.Data, &d); err != nil {
			return d, fmt.Errorf("decode delivery %s: %w", r.ID, err)
		}
		return d, nil
	})
}
