package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/storage/statements"
)

// WithReportFields gives New the function that derives the report fields of statements
// stored in an index of an older mapping version (see migrate). New fails on such an index
// without it.
func WithReportFields(f statements.DeriveReport) Option {
	return func(s *Store) { s.derive = f }
}

// migrate moves the statements alias from an index of an older mapping version to the
// current one, which EnsureIndex has created: it copies every statement document, adding the
// report fields that version 2 introduced (derived from the stored statement), then swaps the
// alias in one atomic request. Copies are idempotent index operations, so a migration that
// died midway is simply run again by the next New. Statements written to the old index by a
// process of the previous version while the copy runs can be missed: stop those first.
func (s *Store) migrate(ctx context.Context) error {
	current := s.c.Index(mappings.Statements)
	var aliases map[string]json.RawMessage
	if err := s.c.Do(ctx, "get alias "+s.stmts, esapi.IndicesGetAliasRequest{Name: []string{s.stmts}}, &aliases); err != nil {
		return fmt.Errorf("statements/elastic: %w", err)
	}
	var old []string
	for index := range aliases {
		if index != current {
			old = append(old, index)
		}
	}
	if len(old) == 0 {
		return nil
	}
	if len(old) > 1 || len(aliases) > 1 {
		return fmt.Errorf("statements/elastic: alias %s points at several indices %v; fix it by hand", s.stmts, old)
	}
	if s.derive == nil {
		return errors.New("statements/elastic: the statements index " + old[0] + " is of an older mapping version; migrating it needs WithReportFields")
	}
	if err := s.c.Do(ctx, "refresh "+old[0], esapi.IndicesRefreshRequest{Index: old}, nil); err != nil {
		return fmt.Errorf("statements/elastic: %w", err)
	}
	var after []any
	for {
		body := map[string]any{
			"query":            map[string]any{"match_all": map[string]any{}},
			"sort":             []any{map[string]any{"stored": "asc"}, map[string]any{"id": "asc"}},
			"size":             pageSize,
			"track_total_hits": false,
		}
		if after != nil {
			body["search_after"] = after
		}
		hits, err := s.search(ctx, "read "+old[0], old[0], body)
		if err != nil {
			return err
		}
		if len(hits) == 0 {
			break
		}
		ops := make([]bulkOp, 0, len(hits))
		for _, h := range hits {
			var d stmtDoc
			if err := json.Unmarshal(h.Source, &d); err != nil {
				return fmt.Errorf("statements/elastic: migrate %s: %w", h.ID, err)
			}
			if d.Activity != "" {
				result, actors, err := s.derive(json.RawMessage(d.Statement))
				if err != nil {
					return fmt.Errorf("statements/elastic: migrate %s: %w", h.ID, err)
				}
				d.Result, d.ReportActors, d.ReportActorIFIs = result, actors, reportIFIs(actors)
			}
			ops = append(ops, bulkOp{action: "index", index: current, id: h.ID, doc: &d})
			t, err := time.Parse(time.RFC3339Nano, d.Stored)
			if err != nil {
				return fmt.Errorf("statements/elastic: migrate %s: stored: %w", h.ID, err)
			}
			after = []any{t.UnixNano(), d.ID}
		}
		items, err := s.bulk(ctx, "migrate statements", ops)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := it.err("migrate statement"); err != nil {
				return fmt.Errorf("statements/elastic: %w", err)
			}
		}
		if len(hits) < pageSize {
			break
		}
	}
	if err := s.c.Do(ctx, "refresh "+current, esapi.IndicesRefreshRequest{Index: []string{current}}, nil); err != nil {
		return fmt.Errorf("statements/elastic: %w", err)
	}
	actions, _ := json.Marshal(map[string]any{"actions": []any{
		map[string]any{"remove": map[string]any{"index": old[0], "alias": s.stmts}},
		map[string]any{"add": map[string]any{"index": current, "alias": s.stmts}},
	}})
	if err := s.c.Do(ctx, "move alias "+s.stmts, esapi.IndicesUpdateAliasesRequest{Body: bytes.NewReader(actions)}, nil); err != nil {
		// A concurrent migration may have moved it already.
		var now map[string]json.RawMessage
		if err2 := s.c.Do(ctx, "get alias "+s.stmts, esapi.IndicesGetAliasRequest{Name: []string{s.stmts}}, &now); err2 == nil {
			if _, ok := now[current]; ok && len(now) == 1 {
				return nil
			}
		}
		return fmt.Errorf("statements/elastic: %w", err)
	}
	return nil
}
