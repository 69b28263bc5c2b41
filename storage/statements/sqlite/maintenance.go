package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// checkpointInterval is the least time between two background checkpoints: pages rewritten
// within it (the hot leaves of the terms index) are copied into the database once.
const checkpointInterval = 200 * time.Millisecond

// checkpointer copies committed WAL frames into the database file in the background, after
// commits, at most every checkpointInterval. PASSIVE never waits for or blocks readers and
// writers, so commits go on while it runs. Durability does not depend on it: a commit is
// durable once its WAL frames are fsynced.
func (s *Store) checkpointer() {
	defer close(s.stopped)
	t := time.NewTimer(checkpointInterval)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.committed:
		}
		// A failed checkpoint is retried after the next commit; the backstop bounds the WAL.
		_, _ = s.ckpt.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		t.Reset(checkpointInterval)
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// Close implements statements.Store.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.stopped
	})
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = map[string]*sql.Stmt{}
	s.stmtMu.Unlock()
	return errors.Join(s.db.Close(), s.w.Close(), s.ckpt.Close())
}

// PurgeTenant implements statements.Store, in one transaction so a crash never leaves half a tenant.
func (s *Store) PurgeTenant(ctx context.Context, tenant string) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("purge tenant %q: %w", tenant, err)
	}
	defer tx.Rollback()
	for _, table := range []string{"terms", "statements", "attachments", "documents", "activities"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE tenant = ?`, tenant); err != nil {
			return fmt.Errorf("purge tenant %q from %s: %w", tenant, table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("purge tenant %q: %w", tenant, err)
	}
	return nil
}
