// Package forward is statement forwarding of the xAPI record store (spec/002 "Statement
// forwarding pair", "Forwarding management"): pairs that name a source (a tenant's own store,
// narrowed by a statement query) and a destination (another xAPI endpoint with Basic
// credentials), and the Forwarder that copies the source's statements to the destination in
// stored order, batch by batch, keeping a durable position per pair.
//
// Delivery is at least once on the wire and exactly once at the destination: a batch is
// POSTed with the statements' own ids, the position advances only after the destination
// acknowledged it, and a destination that already holds an id keeps one copy (the xAPI rule
// "same id, same statement" makes a resent batch a no-op there).
package forward

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/lrs/xapi/lexical"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/statements"
)

// Sentinel errors.
var (
	// ErrNotFound means the tenant has no pair with that id.
	ErrNotFound = errors.New("forwarding pair not found")
	// ErrConflict means a pair with that id already exists.
	ErrConflict = errors.New("forwarding pair already exists")
	// ErrInvalid means a pair member is unusable (the message names it).
	ErrInvalid = errors.New("invalid forwarding pair")
)

// Record kinds: the pair, and its position as a child record so that the forwarder and an
// administrator updating the pair never race on one revision, and deleting the pair deletes
// its position.
const (
	KindPair   = "lrs_forward_pair"
	KindCursor = "lrs_forward_cursor"
)

// Sealer encrypts the destination password at rest (course/settings.Sealer).
type Sealer interface {
	Seal(v string) string
	Open(v string) (string, error)
}

// Pair is one forwarding path.
type Pair struct {
	ID     string
	Tenant string
	// SourceQuery is a GET /statements query string (agent, verb, activity, registration,
	// related_activities, related_agents) selecting what is forwarded; "" forwards everything.
	SourceQuery string
	// DestinationURL is the destination's xAPI endpoint; statements go to DestinationURL +
	// "/statements".
	DestinationURL string
	Username       string
	// Password is in clear in memory only; the record holds it sealed.
	Password string
	Enabled  bool
	Created  time.Time
	Updated  time.Time
	// Status is the forwarder's progress (read only).
	Status Status
}

// Status is where a pair's forwarding stands.
type Status struct {
	// Position is the stored time of the last statement the destination acknowledged; the
	// next batch starts after it. Zero: nothing forwarded yet.
	Position time.Time `json:"position"`
	// AtPosition are the ids forwarded whose stored time is Position (internal).
	AtPosition []string `json:"at_position,omitempty"`
	// Forwarded counts statements acknowledged by the destination.
	Forwarded int64 `json:"forwarded"`
	// Failures counts consecutive failed batches (0 after a success).
	Failures int `json:"failures"`
	// LastAttempt is when the last batch was sent (zero before the first).
	LastAttempt time.Time `json:"last_attempt"`
	// NextAttempt is when a failed pair is tried again (zero when not backing off).
	NextAttempt time.Time `json:"next_attempt"`
	// LastError describes the last failure ("" after a success).
	LastError string `json:"last_error"`
	// Owner is the forwarder that holds the pair until LeaseUntil: with several worker
	// processes one sends a pair's batches at a time (internal; not shown by the API).
	Owner      string    `json:"owner,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
}

type pairData struct {
	SourceQuery    string `json:"source_query"`
	DestinationURL string `json:"destination_url"`
	Username       string `json:"username"`
	Password       string `json:"password_sealed"`
	Enabled        bool   `json:"enabled"`
}

// ParseSource validates a source query and returns its statement filter (Tenant unset).
// Only the filter parameters of GET /statements are accepted: position, order and paging
// belong to the forwarder.
func ParseSource(raw string) (statements.Query, error) {
	var q statements.Query
	vals, err := url.ParseQuery(strings.TrimPrefix(raw, "?"))
	if err != nil {
		return q, fmt.Errorf("%w: source_query: %v", ErrInvalid, err)
	}
	for k, v := range vals {
		if len(v) != 1 {
			return q, fmt.Errorf("%w: source_query: %s is given %d times", ErrInvalid, k, len(v))
		}
		val := v[0]
		switch k {
		case "agent":
			_, ifi, err := xapi.ParseAgent([]byte(val), xapi.V103)
			if err != nil {
				return q, fmt.Errorf("%w: source_query: agent: %v", ErrInvalid, err)
			}
			q.Agent = ifi
		case "verb", "activity":
			if !lexical.ValidIRI(val) {
				return q, fmt.Errorf("%w: source_query: %s: %q is not an IRI", ErrInvalid, k, val)
			}
			if k == "verb" {
				q.Verb = val
			} else {
				q.Activity = val
			}
		case "registration":
			if !lexical.ValidUUID(val) {
				return q, fmt.Errorf("%w: source_query: registration: %q is not a UUID", ErrInvalid, val)
			}
			q.Registration = strings.ToLower(val)
		case "related_activities", "related_agents":
			if val != "true" && val != "false" {
				return q, fmt.Errorf("%w: source_query: %s must be true or false, not %q", ErrInvalid, k, val)
			}
			if k == "related_activities" {
				q.RelatedActivities = val == "true"
			} else {
				q.RelatedAgents = val == "true"
			}
		default:
			return q, fmt.Errorf("%w: source_query: %q is not a filter parameter (agent, verb, activity, registration, related_activities, related_agents)", ErrInvalid, k)
		}
	}
	return q, nil
}

// validate checks p's members.
func validate(p *Pair) error {
	if _, err := ParseSource(p.SourceQuery); err != nil {
		return err
	}
	u, err := url.Parse(p.DestinationURL)
	switch {
	case p.DestinationURL == "":
		return fmt.Errorf("%w: destination_url is required", ErrInvalid)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%w: destination_url %q is not an absolute http(s) URL", ErrInvalid, p.DestinationURL)
	case u.User != nil:
		return fmt.Errorf("%w: destination_url must not carry credentials; use destination_credentials", ErrInvalid)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%w: destination_url must be an endpoint without query or fragment", ErrInvalid)
	case strings.Contains(p.Username, ":"):
		return fmt.Errorf("%w: destination_credentials.username must not contain ':'", ErrInvalid)
	}
	if p.ID != "" && (len(p.ID) > 128 || strings.ContainsAny(p.ID, "/?#% ")) {
		return fmt.Errorf("%w: id %q must be at most 128 characters without '/', '?', '#', '%%' or spaces", ErrInvalid, p.ID)
	}
	return nil
}

// Manager keeps pairs in the record store.
type Manager struct {
	Records record.Store
	Sealer  Sealer
	// CheckURL, when set, vets a pair's destination_url when it is saved against the outbound
	// policy the forwarder sends under (no loopback, private or metadata destinations); a
	// destination it refuses is ErrInvalid, with its reason.
	CheckURL func(ctx context.Context, rawURL string) error
}

// checkDestination applies CheckURL to a valid pair.
func (m *Manager) checkDestination(ctx context.Context, p *Pair) error {
	if m.CheckURL == nil {
		return nil
	}
	if err := m.CheckURL(ctx, p.DestinationURL); err != nil {
		return fmt.Errorf("%w: destination_url %q is not a destination this server may send to: %v", ErrInvalid, p.DestinationURL, err)
	}
	return nil
}

func (m *Manager) toRecord(p *Pair) (*record.Record, error) {
	d := pairData{SourceQuery: p.SourceQuery, DestinationURL: p.DestinationURL, Username: p.Username, Enabled: p.Enabled}
	if p.Password != "" {
		d.Password = m.Sealer.Seal(p.Password)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return &record.Record{Tenant: p.Tenant, Kind: KindPair, ID: p.ID, Data: b}, nil
}

func (m *Manager) fromRecord(r *record.Record) (*Pair, error) {
	var d pairData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, fmt.Errorf("forwarding pair %s: %w", r.ID, err)
	}
	p := &Pair{ID: r.ID, Tenant: r.Tenant, SourceQuery: d.SourceQuery, DestinationURL: d.DestinationURL,
		Username: d.Username, Enabled: d.Enabled, Created: r.Created, Updated: r.Updated}
	if d.Password != "" {
		pw, err := m.Sealer.Open(d.Password)
		if err != nil {
			return nil, fmt.Errorf("forwarding pair %s: %w", r.ID, err)
		}
		p.Password = pw
	}
	return p, nil
}

// Create stores a new pair; an empty ID gets a random one.
func (m *Manager) Create(ctx context.Context, p *Pair) error {
	if err := validate(p); err != nil {
		return err
	}
	if err := m.checkDestination(ctx, p); err != nil {
		return err
	}
	if p.ID == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		p.ID = hex.EncodeToString(b)
	}
	r, err := m.toRecord(p)
	if err != nil {
		return err
	}
	if err := m.Records.Create(ctx, r); err != nil {
		if errors.Is(err, record.ErrConflict) {
			return fmt.Errorf("%w: %s", ErrConflict, p.ID)
		}
		return err
	}
	p.Created, p.Updated = r.Created, r.Updated
	// A forwarder that was writing the first position of a deleted pair of the same id can
	// have left it behind (the store does not check that a parent exists): a new pair
	// starts at the beginning.
	if err := m.Records.Delete(ctx, p.Tenant, KindCursor, p.ID); err != nil && !errors.Is(err, record.ErrNotFound) {
		return err
	}
	return nil
}

// Get returns one pair with its status.
func (m *Manager) Get(ctx context.Context, tenant, id string) (*Pair, error) {
	r, err := m.Records.Get(ctx, tenant, KindPair, id)
	if errors.Is(err, record.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	p, err := m.fromRecord(r)
	if err != nil {
		return nil, err
	}
	c, _, err := m.cursor(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	p.Status = c
	return p, nil
}

// List returns the tenant's pairs (with status), ordered by last update.
func (m *Manager) List(ctx context.Context, tenant string) ([]*Pair, error) {
	return record.AllAs(ctx, m.Records, record.Query{Tenant: tenant, Kind: KindPair}, func(r *record.Record) (*Pair, error) {
		p, err := m.fromRecord(r)
		if err != nil {
			return nil, err
		}
		p.Status, _, err = m.cursor(ctx, tenant, p.ID)
		return p, err
	})
}

// Update replaces the pair's members. keepPassword leaves the stored password as it is (the
// password is write-only, so a client updating other members does not send it). The position
// is kept: changing the source or destination continues after the last statement forwarded.
func (m *Manager) Update(ctx context.Context, p *Pair, keepPassword bool) error {
	if err := validate(p); err != nil {
		return err
	}
	if err := m.checkDestination(ctx, p); err != nil {
		return err
	}
	for {
		old, err := m.Records.Get(ctx, p.Tenant, KindPair, p.ID)
		if errors.Is(err, record.ErrNotFound) {
			return fmt.Errorf("%w: %s", ErrNotFound, p.ID)
		}
		if err != nil {
			return err
		}
		if keepPassword {
			cur, err := m.fromRecord(old)
			if err != nil {
				return err
			}
			p.Password = cur.Password
		}
		r, err := m.toRecord(p)
		if err != nil {
			return err
		}
		r.Rev = old.Rev
		err = m.Records.Update(ctx, r)
		if errors.Is(err, record.ErrStale) {
			continue
		}
		if errors.Is(err, record.ErrNotFound) {
			return fmt.Errorf("%w: %s", ErrNotFound, p.ID)
		}
		if err != nil {
			return err
		}
		p.Created, p.Updated = old.Created, r.Updated
		return nil
	}
}

// Delete removes a pair and its position.
func (m *Manager) Delete(ctx context.Context, tenant, id string) error {
	err := m.Records.Delete(ctx, tenant, KindPair, id)
	if errors.Is(err, record.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return err
}

// cursor returns a pair's status and its record (nil when none was written yet).
func (m *Manager) cursor(ctx context.Context, tenant, id string) (Status, *record.Record, error) {
	var s Status
	r, err := m.Records.Get(ctx, tenant, KindCursor, id)
	if errors.Is(err, record.ErrNotFound) {
		return s, nil, nil
	}
	if err != nil {
		return s, nil, err
	}
	if err := json.Unmarshal(r.Data, &s); err != nil {
		return s, nil, fmt.Errorf("forwarding position %s: %w", id, err)
	}
	return s, r, nil
}

// saveCursor writes s with compare-and-set on rev (the record read with it, nil when there
// was none) and returns the record written. It returns nil when another forwarder moved the
// position first (or the pair was deleted): the caller drops its result and reads the
// position again.
func (m *Manager) saveCursor(ctx context.Context, tenant, id string, prev *record.Record, s Status) (*record.Record, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if prev == nil {
		r := &record.Record{Tenant: tenant, Kind: KindCursor, ID: id, Parent: &record.Ref{Kind: KindPair, ID: id}, Data: b}
		err = m.Records.Create(ctx, r)
		if errors.Is(err, record.ErrConflict) || errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	r := *prev
	r.Data = b
	err = m.Records.Update(ctx, &r)
	if errors.Is(err, record.ErrStale) || errors.Is(err, record.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}
