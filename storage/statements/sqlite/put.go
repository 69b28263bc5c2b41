package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
)

// putReq is one Put waiting for its group's commit.
type putReq struct {
	ctx         context.Context
	tenant      string
	batch       []*statements.Statement
	attachments []*statements.Attachment
	// chunks, when set, is a PutChunks batch, written in a transaction of its own.
	chunks  statements.Chunks
	written []written
	err     error
	done    chan struct{}
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
	if err := s.queue(ctx, req); err != nil {
		return err
	}
	// Written back only after commit, so a failed batch leaves the caller's values untouched.
	for _, w := range req.written {
		w.st.Tenant, w.st.Stored, w.st.Raw, w.st.Voided = tenant, w.stored, w.raw, w.voided
	}
	return nil
}

// PutChunks implements statements.Store. The batch is written in a transaction of its own
// (not grouped with other Puts), chunk by chunk as chunks hands them over: a failure anywhere
// rolls the whole batch back, and only one chunk of it is in memory at a time.
func (s *Store) PutChunks(ctx context.Context, tenant string, chunks statements.Chunks, attachments []*statements.Attachment) error {
	return s.queue(ctx, &putReq{ctx: ctx, tenant: tenant, chunks: chunks, attachments: attachments, done: make(chan struct{})})
}

// queue hands req to the group commit and waits for its outcome.
func (s *Store) queue(ctx context.Context, req *putReq) error {
	s.mu.Lock()
	s.pending = append(s.pending, req)
	lead := !s.leading
	s.leading = true
	s.mu.Unlock()
	if lead {
		s.lead(ctx)
	}
	<-req.done
	return req.err
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
		var plain []*putReq
		for _, r := range group {
			if r.chunks == nil {
				plain = append(plain, r)
			}
		}
		if len(plain) > 0 {
			s.commitGroup(context.WithoutCancel(ctx), plain)
		}
		for _, r := range group {
			if r.chunks != nil {
				r.err = s.commitChunks(context.WithoutCancel(ctx), r)
				close(r.done)
			}
		}
	}
}

// commitChunks writes a PutChunks batch in one transaction: each chunk is checked and written
// (putTx) as it comes, its values written back at once, and any error rolls everything back.
// A later chunk sees the earlier ones in the transaction, so an id repeated across chunks and
// a voider before its target in the batch behave as within one putTx.
func (s *Store) commitChunks(ctx context.Context, r *putReq) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("put statements: %w", err)
	}
	defer tx.Rollback()
	if len(r.attachments) > 0 {
		if _, _, err := s.putTx(ctx, tx, r.tenant, nil, r.attachments); err != nil {
			return err
		}
	}
	err = r.chunks(func(chunk []*statements.Statement) error {
		for _, st := range chunk {
			if err := validStatement(r.tenant, st); err != nil {
				return err
			}
		}
		out, _, err := s.putTx(ctx, tx, r.tenant, chunk, nil)
		if err != nil {
			return err
		}
		for _, w := range out {
			w.st.Tenant, w.st.Stored, w.st.Raw, w.st.Voided = r.tenant, w.stored, w.raw, w.voided
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("put statements: commit: %w", err)
	}
	select {
	case s.committed <- struct{}{}:
	default:
	}
	return nil
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
	tx, err := s.w.BeginTx(ctx, nil)
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
	// The batch's filter terms, written with multi-row INSERTs of termChunk rows: one
	// statement execution per termChunk rows instead of one per term. They are written as
	// soon as a chunk is full, not gathered for the whole batch: a boxed row costs more memory
	// than the statement it indexes, so a 50 MB batch held its terms at 1.5 times its size.
	termRows := make([]any, 0, 3*termChunk)
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
		if len(termRows) >= 3*termChunk {
			n := len(termRows) / (3 * termChunk) * 3 * termChunk
			if err := insertTerms(ctx, tx, termRows[:n]); err != nil {
				return fail(err)
			}
			termRows = append(termRows[:0], termRows[n:]...)
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
