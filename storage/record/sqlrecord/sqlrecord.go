// Package sqlrecord implements record.Store over database/sql. SQLite and PostgreSQL run the
// same statements; Dialect carries the few differences (placeholders, column types), so the
// two backends cannot drift apart in behaviour.
package sqlrecord

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/storage/record"
)

// Dialect names the SQL flavour of a backend.
type Dialect int

const (
	// SQLite uses ? placeholders and BLOB data.
	SQLite Dialect = iota
	// Postgres uses $n placeholders and BYTEA data.
	Postgres
)

// DefaultLimit is the page size of List when the query gives none.
const DefaultLimit = 100

// MaxLimit bounds one page so a caller cannot ask the database for an unbounded result.
const MaxLimit = 1000

// Store is a record.Store over one *sql.DB.
type Store struct {
	db      *sql.DB
	dialect Dialect
	now     func() time.Time
	// backend and down translate a driver's connection failures into storage.ErrUnavailable
	// (see WithOutage); nil down translates nothing.
	backend string
	down    func(error) bool
	// stmts caches each statement text's *prepared (see prep).
	stmts sync.Map
}

// Option configures a Store.
type Option func(*Store)

// WithOutage makes the store report errors for which down is true as an outage of the named
// backend (a *storage.UnavailableError), so callers answer 503 or retry rather than fail.
func WithOutage(backend string, down func(error) bool) Option {
	return func(s *Store) { s.backend, s.down = backend, down }
}

// WithClock makes the store stamp records with now instead of the wall clock (tests use it to
// give many records the same instant).
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// dbErr translates a driver error at the edge: an outage becomes a *storage.UnavailableError.
func (s *Store) dbErr(err error) error {
	if s.down != nil && err != nil && s.down(err) {
		return storage.Unavailable(s.backend, err)
	}
	return err
}

var _ record.Store = (*Store)(nil)

// New creates the schema when missing and returns the store. The caller has configured the
// connection for durability (fsync on commit); Store never buffers writes itself.
func New(ctx context.Context, db *sql.DB, d Dialect, opts ...Option) (*Store, error) {
	s := &Store{db: db, dialect: d, now: func() time.Time { return time.Now().UTC() }}
	for _, o := range opts {
		o(s)
	}
	blob := "BLOB"
	if d == Postgres {
		blob = "BYTEA"
	}
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS records (
			tenant TEXT NOT NULL,
			kind TEXT NOT NULL,
			id TEXT NOT NULL,
			parent_kind TEXT NOT NULL DEFAULT '',
			parent_id TEXT NOT NULL DEFAULT '',
			rkey TEXT NOT NULL DEFAULT '',
			data ` + blob + ` NOT NULL,
			rev BIGINT NOT NULL,
			created BIGINT NOT NULL,
			updated BIGINT NOT NULL,
			PRIMARY KEY (tenant, kind, id))`,
		`CREATE INDEX IF NOT EXISTS records_by_updated ON records (tenant, kind, updated, id)`,
		// Children of one parent in List order: registrations of one course among a million
		// are a range scan, not a sort. The prefix also serves the cascade of Delete.
		`CREATE INDEX IF NOT EXISTS records_by_parent_kind ON records (tenant, parent_kind, parent_id, kind, updated, id)`,
		`DROP INDEX IF EXISTS records_by_parent`,
		`CREATE INDEX IF NOT EXISTS records_by_key ON records (tenant, kind, rkey, updated, id)`,
	}
	if d == Postgres {
		// Without statistics the planner serves primary-key lookups from records_by_updated and
		// scans a whole kind (30x slower Get, measured); analysing once gives it real costs
		// until autovacuum takes over.
		stmts = append(stmts, `ANALYZE records`)
	}
	if err := migrate(ctx, db, d, stmts); err != nil {
		return nil, s.dbErr(err)
	}
	return s, nil
}

// schemaLockKey is the PostgreSQL advisory lock that serialises schema creation between
// processes ("lectern" in ASCII). CREATE ... IF NOT EXISTS is not safe against a concurrent
// creator: two processes starting on a fresh database both pass the check and one fails on
// pg_type's unique index, so every role starting at once would race without it.
const schemaLockKey = 0x6c656374657266

// migrate runs the schema statements. On PostgreSQL it holds a session advisory lock on one
// dedicated connection for the whole run (as migration tools do), so processes that start
// together create the schema one after the other and the later ones find it there.
func migrate(ctx context.Context, db *sql.DB, d Dialect, stmts []string) error {
	if d != Postgres {
		for _, q := range stmts {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("create record schema: %w", err)
			}
		}
		return nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("create record schema: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(schemaLockKey)); err != nil {
		return fmt.Errorf("create record schema: lock: %w", err)
	}
	// The lock belongs to the session: release it before the connection returns to the pool
	// (closing the connection would release it too, but a pooled connection stays open).
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(schemaLockKey))
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create record schema: %w", err)
		}
	}
	return nil
}

// DB exposes the connection pool for backend-specific maintenance and benchmarks.
func (s *Store) DB() *sql.DB { return s.db }

// prepared is one statement of the store: its text for the backend and, on SQLite, the
// prepared statement.
type prepared struct {
	q  string
	st *sql.Stmt
}

// prep returns the statement for q, rebound and (on SQLite) prepared once per store. The
// SQLite driver otherwise parses and plans every statement on every call: a quarter of a
// player commit's CPU went to sqlite3Prepare (measured). pgx caches prepared statements per
// connection itself, so PostgreSQL only skips the rebind.
func (s *Store) prep(ctx context.Context, q string) *prepared {
	if p, ok := s.stmts.Load(q); ok {
		return p.(*prepared)
	}
	p := &prepared{q: s.rebind(q)}
	if s.dialect == SQLite {
		st, err := s.db.PrepareContext(ctx, p.q)
		if err != nil {
			return p // not cached: the call itself reports the error
		}
		p.st = st
	}
	if got, loaded := s.stmts.LoadOrStore(q, p); loaded {
		if p.st != nil {
			p.st.Close()
		}
		return got.(*prepared)
	}
	return p
}

func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	p := s.prep(ctx, q)
	if p.st != nil {
		return p.st.ExecContext(ctx, args...)
	}
	return s.db.ExecContext(ctx, p.q, args...)
}

func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	p := s.prep(ctx, q)
	if p.st != nil {
		return p.st.QueryContext(ctx, args...)
	}
	return s.db.QueryContext(ctx, p.q, args...)
}

func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	p := s.prep(ctx, q)
	if p.st != nil {
		return p.st.QueryRowContext(ctx, args...)
	}
	return s.db.QueryRowContext(ctx, p.q, args...)
}

// rebind turns ? placeholders into $n for PostgreSQL.
func (s *Store) rebind(q string) string {
	if s.dialect != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func validate(tenant, kind, id string) error {
	if kind == "" || id == "" {
		return fmt.Errorf("%w: kind and id are required", record.ErrInvalid)
	}
	if strings.ContainsRune(tenant+kind+id, 0) {
		return fmt.Errorf("%w: NUL in address", record.ErrInvalid)
	}
	return nil
}

func parentCols(p *record.Ref) (string, string) {
	if p == nil {
		return "", ""
	}
	return p.Kind, p.ID
}

// Create implements record.Store. ON CONFLICT DO NOTHING keeps duplicate detection free of
// driver-specific error codes.
func (s *Store) Create(ctx context.Context, r *record.Record) error {
	if err := validate(r.Tenant, r.Kind, r.ID); err != nil {
		return err
	}
	now := s.now().Truncate(time.Microsecond)
	pk, pid := parentCols(r.Parent)
	data := r.Data
	if data == nil {
		data = json.RawMessage("null")
	}
	res, err := s.exec(ctx, `INSERT INTO records
		(tenant, kind, id, parent_kind, parent_id, rkey, data, rev, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT DO NOTHING`,
		r.Tenant, r.Kind, r.ID, pk, pid, r.Key, []byte(data), micros(now), micros(now))
	if err != nil {
		return fmt.Errorf("create %s %q: %w", r.Kind, r.ID, s.dbErr(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s %q: %w", r.Kind, r.ID, record.ErrConflict)
	}
	r.Rev, r.Created, r.Updated = 1, now, now
	return nil
}

const columns = `tenant, kind, id, parent_kind, parent_id, rkey, data, rev, created, updated`

type scanner interface{ Scan(dest ...any) error }

func scan(row scanner) (*record.Record, error) {
	var r record.Record
	var pk, pid string
	var data []byte
	var created, updated int64
	if err := row.Scan(&r.Tenant, &r.Kind, &r.ID, &pk, &pid, &r.Key, &data, &r.Rev, &created, &updated); err != nil {
		return nil, err
	}
	if pk != "" || pid != "" {
		r.Parent = &record.Ref{Kind: pk, ID: pid}
	}
	r.Data = json.RawMessage(data)
	r.Created, r.Updated = fromMicros(created), fromMicros(updated)
	return &r, nil
}

// Get implements record.Store.
func (s *Store) Get(ctx context.Context, tenant, kind, id string) (*record.Record, error) {
	if err := validate(tenant, kind, id); err != nil {
		return nil, err
	}
	row := s.queryRow(ctx, `SELECT `+columns+` FROM records WHERE tenant = ? AND kind = ? AND id = ?`, tenant, kind, id)
	r, err := scan(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s %q: %w", kind, id, record.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s %q: %w", kind, id, s.dbErr(err))
	}
	return r, nil
}

// Update implements record.Store.
func (s *Store) Update(ctx context.Context, r *record.Record) error {
	if err := validate(r.Tenant, r.Kind, r.ID); err != nil {
		return err
	}
	now := s.now().Truncate(time.Microsecond)
	pk, pid := parentCols(r.Parent)
	data := r.Data
	if data == nil {
		data = json.RawMessage("null")
	}
	res, err := s.exec(ctx, `UPDATE records SET data = ?, rkey = ?, parent_kind = ?, parent_id = ?,
		rev = rev + 1, updated = ? WHERE tenant = ? AND kind = ? AND id = ? AND rev = ?`,
		[]byte(data), r.Key, pk, pid, micros(now), r.Tenant, r.Kind, r.ID, r.Rev)
	if err != nil {
		return fmt.Errorf("update %s %q: %w", r.Kind, r.ID, s.dbErr(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := s.Get(ctx, r.Tenant, r.Kind, r.ID); err != nil {
			return err
		}
		return fmt.Errorf("%s %q at revision %d: %w", r.Kind, r.ID, r.Rev, record.ErrStale)
	}
	r.Rev++
	r.Updated = now
	return nil
}

type cursor struct {
	U int64  `json:"u"`
	I string `json:"i"`
}

func encodeCursor(r *record.Record) string {
	b, _ := json.Marshal(cursor{U: micros(r.Updated), I: r.ID})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (*cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: malformed cursor", record.ErrInvalid)
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.I == "" {
		return nil, fmt.Errorf("%w: malformed cursor", record.ErrInvalid)
	}
	return &c, nil
}

// List implements record.Store. Pages are keyset-paged on (updated, id), so records written
// while a client pages through never make it skip or repeat an unchanged record.
func (s *Store) List(ctx context.Context, q record.Query) (*record.Page, error) {
	if q.Kind == "" {
		return nil, fmt.Errorf("%w: kind is required", record.ErrInvalid)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	if limit > MaxLimit {
		limit = MaxLimit
	}
	where := []string{"tenant = ?", "kind = ?"}
	args := []any{q.Tenant, q.Kind}
	if q.Parent != nil {
		where = append(where, "parent_kind = ?", "parent_id = ?")
		args = append(args, q.Parent.Kind, q.Parent.ID)
	}
	if q.Key != "" {
		where = append(where, "rkey = ?")
		args = append(args, q.Key)
	}
	// One lower bound on updated, the later of Since and the cursor: it is what both planners
	// seek the index to. With the cursor only as "updated > ? OR (updated = ? AND id > ?)"
	// PostgreSQL filtered every index entry before it (a page half-way through a million
	// registrations read 500,000 entries, 216 ms, measured), and with two lower bounds SQLite
	// seeks to the first one (Since) and scans from there (34 ms).
	lower, bounded := int64(0), false
	if !q.Since.IsZero() {
		// Inclusive: a record stamped at exactly Since is part of the result.
		lower, bounded = micros(q.Since.Truncate(time.Microsecond)), true
	}
	var c *cursor
	if q.Cursor != "" {
		var err error
		if c, err = decodeCursor(q.Cursor); err != nil {
			return nil, err
		}
		if !bounded || c.U > lower {
			lower, bounded = c.U, true
		}
	}
	if bounded {
		where = append(where, "updated >= ?")
		args = append(args, lower)
	}
	if c != nil {
		// Past the cursor in (updated, id) order; rows before c.U are already excluded above.
		where = append(where, "(updated > ? OR id > ?)")
		args = append(args, c.U, c.I)
	}
	args = append(args, limit+1)
	rows, err := s.query(ctx, `SELECT `+columns+` FROM records WHERE `+
		strings.Join(where, " AND ")+` ORDER BY updated, id LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", q.Kind, s.dbErr(err))
	}
	defer rows.Close()
	page := &record.Page{}
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", q.Kind, s.dbErr(err))
		}
		page.Records = append(page.Records, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", q.Kind, s.dbErr(err))
	}
	if len(page.Records) > limit {
		page.Records = page.Records[:limit]
		page.Next = encodeCursor(page.Records[limit-1])
	}
	return page, nil
}

// Delete implements record.Store. One recursive statement removes the record and its
// descendants, so a crash can never leave orphans behind.
func (s *Store) Delete(ctx context.Context, tenant, kind, id string) error {
	if kind == "" && id == "" {
		if _, err := s.exec(ctx, `DELETE FROM records WHERE tenant = ?`, tenant); err != nil {
			return fmt.Errorf("delete tenant %q records: %w", tenant, s.dbErr(err))
		}
		return nil
	}
	if err := validate(tenant, kind, id); err != nil {
		return err
	}
	res, err := s.exec(ctx, `WITH RECURSIVE tree(kind, id) AS (
			SELECT kind, id FROM records WHERE tenant = ? AND kind = ? AND id = ?
			UNION
			SELECT r.kind, r.id FROM records r JOIN tree t ON r.parent_kind = t.kind AND r.parent_id = t.id
			WHERE r.tenant = ?)
		DELETE FROM records WHERE tenant = ? AND (kind, id) IN (SELECT kind, id FROM tree)`,
		tenant, kind, id, tenant, tenant)
	if err != nil {
		return fmt.Errorf("delete %s %q: %w", kind, id, s.dbErr(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s %q: %w", kind, id, record.ErrNotFound)
	}
	return nil
}

// Close implements record.Store.
func (s *Store) Close() error {
	s.stmts.Range(func(_, p any) bool {
		if st := p.(*prepared).st; st != nil {
			st.Close()
		}
		return true
	})
	return s.db.Close()
}
