package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/lrs/ingest"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/storage/statements"
)

// recordingStore records how the statements reach it: each Put's batch size and each
// PutChunks chunk's size, and the ids in the order they came.
type recordingStore struct {
	nullStore
	puts, chunks []int
	ids          []string
	voids        map[string]string
	activities   int
	// activityReads and activityWrites count the store calls the activity merge made.
	activityReads, activityWrites int
}

func (s *recordingStore) Put(_ context.Context, _ string, batch []*statements.Statement, _ []*statements.Attachment) error {
	s.puts = append(s.puts, len(batch))
	s.record(batch)
	return nil
}

func (s *recordingStore) PutChunks(_ context.Context, _ string, chunks statements.Chunks, _ []*statements.Attachment) error {
	return chunks(func(chunk []*statements.Statement) error {
		s.chunks = append(s.chunks, len(chunk))
		s.record(chunk)
		return nil
	})
}

func (s *recordingStore) record(batch []*statements.Statement) {
	if s.voids == nil {
		s.voids = map[string]string{}
	}
	for _, st := range batch {
		s.ids = append(s.ids, st.ID)
		s.voids[st.ID] = st.Voids
	}
}

func (s *recordingStore) PutActivity(context.Context, string, string, json.RawMessage) error {
	s.activities++
	s.activityWrites++
	return nil
}

func (s *recordingStore) GetActivity(context.Context, string, string) (json.RawMessage, error) {
	s.activityReads++
	return nil, statements.ErrNotFound
}

func (s *recordingStore) GetActivities(context.Context, string, []string) (map[string]json.RawMessage, error) {
	s.activityReads++
	return map[string]json.RawMessage{}, nil
}

func (s *recordingStore) PutActivities(_ context.Context, _ string, acts map[string]json.RawMessage) error {
	s.activities += len(acts)
	s.activityWrites++
	return nil
}

func statementsBody(n int, last string) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"actor":{"mbox":"mailto:l%d@example.com"},"verb":{"id":"http://adlnet.gov/expapi/verbs/answered"},`+
			`"object":{"id":"http://example.com/q/%d","definition":{"name":{"en-US":"Q %d"}}}}`, i, i, i)
	}
	if last != "" {
		b.WriteString("," + last)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func write(t *testing.T, s ingest.Store, body []byte, keep func(*statements.Statement) bool) (*ingest.Result, error) {
	t.Helper()
	w := ingest.New(s, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return w.Write(context.Background(), ingest.Request{Tenant: "t", Version: xapi.V103,
		Authority:   json.RawMessage(`{"mbox":"mailto:authority@example.com"}`),
		ContentType: "application/json", Body: body, Define: true, Keep: keep})
}

// TestLargeBatchInChunks: a batch over ChunkSize reaches the store in chunks of at most
// ChunkSize (issue 22: the store is handed one chunk at a time, so the write never holds every
// completed statement), with the ids answered in request order and only the kept statements
// in the result; a batch of at most ChunkSize is one Put.
func TestLargeBatchInChunks(t *testing.T) {
	n := 2*ingest.ChunkSize + 7
	s := &recordingStore{}
	res, err := write(t, s, statementsBody(n, ""), func(st *statements.Statement) bool { return st.ID == "" })
	if err != nil {
		t.Fatal(err)
	}
	if len(s.puts) != 0 || fmt.Sprint(s.chunks) != fmt.Sprint([]int{ingest.ChunkSize, ingest.ChunkSize, 7}) {
		t.Fatalf("puts %v, chunks %v: want the batch in chunks of %d", s.puts, s.chunks, ingest.ChunkSize)
	}
	if strings.Join(res.IDs, ",") != strings.Join(s.ids, ",") || len(res.IDs) != n {
		t.Fatalf("answered %d ids, stored %d, or not in the same order", len(res.IDs), len(s.ids))
	}
	if len(res.Batch) != 0 {
		t.Fatalf("result keeps %d statements Keep refused", len(res.Batch))
	}
	if s.activities != n {
		t.Fatalf("%d activity definitions merged, want %d", s.activities, n)
	}
	// The merge reads and writes a thousand activities at a time, not one by one.
	if want := (n + 999) / 1000; s.activityReads != want || s.activityWrites != want {
		t.Fatalf("the activity merge made %d reads and %d writes for %d activities, want %d of each", s.activityReads, s.activityWrites, n, want)
	}

	small := &recordingStore{}
	res, err = write(t, small, statementsBody(ingest.ChunkSize, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(small.puts) != fmt.Sprint([]int{ingest.ChunkSize}) || len(small.chunks) != 0 || len(res.Batch) != ingest.ChunkSize {
		t.Fatalf("puts %v, chunks %v, kept %d: want one Put of the whole batch, all kept", small.puts, small.chunks, len(res.Batch))
	}
}

// TestLargeBatchAllOrNothing: an invalid statement at the end of a large batch is found
// before the store sees any statement.
func TestLargeBatchAllOrNothing(t *testing.T) {
	s := &recordingStore{}
	_, err := write(t, s, statementsBody(3*ingest.ChunkSize, `{"actor":{"mbox":"mailto:x@example.com"},"verb":{"id":"not a uri"},"object":{"id":"http://example.com/x"}}`), nil)
	var xe *xapi.Error
	if !errors.As(err, &xe) {
		t.Fatalf("want a client error, got %v", err)
	}
	if len(s.puts)+len(s.chunks)+s.activities != 0 {
		t.Fatalf("the store saw puts %v, chunks %v, %d activities of an invalid batch", s.puts, s.chunks, s.activities)
	}
}

// TestLargeBatchVoidingAVoider: in a batch stored in chunks, a voiding statement whose target
// is a voiding statement of the same batch voids nothing, as in a small one.
func TestLargeBatchVoidingAVoider(t *testing.T) {
	const a, b, c = "aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002", "aaaaaaaa-0000-4000-8000-000000000003"
	voiding := func(id, target string) string {
		return fmt.Sprintf(`{"id":%q,"actor":{"mbox":"mailto:x@example.com"},"verb":{"id":"http://adlnet.gov/expapi/verbs/voided"},`+
			`"object":{"objectType":"StatementRef","id":%q}}`, id, target)
	}
	s := &recordingStore{}
	if _, err := write(t, s, statementsBody(ingest.ChunkSize+1, voiding(b, c)+","+voiding(a, b)), nil); err != nil {
		t.Fatal(err)
	}
	if len(s.chunks) == 0 || s.voids[b] != c || s.voids[a] != "" {
		t.Fatalf("chunks %v; %s voids %q (want %s), %s voids %q (want none)", s.chunks, b, s.voids[b], c, a, s.voids[a])
	}
}
