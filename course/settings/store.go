package settings

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lectern-lms/lectern/storage/record"
)

// Sealer encrypts secret setting values at rest (AES-256-GCM), so a copy of the database does
// not hand out LRS accounts and their passwords.
type Sealer struct{ aead cipher.AEAD }

// NewSealer derives the AES key from an operator secret of any length.
func NewSealer(secret string) (*Sealer, error) {
	if secret == "" {
		return nil, errors.New("secret key is empty")
	}
	k := sha256.Sum256([]byte(secret))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts v with a fresh nonce.
func (s *Sealer) Seal(v string) string {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, []byte(v), nil))
}

// Open decrypts a value made by Seal.
func (s *Sealer) Open(v string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", errors.New("sealed value is malformed")
	}
	out, err := s.aead.Open(nil, b[:s.aead.NonceSize()], b[s.aead.NonceSize():], nil)
	if err != nil {
		return "", errors.New("sealed value does not decrypt with the configured secret key")
	}
	return string(out), nil
}

// Store keeps the values set at tenant level (and, later, course and registration level) in
// the record store: one record per scope, updated with compare-and-set.
type Store struct {
	records record.Store
	cat     *Catalogue
	sealer  *Sealer
	// CheckOutbound, when set, vets the value of every Outbound setting when it is saved
	// (the outbound policy: no loopback, private or metadata destinations); its error is
	// the rule the value breaks. The same policy refuses the destination again at send time.
	CheckOutbound func(ctx context.Context, rawURL string) error
}

// NewStore returns a settings store; sealer encrypts secret values.
func NewStore(records record.Store, cat *Catalogue, sealer *Sealer) *Store {
	return &Store{records: records, cat: cat, sealer: sealer}
}

// Catalogue returns the catalogue the store validates against.
func (s *Store) Catalogue() *Catalogue { return s.cat }

const kindSettings = "settings"

type stored struct {
	Values map[string]string `json:"values"`
	Sealed map[string]bool   `json:"sealed,omitempty"`
}

func (s *Store) load(ctx context.Context, tenant, scope string) (*stored, *record.Record, error) {
	r, err := s.records.Get(ctx, tenant, kindSettings, scope)
	if errors.Is(err, record.ErrNotFound) {
		return &stored{Values: map[string]string{}}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var st stored
	if err := json.Unmarshal(r.Data, &st); err != nil {
		return nil, nil, fmt.Errorf("decode settings %s/%s: %w", tenant, scope, err)
	}
	if st.Values == nil {
		st.Values = map[string]string{}
	}
	return &st, r, nil
}

// Scope names whose values a layer holds: the tenant itself, or one course or registration
// of it. Values of a course or registration scope are deleted with that record.
type Scope struct {
	Level Level
	// Parent is the record the values belong to (kind and id), empty for the tenant scope.
	ParentKind, ParentID string
}

// TenantScope is the tenant's own level.
var TenantScope = Scope{Level: LevelTenant}

// CourseScope is the level of one course (all its versions).
func CourseScope(courseID string) Scope {
	return Scope{Level: LevelCourse, ParentKind: "course", ParentID: courseID}
}

// RegistrationScope is the level of one registration: its values apply to every instance of
// it and are deleted with it.
func RegistrationScope(registrationID string) Scope {
	return Scope{Level: LevelRegistration, ParentKind: "registration", ParentID: registrationID}
}

func (sc Scope) recordID() string {
	if sc.ParentKind == "" {
		return "tenant"
	}
	return sc.ParentKind + "/" + sc.ParentID
}

// TenantLayer returns the tenant's own values (secrets decrypted) as a cascade layer.
func (s *Store) TenantLayer(ctx context.Context, tenant string) (Layer, error) {
	return s.Layer(ctx, tenant, TenantScope)
}

// Layer returns the values set in one scope (secrets decrypted) as a cascade layer.
func (s *Store) Layer(ctx context.Context, tenant string, sc Scope) (Layer, error) {
	st, _, err := s.load(ctx, tenant, sc.recordID())
	if err != nil {
		return Layer{}, err
	}
	values := make(map[string]string, len(st.Values))
	for id, v := range st.Values {
		if st.Sealed[id] {
			if v, err = s.sealer.Open(v); err != nil {
				return Layer{}, fmt.Errorf("setting %s of tenant %s: %w", id, tenant, err)
			}
		}
		values[id] = v
	}
	return Layer{Level: sc.Level, Values: values}, nil
}

// Layers returns the layers of scopes, in cascade order (tenant, course, registration).
func (s *Store) Layers(ctx context.Context, tenant string, scopes ...Scope) ([]Layer, error) {
	out := make([]Layer, 0, len(scopes))
	for _, sc := range scopes {
		l, err := s.Layer(ctx, tenant, sc)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// RegistrationScopes are the scopes of a registration's cascade: its tenant, its course and
// itself.
func RegistrationScopes(courseID, registrationID string) []Scope {
	return []Scope{TenantScope, CourseScope(courseID), RegistrationScope(registrationID)}
}

// SetTenant validates value for id at tenant level and stores its canonical form.
func (s *Store) SetTenant(ctx context.Context, tenant, id, value string) error {
	return s.Set(ctx, tenant, TenantScope, id, value)
}

// Set validates value for id at the scope's level and stores its canonical form.
func (s *Store) Set(ctx context.Context, tenant string, sc Scope, id, value string) error {
	canon, err := s.cat.Validate(id, sc.Level, value)
	if err != nil {
		return err
	}
	setting, _ := s.cat.Lookup(id)
	if setting.Outbound && canon != "" && s.CheckOutbound != nil {
		if err := s.CheckOutbound(ctx, canon); err != nil {
			return invalid(setting, "%s is not a destination this server may send to: %v", echo(setting, canon), err)
		}
	}
	for attempt := 0; attempt < 20; attempt++ {
		st, r, err := s.load(ctx, tenant, sc.recordID())
		if err != nil {
			return err
		}
		v := canon
		if setting.Secret {
			v = s.sealer.Seal(canon)
			if st.Sealed == nil {
				st.Sealed = map[string]bool{}
			}
			st.Sealed[id] = true
		} else {
			delete(st.Sealed, id)
		}
		st.Values[id] = v
		data, _ := json.Marshal(st)
		if r == nil {
			nr := &record.Record{Tenant: tenant, Kind: kindSettings, ID: sc.recordID(), Data: data}
			if sc.ParentKind != "" {
				nr.Parent = &record.Ref{Kind: sc.ParentKind, ID: sc.ParentID}
			}
			err = s.records.Create(ctx, nr)
		} else {
			r.Data = data
			err = s.records.Update(ctx, r)
		}
		if errors.Is(err, record.ErrConflict) || errors.Is(err, record.ErrStale) {
			continue
		}
		return err
	}
	return fmt.Errorf("setting %s: too many concurrent updates", id)
}
