package asynqq_test

import (
	"fmt"
	"log/slog"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/workers/queue"
	asynqq "github.com/lectern-lms/lectern/workers/queue/asynq"
	"github.com/lectern-lms/lectern/workers/queue/queuetest"
)

// nextDB hands each contract test its own Redis database (1-15; 0 is left to other
// packages), so parallel tests never see each other's tasks.
var nextDB atomic.Int32

// backend runs the contract suite against the Redis server named by LECTERN_TEST_REDIS_URL.
var backend = queuetest.Backend{
	Fresh: func(t *testing.T) string {
		u, err := url.Parse(testenv.External(t, "LECTERN_TEST_REDIS_URL"))
		if err != nil {
			t.Fatalf("LECTERN_TEST_REDIS_URL: %v", err)
		}
		// Wrapping is safe with -count=N: one Run uses fewer than 15 databases at a time.
		db := 1 + (nextDB.Add(1)-1)%15
		u.Path = fmt.Sprintf("/%d", db)
		opt, err := redis.ParseURL(u.String())
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(opt)
		defer rdb.Close()
		if err := rdb.FlushDB(t.Context()).Err(); err != nil {
			t.Fatalf("FLUSHDB %d: %v", db, err)
		}
		return u.String()
	},
	Open: func(t testing.TB, redisURL string, p queuetest.Params) queue.Queue {
		q, err := asynqq.New(t.Context(), asynqq.Config{
			RedisURL:                 redisURL,
			Concurrency:              p.Concurrency,
			BaseRetryDelay:           p.BaseRetryDelay,
			TaskCheckInterval:        10 * time.Millisecond,
			DelayedTaskCheckInterval: 10 * time.Millisecond,
			ShutdownTimeout:          5 * time.Second,
			Logger:                   slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatalf("asynq queue: %v", err)
		}
		return q
	},
	// asynq fixes the lease at 30 s and recovers only leases expired for 30 s more, checking
	// once a minute: redelivery takes 60-90 s after the kill, whatever the configuration.
	RedeliveryTimeout: 150 * time.Second,
}

func TestContract(t *testing.T) { queuetest.Run(t, backend) }

func TestHelperProcess(t *testing.T) { queuetest.HelperProcess(t, backend) }
