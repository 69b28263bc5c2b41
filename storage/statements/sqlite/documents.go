package sqlite

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
)

// etag is the quoted hex SHA-1 of a document body, as sent in the ETag header.
func etag(body []byte) string {
	sum := sha1.Sum(body)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

func validKey(k statements.DocKey, needID bool) error {
	switch k.Kind {
	case statements.State, statements.ActivityProfile, statements.AgentProfile:
	default:
		return fmt.Errorf("%w: unknown document kind %q", statements.ErrInvalid, k.Kind)
	}
	if needID && k.ID == "" {
		return fmt.Errorf("%w: document without id", statements.ErrInvalid)
	}
	return nil
}

const docWhere = `tenant = ? AND kind = ? AND activity_id = ? AND agent = ? AND registration = ?`

func docArgs(k statements.DocKey) []any {
	return []any{k.Tenant, string(k.Kind), k.ActivityID, k.Agent, k.Registration}
}

func getDoc(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, key statements.DocKey) (*statements.Document, error) {
	d := &statements.Document{Key: key}
	var updated int64
	err := q.QueryRowContext(ctx, `SELECT content_type, body, etag, updated FROM documents WHERE `+docWhere+` AND doc_id = ?`,
		append(docArgs(key), key.ID)...).Scan(&d.ContentType, &d.Body, &d.ETag, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s document %q: %w", key.Kind, key.ID, statements.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s document %q: %w", key.Kind, key.ID, err)
	}
	d.Updated = fromMicros(updated)
	return d, nil
}

// GetDoc implements statements.Documents.
func (s *Store) GetDoc(ctx context.Context, key statements.DocKey) (*statements.Document, error) {
	if err := validKey(key, true); err != nil {
		return nil, err
	}
	return getDoc(ctx, s.db, key)
}

// check applies If-Match / If-None-Match to the current document (nil when absent).
func check(cur *statements.Document, cond statements.Precondition) error {
	if m := cond.IfMatch; m != "" {
		if cur == nil || (m != "*" && m != cur.ETag) {
			return fmt.Errorf("If-Match %s: %w", m, statements.ErrPrecondition)
		}
	}
	if m := cond.IfNoneMatch; m != "" {
		if cur != nil && (m == "*" || m == cur.ETag) {
			return fmt.Errorf("If-None-Match %s: %w", m, statements.ErrPrecondition)
		}
	}
	return nil
}

// PutDoc implements statements.Documents. The read, the precondition and the write share one
// immediate transaction, so of two writers holding the same ETag exactly one succeeds.
func (s *Store) PutDoc(ctx context.Context, doc *statements.Document, cond statements.Precondition, merge bool) (*statements.Document, error) {
	if err := validKey(doc.Key, true); err != nil {
		return nil, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("put document: %w", err)
	}
	defer tx.Rollback()
	cur, err := getDoc(ctx, tx, doc.Key)
	if errors.Is(err, statements.ErrNotFound) {
		cur, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := check(cur, cond); err != nil {
		return nil, err
	}
	body := nonNil(doc.Body)
	if merge && cur != nil {
		var old, add map[string]json.RawMessage
		if json.Unmarshal(cur.Body, &old) != nil || json.Unmarshal(body, &add) != nil || old == nil || add == nil {
			return nil, fmt.Errorf("%w: merge needs two JSON objects", statements.ErrInvalid)
		}
		for k, v := range add {
			old[k] = v
		}
		if body, err = json.Marshal(old); err != nil {
			return nil, fmt.Errorf("merge document: %w", err)
		}
	}
	out := &statements.Document{Key: doc.Key, ContentType: doc.ContentType, Body: body, ETag: etag(body),
		Updated: s.now().UTC().Truncate(time.Microsecond)}
	_, err = tx.ExecContext(ctx, `INSERT INTO documents
		(tenant, kind, activity_id, agent, registration, doc_id, content_type, body, etag, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant, kind, activity_id, agent, registration, doc_id) DO UPDATE SET
		content_type = excluded.content_type, body = excluded.body, etag = excluded.etag, updated = excluded.updated`,
		append(docArgs(doc.Key), doc.Key.ID, out.ContentType, body, out.ETag, micros(out.Updated))...)
	if err != nil {
		return nil, fmt.Errorf("put document: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("put document: commit: %w", err)
	}
	return out, nil
}

// DeleteDoc implements statements.Documents. An If-Match on an absent document fails the
// precondition (HTTP 412) rather than reporting ErrNotFound, as HTTP orders the checks.
func (s *Store) DeleteDoc(ctx context.Context, key statements.DocKey, cond statements.Precondition) error {
	if err := validKey(key, true); err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete document: %w", err)
	}
	defer tx.Rollback()
	cur, err := getDoc(ctx, tx, key)
	if errors.Is(err, statements.ErrNotFound) {
		if cond.IfMatch != "" {
			return fmt.Errorf("If-Match %s: %w", cond.IfMatch, statements.ErrPrecondition)
		}
		return err
	}
	if err != nil {
		return err
	}
	if err := check(cur, cond); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE `+docWhere+` AND doc_id = ?`, append(docArgs(key), key.ID)...); err != nil {
		return fmt.Errorf("delete document: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete document: commit: %w", err)
	}
	return nil
}

// ListDocs implements statements.Documents; since is exclusive, as xAPI's since parameter.
func (s *Store) ListDocs(ctx context.Context, key statements.DocKey, since time.Time) ([]string, error) {
	if err := validKey(key, false); err != nil {
		return nil, err
	}
	q, args := `SELECT doc_id FROM documents WHERE `+docWhere, docArgs(key)
	if !since.IsZero() {
		q += ` AND updated > ?`
		args = append(args, boundMicros(since))
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY doc_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list documents: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list documents: %w", err)
	}
	return ids, nil
}

// DeleteDocs implements statements.Documents.
func (s *Store) DeleteDocs(ctx context.Context, key statements.DocKey) error {
	if err := validKey(key, false); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM documents WHERE `+docWhere, docArgs(key)...); err != nil {
		return fmt.Errorf("delete documents: %w", err)
	}
	return nil
}
