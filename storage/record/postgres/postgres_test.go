package postgres_test

import (
	"context"
	"testing"

	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/postgres"
	"github.com/lectern-lms/lectern/storage/record/recordtest"
)

func TestRecordStore(t *testing.T) {
	admin := testenv.External(t, "LECTERN_TEST_POSTGRES_URL")
	recordtest.Run(t, recordtest.Backend{
		NewDSN: func(t testing.TB) string { return testenv.FreshPostgres(t, admin) },
		Open:   func(dsn string) (record.Store, error) { return postgres.Open(context.Background(), dsn) },
	})
}
