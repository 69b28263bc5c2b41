// Package testenv gives tests access to the real backends that scripts/services.sh starts.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// External returns the value of the environment variable that points a test at a real
// backend server. Without it the test is skipped locally, but fails when CI is set: in CI
// every backend must run, and a missing one must not pass silently.
func External(t testing.TB, envVar string) string {
	t.Helper()
	v := os.Getenv(envVar)
	if v == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set but CI is: the backend must be reachable (run scripts/services.sh up)", envVar)
		}
		t.Skipf("%s not set; run `make test` to start the real backends", envVar)
	}
	return v
}

// Program returns the path of a program the test runs (node for the player's scripts). Without
// it in PATH the test is skipped locally, but fails when CI is set, as External does.
func Program(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed but CI is: %v", name, err)
		}
		t.Skipf("%s is not installed (%v)", name, err)
	}
	return p
}

// CacheDir is the cache the repository's scripts install into and tests read installed
// things (the embedding model, benchmark indexes) from: $LECTERN_CACHE_DIR, else
// $HOME/.cache/lectern. Tests resolve it here; the server gets it from cmd/ configuration.
func CacheDir() string {
	if d := os.Getenv("LECTERN_CACHE_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.Getenv("HOME"), ".cache", "lectern")
}
