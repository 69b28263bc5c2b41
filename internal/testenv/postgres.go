package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver for the admin connection
)

// FreshPostgres creates an empty database on the server adminURL points at and returns its
// URL; the database is dropped when the test ends. A database per test keeps tests
// independent without any cleanup logic in the code under test.
func FreshPostgres(t testing.TB, adminURL string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "t_" + hex.EncodeToString(b)
	db, err := sql.Open("pgx", adminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), `CREATE DATABASE `+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", adminURL)
		if err != nil {
			return
		}
		defer db.Close()
		_, _ = db.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	})
	u, err := url.Parse(adminURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
