// Package testenv gives tests access to the real backends that scripts/services.sh starts.
package testenv

import (
	"os"
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

// CacheDir is the cache the repository's scripts install into and tests read installed
// things (the embedding model, benchmark indexes) from: $LECTERN_CACHE_DIR, else
// $HOME/.cache/lectern. Tests resolve it here; the server gets it from cmd/ configuration.
func CacheDir() string {
	if d := os.Getenv("LECTERN_CACHE_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.Getenv("HOME"), ".cache", "lectern")
}
