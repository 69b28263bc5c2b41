// Package sqlite is the embedded statement store: one SQLite file in WAL mode with a full fsync
// on every commit, so a batch that Put acknowledged survives kill -9 and power loss.
//
// Schema (one file, separate from the record store so statement traffic never waits on
// course-engine writes):
//
//	statements(stored INTEGER PRIMARY KEY, tenant, id, raw, hash, timestamp, voided, voids,
//	           verb, activity, registration, lists, target, result)   UNIQUE(tenant, id)
//	terms(tenant, term, stored)                        PRIMARY KEY, WITHOUT ROWID
//	attachments(tenant, sha2, content_type, data)      PRIMARY KEY(tenant, sha2)
//	documents(tenant, kind, activity_id, agent, registration, doc_id,
//	          content_type, body, etag, updated)       PRIMARY KEY(tenant … doc_id)
//	activities(tenant, id, json)                       PRIMARY KEY(tenant, id)
//
// stored (unix microseconds) is the rowid: the store keeps it unique and strictly increasing,
// so it is at once the xAPI stored order, the keyset cursor and the join key of terms.
// terms is the join table of every filterable value, one row per (statement, value), the
// value prefixed by its role ("a:" agent, "A:" related agent, "o:" object activity,
// "O:" related activity, "v:" verb, "r:" registration, "p:" report actor, "P:" object
// activity and report actor, see report.go); a query walks the (tenant, term, stored) key of
// its most selective filter in stored order and checks the others by key.
//
// target is the statement a StatementRef object points at (statements.Statement.TargetID);
// filtered queries add the statements whose target chain reaches a match (the StatementRef
// rule of statements.Query) with a recursive query over the targeting statements, which are
// found through the partial index statements_targets.
package sqlite

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// DefaultLimit is the page size of Query when the query gives none.
const DefaultLimit = 100

// Store is the SQLite statement store.
type Store struct {
	db  *sql.DB
	now func() time.Time

	// Group commit: concurrent Puts queue in pending; one of them (the leader) writes every
	// queued batch in one transaction, each checked before it writes, so N clients pay one
	// fsync instead of N and one batch's conflict fails only that batch.
	mu      sync.Mutex
	pending []*putReq
	leading bool
	// floor is the latest watermark ConsistentThrough answered (unix µs): statements stamped
	// later are stored after it.
	floor int64

	// Query's prepared statements by SQL text. The text depends only on the query's shape
	// (which filters, window and order) and page size, never on its values, so the cache
	// stays small; each *sql.Stmt is prepared once per connection, so a query pays SQLite's
	// parser and planner (a quarter of a filtered query's CPU) only the first time on a
	// connection.
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt

	// committed wakes the checkpointer after a commit; stop ends it, stopped says it ended.
	committed chan struct{}
	stop      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
}

// maxConns is the size of the connection pool: one writer at a time is SQLite's model; more
// connections only serve concurrent readers.
const maxConns = 4

// maxCachedStmts bounds Store.stmts; queries of shapes beyond it are prepared each time.
const maxCachedStmts = 512

// putReq is one Put waiting for its group's commit.
type putReq struct {
	ctx         context.Context
	tenant      string
	batch       []*statements.Statement
	attachments []*statements.Attachment
	written     []written
	err         error
	done        chan struct{}
}

// Option configures Open.
type Option func(*options)

type options struct {
	derive statements.DeriveReport
}

// WithReportFields gives Open the function that derives the report fields of statements
// stored before the store kept them (see migrateReports). Open fails on such a database
// without it.
func WithReportFields(f statements.DeriveReport) Option {
	return func(o *options) { o.derive = f }
}

var _ statements.Backend = (*Store)(nil)

var schema = []string{
	`CREATE TABLE IF NOT EXISTS statements (
		stored INTEGER PRIMARY KEY,
		tenant TEXT NOT NULL,
		id TEXT NOT NULL,
		raw BLOB NOT NULL,
		hash TEXT NOT NULL,
		timestamp INTEGER,
		voided INTEGER NOT NULL DEFAULT 0,
		voids TEXT NOT NULL DEFAULT '',
		verb TEXT NOT NULL DEFAULT '',
		activity TEXT NOT NULL DEFAULT '',
		registration TEXT NOT NULL DEFAULT '',
		lists BLOB NOT NULL DEFAULT '{}',
		target TEXT NOT NULL DEFAULT '',
		result INTEGER NOT NULL DEFAULT 0,
		UNIQUE (tenant, id))`,
	// Unfiltered queries walk this in stored order.
	`CREATE INDEX IF NOT EXISTS statements_by_tenant ON statements (tenant, stored)`,
	// Finds the voiding statement of a late-arriving target; voiding statements are few.
	`CREATE INDEX IF NOT EXISTS statements_voiding ON statements (tenant, voids) WHERE voids <> ''`,
	`CREATE TABLE IF NOT EXISTS terms (
		tenant TEXT NOT NULL,
		term TEXT NOT NULL,
		stored INTEGER NOT NULL,
		PRIMARY KEY (tenant, term, stored)) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS attachments (
		tenant TEXT NOT NULL,
		sha2 TEXT NOT NULL,
		content_type TEXT NOT NULL,
		data BLOB NOT NULL,
		PRIMARY KEY (tenant, sha2))`,
	`CREATE TABLE IF NOT EXISTS documents (
		tenant TEXT NOT NULL,
		kind TEXT NOT NULL,
		activity_id TEXT NOT NULL,
		agent TEXT NOT NULL,
		registration TEXT NOT NULL,
		doc_id TEXT NOT NULL,
		content_type TEXT NOT NULL,
		body BLOB NOT NULL,
		etag TEXT NOT NULL,
		updated INTEGER NOT NULL,
		PRIMARY KEY (tenant, kind, activity_id, agent, registration, doc_id))`,
	`CREATE TABLE IF NOT EXISTS activities (
		tenant TEXT NOT NULL,
		id TEXT NOT NULL,
		json BLOB NOT NULL,
		PRIMARY KEY (tenant, id))`,
}

// Open opens (creating when absent) the statement database file at path.
func Open(path string, opts ...Option) (*Store, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	q := url.Values{}
	// temp_store(MEMORY) keeps temporary tables and sub-journals off the disk. cache_size
	// (KiB when negative; SQLite's default is 2 MiB) lets a group's index pages stay in memory
	// instead of spilling to the WAL mid-transaction and being read back; it is per connection
	// and grows only as pages are used. mmap_size maps the file for reads (writes still go
	// through the WAL): a page of 25 statements of one learner touches 25 rows spread over the
	// file, and each page missing from the connection's own cache was a pread system call —
	// half of an agent query's time at 100k statements, and its p99. None of these changes
	// what a commit makes durable.
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)",
		"temp_store(MEMORY)", "cache_size(-32768)", fmt.Sprintf("mmap_size(%d)", mmapBytes),
		fmt.Sprintf("wal_autocheckpoint(%d)", backstopCheckpointPages)} {
		q.Add("_pragma", p)
	}
	// BEGIN IMMEDIATE takes the write lock up front, so a transaction's read-check-write
	// (hash check, If-Match) cannot interleave with another writer, and waiting writers queue
	// on busy_timeout instead of failing with SQLITE_BUSY on lock upgrade.
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(maxConns)
	// As many idle connections as open ones: database/sql keeps 2 by default, so under 4
	// concurrent queries it closed a connection after each burst and the next query paid for
	// a new one (open, pragmas, schema parse: milliseconds, the latency tail of issue 12).
	db.SetMaxIdleConns(maxConns)
	for _, stmt := range schema {
		if _, err := db.Exec(stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("create statement schema in %s: %w", path, err)
		}
	}
	if err := migrateTarget(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate statement schema in %s: %w", path, err)
	}
	if err := migrateReports(db, o.derive); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate statement schema in %s: %w", path, err)
	}
	s := &Store{db: db, now: time.Now, stmts: map[string]*sql.Stmt{},
		committed: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go s.checkpointer()
	return s, nil
}

// mmapBytes is how much of the statement file SQLite maps for reads: its compile-time
// maximum (SQLITE_MAX_MMAP_SIZE, just under 2 GiB; larger values are clamped), about a
// million statements. Beyond it reads fall back to pread.
const mmapBytes = 0x7fff0000

// backstopCheckpointPages is the WAL size (pages) at which a committing writer checkpoints
// itself, should the background checkpointer fall behind. SQLite's default, 1,000, put a
// checkpoint (copying the WAL into the database, two fsyncs) inside every few commits: a
// sixth of ingest time at 100k statements, spent while the writer lock was held.
const backstopCheckpointPages = 20_000

// checkpointInterval is the least time between two background checkpoints: pages rewritten
// within it (the hot leaves of the terms index) are copied into the database once.
const checkpointInterval = 200 * time.Millisecond

// checkpointer copies committed WAL frames into the database file in the background, after
// commits, at most every checkpointInterval. PASSIVE never waits for or blocks readers and
// writers, so commits go on while it runs. Durability does not depend on it: a commit is
// durable once its WAL frames are fsynced.
func (s *Store) checkpointer() {
	defer close(s.stopped)
	t := time.NewTimer(checkpointInterval)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.committed:
		}
		// A failed checkpoint is retried after the next commit; the backstop bounds the WAL.
		_, _ = s.db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		t.Reset(checkpointInterval)
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// migrateTarget adds the target column to a database created before it existed, filling it
// from the stored statements' StatementRef objects, and creates its index.
func migrateTarget(db *sql.DB) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var has bool
	if err := tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM pragma_table_info('statements') WHERE name = 'target')`).Scan(&has); err != nil {
		return err
	}
	if !has {
		// raw is a BLOB holding JSON text; the cast keeps json_extract from reading it as JSONB.
		for _, stmt := range []string{
			`ALTER TABLE statements ADD COLUMN target TEXT NOT NULL DEFAULT ''`,
			`UPDATE statements SET target = lower(json_extract(CAST(raw AS TEXT), '$.object.id'))
				WHERE json_extract(CAST(raw AS TEXT), '$.object.objectType') = 'StatementRef'
				AND json_type(CAST(raw AS TEXT), '$.object.id') = 'text'`,
			`UPDATE statements SET target = voids WHERE target = '' AND voids <> ''`,
		} {
			if _, err := tx.Exec(stmt); err != nil {
				return err
			}
		}
	}
	// Finds the statements targeting a statement, and every targeting statement of a tenant.
	if _, err := tx.Exec(`CREATE INDEX IF NOT EXISTS statements_targets ON statements (tenant, target) WHERE target <> ''`); err != nil {
		return err
	}
	return tx.Commit()
}

// ConsistentThrough implements statements.Store. SQLite reads what is committed, so with no
// batch being written the answer is now (and later stamps are raised above it); while a
// group is being written, its statements are stamped after everything committed, so the
// answer is the latest committed stored instant (or an earlier answer, if later).
func (s *Store) ConsistentThrough(ctx context.Context) (time.Time, error) {
	s.mu.Lock()
	if !s.leading {
		t := max(micros(s.now()), s.floor)
		s.floor = t
		s.mu.Unlock()
		return fromMicros(t), nil
	}
	floor := s.floor
	s.mu.Unlock()
	var last int64
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(stored), 0) FROM statements`).Scan(&last); err != nil {
		return time.Time{}, fmt.Errorf("consistent through: %w", err)
	}
	return fromMicros(max(last, floor)), nil
}

// DB exposes the connection pool for maintenance and benchmarks.
func (s *Store) DB() *sql.DB { return s.db }

// Close implements statements.Store.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.stopped
	})
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = map[string]*sql.Stmt{}
	s.stmtMu.Unlock()
	return s.db.Close()
}

// query runs a read through the prepared statement of its SQL text (see Store.stmts).
func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s.stmtMu.Lock()
	st, ok := s.stmts[query]
	s.stmtMu.Unlock()
	if !ok {
		var err error
		if st, err = s.db.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		s.stmtMu.Lock()
		if prev, raced := s.stmts[query]; raced {
			st.Close()
			st = prev
		} else if len(s.stmts) < maxCachedStmts {
			s.stmts[query] = st
		} else {
			s.stmtMu.Unlock()
			defer st.Close()
			return st.QueryContext(ctx, args...)
		}
		s.stmtMu.Unlock()
	}
	return st.QueryContext(ctx, args...)
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// lists keeps the multi-valued fields so Get and Query return the statement as it was put;
// the filterable copies live in terms.
type lists struct {
	Agents            []string `json:"a,omitempty"`
	RelatedAgents     []string `json:"ra,omitempty"`
	RelatedActivities []string `json:"ro,omitempty"`
	AttachmentHashes  []string `json:"h,omitempty"`
	// ReportActors are the statement's report actors, read back by the actors report.
	ReportActors []statements.ReportActor `json:"p,omitempty"`
}

// terms returns the filter values of st, deduplicated. The broad sets include the narrow
// values, so related_agents / related_activities never miss what the narrow filter finds.
func terms(st *statements.Statement) []string {
	var out []string
	add := func(prefix string, vals ...string) {
		for _, v := range vals {
			if v != "" {
				out = append(out, prefix+v)
			}
		}
	}
	add("a:", st.Agents...)
	add("A:", st.Agents...)
	add("A:", st.RelatedAgents...)
	add("o:", st.Activity)
	add("O:", st.Activity)
	add("O:", st.RelatedActivities...)
	add("v:", st.VerbID)
	add("r:", st.Registration)
	for _, a := range st.ReportActors {
		add("p:", a.IFI)
		if st.Activity != "" {
			add("P:", st.Activity+pairSep+a.IFI)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func validStatement(tenant string, st *statements.Statement) error {
	switch {
	case st == nil:
		return fmt.Errorf("%w: nil statement", statements.ErrInvalid)
	case st.ID == "":
		return fmt.Errorf("%w: statement without id", statements.ErrInvalid)
	case st.Tenant != "" && st.Tenant != tenant:
		return fmt.Errorf("%w: statement %s belongs to tenant %q, not %q", statements.ErrInvalid, st.ID, st.Tenant, tenant)
	case len(st.Raw) == 0:
		return fmt.Errorf("%w: statement %s without JSON", statements.ErrInvalid, st.ID)
	}
	return nil
}

// Put implements statements.Store. It returns once the transaction holding the batch has
// committed (synchronous=FULL: the WAL is fsynced), so a batch that answered success
// survives a crash of the process or of the machine.
func (s *Store) Put(ctx context.Context, tenant string, batch []*statements.Statement, attachments []*statements.Attachment) error {
	for _, st := range batch {
		if err := validStatement(tenant, st); err != nil {
			return err
		}
	}
	req := &putReq{ctx: ctx, tenant: tenant, batch: batch, attachments: attachments, done: make(chan struct{})}
	s.mu.Lock()
	s.pending = append(s.pending, req)
	lead := !s.leading
	s.leading = true
	s.mu.Unlock()
	if lead {
		s.lead(ctx)
	}
	<-req.done
	if req.err != nil {
		return req.err
	}
	// Written back only after commit, so a failed batch leaves the caller's values untouched.
	for _, w := range req.written {
		w.st.Tenant, w.st.Stored, w.st.Raw, w.st.Voided = tenant, w.stored, w.raw, w.voided
	}
	return nil
}

// lead commits queued groups until the queue is empty, then gives up the lead.
func (s *Store) lead(ctx context.Context) {
	for {
		s.mu.Lock()
		group := s.pending
		s.pending = nil
		if len(group) == 0 {
			s.leading = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.commitGroup(context.WithoutCancel(ctx), group)
	}
}

// commitGroup writes the group's batches in one transaction and reports to each. Each batch
// is checked before any of its rows is written (putTx), so a batch that conflicts is refused
// without a write and needs no savepoint to undo; a SAVEPOINT per batch used to cost a
// sub-journal copy of every page the next batch touched again, a fifth of ingest at 100k.
// An error while writing (I/O, a full disk) fails the whole group: the transaction is rolled
// back and every client of the group gets the error, so nothing is half-written.
func (s *Store) commitGroup(ctx context.Context, group []*putReq) {
	finish := func(err error) {
		for _, r := range group {
			if r.err == nil && err != nil {
				r.err, r.written = err, nil
			}
			close(r.done)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		finish(fmt.Errorf("put statements: %w", err))
		return
	}
	defer tx.Rollback()
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			continue
		}
		var wrote bool
		r.written, wrote, r.err = s.putTx(ctx, tx, r.tenant, r.batch, r.attachments)
		if r.err != nil && wrote {
			finish(r.err)
			return
		}
	}
	if err := tx.Commit(); err != nil {
		finish(fmt.Errorf("put statements: commit: %w", err))
		return
	}
	finish(nil)
	select {
	case s.committed <- struct{}{}:
	default:
	}
}

type written struct {
	st     *statements.Statement
	stored time.Time
	raw    json.RawMessage
	voided bool
}

// putTx writes one batch in tx: first every check (conflicts, invalid attachments) with reads
// only, then the writes. wrote reports whether an error came after the first write, when only
// rolling back the transaction undoes the batch. ctx must not be a client's: an interrupted
// write rolls back SQLite's whole transaction, the other batches of the group with it.
func (s *Store) putTx(ctx context.Context, tx *sql.Tx, tenant string, batch []*statements.Statement, attachments []*statements.Attachment) (out []written, wrote bool, err error) {
	fail := func(err error) ([]written, bool, error) { return nil, wrote, fmt.Errorf("put statements: %w", err) }
	for _, a := range attachments {
		if a == nil || a.SHA2 == "" {
			return nil, false, fmt.Errorf("%w: attachment without sha2", statements.ErrInvalid)
		}
	}
	// The write lock is held, so max(stored) cannot move until commit.
	var last int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(stored), 0) FROM statements`).Scan(&last); err != nil {
		return fail(err)
	}
	s.mu.Lock()
	last = max(last, s.floor)
	s.mu.Unlock()
	check, err := tx.PrepareContext(ctx, `SELECT
		(SELECT hash FROM statements WHERE tenant = ? AND id = ?),
		EXISTS (SELECT 1 FROM statements WHERE tenant = ? AND voids = ? AND voids <> '')`)
	if err != nil {
		return fail(err)
	}
	defer check.Close()

	// Checks: reads only, so a refused batch has written nothing.
	inBatch := map[string]string{} // id → hash of the batch's statements so far
	voidedInBatch := map[string]bool{}
	for _, st := range batch {
		if h, ok := inBatch[st.ID]; ok {
			if h != st.Hash {
				return nil, false, fmt.Errorf("statement %s twice in one batch: %w", st.ID, statements.ErrConflict)
			}
			continue
		}
		inBatch[st.ID] = st.Hash
		var existing sql.NullString
		var voidedBefore bool
		if err := check.QueryRowContext(ctx, tenant, st.ID, tenant, st.ID).Scan(&existing, &voidedBefore); err != nil {
			return fail(err)
		}
		if existing.Valid {
			if existing.String != st.Hash {
				return nil, false, fmt.Errorf("statement %s: %w", st.ID, statements.ErrConflict)
			}
			continue
		}
		base := st.Stored
		if base.IsZero() {
			base = s.now()
		}
		stored := max(micros(base), last+1)
		last = stored
		// An earlier statement of the batch voiding this one counts as stored before it.
		voided := st.Voids == "" && (voidedBefore || voidedInBatch[st.ID])
		if st.Voids != "" {
			voidedInBatch[st.Voids] = true
		}
		out = append(out, written{st: st, stored: fromMicros(stored), voided: voided})
	}

	ins, err := tx.PrepareContext(ctx, `INSERT INTO statements
		(stored, tenant, id, raw, hash, timestamp, voided, voids, verb, activity, registration, lists, target, result)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fail(err)
	}
	defer ins.Close()
	// The batch's filter terms, written with multi-row INSERTs after the statements: one
	// statement execution per termChunk rows instead of one per term.
	var termRows []any
	wrote = true
	for i := range out {
		w := &out[i]
		st := w.st
		stored := micros(w.stored)
		w.raw = statements.SetStored(st.Raw, w.stored)
		var ts any
		if !st.Timestamp.IsZero() {
			ts = micros(st.Timestamp)
		}
		l, _ := json.Marshal(lists{st.Agents, st.RelatedAgents, st.RelatedActivities, st.AttachmentHashes, st.ReportActors})
		if _, err := ins.ExecContext(ctx, stored, tenant, st.ID, []byte(w.raw), st.Hash, ts, w.voided,
			st.Voids, st.VerbID, st.Activity, st.Registration, l, st.TargetID(), st.Result); err != nil {
			return fail(err)
		}
		for _, term := range terms(st) {
			termRows = append(termRows, tenant, term, stored)
		}
	}
	if err := insertTerms(ctx, tx, termRows); err != nil {
		return fail(err)
	}
	// After all inserts, so a target anywhere in the batch is found too (voidedBefore only
	// sees statements stored earlier); a voiding statement (voids <> '') is never voided.
	for _, w := range out {
		if w.st.Voids == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE statements SET voided = 1 WHERE tenant = ? AND id = ? AND voids = ''`,
			tenant, w.st.Voids); err != nil {
			return fail(err)
		}
	}
	for _, a := range attachments {
		// Content-addressed: an attachment already stored under this sha2 is the same bytes.
		if _, err := tx.ExecContext(ctx, `INSERT INTO attachments (tenant, sha2, content_type, data)
			VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, tenant, a.SHA2, a.ContentType, nonNil(a.Data)); err != nil {
			return fail(err)
		}
	}
	return out, true, nil
}

// termChunk rows per INSERT keep the bound parameters (3 a row) far below SQLite's limit.
const termChunk = 300

// insertTerms inserts rows (tenant, term, stored triples) in multi-row INSERTs.
func insertTerms(ctx context.Context, tx *sql.Tx, rows []any) error {
	for len(rows) > 0 {
		n := min(len(rows)/3, termChunk)
		// OR IGNORE changes no outcome (a statement's terms are distinct and its stored instant
		// is new), but a multi-row INSERT that may abort makes SQLite copy every page it
		// touches into a statement journal first, in case a later row fails: a quarter of the
		// term writes' CPU at 100k statements.
		q := `INSERT OR IGNORE INTO terms (tenant, term, stored) VALUES (?, ?, ?)` + strings.Repeat(`, (?, ?, ?)`, n-1)
		if _, err := tx.ExecContext(ctx, q, rows[:n*3]...); err != nil {
			return err
		}
		rows = rows[n*3:]
	}
	return nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

const stmtColumns = `s.stored, s.tenant, s.id, s.raw, s.hash, s.timestamp, s.voided, s.voids, s.verb, s.activity, s.registration, s.lists, s.target, s.result`

type scanner interface{ Scan(dest ...any) error }

func scanStatement(row scanner) (*statements.Statement, error) {
	var raw, l []byte
	st, err := scanStatementRaw(row, &raw, &l)
	if err != nil {
		return nil, err
	}
	st.Raw = json.RawMessage(raw)
	return st, decodeLists(st, l)
}

// rawBuffer holds the raw JSON of one page's statements in a few large blocks instead of an
// allocation per statement.
type rawBuffer struct{ block []byte }

// rawBlock is the size of a rawBuffer block: a page of 25 realistic statements fits in one.
const rawBlock = 64 << 10

// keep copies b (driver memory, valid until the next row) into the buffer.
func (r *rawBuffer) keep(b []byte) []byte {
	if len(b) > cap(r.block)-len(r.block) {
		r.block = make([]byte, 0, max(rawBlock, len(b)))
	}
	n := len(r.block)
	r.block = append(r.block, b...)
	return r.block[n:len(r.block):len(r.block)]
}

// scanStatementInto is scanStatement for the rows of a page: raw and lists are read without
// database/sql's copy (sql.RawBytes; *sql.Row does not allow it, so Get keeps scanStatement)
// and the raw JSON is copied once into buf.
func scanStatementInto(rows *sql.Rows, buf *rawBuffer) (*statements.Statement, error) {
	var raw, l sql.RawBytes
	st, err := scanStatementRaw(rows, &raw, &l)
	if err != nil {
		return nil, err
	}
	st.Raw = json.RawMessage(buf.keep(raw))
	return st, decodeLists(st, l)
}

// scanStatementRaw scans a row of stmtColumns but for decoding lists; raw and l are *[]byte
// or *sql.RawBytes.
func scanStatementRaw(row scanner, raw, l any) (*statements.Statement, error) {
	var st statements.Statement
	var stored int64
	var ts sql.NullInt64
	if err := row.Scan(&stored, &st.Tenant, &st.ID, raw, &st.Hash, &ts, &st.Voided, &st.Voids,
		&st.VerbID, &st.Activity, &st.Registration, l, &st.Target, &st.Result); err != nil {
		return nil, err
	}
	st.Stored = fromMicros(stored)
	if ts.Valid {
		st.Timestamp = fromMicros(ts.Int64)
	}
	return &st, nil
}

// Get implements statements.Store.
func (s *Store) Get(ctx context.Context, tenant, id string) (*statements.Statement, error) {
	st, err := scanStatement(s.db.QueryRowContext(ctx, `SELECT `+stmtColumns+` FROM statements s WHERE s.tenant = ? AND s.id = ?`, tenant, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("statement %s: %w", id, statements.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get statement %s: %w", id, err)
	}
	return st, nil
}

// cursor continues a query after the statement stored at S. F fingerprints the filters, so a
// cursor replayed with other filters is rejected rather than silently paging something else.
type cursor struct {
	S int64  `json:"s"`
	F string `json:"f"`
}

func fingerprint(q statements.Query) string {
	h := sha256.New()
	for _, v := range []string{q.Tenant, q.Agent, q.Verb, q.Activity, q.Registration,
		strconv.FormatBool(q.RelatedActivities), strconv.FormatBool(q.RelatedAgents), strconv.FormatBool(q.Ascending),
		strconv.FormatBool(q.IncludeVoided)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(v)))
		h.Write(n[:])
		h.Write([]byte(v))
	}
	for _, t := range []time.Time{q.Since, q.Until} {
		h.Write([]byte(strconv.FormatInt(boundMicros(t), 10) + ";"))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}

// boundMicros truncates a since/until bound to the store's microsecond grid: with stored in
// whole microseconds, stored > since ⇔ stored > floor(since) and stored <= until ⇔
// stored <= floor(until).
func boundMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Truncate(time.Microsecond).UnixMicro()
}

// queryTerms lists the query's filters as terms, most selective first: the first one drives
// the index walk. A registration usually has a handful of statements, an agent a few hundred,
// an activity more, a verb a large share of the store.
func queryTerms(q statements.Query) []string {
	var t []string
	if q.Registration != "" {
		t = append(t, "r:"+q.Registration)
	}
	if q.Agent != "" {
		if q.RelatedAgents {
			t = append(t, "A:"+q.Agent)
		} else {
			t = append(t, "a:"+q.Agent)
		}
	}
	if q.Activity != "" {
		if q.RelatedActivities {
			t = append(t, "O:"+q.Activity)
		} else {
			t = append(t, "o:"+q.Activity)
		}
	}
	if q.Verb != "" {
		t = append(t, "v:"+q.Verb)
	}
	return t
}

// buildQuery returns the SQL and arguments of one page (limit+1 rows, to know whether more follow).
//
// The limit is written into the SQL rather than bound: a bound LIMIT of the inner page makes
// SQLite re-prepare the statement on every execution (its planner used the bound value), which
// cost as much as running it; as a literal, the prepared statement of Store.stmts is reused.
//
// Without filters it walks (tenant, stored). With filters, the statements matching them (walked
// through the driving term's key in stored order) are merged, in stored order, with those
// matching through the StatementRef rule: the recursive h holds every statement of the
// tenant whose target chain reaches a statement meeting the filters (voided or not). h is
// built from the tenant's targeting statements (statements_targets), so a filtered query also
// costs in proportion to the number of statements with a StatementRef object (voiding ones
// included); the time window and cursor apply to the returned statements only.
func buildQuery(q statements.Query, after int64, limit int) (string, []any) {
	var b strings.Builder
	var args []any
	order := "DESC"
	if q.Ascending {
		order = "ASC"
	}
	// window appends the voided, since, until and cursor conditions on key.
	window := func(key string) {
		if !q.IncludeVoided {
			b.WriteString(` AND s.voided = 0`)
		}
		if !q.Since.IsZero() {
			b.WriteString(` AND ` + key + ` > ?`)
			args = append(args, boundMicros(q.Since))
		}
		if !q.Until.IsZero() {
			b.WriteString(` AND ` + key + ` <= ?`)
			args = append(args, boundMicros(q.Until))
		}
		if after != 0 {
			if q.Ascending {
				b.WriteString(` AND ` + key + ` > ?`)
			} else {
				b.WriteString(` AND ` + key + ` < ?`)
			}
			args = append(args, after)
		}
	}
	ts := queryTerms(q)
	if len(ts) == 0 {
		b.WriteString(`SELECT ` + stmtColumns + ` FROM statements s WHERE s.tenant = ?`)
		args = append(args, q.Tenant)
		window("s.stored")
		b.WriteString(` ORDER BY s.stored ` + order + ` LIMIT ` + strconv.Itoa(limit+1))
		return b.String(), args
	}
	// matches appends the conditions "the statement stored at key has every filter term".
	matches := func(key string, terms []string) {
		for _, term := range terms {
			b.WriteString(` AND EXISTS (SELECT 1 FROM terms u WHERE u.tenant = ? AND u.term = ? AND u.stored = ` + key + `)`)
			args = append(args, q.Tenant, term)
		}
	}
	b.WriteString(`WITH RECURSIVE h(stored, id) AS (
		SELECT s.stored, s.id FROM statements s CROSS JOIN statements x ON x.tenant = s.tenant AND x.id = s.target
			WHERE s.tenant = ? AND s.target <> ''`)
	args = append(args, q.Tenant)
	matches("x.stored", ts)
	b.WriteString(`
		UNION
		SELECT s.stored, s.id FROM h CROSS JOIN statements s ON s.tenant = ? AND s.target = h.id AND s.target <> '')
	SELECT ` + stmtColumns + ` FROM (`)
	args = append(args, q.Tenant)
	// CROSS JOIN fixes the join order: walk the driving term's key in stored order, then
	// fetch each statement by rowid.
	b.WriteString(`SELECT t.stored AS stored FROM terms t CROSS JOIN statements s ON s.stored = t.stored
			WHERE t.tenant = ? AND t.term = ?`)
	args = append(args, q.Tenant, ts[0])
	matches("t.stored", ts[1:])
	window("t.stored")
	b.WriteString(`
		UNION
		SELECT s.stored FROM h CROSS JOIN statements s ON s.stored = h.stored WHERE 1`)
	window("s.stored")
	b.WriteString(`
		ORDER BY 1 ` + order + ` LIMIT ` + strconv.Itoa(limit+1) + `) p CROSS JOIN statements s ON s.stored = p.stored ORDER BY s.stored ` + order)
	return b.String(), args
}

// Query implements statements.Store. Pages are keyset-paged on stored: a statement stored
// while a client pages has a larger stored than every earlier one, so it never shifts a page
// boundary; it appears at the end of an ascending walk and never in a descending one.
func (s *Store) Query(ctx context.Context, q statements.Query) (*statements.Page, error) {
	limit := q.Limit
	switch {
	case limit < 0:
		return nil, fmt.Errorf("%w: negative limit", statements.ErrInvalid)
	case limit == 0:
		limit = DefaultLimit
	case limit > statements.MaxLimit:
		limit = statements.MaxLimit
	}
	fp := fingerprint(q)
	var after int64
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		var c cursor
		if err != nil || json.Unmarshal(b, &c) != nil || c.S == 0 {
			return nil, fmt.Errorf("%w: malformed cursor", statements.ErrInvalid)
		}
		if c.F != fp {
			return nil, fmt.Errorf("%w: cursor belongs to another query", statements.ErrInvalid)
		}
		after = c.S
	}
	// Taken before the read, which sees every commit up to it.
	through, err := s.ConsistentThrough(ctx)
	if err != nil {
		return nil, err
	}
	query, args := buildQuery(q, after, limit)
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query statements: %w", err)
	}
	defer rows.Close()
	page := &statements.Page{ConsistentThrough: through, Statements: make([]*statements.Statement, 0, min(limit+1, 128))}
	var buf rawBuffer
	for rows.Next() {
		st, err := scanStatementInto(rows, &buf)
		if err != nil {
			return nil, fmt.Errorf("query statements: %w", err)
		}
		page.Statements = append(page.Statements, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query statements: %w", err)
	}
	if len(page.Statements) > limit {
		page.Statements = page.Statements[:limit]
		b, _ := json.Marshal(cursor{S: micros(page.Statements[limit-1].Stored), F: fp})
		page.Next = base64.RawURLEncoding.EncodeToString(b)
	}
	return page, nil
}

// Attachments implements statements.Store.
func (s *Store) Attachments(ctx context.Context, tenant string, sha2 []string) ([]*statements.Attachment, error) {
	var out []*statements.Attachment
	for _, h := range slices.Compact(slices.Sorted(slices.Values(sha2))) {
		var a statements.Attachment
		err := s.db.QueryRowContext(ctx, `SELECT sha2, content_type, data FROM attachments WHERE tenant = ? AND sha2 = ?`,
			tenant, h).Scan(&a.SHA2, &a.ContentType, &a.Data)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get attachment %s: %w", h, err)
		}
		out = append(out, &a)
	}
	return out, nil
}

// PurgeTenant implements statements.Store, in one transaction so a crash never leaves half a tenant.
func (s *Store) PurgeTenant(ctx context.Context, tenant string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("purge tenant %q: %w", tenant, err)
	}
	defer tx.Rollback()
	for _, table := range []string{"terms", "statements", "attachments", "documents", "activities"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE tenant = ?`, tenant); err != nil {
			return fmt.Errorf("purge tenant %q from %s: %w", tenant, table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("purge tenant %q: %w", tenant, err)
	}
	return nil
}

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
	tx, err := s.db.BeginTx(ctx, nil)
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
	tx, err := s.db.BeginTx(ctx, nil)
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
	if _, err := s.db.ExecContext(ctx, `DELETE FROM documents WHERE `+docWhere, docArgs(key)...); err != nil {
		return fmt.Errorf("delete documents: %w", err)
	}
	return nil
}

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
