package runtime

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/course"
)

func ptr[T any](v T) *T { return &v }

// TestSharedMapsDefaults: a map without readSharedData or writeSharedData may do both (CAM
// defaults), a repeated or empty target is left out, and sharedDataGlobalToSystem is true
// unless the organization says false.
func TestSharedMapsDefaults(t *testing.T) {
	act := &course.Activity{ID: "a", SharedData: []course.SharedDataMap{
		{TargetID: "t1"}, {TargetID: "t2", WriteSharedData: ptr(false)}, {TargetID: "t3", ReadSharedData: ptr(false)},
		{TargetID: "t1", WriteSharedData: ptr(false)}, {TargetID: ""}}}
	want := []SharedMap{{"t1", true, true}, {"t2", true, false}, {"t3", false, true}}
	if got := SharedMaps(act); !reflect.DeepEqual(got, want) {
		t.Fatalf("SharedMaps = %+v, want %+v", got, want)
	}
	pkg := &course.Package{Root: &course.Activity{ID: "org"}}
	if !SharedDataGlobal(pkg) {
		t.Fatal("an organization without sharedDataGlobalToSystem is not global")
	}
	pkg.Root.Extra = &course.ActivityExt{SharedDataGlobalToSystem: ptr(false)}
	if SharedDataGlobal(pkg) {
		t.Fatal("sharedDataGlobalToSystem false is global")
	}
}

// TestSharedWritesAccess: a commit's adl.data comes out of its values as writes, in adl.data
// order; a write the activity's maps do not allow is refused with the RTE's code (404 for a
// store it may only read, 401 for one it does not map), and malformed ones as the data model
// refuses them.
func TestSharedWritesAccess(t *testing.T) {
	act := &course.Activity{ID: "a", SharedData: []course.SharedDataMap{
		{TargetID: "rw"}, {TargetID: "ro", WriteSharedData: ptr(false)}, {TargetID: "wo", ReadSharedData: ptr(false)}}}
	c, err := ParseCommit(SCORM2004, []byte(`{"commitSequence":1,"cmi.location":"p1","adl.data._count":"3",
		"adl.data.2.id":"wo","adl.data.2.store":"w","adl.data.0.id":"rw","adl.data.0.store":"","adl.data.1.id":"ro"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []SharedWrite{{"rw", ""}, {"wo", "w"}}; !reflect.DeepEqual(c.SharedData, want) {
		t.Fatalf("SharedData = %+v, want %+v", c.SharedData, want)
	}
	if want := (Values{"cmi.location": "p1"}); !reflect.DeepEqual(c.Values, want) {
		t.Fatalf("Values = %v, want %v (adl.data is not the activity's data)", c.Values, want)
	}
	if err := CheckSharedWrites(act, c); err != nil {
		t.Fatalf("allowed writes refused: %v", err)
	}
	code := func(err error) int {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%v is not an *Error", err)
		}
		return e.Code
	}
	for _, tc := range []struct {
		writes []SharedWrite
		code   int
	}{
		{[]SharedWrite{{"ro", "x"}}, CodeReadOnly2004},
		{[]SharedWrite{{"other", "x"}}, CodeUndefined},
	} {
		if err := CheckSharedWrites(act, &Commit{SharedData: tc.writes}); err == nil || code(err) != tc.code {
			t.Errorf("%+v: %v, want code %d", tc.writes, err, tc.code)
		}
	}
	for body, want := range map[string]int{
		`{"commitSequence":1,"adl.data.0.store":"x"}`:                                                                  CodeGeneral,
		`{"commitSequence":1,"adl.data.0.value":"x"}`:                                                                  CodeUndefined,
		`{"commitSequence":1,"adl.data.0.id":"rw","adl.data.0.store":"` + strings.Repeat("x", MaxSharedStore+1) + `"}`: CodeRange2004,
	} {
		if _, err := ParseCommit(SCORM2004, []byte(body)); err == nil || code(err) != want {
			t.Errorf("%.60s: %v, want code %d", body, err, want)
		}
	}
}

// TestSharedStores: the learner's stores are read by every scope naming the learner; an
// attempt's stores only by the same attempt of the same registration instance; a store
// written "" is uninitialized again; a reader sees only the targets it asks for.
func TestSharedStores(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	ann := SharedScope{Learner: "ann"}
	if err := s.WriteShared(ctx, "acme", ann, []SharedWrite{{"t1", "one"}, {"t2", "two"}}); err != nil {
		t.Fatal(err)
	}
	read := func(sc SharedScope, ids ...string) SharedStores {
		t.Helper()
		got, err := s.ReadShared(ctx, "acme", sc, ids)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := read(ann, "t1", "t3"); !reflect.DeepEqual(got, SharedStores{"t1": "one"}) {
		t.Fatalf("learner's stores: %v", got)
	}
	if got := read(SharedScope{Learner: "bob"}, "t1"); len(got) != 0 {
		t.Fatalf("another learner reads %v", got)
	}
	if err := s.WriteShared(ctx, "acme", ann, []SharedWrite{{"t1", ""}}); err != nil {
		t.Fatal(err)
	}
	if got := read(ann, "t1", "t2"); !reflect.DeepEqual(got, SharedStores{"t2": "two"}) {
		t.Fatalf("after writing t1 empty: %v", got)
	}
	first := SharedScope{Registration: "r1", Instance: "k1", Attempt: 1}
	if err := s.WriteShared(ctx, "acme", first, []SharedWrite{{"t1", "attempt one"}}); err != nil {
		t.Fatal(err)
	}
	if got := read(first, "t1"); !reflect.DeepEqual(got, SharedStores{"t1": "attempt one"}) {
		t.Fatalf("attempt's stores: %v", got)
	}
	second := first
	second.Attempt = 2
	if got := read(second, "t1"); len(got) != 0 {
		t.Fatalf("a new attempt reads the last one's stores: %v", got)
	}
	if got := read(SharedScope{Registration: "r1", Instance: "k2", Attempt: 1}, "t1"); len(got) != 0 {
		t.Fatalf("another instance reads %v", got)
	}
	if err := s.WriteShared(ctx, "acme", second, []SharedWrite{{"t2", "attempt two"}}); err != nil {
		t.Fatal(err)
	}
	if got := read(second, "t1", "t2"); !reflect.DeepEqual(got, SharedStores{"t2": "attempt two"}) {
		t.Fatalf("second attempt's stores: %v", got)
	}
	if err := s.DeleteInstance(ctx, "acme", "r1", "k1"); err != nil {
		t.Fatal(err)
	}
	if got := read(second, "t2"); len(got) != 0 {
		t.Fatalf("after the instance is deleted: %v", got)
	}
}
