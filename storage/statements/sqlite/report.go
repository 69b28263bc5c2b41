package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lectern-lms/lectern/storage/statements"
)

// The reports are index walks over terms, never scans of the tenant's statements:
//
//   - results walks the key of its agent ("a:") or activity ("o:") term in stored order,
//     as Query does, keeping statements with result = 1;
//   - activities and actors without a filter are loose index scans: the next distinct
//     "o:<activity>" or "p:<ifi>" term after the previous one is one seek in the (tenant,
//     term, stored) key, so a page of n costs n seeks whatever the number of statements; the
//     actors of one activity are a loose scan of the pair terms "P:<activity> <ifi>" (activity
//     ids are IRIs, which never contain a space);
//   - with an agent (activities) or a viewer (the read rule), the walk starts from that
//     agent's term and groups its statements, which are few.
//
// A distinct term counts when a non-voided statement carries it; the actors report shows an
// actor as its most recently stored non-voided statement gives it.

// pairSep separates the activity and the IFI of a "P:" term.
const pairSep = " "

// migrateReports adds the result column to a database created before the reports kept their
// fields, and fills result, the report actors (lists.p) and their terms of every stored
// statement with derive, in one transaction.
func migrateReports(db *sql.DB, derive statements.DeriveReport) error {
	var has bool
	if err := db.QueryRow(`SELECT EXISTS (SELECT 1 FROM pragma_table_info('statements') WHERE name = 'result')`).Scan(&has); err != nil {
		return err
	}
	if has {
		return nil
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`ALTER TABLE statements ADD COLUMN result INTEGER NOT NULL DEFAULT 0`); err != nil {
		return err
	}
	var any bool
	if err := tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM statements WHERE activity <> '')`).Scan(&any); err != nil {
		return err
	}
	if any && derive == nil {
		return errors.New("statements stored before the report fields need sqlite.WithReportFields to migrate")
	}
	// In keyset batches, so memory stays bounded whatever the number of statements.
	type row struct {
		stored           int64
		tenant, activity string
		raw, lists       []byte
	}
	for last := int64(-1 << 63); ; {
		rows, err := tx.Query(`SELECT stored, tenant, raw, activity, lists FROM statements
			WHERE stored > ? AND activity <> '' ORDER BY stored LIMIT 1000`, last)
		if err != nil {
			return err
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.stored, &r.tenant, &r.raw, &r.activity, &r.lists); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(batch) == 0 {
			break
		}
		last = batch[len(batch)-1].stored
		for _, r := range batch {
			if err := migrateReportRow(tx, derive, r.stored, r.tenant, r.activity, r.raw, r.lists); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

// migrateReportRow fills the report fields of the statement stored at stored.
func migrateReportRow(tx *sql.Tx, derive statements.DeriveReport, stored int64, tenant, activity string, raw, l []byte) error {
	result, actors, err := derive(raw)
	if err != nil {
		return fmt.Errorf("statement stored at %d: %w", stored, err)
	}
	var ls lists
	if err := json.Unmarshal(l, &ls); err != nil {
		return fmt.Errorf("statement stored at %d: corrupt lists: %w", stored, err)
	}
	ls.ReportActors = actors
	b, _ := json.Marshal(ls)
	if _, err := tx.Exec(`UPDATE statements SET result = ?, lists = ? WHERE stored = ?`, result, b, stored); err != nil {
		return err
	}
	st := &statements.Statement{Activity: activity, ReportActors: actors}
	for _, term := range terms(st) {
		if strings.HasPrefix(term, "p:") || strings.HasPrefix(term, "P:") {
			if _, err := tx.Exec(`INSERT OR IGNORE INTO terms (tenant, term, stored) VALUES (?, ?, ?)`, tenant, term, stored); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReportResults implements statements.Reports.
func (s *Store) ReportResults(ctx context.Context, q statements.ReportQuery) (*statements.ReportPage[*statements.Statement], error) {
	limit := statements.ReportLimit(q)
	var after int64
	if err := statements.DecodeReportCursor("results", q, &after); err != nil {
		return nil, err
	}
	query, args := resultsSQL(q, after, limit)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("report results: %w", err)
	}
	defer rows.Close()
	page := &statements.ReportPage[*statements.Statement]{}
	for rows.Next() {
		st, err := scanStatement(rows)
		if err != nil {
			return nil, fmt.Errorf("report results: %w", err)
		}
		page.Items = append(page.Items, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("report results: %w", err)
	}
	if len(page.Items) > limit {
		page.Items = page.Items[:limit]
		page.Next = statements.EncodeReportCursor("results", q, micros(page.Items[limit-1].Stored))
	}
	return page, nil
}

// resultsSQL is the query of one results page (limit+1 rows) after the stored instant after.
func resultsSQL(q statements.ReportQuery, after int64, limit int) (string, []any) {
	var b strings.Builder
	var args []any
	var checks []string
	// key is the column the walk is ordered by: the driving term's stored, so SQLite walks
	// that key backwards and stops after limit+1 rows instead of sorting every match.
	key := "s.stored"
	if q.Agent != "" {
		checks = append(checks, "a:"+q.Agent)
	}
	if q.Activity != "" {
		checks = append(checks, "o:"+q.Activity)
	}
	if q.Viewer != "" {
		checks = append(checks, "A:"+q.Viewer)
	}
	if len(checks) == 0 {
		b.WriteString(`SELECT ` + stmtColumns + ` FROM statements s WHERE s.tenant = ?`)
		args = append(args, q.Tenant)
	} else {
		key = "t.stored"
		b.WriteString(`SELECT ` + stmtColumns + ` FROM terms t CROSS JOIN statements s ON s.stored = t.stored
			WHERE t.tenant = ? AND t.term = ?`)
		args = append(args, q.Tenant, checks[0])
		for _, term := range checks[1:] {
			b.WriteString(` AND EXISTS (SELECT 1 FROM terms u WHERE u.tenant = ? AND u.term = ? AND u.stored = s.stored)`)
			args = append(args, q.Tenant, term)
		}
	}
	b.WriteString(` AND s.voided = 0 AND s.result = 1 AND s.activity <> ''`)
	if after != 0 {
		b.WriteString(` AND ` + key + ` < ?`)
		args = append(args, after)
	}
	b.WriteString(` ORDER BY ` + key + ` DESC LIMIT ?`)
	args = append(args, limit+1)
	return b.String(), args
}

// looseScanSQL walks the distinct terms in (?2, ?3) of tenant ?1, at most ?4 rows (the last
// one NULL when the range ends): each step is one seek past the previous term; for each term,
// value of the most recently stored non-voided statement s carrying it (NULL when all are
// voided).
func looseScanSQL(value string) string {
	return `WITH RECURSIVE k(term) AS (
		SELECT (SELECT term FROM terms WHERE tenant = ?1 AND term > ?2 AND term < ?3 ORDER BY term LIMIT 1)
		UNION ALL
		SELECT (SELECT term FROM terms WHERE tenant = ?1 AND term > k.term AND term < ?3 ORDER BY term LIMIT 1)
			FROM k WHERE k.term IS NOT NULL
		LIMIT ?4)
	SELECT k.term, (SELECT ` + value + ` FROM terms t CROSS JOIN statements s ON s.stored = t.stored
			WHERE t.tenant = ?1 AND t.term = k.term AND s.voided = 0 ORDER BY t.stored DESC LIMIT 1)
		FROM k WHERE k.term IS NOT NULL`
}

// The values of the loose scans: activities only ask whether a statement is left; actors read
// the report actors (lists.p) of the latest one.
const (
	scanExists = `'1'`
	scanActors = `json_extract(CAST(s.lists AS TEXT), '$.p')`
)

// looseScan returns the distinct terms in (lo, hi) of tenant carried by a non-voided
// statement, in order, at most limit of them, each with value (looseScanSQL) of its most
// recently stored such statement; more is true when terms follow the last one returned. Terms only
// carried by voided statements are skipped (they still count towards the scan's limit, so a
// page can be short; the cursor continues after the last term scanned, returned as last).
func (s *Store) looseScan(ctx context.Context, value, tenant, lo, hi string, limit int) (keys []string, ls [][]byte, last string, more bool, err error) {
	rows, err := s.db.QueryContext(ctx, looseScanSQL(value), tenant, lo, hi, limit+2)
	if err != nil {
		return nil, nil, "", false, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var term string
		var l []byte
		if err := rows.Scan(&term, &l); err != nil {
			return nil, nil, "", false, err
		}
		n++
		if n > limit {
			more = true
			break
		}
		last = term
		if l != nil {
			keys, ls = append(keys, term), append(ls, l)
		}
	}
	return keys, ls, last, more, rows.Err()
}

// ReportActivities implements statements.Reports.
func (s *Store) ReportActivities(ctx context.Context, q statements.ReportQuery) (*statements.ReportPage[statements.ReportActivity], error) {
	if q.Activity != "" {
		return nil, fmt.Errorf("%w: the activities report has no activity filter", statements.ErrInvalid)
	}
	limit := statements.ReportLimit(q)
	var after string
	if err := statements.DecodeReportCursor("activities", q, &after); err != nil {
		return nil, err
	}
	page := &statements.ReportPage[statements.ReportActivity]{}
	var ids []string
	if q.Agent == "" && q.Viewer == "" {
		keys, _, last, more, err := s.looseScan(ctx, scanExists, q.Tenant, "o:"+after, "o;", limit)
		if err != nil {
			return nil, fmt.Errorf("report activities: %w", err)
		}
		for _, k := range keys {
			ids = append(ids, strings.TrimPrefix(k, "o:"))
		}
		if more {
			page.Next = statements.EncodeReportCursor("activities", q, strings.TrimPrefix(last, "o:"))
		}
	} else {
		query, args := agentActivitiesSQL(q, after, limit)
		rows, err := s.db.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, fmt.Errorf("report activities: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("report activities: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("report activities: %w", err)
		}
		if len(ids) > limit {
			ids = ids[:limit]
			page.Next = statements.EncodeReportCursor("activities", q, ids[limit-1])
		}
	}
	canon, err := s.canonical(ctx, q.Tenant, ids)
	if err != nil {
		return nil, err
	}
	page.Items = make([]statements.ReportActivity, len(ids))
	for i, id := range ids {
		page.Items[i] = statements.ReportActivity{ID: id, Canonical: canon[id]}
	}
	return page, nil
}

// agentActivitiesSQL is the query of a page of the activities of an agent's (or the viewer's)
// statements after the activity id after: a walk of that agent's key, grouped.
func agentActivitiesSQL(q statements.ReportQuery, after string, limit int) (string, []any) {
	drive, check := "a:"+q.Agent, "A:"+q.Viewer
	if q.Agent == "" {
		drive, check = check, ""
	} else if q.Viewer == "" {
		check = ""
	}
	query := `SELECT s.activity FROM terms t CROSS JOIN statements s ON s.stored = t.stored
		WHERE t.tenant = ? AND t.term = ? AND s.voided = 0 AND s.activity > ?`
	args := []any{q.Tenant, drive, after}
	if check != "" {
		query += ` AND EXISTS (SELECT 1 FROM terms u WHERE u.tenant = ? AND u.term = ? AND u.stored = s.stored)`
		args = append(args, q.Tenant, check)
	}
	return query + ` GROUP BY s.activity ORDER BY s.activity LIMIT ?`, append(args, limit+1)
}

// canonical reads the canonical definitions of ids in one query.
func (s *Store) canonical(ctx context.Context, tenant string, ids []string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if len(ids) == 0 {
		return out, nil
	}
	list, _ := json.Marshal(ids)
	rows, err := s.db.QueryContext(ctx, `SELECT id, json FROM activities WHERE tenant = ? AND id IN (SELECT value FROM json_each(?))`,
		tenant, string(list))
	if err != nil {
		return nil, fmt.Errorf("report activities: definitions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return nil, fmt.Errorf("report activities: definitions: %w", err)
		}
		out[id] = json.RawMessage(b)
	}
	return out, rows.Err()
}

// ReportActors implements statements.Reports.
func (s *Store) ReportActors(ctx context.Context, q statements.ReportQuery) (*statements.ReportPage[statements.ReportActor], error) {
	if q.Agent != "" {
		return nil, fmt.Errorf("%w: the actors report has no agent filter", statements.ErrInvalid)
	}
	limit := statements.ReportLimit(q)
	var after string
	if err := statements.DecodeReportCursor("actors", q, &after); err != nil {
		return nil, err
	}
	page := &statements.ReportPage[statements.ReportActor]{}
	if q.Viewer == "" {
		prefix, hi := "p:", "p;"
		if q.Activity != "" {
			prefix, hi = "P:"+q.Activity+pairSep, "P:"+q.Activity+"!"
		}
		keys, ls, last, more, err := s.looseScan(ctx, scanActors, q.Tenant, prefix+after, hi, limit)
		if err != nil {
			return nil, fmt.Errorf("report actors: %w", err)
		}
		for i, k := range keys {
			ifi := strings.TrimPrefix(k, prefix)
			a, err := actorIn(ls[i], ifi)
			if err != nil {
				return nil, err
			}
			page.Items = append(page.Items, a)
		}
		if more {
			page.Next = statements.EncodeReportCursor("actors", q, strings.TrimPrefix(last, prefix))
		}
		return page, nil
	}
	// The viewer's statements, grouped by report actor; the bare columns of a max() aggregate
	// come from the row holding the maximum, the most recently stored statement.
	query, args := viewerActorsSQL(q, after, limit)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("report actors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a statements.ReportActor
		var agent string
		var stored int64
		if err := rows.Scan(&a.IFI, &agent, &stored); err != nil {
			return nil, fmt.Errorf("report actors: %w", err)
		}
		a.Agent = json.RawMessage(agent)
		page.Items = append(page.Items, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("report actors: %w", err)
	}
	if len(page.Items) > limit {
		page.Items = page.Items[:limit]
		page.Next = statements.EncodeReportCursor("actors", q, page.Items[limit-1].IFI)
	}
	return page, nil
}

// viewerActorsSQL is the query of a page of the report actors of the viewer's statements
// (of q.Activity's, when set) after the IFI after: a walk of the viewer's key, grouped.
func viewerActorsSQL(q statements.ReportQuery, after string, limit int) (string, []any) {
	query := `SELECT json_extract(j.value, '$.i') AS ifi, json_extract(j.value, '$.a'), max(t.stored)
		FROM terms t CROSS JOIN statements s ON s.stored = t.stored, json_each(CAST(s.lists AS TEXT), '$.p') j
		WHERE t.tenant = ? AND t.term = ? AND s.voided = 0 AND s.activity <> ''`
	args := []any{q.Tenant, "A:" + q.Viewer}
	if q.Activity != "" {
		query += ` AND s.activity = ?`
		args = append(args, q.Activity)
	}
	query += ` AND ifi > ? GROUP BY ifi ORDER BY ifi LIMIT ?`
	return query, append(args, after, limit+1)
}

// actorIn finds ifi's report actor in a statement's report actors (lists.p).
func actorIn(p []byte, ifi string) (statements.ReportActor, error) {
	var actors []statements.ReportActor
	if err := json.Unmarshal(p, &actors); err != nil {
		return statements.ReportActor{}, fmt.Errorf("report actors: corrupt lists: %w", err)
	}
	for _, a := range actors {
		if a.IFI == ifi {
			return a, nil
		}
	}
	return statements.ReportActor{}, fmt.Errorf("report actors: actor %s missing from its statement", ifi)
}
