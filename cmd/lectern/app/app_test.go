package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/server"
)

// embedded is a valid configuration of the embedded mode in a fresh data directory.
func embedded(t *testing.T) app.Config {
	return app.Config{DataDir: t.TempDir(), Root: server.RootCredentials{User: "root", Password: "pw"}, SecretKey: "k"}
}

// TestOpenEmbedded opens every port in the embedded mode and closes them again.
func TestOpenEmbedded(t *testing.T) {
	a, err := app.Open(context.Background(), embedded(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, nilPort := range map[string]bool{"Records": a.Records == nil, "Blobs": a.Blobs == nil, "Queue": a.Queue == nil,
		"IndexQueue": a.IndexQueue == nil, "Statements": a.Statements == nil, "Index": a.Index == nil, "Server": a.Server == nil,
		"Forwarder": a.Forwarder == nil, "Reindexer": a.Reindexer == nil} {
		if nilPort {
			t.Errorf("%s is not wired", name)
		}
	}
	if a.Elastic != nil || a.Embedder != nil || a.NoEmbedder == "" {
		t.Errorf("embedded mode without a model: Elastic %v, Embedder %v, NoEmbedder %q", a.Elastic, a.Embedder, a.NoEmbedder)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenErrorsInStartUpOrder pins the error of a bad setting that only opening finds, and
// that with several, the step that runs first names its own: the order of the steps in Open is
// the order of start-up.
func TestOpenErrorsInStartUpOrder(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"no such input"}}`, http.StatusBadRequest)
	}))
	defer refusing.Close()
	badRecords := func(c *app.Config) {
		// A directory where the SQLite file should be.
		if err := os.Mkdir(filepath.Join(c.DataDir, "lectern.db"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	badEmbeddings := func(c *app.Config) { c.Embeddings = app.EmbeddingsConfig{URL: refusing.URL, Model: "m"} }
	badAllow := func(c *app.Config) { c.OutboundAllow = []string{"http://host:1"} }
	badSchemas := func(c *app.Config) { c.SchemaDir = "/nonexistent/schemas" }
	for name, tc := range map[string]struct {
		bad  []func(*app.Config)
		want string
	}{
		"schema directory":                {[]func(*app.Config){badSchemas}, "schema directory /nonexistent/schemas is not a readable directory"},
		"outbound allow before schemas":   {[]func(*app.Config){badSchemas, badAllow}, `outbound: allow entry "http://host:1"`},
		"embeddings before outbound":      {[]func(*app.Config){badSchemas, badAllow, badEmbeddings}, "LECTERN_EMBEDDINGS_URL: "},
		"record store before embeddings":  {[]func(*app.Config){badSchemas, badAllow, badEmbeddings, badRecords}, "create record schema"},
		"validation before anything else": {[]func(*app.Config){badRecords, func(c *app.Config) { c.SecretKey = "" }}, "a secret key is required"},
	} {
		t.Run(name, func(t *testing.T) {
			c := embedded(t)
			for _, f := range tc.bad {
				f(&c)
			}
			a, err := app.Open(context.Background(), c)
			if err == nil {
				a.Close()
				t.Fatalf("Open succeeded, want an error with %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
