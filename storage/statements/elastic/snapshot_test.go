package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/statements"
	"github.com/lectern-lms/lectern/storage/statements/statementstest"
)

// snapshotRepoDir returns the cluster's path.repo (the directories fs snapshot repositories
// may live under). scripts/services.sh starts Elasticsearch with one; a cluster without it
// fails the test in CI and skips it elsewhere.
func snapshotRepoDir(t *testing.T, c *elastic.Client) string {
	t.Helper()
	var res struct {
		Nodes map[string]struct {
			Settings struct {
				Path struct {
					Repo any `json:"repo"`
				} `json:"path"`
			} `json:"settings"`
		} `json:"nodes"`
	}
	if err := c.Do(t.Context(), "node settings", esapi.NodesInfoRequest{Metric: []string{"settings"}}, &res); err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Nodes {
		switch r := n.Settings.Path.Repo.(type) {
		case string:
			return r
		case []any:
			if len(r) > 0 {
				if s, ok := r[0].(string); ok {
					return s
				}
			}
		}
	}
	msg := "Elasticsearch runs without path.repo: restart it with scripts/services.sh up"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// TestSnapshotRestore backs the statement indices up as docs/operations.md says (an fs
// snapshot repository, a snapshot of the prefix's indices), deletes them, restores them with
// their aliases, and reads the same statements and activity back, byte for byte.
func TestSnapshotRestore(t *testing.T) {
	prefix := newPrefix(t)
	s, err := open(prefix)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	c := s.c
	dir := snapshotRepoDir(t, c)

	const tenant = "snap"
	var batch []*statements.Statement
	for i := range 25 {
		st := statementstest.Fake(i, time.Now())
		st.Tenant = tenant
		batch = append(batch, st)
	}
	if err := s.Put(ctx, tenant, batch, nil); err != nil {
		t.Fatal(err)
	}
	activity := json.RawMessage(`{"id":"http://example.com/activity/1","definition":{"name":{"en-US":"Snapshots"}}}`)
	if err := s.PutActivity(ctx, tenant, "http://example.com/activity/1", activity); err != nil {
		t.Fatal(err)
	}
	read := func() (map[string][]byte, []byte) {
		t.Helper()
		out := map[string][]byte{}
		for _, st := range batch {
			got, err := s.Get(ctx, tenant, st.ID)
			if err != nil {
				t.Fatalf("get %s: %v", st.ID, err)
			}
			out[st.ID] = got.Raw
		}
		act, err := s.GetActivity(ctx, tenant, "http://example.com/activity/1")
		if err != nil {
			t.Fatal(err)
		}
		return out, act
	}
	before, actBefore := read()

	repo := prefix + "repo"
	do := func(op string, req esapi.Request) {
		t.Helper()
		if err := c.Do(ctx, op, req, nil); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	body := func(v any) *bytes.Reader { b, _ := json.Marshal(v); return bytes.NewReader(b) }
	do("register repository", esapi.SnapshotCreateRepositoryRequest{Repository: repo, Body: body(map[string]any{
		"type": "fs", "settings": map[string]any{"location": filepath.Join(dir, strings.TrimSuffix(prefix, "_"))}})})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Do(ctx, "delete snapshot", esapi.SnapshotDeleteRequest{Repository: repo, Snapshot: []string{"snap-1"}}, nil)
		_ = c.Do(ctx, "delete repository", esapi.SnapshotDeleteRepositoryRequest{Repository: []string{repo}}, nil)
	})
	do("snapshot", esapi.SnapshotCreateRequest{Repository: repo, Snapshot: "snap-1", WaitForCompletion: esapi.BoolPtr(true),
		Body: body(map[string]any{"indices": prefix + "*", "include_global_state": false})})

	if err := c.DeleteIndices(ctx, prefix); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, tenant, batch[0].ID); err == nil {
		t.Fatal("a statement is still readable after its index was deleted")
	}
	missing, err := c.MissingAliases(ctx, indexNames...)
	if err != nil || len(missing) != len(indexNames) {
		t.Fatalf("missing aliases after the delete = %v, %v", missing, err)
	}

	do("restore", esapi.SnapshotRestoreRequest{Repository: repo, Snapshot: "snap-1", WaitForCompletion: esapi.BoolPtr(true),
		Body: body(map[string]any{"indices": prefix + "*", "include_aliases": true, "include_global_state": false})})
	if missing, err := c.MissingAliases(ctx, indexNames...); err != nil || missing != nil {
		t.Fatalf("missing aliases after the restore = %v, %v", missing, err)
	}
	after, actAfter := read()
	for id, raw := range before {
		if !bytes.Equal(after[id], raw) {
			t.Errorf("statement %s after restore:\n%s\nwant\n%s", id, after[id], raw)
		}
	}
	if !bytes.Equal(actAfter, actBefore) {
		t.Errorf("activity after restore = %s, want %s", actAfter, actBefore)
	}
	page, err := s.Query(ctx, statements.Query{Tenant: tenant, Limit: 100})
	if err != nil || len(page.Statements) != len(batch) {
		t.Fatalf("query after restore: %d statements, %v; want %d", len(page.Statements), err, len(batch))
	}
	// A reopened store (as at start-up) finds the restored indices and writes through them.
	if _, err := open(prefix); err != nil {
		t.Fatal(err)
	}
}
