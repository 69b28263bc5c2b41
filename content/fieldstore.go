package content

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/storage/record"
)

// KindField is the record kind of a version's generated field (all values of one type).
const KindField = "content_field"

// ErrFieldNotGenerated means the field has not been generated for the version (yet).
var ErrFieldNotGenerated = errors.New("field not generated")

// StoredField is the generated values of one field type of a version.
type StoredField struct {
	Type   string
	Values []string
	// Created is when the field was first generated, Updated when it last changed.
	Created time.Time
	Updated time.Time
}

type fieldData struct {
	Type   string   `json:"type"`
	Values []string `json:"values"`
}

func fieldID(contentID string, v int, typ string) string { return versionID(contentID, v) + "/" + typ }

// FieldStore keeps generated fields, one record per version and type, children of the
// version record (so they go with it and with the tenant).
type FieldStore struct{ records record.Store }

// NewFieldStore returns a field store over records.
func NewFieldStore(records record.Store) *FieldStore { return &FieldStore{records: records} }

// Put stores the values of one field type; Updated moves only when they change.
func (s *FieldStore) Put(ctx context.Context, tenant, contentID string, v int, typ string, values []string) error {
	if values == nil {
		values = []string{}
	}
	data, _ := json.Marshal(fieldData{Type: typ, Values: values})
	id := fieldID(contentID, v, typ)
	err := s.records.Create(ctx, &record.Record{Tenant: tenant, Kind: KindField, ID: id,
		Parent: &record.Ref{Kind: KindVersion, ID: versionID(contentID, v)}, Data: data})
	if !errors.Is(err, record.ErrConflict) {
		return err
	}
	for attempt := 0; attempt < 100; attempt++ {
		r, err := s.records.Get(ctx, tenant, KindField, id)
		if err != nil {
			return err
		}
		var old fieldData
		if json.Unmarshal(r.Data, &old) == nil && slices.Equal(old.Values, values) {
			return nil
		}
		r.Data = data
		if err := s.records.Update(ctx, r); !errors.Is(err, record.ErrStale) {
			return err
		}
	}
	return fmt.Errorf("field %s: too many concurrent updates", id)
}

// Get returns one field type of a version, or an error wrapping ErrFieldNotGenerated.
func (s *FieldStore) Get(ctx context.Context, tenant, contentID string, v int, typ string) (*StoredField, error) {
	r, err := s.records.Get(ctx, tenant, KindField, fieldID(contentID, v, typ))
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return nil, fmt.Errorf("field %s of content '%s' version %d: %w", typ, contentID, v, ErrFieldNotGenerated)
	}
	if err != nil {
		return nil, err
	}
	return decodeField(r)
}

// All returns every generated field of a version, by type.
func (s *FieldStore) All(ctx context.Context, tenant, contentID string, v int) ([]*StoredField, error) {
	out, err := record.AllAs(ctx, s.records, record.Query{Tenant: tenant, Kind: KindField,
		Parent: &record.Ref{Kind: KindVersion, ID: versionID(contentID, v)}}, decodeField)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *StoredField) int { return strings.Compare(a.Type, b.Type) })
	return out, nil
}

func decodeField(r *record.Record) (*StoredField, error) {
	var d fieldData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, fmt.Errorf("decode field %s: %w", r.ID, err)
	}
	if d.Values == nil {
		d.Values = []string{}
	}
	return &StoredField{Type: d.Type, Values: d.Values, Created: r.Created, Updated: r.Updated}, nil
}
