// Package sqlite is the embedded record store: one SQLite file in WAL mode with a full fsync
// on every commit, so a write that returned survives kill -9 and power loss.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	"github.com/lectern-lms/lectern/storage/record/sqlrecord"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// Store is the SQLite record store.
type Store = sqlrecord.Store

// Open opens (creating when absent) the database file at path.
func Open(path string) (*Store, error) {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// One writer at a time is SQLite's model; more open connections only add lock waits.
	db.SetMaxOpenConns(4)
	// Keep them all open: database/sql's default of 2 idle connections would close and reopen
	// the others under load, each reopen paying the pragmas and a cold page cache.
	db.SetMaxIdleConns(4)
	s, err := sqlrecord.New(context.Background(), db, sqlrecord.SQLite)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
