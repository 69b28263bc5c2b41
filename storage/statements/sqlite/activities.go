package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lectern-lms/lectern/storage/statements"
)

// PutActivity implements statements.Activities.
func (s *Store) PutActivity(ctx context.Context, tenant, id string, activity json.RawMessage) error {
	if id == "" || len(activity) == 0 {
		return fmt.Errorf("%w: activity without id or JSON", statements.ErrInvalid)
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO activities (tenant, id, json) VALUES (?, ?, ?)
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

// activityIDsPerQuery bounds the ids of one SELECT … IN (…): SQLite's default limit on host
// parameters is 32,766, and a smaller statement plans as fast.
const activityIDsPerQuery = 500

// GetActivities implements statements.Activities.
func (s *Store) GetActivities(ctx context.Context, tenant string, ids []string) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(ids))
	for len(ids) > 0 {
		part := ids[:min(len(ids), activityIDsPerQuery)]
		ids = ids[len(part):]
		args := make([]any, 0, len(part)+1)
		args = append(args, tenant)
		for _, id := range part {
			args = append(args, id)
		}
		rows, err := s.db.QueryContext(ctx, `SELECT id, json FROM activities WHERE tenant = ? AND id IN (?`+strings.Repeat(", ?", len(part)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("get activities: %w", err)
		}
		for rows.Next() {
			var id string
			var b []byte
			if err := rows.Scan(&id, &b); err != nil {
				rows.Close()
				return nil, fmt.Errorf("get activities: %w", err)
			}
			out[id] = json.RawMessage(b)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("get activities: %w", err)
		}
	}
	return out, nil
}

// PutActivities implements statements.Activities: one transaction, so the batch's
// activities cost one commit (one fsync), not one each.
func (s *Store) PutActivities(ctx context.Context, tenant string, acts map[string]json.RawMessage) error {
	for id, a := range acts {
		if id == "" || len(a) == 0 {
			return fmt.Errorf("%w: activity without id or JSON", statements.ErrInvalid)
		}
	}
	if len(acts) == 0 {
		return nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("put activities: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO activities (tenant, id, json) VALUES (?, ?, ?)
		ON CONFLICT (tenant, id) DO UPDATE SET json = excluded.json`)
	if err != nil {
		return fmt.Errorf("put activities: %w", err)
	}
	defer stmt.Close()
	for _, id := range slices.Sorted(maps.Keys(acts)) {
		if _, err := stmt.ExecContext(ctx, tenant, id, []byte(acts[id])); err != nil {
			return fmt.Errorf("put activity %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("put activities: %w", err)
	}
	return nil
}
