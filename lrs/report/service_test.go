package report_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/lrs/report"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/storage/statements"
	"github.com/lectern-lms/lectern/storage/statements/sqlite"
)

// The use case over a real (SQLite) store: continuation tokens, the read rule on them, the
// not-found answers. The port's behaviour itself is statementstest's contract.
func TestService(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "lrs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var batch []*statements.Statement
	for i := range 5 {
		body := map[string]any{
			"id":     fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			"actor":  map[string]any{"mbox": fmt.Sprintf("mailto:l%d@example.com", i), "name": fmt.Sprintf("L%d", i)},
			"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/completed"},
			"object": map[string]any{"id": fmt.Sprintf("http://example.com/a/%d", i%3)},
			"result": map[string]any{"score": map[string]any{"raw": i}},
		}
		raw, _ := json.Marshal(body)
		ss, _, err := xapi.ParseStatements(raw, xapi.V103)
		if err != nil {
			t.Fatal(err)
		}
		f := ss[0].Fields()
		f.Stored = time.Now()
		batch = append(batch, &f)
	}
	if err := store.Put(ctx, "t", batch, nil); err != nil {
		t.Fatal(err)
	}
	svc := report.Service{Store: store, ResultsLimit: 2, ListLimit: 2}

	var names []string
	r := report.Request{Tenant: "t"}
	for {
		p, err := svc.Actors(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range p.Results {
			names = append(names, a.Name)
		}
		if p.More == "" {
			break
		}
		r.More = p.More
	}
	if fmt.Sprint(names) != "[L0 L1 L2 L3 L4]" {
		t.Errorf("actors over pages: %v", names)
	}

	// Two statements match a/0 (0 and 3), one per page.
	svc.ResultsLimit = 1
	first, err := svc.Results(ctx, report.Request{Tenant: "t", Activity: "http://example.com/a/0"})
	if err != nil || len(first.Results) != 1 || first.More == "" || first.Results[0].Actor.Name != "L3" {
		t.Fatalf("results: %v %+v", err, first)
	}
	next, err := svc.Results(ctx, report.Request{Tenant: "t", More: first.More})
	if err != nil || len(next.Results) != 1 || next.More != "" || next.Results[0].Actor.Name != "L0" {
		t.Errorf("continued results: %v %+v", err, next)
	}
	if _, err := svc.Results(ctx, report.Request{Tenant: "t", More: first.More, Viewer: "mbox:mailto:l0@example.com"}); !errors.Is(err, report.ErrForbidden) {
		t.Errorf("another principal's continuation: %v", err)
	}
	if _, err := svc.Results(ctx, report.Request{Tenant: "other", More: first.More}); !errors.Is(err, report.ErrInvalid) {
		t.Errorf("continuation in another tenant: %v", err)
	}
	if _, err := svc.Actors(ctx, report.Request{Tenant: "t", More: first.More}); !errors.Is(err, report.ErrInvalid) {
		t.Errorf("results continuation given to actors: %v", err)
	}
	for _, r := range []report.Request{{Tenant: "t"}, {Tenant: "t", More: "%%%"}} {
		if _, err := svc.Results(ctx, r); !errors.Is(err, report.ErrInvalid) {
			t.Errorf("results %+v: %v", r, err)
		}
	}
	if _, err := svc.Results(ctx, report.Request{Tenant: "t", Agent: "mbox:mailto:nobody@example.com"}); !errors.Is(err, report.ErrNotFound) {
		t.Errorf("results of nobody: %v", err)
	}
	if _, err := svc.Actors(ctx, report.Request{Tenant: "t", Activity: "http://example.com/none"}); !errors.Is(err, report.ErrNotFound) {
		t.Errorf("actors of no activity: %v", err)
	}
	acts, err := svc.Activities(ctx, report.Request{Tenant: "t", Agent: "mbox:mailto:nobody@example.com"})
	if err != nil || acts.Results == nil || len(acts.Results) != 0 {
		t.Errorf("activities of nobody: %v %+v", err, acts)
	}
	mine, err := svc.Actors(ctx, report.Request{Tenant: "t", Viewer: "mbox:mailto:l1@example.com"})
	if err != nil || len(mine.Results) != 1 || mine.Results[0].Mbox != "mailto:l1@example.com" {
		t.Errorf("a viewer's actors: %v %+v", err, mine)
	}
}
