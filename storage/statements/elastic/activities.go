package elastic

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

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

// GetActivities returns the stored activity objects of ids in one multi-get (realtime, like
// GetActivity); ids with none are left out.
func (s *Store) GetActivities(ctx context.Context, tenant string, ids []string) (map[string]json.RawMessage, error) {
	if err := validTenant(tenant); err != nil {
		return nil, err
	}
	byDoc := make(map[string]string, len(ids))
	docIDs := make([]string, 0, len(ids))
	for _, id := range ids {
		d := activityID(tenant, id)
		if _, dup := byDoc[d]; !dup {
			byDoc[d] = id
			docIDs = append(docIDs, d)
		}
	}
	out := make(map[string]json.RawMessage, len(ids))
	for len(docIDs) > 0 {
		part := docIDs[:min(len(docIDs), activitiesPerRequest)]
		docIDs = docIDs[len(part):]
		found, err := s.mget(ctx, "get activities", s.acts, part, nil)
		if err != nil {
			return nil, err
		}
		for d, h := range found {
			var doc actDoc
			if err := json.Unmarshal(h.Source, &doc); err != nil {
				return nil, fmt.Errorf("statements/elastic: activity document %s: %w", d, err)
			}
			if id := byDoc[d]; doc.Tenant == tenant && doc.ActivityID == id {
				out[id] = json.RawMessage(doc.Activity)
			}
		}
	}
	return out, nil
}

// activitiesPerRequest bounds one multi-get or bulk request of activities (a batch merges at
// most 1,000 at a time; this keeps one request's body small).
const activitiesPerRequest = 500

// PutActivities stores (replaces) the activity objects in bulk requests; an item the cluster
// refuses fails the call.
func (s *Store) PutActivities(ctx context.Context, tenant string, acts map[string]json.RawMessage) error {
	if err := validTenant(tenant); err != nil {
		return err
	}
	ops := make([]bulkOp, 0, len(acts))
	for _, id := range slices.Sorted(maps.Keys(acts)) {
		a := acts[id]
		if id == "" || !json.Valid(a) {
			return fmt.Errorf("statements/elastic: activity %q: %w", id, statements.ErrInvalid)
		}
		ops = append(ops, bulkOp{action: "index", index: s.acts, id: activityID(tenant, id),
			doc: actDoc{Tenant: tenant, ActivityID: id, Activity: string(a)}})
	}
	for len(ops) > 0 {
		part := ops[:min(len(ops), activitiesPerRequest)]
		ops = ops[len(part):]
		items, err := s.bulk(ctx, "put activities", part)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := it.err("put activities"); err != nil {
				return fmt.Errorf("statements/elastic: %w", err)
			}
		}
	}
	return nil
}
