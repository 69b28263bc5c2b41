// Package postgres is the distributed record store on PostgreSQL.
package postgres

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/lectern-lms/lectern/storage/record/sqlrecord"
)

// Store is the PostgreSQL record store.
type Store = sqlrecord.Store

// Open connects to the database at url (postgres://...) and creates the schema when missing.
func Open(ctx context.Context, url string) (*Store, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db.SetMaxOpenConns(20)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	s, err := sqlrecord.New(ctx, db, sqlrecord.Postgres)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
