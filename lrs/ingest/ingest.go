// Package ingest is the record store's statement-write use case: a PUT or POST body
// (application/json or multipart/mixed with attachments) validated, completed and stored as
// one batch, then the canonical activity definitions merged. It is plain Go over the
// statement store port; the HTTP layer only translates requests and errors.
package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/storage/statements"
)

// Store is the part of the statement store a write needs.
type Store interface {
	Get(ctx context.Context, tenant, id string) (*statements.Statement, error)
	Put(ctx context.Context, tenant string, batch []*statements.Statement, attachments []*statements.Attachment) error
	statements.Activities
}

// Writer runs statement writes against one store.
type Writer struct {
	store Store
	log   *slog.Logger
	now   func() time.Time
	// stored, when set, is told how many statements each successful write stored.
	stored func(n int)
}

// Option adjusts a Writer.
type Option func(*Writer)

// OnStored has f called with the number of statements after every successful write (the
// statements-stored metric); nil f does nothing.
func OnStored(f func(n int)) Option { return func(w *Writer) { w.stored = f } }

// New returns a Writer over store; log receives activity-merge failures (the statements are
// stored by then, so those do not fail the request).
func New(store Store, log *slog.Logger, opts ...Option) *Writer {
	w := &Writer{store: store, log: log, now: time.Now}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Request is one statement write.
type Request struct {
	Tenant string
	// Version is the xAPI version the client speaks; Authority the authority to set.
	Version   xapi.Version
	Authority json.RawMessage
	// ContentType and Body are the request's; the Writer keeps no reference to Body.
	ContentType string
	Body        []byte
	// PutID is the statementId of a PUT (lowercase), empty for a POST.
	PutID string
	// Define reports the define permission: without it the canonical activity definitions
	// are left as they were.
	Define bool
	// Check, when set, sees the statements as sent (original) and as completed (batch)
	// before they are stored; an error refuses the whole write and is returned as it is.
	Check func(original []json.RawMessage, batch []*statements.Statement) error
}

// Result is what a successful write stored.
type Result struct {
	// IDs are the statement ids in request order (POST answers them).
	IDs []string
	// Batch is what was stored, for the hooks that follow a write.
	Batch []*statements.Statement
}

// bad is a client error: the HTTP layer answers 400 with its text.
func bad(format string, a ...any) error { return &xapi.Error{Msg: fmt.Sprintf(format, a...)} }

// asBad makes a parsing failure a client error, keeping an *xapi.Error as it is.
func asBad(err error) error {
	var xe *xapi.Error
	if errors.As(err, &xe) {
		return xe
	}
	return &xapi.Error{Msg: err.Error()}
}

// MediaType is the lowercased media type of a Content-Type header, parameters dropped.
func MediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// Write validates the request body, completes the statements and stores them as one batch.
// Bad input fails with an *xapi.Error; store failures come back wrapped as the store gave
// them (statements.ErrConflict for a changed statement under a stored id).
func (w *Writer) Write(ctx context.Context, r Request) (*Result, error) {
	body := bytes.Clone(r.Body)
	var parts map[string]xapi.Part
	mt := MediaType(r.ContentType)
	if mt == "multipart/mixed" {
		js, ps, err := xapi.ParseMultipart(r.ContentType, body)
		if err != nil {
			return nil, asBad(err)
		}
		body, parts = js, ps
	}
	// Any other type is read leniently: the body must parse as statements anyway.
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, bad("statement: the request body is empty")
	}
	stmts, isArray, err := xapi.ParseStatements(body, r.Version)
	if err != nil {
		return nil, asBad(err)
	}
	if r.PutID != "" {
		if isArray || len(stmts) != 1 {
			return nil, bad("statement: PUT takes exactly one statement object, not an array")
		}
		if got := stmts[0].ID(); got != "" && !strings.EqualFold(got, r.PutID) {
			return nil, bad("statement.id: %q differs from the statementId parameter %q", got, r.PutID)
		}
		stmts[0].SetID(r.PutID)
	}
	if len(stmts) == 0 {
		return nil, bad("statements: the array is empty")
	}
	// XAPI-00127: statements with attachments come as application/json (fileUrl only) or
	// multipart/mixed, never as another type the lenient path above lets through.
	if mt != "application/json" && mt != "multipart/mixed" {
		for i, st := range stmts {
			if len(st.Attachments()) > 0 {
				return nil, bad("statements[%d].attachments: a request with attachments must have Content-Type application/json or multipart/mixed, not %q", i, mt)
			}
		}
	}
	seen := map[string]bool{}
	for i, st := range stmts {
		if id := strings.ToLower(st.ID()); id != "" {
			if seen[id] {
				return nil, bad("statements[%d].id: %s appears twice in the batch", i, id)
			}
			seen[id] = true
		}
	}
	atts, err := attachments(stmts, parts)
	if err != nil {
		return nil, err
	}

	var original []json.RawMessage
	if r.Check != nil {
		for _, st := range stmts {
			original = append(original, json.RawMessage(st.JSON()))
		}
	}
	now := w.now().UTC().Truncate(time.Millisecond)
	batch := make([]*statements.Statement, 0, len(stmts))
	ids := make([]string, 0, len(stmts))
	voids := map[string]string{}
	for _, st := range stmts {
		st.Complete(r.Authority, now, r.Version)
		f := st.Fields() // serialises the completed statement once: f.Raw
		f.Tenant, f.Stored = r.Tenant, now
		if f.ID == "" {
			f.ID = st.ID()
		}
		if t := st.VoidTarget(); t != "" {
			f.Voids = strings.ToLower(t)
			voids[f.ID] = f.Voids
		}
		batch = append(batch, &f)
		ids = append(ids, f.ID)
	}
	// A voiding statement that targets another voiding statement is stored but voids nothing.
	for _, f := range batch {
		if f.Voids == "" {
			continue
		}
		if _, inBatch := voids[f.Voids]; inBatch {
			f.Voids = ""
			continue
		}
		target, err := w.store.Get(ctx, r.Tenant, f.Voids)
		switch {
		case err == nil && target.Voids != "":
			f.Voids = ""
		case err != nil && !errors.Is(err, statements.ErrNotFound):
			return nil, fmt.Errorf("voiding target %s: %w", f.Voids, err)
		}
	}
	if r.Check != nil {
		if err := r.Check(original, batch); err != nil {
			return nil, err
		}
	}
	if err := w.store.Put(ctx, r.Tenant, batch, atts); err != nil {
		return nil, err
	}
	if w.stored != nil {
		w.stored(len(batch))
	}
	if r.Define {
		w.mergeActivities(ctx, r.Tenant, stmts)
	}
	return &Result{IDs: ids, Batch: batch}, nil
}

// attachments checks the multipart parts against the statements: every declared attachment
// without fileUrl needs its part, every part must be declared, signatures must verify. It
// returns the parts to store, once per hash.
func attachments(stmts []*xapi.Statement, parts map[string]xapi.Part) ([]*statements.Attachment, error) {
	used := map[string]bool{}
	data := map[string][]byte{}
	for sha, part := range parts {
		data[sha] = part.Data
	}
	var atts []*statements.Attachment
	for i, st := range stmts {
		for _, a := range st.Attachments() {
			part, ok := parts[a.SHA2]
			if !ok {
				if a.FileURL == "" || a.Signature {
					return nil, bad("statement[%d].attachments: no multipart part carries the attachment with sha2 %s", i, a.SHA2)
				}
				continue
			}
			if !used[a.SHA2] {
				ctype := part.ContentType
				if ctype == "" {
					ctype = a.ContentType
				}
				atts = append(atts, &statements.Attachment{SHA2: a.SHA2, ContentType: ctype, Data: part.Data})
			}
			used[a.SHA2] = true
		}
		if err := st.VerifySignature(data); err != nil {
			return nil, asBad(err)
		}
	}
	for sha := range parts {
		if !used[sha] {
			return nil, bad("attachments: the multipart part with hash %s is not declared by any statement", sha)
		}
	}
	return atts, nil
}

// mergeActivities keeps the canonical definition of every activity the statements define.
// The batch's definitions are merged in memory first (statement order), so each activity is
// read and written once per batch, and not written at all when the merge changes nothing.
// Failures are logged: the statements are stored already.
func (w *Writer) mergeActivities(ctx context.Context, tid string, stmts []*xapi.Statement) {
	batch := map[string]json.RawMessage{}
	var order []string
	for _, st := range stmts {
		for id, act := range st.Activities() {
			if old, ok := batch[id]; ok {
				// Definitions come serialised canonically, so equal bytes merge to themselves:
				// most statements of a batch repeat their activities' definitions.
				if !bytes.Equal(old, act) {
					batch[id] = xapi.MergeActivity(old, act)
				}
				continue
			}
			batch[id] = act
			order = append(order, id)
		}
	}
	for _, id := range order {
		act := batch[id]
		old, err := w.store.GetActivity(ctx, tid, id)
		if err != nil && !errors.Is(err, statements.ErrNotFound) {
			w.log.Warn("lrs: read activity", "tenant", tid, "activity", id, "error", err)
			continue
		}
		merged := act
		if bytes.Equal(old, act) {
			continue
		}
		if old != nil {
			merged = xapi.MergeActivity(old, act)
			if bytes.Equal(merged, old) {
				continue
			}
		}
		if err := w.store.PutActivity(ctx, tid, id, merged); err != nil {
			w.log.Warn("lrs: store activity", "tenant", tid, "activity", id, "error", err)
		}
	}
}
