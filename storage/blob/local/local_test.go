package local_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/storage/blob/blobtest"
	"github.com/lectern-lms/lectern/storage/blob/local"
)

func open(tb testing.TB) *local.Store {
	s, err := local.New(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return open(t) })
}

func BenchmarkPutGet(b *testing.B) { blobtest.BenchmarkPutGet(b, open(b)) }

// TestSymlinksStayInside plants symbolic links that point out of the root and checks that
// no operation reads, lists, writes or deletes through them.
func TestSymlinksStayInside(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "file")); err != nil {
		t.Fatal(err)
	}
	s, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()

	for _, key := range []string{"escape/secret", "file"} {
		if rc, _, err := s.Get(ctx, key); err == nil {
			data, _ := io.ReadAll(rc)
			rc.Close()
			t.Errorf("Get(%s) read %q through a symlink", key, data)
		}
		if _, err := s.Stat(ctx, key); err == nil {
			t.Errorf("Stat(%s) succeeded through a symlink", key)
		}
	}
	if _, err := s.Put(ctx, "escape/new", strings.NewReader("x"), 1); err == nil {
		t.Error("Put(escape/new) succeeded through a symlink")
	}
	if _, err := s.Put(ctx, "escape/secret", strings.NewReader("x"), 1); err == nil {
		t.Error("Put(escape/secret) succeeded through a symlink")
	}
	_ = s.Delete(ctx, "escape/secret")
	_, _ = s.DeletePrefix(ctx, "escape/")
	_, _ = s.DeletePrefix(ctx, "e")
	var listed []string
	_ = s.List(ctx, "", func(i blob.Info) error { listed = append(listed, i.Key); return nil })
	if len(listed) != 0 {
		t.Errorf("List showed %q", listed)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("outside directory now holds %d entries", len(entries))
	}
	if data, err := os.ReadFile(secret); err != nil || string(data) != "secret" {
		t.Errorf("outside file changed: %q, %v", data, err)
	}
}

// TestHostileKeysTouchNothing checks on disk that refused keys created nothing, in the
// root or next to it.
func TestHostileKeysTouchNothing(t *testing.T) {
	parent := t.TempDir()
	s, err := local.New(filepath.Join(parent, "root"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, key := range blobtest.HostileKeys {
		_, _ = s.Put(t.Context(), key, strings.NewReader("x"), 1)
	}
	var found []string
	_ = filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
		found = append(found, p)
		return nil
	})
	if len(found) != 2 { // parent and root
		t.Errorf("hostile keys created %q", found)
	}
}

// TestTempFilesHidden checks that a leftover temporary file (from a crash mid-Put) is never
// listed, and that emptied directories are removed.
func TestTempFilesHidden(t *testing.T) {
	dir := t.TempDir()
	s, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	if _, err := s.Put(ctx, "a/b/c", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", blob.ReservedSegmentPrefix+"tmp-123"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	var listed []string
	_ = s.List(ctx, "", func(i blob.Info) error { listed = append(listed, i.Key); return nil })
	if len(listed) != 1 || listed[0] != "a/b/c" {
		t.Errorf("List = %q", listed)
	}
	if err := os.Remove(filepath.Join(dir, "a", "b", blob.ReservedSegmentPrefix+"tmp-123")); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeletePrefix(ctx, "a/"); n != 1 || err != nil {
		t.Fatalf("DeletePrefix = %d, %v", n, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("emptied directories left behind: %v", entries)
	}
}

// TestKillDuringPut kills a process that overwrites one blob in a loop with SIGKILL and
// checks that the blob then holds one complete version: never a torn or empty file.
func TestKillDuringPut(t *testing.T) {
	if dir := os.Getenv("LECTERN_BLOB_KILL_DIR"); dir != "" {
		putForever(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringPut$")
		cmd.Env = append(os.Environ(), "LECTERN_BLOB_KILL_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for the first complete Put, then kill at a different moment each round.
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "k", "blob")); err == nil {
				break
			}
		}
		time.Sleep(time.Duration(50+70*round) * time.Millisecond)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()

		s, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		rc, _, err := s.Get(t.Context(), "k/blob")
		if err != nil {
			s.Close()
			t.Fatalf("round %d: %v", round, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != killSize || !bytes.Equal(data, bytes.Repeat(data[:1], killSize)) {
			t.Fatalf("round %d: torn blob of %d bytes", round, len(data))
		}
	}
}

const killSize = 1 << 20

// putForever is the child side of TestKillDuringPut.
func putForever(dir string) {
	s, err := local.New(dir)
	if err != nil {
		os.Exit(2)
	}
	for i := 0; ; i++ {
		data := bytes.Repeat([]byte{byte('a' + i%26)}, killSize)
		if _, err := s.Put(context.Background(), "k/blob", bytes.NewReader(data), -1); err != nil {
			os.Exit(3)
		}
	}
}
