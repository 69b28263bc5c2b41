// Package postgres is the distributed record store on PostgreSQL.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/lectern-lms/lectern/storage"
	"github.com/lectern-lms/lectern/storage/record/sqlrecord"
)

// maxConns bounds the connections one process holds (PostgreSQL's default max_connections
// is 100, shared by every role of every process).
const maxConns = 20

// Store is the PostgreSQL record store.
type Store = sqlrecord.Store

// Open connects to the database at url (postgres://...) and creates the schema when missing.
func Open(ctx context.Context, url string) (*Store, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db.SetMaxOpenConns(maxConns)
	// database/sql keeps only 2 idle connections by default: with more concurrent requests
	// than that, every burst closes connections and opens new ones, and a new connection costs
	// a backend fork, a cold catalogue cache and re-preparing every statement (10-20 ms, the
	// p99 of the registration lists at 1M rows). Keep the whole pool warm instead.
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(10 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	s, err := sqlrecord.New(ctx, db, sqlrecord.Postgres, sqlrecord.WithOutage("postgresql", down))
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// down reports whether err means the server cannot be reached or cannot serve now: a failed
// connect, a broken connection, or an answer of SQLSTATE class 08 (connection exception),
// 57P01-57P03 (shut down, crash recovery, not yet accepting connections) or 53300 (too many
// connections). Constraint violations and other answers are not outages.
func down(err error) bool {
	var ce *pgconn.ConnectError
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300"
	case errors.As(err, &ce), errors.Is(err, driver.ErrBadConn), storage.IsConnectionError(err):
		return true
	}
	return pgconn.SafeToRetry(err) || pgconn.Timeout(err) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}
