package inproc_test

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/record/sqlite"
	"github.com/lectern-lms/lectern/workers/queue"
	"github.com/lectern-lms/lectern/workers/queue/inproc"
	"github.com/lectern-lms/lectern/workers/queue/queuetest"
)

// backend runs the contract suite on the real SQLite record store; the crash test shares one
// database file between this process and the killed child.
var backend = queuetest.Backend{
	Fresh: func(t *testing.T) string { return filepath.Join(t.TempDir(), "queue.db") },
	Open: func(t testing.TB, path string, p queuetest.Params) queue.Queue {
		store, err := sqlite.Open(path)
		if err != nil {
			t.Fatalf("open SQLite store: %v", err)
		}
		t.Cleanup(func() { store.Close() })
		return inproc.New(store, inproc.Config{
			Concurrency:     p.Concurrency,
			BaseRetryDelay:  p.BaseRetryDelay,
			PollInterval:    10 * time.Millisecond,
			LeaseDuration:   time.Second,
			RecoverInterval: 100 * time.Millisecond,
			Logger:          slog.New(slog.DiscardHandler),
		})
	},
	// One lease (1 s) plus a recovery pass and a retry backoff; generous for slow machines.
	RedeliveryTimeout: 15 * time.Second,
}

func TestContract(t *testing.T) { queuetest.Run(t, backend) }

func TestHelperProcess(t *testing.T) { queuetest.HelperProcess(t, backend) }
