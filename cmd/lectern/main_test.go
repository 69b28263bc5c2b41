package main

import (
	"os"
	"testing"
)

// TestMain gives every binary the tests start an ephemeral content-origin port: the default
// (the port after LECTERN_ADDR's) may be taken by another test's listener.
func TestMain(m *testing.M) {
	if os.Getenv("LECTERN_CONTENT_ADDR") == "" {
		_ = os.Setenv("LECTERN_CONTENT_ADDR", "127.0.0.1:0")
	}
	os.Exit(m.Run())
}
