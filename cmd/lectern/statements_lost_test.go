package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/storage/elastic"
)

// TestStatementsLostStayVisible: statements live only in Elasticsearch, so once a deployment
// has had its statement index, `lectern reindex` (or any role starting) must not recreate it
// empty when it is lost: reindex says it did not rebuild it, and only `lectern
// recreate-statements`, the operator's explicit choice, brings it back empty.
func TestStatementsLostStayVisible(t *testing.T) {
	esURL := testenv.External(t, "LECTERN_TEST_ELASTICSEARCH_URL")
	prefix := fmt.Sprintf("lost%d_", time.Now().UnixNano())
	env := map[string]string{"LECTERN_DATA_DIR": t.TempDir(), "LECTERN_LOG_LEVEL": "error", "LECTERN_ELASTICSEARCH_URL": esURL,
		"LECTERN_ELASTICSEARCH_INDEX_PREFIX": prefix, "LECTERN_POSTGRES_URL": "", "LECTERN_REDIS_URL": "", "LECTERN_S3_ENDPOINT": ""}
	lectern := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(t.Context(), args, func(k string) string {
			if v, ok := env[k]; ok {
				return v
			}
			return os.Getenv(k)
		}, &out, io.Discard)
		return out.String(), err
	}
	es, err := elastic.New(elastic.Config{URLs: []string{esURL}, IndexPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = es.Do(t.Context(), "delete test indices", esapi.IndicesDeleteRequest{Index: []string{prefix + "*"}}, nil)
	})
	statementsAlias := es.Alias(mappings.Statements)
	present := func() bool {
		missing, err := es.MissingAliases(t.Context(), mappings.Statements)
		if err != nil {
			t.Fatal(err)
		}
		return len(missing) == 0
	}

	// A first start creates the indices (a new deployment has nothing to lose).
	if out, err := lectern("reindex"); err != nil || strings.Contains(out, "NOT rebuilt") || !present() {
		t.Fatalf("first reindex: %v\n%s", err, out)
	}
	if err := es.Do(t.Context(), "delete statements", esapi.IndicesDeleteRequest{Index: []string{es.Index(mappings.Statements)}}, nil); err != nil {
		t.Fatal(err)
	}
	out, err := lectern("reindex")
	if err != nil || !strings.Contains(out, "statements NOT rebuilt: "+statementsAlias+" missing; restore from a snapshot") {
		t.Fatalf("reindex after the loss: %v\n%s", err, out)
	}
	if present() {
		t.Fatal("reindex recreated the lost statement index empty")
	}
	if out, err := lectern("recreate-statements"); err != nil || !present() {
		t.Fatalf("recreate-statements: %v\n%s", err, out)
	}
	if out, err := lectern("reindex"); err != nil || strings.Contains(out, "NOT rebuilt") {
		t.Fatalf("reindex after recreate-statements: %v\n%s", err, out)
	}
}
