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
	"database/sql"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// DefaultLimit is the page size of Query when the query gives none.
const DefaultLimit = 100

// Store is the SQLite statement store.
type Store struct {
	// db serves reads through the file's memory map; w serves every write; ckpt is the
	// background checkpointer's own connection (see Open).
	db   *sql.DB
	w    *sql.DB
	ckpt *sql.DB
	now  func() time.Time

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

// maxConns is the size of the readers' pool.
const maxConns = 4

// maxWriters is the size of the writers' pool: one writer at a time is SQLite's model, so
// waiting writers queue for the connection (honouring their contexts) instead of sleeping in
// SQLite's busy handler.
const maxWriters = 1

// maxCachedStmts bounds Store.stmts; queries of shapes beyond it are prepared each time.
const maxCachedStmts = 512

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

// Open opens (creating when absent) the statement database file at path.
func Open(path string, opts ...Option) (*Store, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	// The writers' pool does not map the file: the index pages a large batch's inserts and
	// checks read then stay in SQLite's bounded page cache instead of growing the process's
	// RSS by the size of the file (issue 22: eight 50 MB batches mapped 2.7× their size).
	w, err := openPool(path, 0, maxWriters, "immediate")
	if err != nil {
		return nil, err
	}
	for _, stmt := range schema {
		if _, err := w.Exec(stmt); err != nil {
			w.Close()
			return nil, fmt.Errorf("create statement schema in %s: %w", path, err)
		}
	}
	if err := migrateTarget(w); err != nil {
		w.Close()
		return nil, fmt.Errorf("migrate statement schema in %s: %w", path, err)
	}
	if err := migrateReports(w, o.derive); err != nil {
		w.Close()
		return nil, fmt.Errorf("migrate statement schema in %s: %w", path, err)
	}
	db, err := openPool(path, mmapBytes, maxConns, "deferred")
	if err != nil {
		w.Close()
		return nil, err
	}
	// The checkpointer has a connection of its own: on the one writers' connection every
	// checkpoint (two fsyncs) held up the commits queued behind it (BenchmarkPut100's p99
	// rose from 70 to 83–92 ms). PASSIVE runs beside a writer; unmapped for the same reason
	// as the writers'.
	ckpt, err := openPool(path, 0, 1, "deferred")
	if err != nil {
		w.Close()
		db.Close()
		return nil, err
	}
	s := &Store{db: db, w: w, ckpt: ckpt, now: time.Now, stmts: map[string]*sql.Stmt{},
		committed: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go s.checkpointer()
	return s, nil
}

// openPool opens a connection pool on the statement file, mapping mmap bytes of it for reads
// (0: none); txlock is how its transactions begin.
func openPool(path string, mmap int64, conns int, txlock string) (*sql.DB, error) {
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
		"temp_store(MEMORY)", "cache_size(-32768)", fmt.Sprintf("mmap_size(%d)", mmap),
		fmt.Sprintf("wal_autocheckpoint(%d)", backstopCheckpointPages)} {
		q.Add("_pragma", p)
	}
	// BEGIN IMMEDIATE (the writers') takes the write lock up front, so a transaction's
	// read-check-write (hash check, If-Match) cannot interleave with another writer.
	q.Set("_txlock", txlock)
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(conns)
	// As many idle connections as open ones: database/sql keeps 2 by default, so under 4
	// concurrent queries it closed a connection after each burst and the next query paid for
	// a new one (open, pragmas, schema parse: milliseconds, the latency tail of issue 12).
	db.SetMaxIdleConns(conns)
	return db, nil
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

// DB exposes the readers' connection pool for health checks and benchmarks: a ping must not
// wait behind a large batch holding the one writers' connection.
func (s *Store) DB() *sql.DB { return s.db }

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
