package elastic

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/statements"
)

// actDoc is an activity's document. Activity holds the activity object as a JSON string in
// a field mapped enabled:false, for the same reason as stmtDoc.Statement.
type actDoc struct {
	Tenant     string `json:"tenant_id"`
	ActivityID string `json:"activity_id"`
	Activity   string `json:"activity"`
}

// activityID is the _id of an activity: activity ids are IRIs of any length, and _id is
// limited to 512 bytes, so the id is hashed.
func activityID(tenant, id string) string {
	sum := sha256.Sum256([]byte(id))
	return tenant + "/" + hex.EncodeToString(sum[:])
}

// PutActivity stores (replaces) the activity object of id. It does not wait for a refresh:
// activities are read by id only, in realtime (PurgeTenant refreshes before it searches).
func (s *Store) PutActivity(ctx context.Context, tenant, id string, activity json.RawMessage) error {
	if err := validTenant(tenant); err != nil {
		return err
	}
	if id == "" || !json.Valid(activity) {
		return fmt.Errorf("statements/elastic: activity %q: %w", id, statements.ErrInvalid)
	}
	b, err := json.Marshal(actDoc{Tenant: tenant, ActivityID: id, Activity: string(activity)})
	if err != nil {
		return fmt.Errorf("statements/elastic: activity %s: %w", id, err)
	}
	err = s.c.Do(ctx, "put activity", esapi.IndexRequest{Index: s.acts, DocumentID: pathID(activityID(tenant, id)), Body: bytes.NewReader(b),
		RequireAlias: esapi.BoolPtr(true)}, nil)
	if err != nil {
		return fmt.Errorf("statements/elastic: %w", err)
	}
	return nil
}

// GetActivity returns the stored activity object of id, or ErrNotFound.
func (s *Store) GetActivity(ctx context.Context, tenant, id string) (json.RawMessage, error) {
	if err := validTenant(tenant); err != nil {
		return nil, err
	}
	var res struct {
		Source actDoc `json:"_source"`
	}
	err := s.c.Do(ctx, "get activity", esapi.GetRequest{Index: s.acts, DocumentID: pathID(activityID(tenant, id))}, &res)
	if errors.Is(err, elastic.ErrNotFound) {
		return nil, fmt.Errorf("statements/elastic: activity %s: %w", id, statements.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("statements/elastic: %w", err)
	}
	if res.Source.Tenant != tenant || res.Source.ActivityID != id {
		return nil, fmt.Errorf("statements/elastic: activity %s: %w", id, statements.ErrNotFound)
	}
	return json.RawMessage(res.Source.Activity), nil
}
