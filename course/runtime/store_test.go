package runtime

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/storage/record/sqlite"
)

func testStore(t *testing.T) *Store {
	records, err := sqlite.Open(filepath.Join(t.TempDir(), "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { records.Close() })
	return NewStore(records)
}

// TestCommitKeepsWhatItLeavesOut: a commit's values are laid over the stored ones, the store's
// own rules (SCORM 1.2 finish, AICC time, a fresh attempt) read the values as merged, and the
// answer is the record as stored.
func TestCommitKeepsWhatItLeavesOut(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	reg := &registration.Registration{ID: "r1"}
	in := registration.Instance{Key: "00000000-0000-0000-0000-000000000001"}
	commit := func(act string, d Dialect, attempt int64, c *Commit) *Record {
		t.Helper()
		rec, err := s.Commit(ctx, "acme", reg.ID, in.Key, act, d, attempt, c)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.Get(ctx, "acme", reg.ID, in.Key, act)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rec, stored) {
			t.Fatalf("answer %+v, stored %+v", rec, stored)
		}
		return rec
	}
	commit("sco1", SCORM12, 1, &Commit{Sequence: 1, Values: Values{"cmi.core.lesson_location": "p1", "cmi.suspend_data": "s",
		"cmi.interactions.0.id": "q0", "cmi.core.total_time": "0000:01:00"}})
	rec := commit("sco1", SCORM12, 1, &Commit{Sequence: 2, Finish12: true, Values: Values{"cmi.core.lesson_location": "p2",
		"cmi.interactions.1.id": "q1"}})
	want := Values{"cmi.core.lesson_location": "p2", "cmi.suspend_data": "s", "cmi.interactions.0.id": "q0",
		"cmi.interactions.1.id": "q1", "cmi.core.total_time": "0000:01:00", "cmi.core.lesson_status": "completed"}
	if !reflect.DeepEqual(rec.Values, want) || rec.Commits != 2 || rec.Sequence != 2 {
		t.Fatalf("%+v, want values %v", rec, want)
	}
	if _, err := s.Commit(ctx, "acme", reg.ID, in.Key, "sco1", SCORM12, 1, &Commit{Sequence: 2, Values: Values{}}); err == nil {
		t.Fatal("stale commit stored")
	}
	// AICC: the session's time is added to the stored total.
	rec = commit("sco1", SCORM12, 2, &Commit{Sequence: 1, HACP: &HACPTime{Session: "s1", Seconds: 30}, Values: Values{"cmi.core.session_time": "0000:00:30"}})
	if rec.Values["cmi.core.total_time"] != Timespan(90) || rec.Values["cmi.suspend_data"] != "s" {
		t.Fatalf("AICC time: %v", rec.Values)
	}
	// SCORM 2004: a load after an exit that was not a suspend starts afresh, keeping the completion.
	commit("sco2", SCORM2004, 1, &Commit{Sequence: 1, Values: Values{"cmi.completion_status": "completed", "cmi.exit": "normal",
		"cmi.location": "x"}})
	rec = commit("sco2", SCORM2004, 2, &Commit{Sequence: 1, Values: Values{"cmi.completion_status": "incomplete"}})
	if !reflect.DeepEqual(rec.Values, Values{"cmi.completion_status": "incomplete"}) || !rec.Completed {
		t.Fatalf("fresh attempt: %+v", rec)
	}

	// progress/detail's state, read as the elements are met, is the state of the records.
	recs, err := s.List(ctx, "acme", reg.ID, in.Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, known := range [][]*Record{nil, {recs["sco1"]}} {
		for _, detail := range []bool{false, true} {
			got, err := s.State(ctx, "acme", reg, in, detail, known...)
			if err != nil {
				t.Fatal(err)
			}
			if want := StateOf(recs, detail); !reflect.DeepEqual(got, want) {
				t.Fatalf("detail %v, known %v:\n got %+v\nwant %+v", detail, known != nil, got, want)
			}
			if detail && len(got["sco1"].Interactions) != 2 {
				t.Fatalf("interactions: %+v", got["sco1"].Interactions)
			}
		}
	}
}

// TestCommitInBodyOrder: commits parsed from bodies are stored in their order, and the next
// commit's merge is the same whether its elements come in the stored order, with some added
// or left out, or in a map replaced after parsing (a no-credit session's).
func TestCommitInBodyOrder(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	parse := func(body string) *Commit {
		t.Helper()
		c, err := ParseCommit(SCORM12, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if c.inOrder() == nil {
			t.Fatalf("%s: no order", body)
		}
		return c
	}
	commit := func(c *Commit, want Values) {
		t.Helper()
		rec, err := s.Commit(ctx, "acme", "r1", "00000000-0000-0000-0000-000000000001", "sco1", SCORM12, 1, c)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.Get(ctx, "acme", "r1", "00000000-0000-0000-0000-000000000001", "sco1")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rec.Values, want) || !reflect.DeepEqual(stored.Values, want) {
			t.Fatalf("answer %v\nstored %v\nwant %v", rec.Values, stored.Values, want)
		}
	}
	commit(parse(`{"commitSequence":1,"cmi":{"core":{"lesson_status":"incomplete","score":{"raw":"50"}},"suspend_data":"a",
		"interactions":[{"id":"q0","result":"correct"},{"id":"q1","result":"wrong"}]}}`),
		Values{"cmi.core.lesson_status": "incomplete", "cmi.core.score.raw": "50", "cmi.suspend_data": "a",
			"cmi.interactions.0.id": "q0", "cmi.interactions.0.result": "correct", "cmi.interactions.1.id": "q1", "cmi.interactions.1.result": "wrong"})
	// An element added in the middle, one left out, one changed.
	commit(parse(`{"commitSequence":2,"cmi":{"core":{"lesson_status":"passed","lesson_location":"p","score":{"raw":"90"}},
		"interactions":[{"id":"q0","result":"correct"},{"id":"q1","result":"correct"}]}}`),
		Values{"cmi.core.lesson_status": "passed", "cmi.core.lesson_location": "p", "cmi.core.score.raw": "90", "cmi.suspend_data": "a",
			"cmi.interactions.0.id": "q0", "cmi.interactions.0.result": "correct", "cmi.interactions.1.id": "q1", "cmi.interactions.1.result": "correct"})
	// The values replaced after parsing: the body's order is not used.
	c := parse(`{"commitSequence":3,"cmi":{"core":{"lesson_status":"failed","score":{"raw":"10"}},"suspend_data":"b"}}`)
	c.Values = c.Values.WithoutResults()
	if c.inOrder() != nil {
		t.Fatal("order kept for replaced values")
	}
	commit(c, Values{"cmi.core.lesson_status": "passed", "cmi.core.lesson_location": "p", "cmi.core.score.raw": "90", "cmi.suspend_data": "b",
		"cmi.interactions.0.id": "q0", "cmi.interactions.0.result": "correct", "cmi.interactions.1.id": "q1", "cmi.interactions.1.result": "correct"})
}
