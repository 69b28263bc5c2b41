// Package elastictest gives tests and benchmarks an Elasticsearch client of their own, so
// that parallel test packages sharing one cluster never see each other's indices.
package elastictest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/storage/elastic"
)

// NewClient returns a client for the cluster at LECTERN_TEST_ELASTICSEARCH_URL
// (testenv.External: a skip, or a failure when CI is set) whose index prefix is
// name + "_" + a random suffix + "_"; the prefix's indices are deleted when tb ends.
func NewClient(tb testing.TB, name string) *elastic.Client {
	tb.Helper()
	url := testenv.External(tb, "LECTERN_TEST_ELASTICSEARCH_URL")
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	c, err := elastic.New(elastic.Config{URLs: []string{url}, IndexPrefix: name + "_" + hex.EncodeToString(b) + "_"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.DeleteIndices(ctx, c.Prefix()); err != nil {
			tb.Errorf("cleanup: %v", err)
		}
	})
	return c
}
