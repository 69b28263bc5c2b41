package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lectern-lms/lectern/storage/statements"
)

// PutActivity implements statements.Activities.
func (s *Store) PutActivity(ctx context.Context, tenant, id string, activity json.RawMessage) error {
	if id == "" || len(activity) == 0 {
		return fmt.Errorf("%w: activity without id or JSON", statements.ErrInvalid)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO activities (tenant, id, json) VALUES (?, ?, ?)
		ON CONFLICT (tenant, id) DO UPDATE SET json = excluded.json`, tenant, id, []byte(activity))
	if err != nil {
		return fmt.Errorf("put activity %s: %w", id, err)
	}
	return nil
}

// GetActivity implements statements.Activities.
func (s *Store) GetActivity(ctx context.Context, tenant, id string) (json.RawMessage, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, `SELECT json FROM activities WHERE tenant = ? AND id = ?`, tenant, id).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("activity %s: %w", id, statements.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get activity %s: %w", id, err)
	}
	return json.RawMessage(b), nil
}
