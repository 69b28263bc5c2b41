// Package testenv gives tests access to the real backends that scripts/services.sh starts.
package testenv

import (
	"os"
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
