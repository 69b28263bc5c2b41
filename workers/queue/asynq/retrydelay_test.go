package asynqq

import (
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

// TestLeaseExpiredRetriesAtOnce: the recoverer's retry of a dead worker's task
// (asynq.ErrLeaseExpired) is due within a second, with the production backoff (base 0:
// 15-45 s on the first retry) and with a configured one, while a task's own failure still
// backs off. Before, a kill -9 cost each held job the lease expiry and then 15-45 s more
// (found by cmd/lectern TestScaleOut, whose jobs missed a 150 s deadline).
func TestLeaseExpiredRetriesAtOnce(t *testing.T) {
	for _, base := range []time.Duration{0, 10 * time.Second} {
		f := retryDelayFunc(base)
		for n := range 3 {
			if d := f(n, asynq.ErrLeaseExpired, nil); d < 0 || d > time.Second {
				t.Errorf("base %v, retried %d: lease expired retry in %v, want at most 1 s", base, n, d)
			}
			if d := f(n, errors.New("handler failed"), nil); d < 10*time.Second {
				t.Errorf("base %v, retried %d: failed task retried in %v, want a backoff of at least 10 s", base, n, d)
			}
		}
	}
}
