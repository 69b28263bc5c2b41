package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
)

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
