package sqlite_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/statements"
	"github.com/lectern-lms/lectern/storage/statements/sqlite"
	"github.com/lectern-lms/lectern/storage/statements/statementstest"
)

func TestStatementStore(t *testing.T) {
	open := func(dsn string) (statements.Backend, error) { return sqlite.Open(dsn) }
	newDSN := func(t testing.TB) string { return filepath.Join(t.TempDir(), "statements.db") }
	statementstest.Run(t, func(t *testing.T) statements.Backend {
		s, err := open(newDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, statementstest.WithCrashTest(newDSN, open))
}

// benchDir holds the 100k-statement database, built once per test binary run and shared by
// every BenchmarkQuery invocation (the framework calls a benchmark several times).
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// The workload (statements, filter shapes, metrics) is statementstest's, shared with the
// Elasticsearch backend so scripts/bench-report.sh can put the two side by side.

// BenchmarkPut100 measures Puts of 100 new statements (statements/s, latency percentiles).
func BenchmarkPut100(b *testing.B) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	statementstest.BenchPut100(b, s)
}

var (
	benchOnce sync.Once
	benchErr  error
)

func benchStore(b *testing.B) *sqlite.Store {
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "lectern-statements-bench")
		if benchErr != nil {
			return
		}
		s, err := sqlite.Open(filepath.Join(benchDir, "bench.db"))
		if err != nil {
			benchErr = err
			return
		}
		defer s.Close()
		benchErr = statementstest.FillBench(s)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	s, err := sqlite.Open(filepath.Join(benchDir, "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkQuery measures one page per operation over 100k stored statements, per filter
// shape (statementstest.BenchQuery).
func BenchmarkQuery(b *testing.B) {
	statementstest.BenchQuery(b, benchStore(b), time.Now())
}

// TestBackgroundCheckpoint: committed statements reach the database file itself (not only the
// WAL) without any writer checkpointing — the store's checkpointer copies them after commits,
// where SQLite's own automatic checkpoint would wait for 20,000 WAL pages.
func TestBackgroundCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "statements.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	raw := `{"id":"%s","padding":"` + strings.Repeat("x", 2000) + `"}`
	var batch []*statements.Statement
	for i := range 200 {
		id := fmt.Sprintf("s%03d", i)
		batch = append(batch, &statements.Statement{ID: id, Hash: id, Raw: []byte(fmt.Sprintf(raw, id))})
	}
	if err := s.Put(t.Context(), "t", batch, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for size() < before+200*2000 {
		if time.Now().After(deadline) {
			t.Fatalf("database file %d bytes 10 s after a 400 KB commit (%d before): no checkpoint ran", size(), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGroupCommit: concurrent Puts share transactions, yet each batch stands alone — a
// conflicting batch fails with ErrConflict and stores nothing, the others are all stored.
func TestGroupCommit(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "statements.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	mk := func(id, hash string) *statements.Statement {
		return &statements.Statement{ID: id, Hash: hash, Raw: []byte(`{"id":"` + id + `"}`)}
	}
	if err := s.Put(ctx, "t", []*statements.Statement{mk("taken", "h1")}, nil); err != nil {
		t.Fatal(err)
	}
	const writers = 16
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := []*statements.Statement{mk(fmt.Sprintf("w%02d-a", w), "h"), mk(fmt.Sprintf("w%02d-b", w), "h")}
			if w == 7 {
				batch = append(batch, mk("taken", "other"))
			}
			errs[w] = s.Put(ctx, "t", batch, nil)
		}()
	}
	wg.Wait()
	for w, err := range errs {
		_, getErr := s.Get(ctx, "t", fmt.Sprintf("w%02d-a", w))
		switch {
		case w == 7 && !errors.Is(err, statements.ErrConflict):
			t.Errorf("conflicting batch: err %v, want ErrConflict", err)
		case w == 7 && !errors.Is(getErr, statements.ErrNotFound):
			t.Errorf("conflicting batch: its other statements were stored (%v)", getErr)
		case w != 7 && (err != nil || getErr != nil):
			t.Errorf("batch %d: put %v, get %v", w, err, getErr)
		}
	}
}

// BenchmarkActivityMerge compares a batch's activity merge one activity at a time with the
// batched reads and writes the LRS makes (statementstest.BenchActivityMerge).
func BenchmarkActivityMerge(b *testing.B) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "statements.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	statementstest.BenchActivityMerge(b, s)
}
