package sqlite

import "database/sql"

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
