package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lectern-lms/lectern/internal/testenv"
)

// testModelDir returns the installed model directory for tests that need the
// real model: $LECTERN_TEST_MODEL_DIR, else the default cache path. Without
// an installation the test is skipped locally but fails in CI, where
// `make model` is expected to have run: a silent skip there would hide that
// the semantic tests never ran.
func testModelDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("LECTERN_TEST_MODEL_DIR")
	if dir == "" {
		dir = DefaultModelDir(testenv.CacheDir())
	}
	if _, err := readManifest(dir); err != nil {
		if errors.Is(err, ErrNoModel) && os.Getenv("CI") == "" {
			t.Skipf("no embedding model installed (%v); run scripts/install-model.sh", err)
		}
		t.Fatalf("embedding model required: %v", err)
	}
	return dir
}

func vocabPath(t testing.TB) string {
	return filepath.Join(testModelDir(t), "vocab.txt")
}
