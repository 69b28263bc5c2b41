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
//
// Statements are taken one at a time (xapi.EachStatement): each is validated, checked
// against the multipart parts, completed and serialised for storage before the next is
// parsed, and only what the batch needs of it is kept (its stored JSON, index fields and
// activity definitions), so the peak of a write stays near a few times the body rather than
// the generic trees of the whole batch (BenchmarkWritePeak).
func (w *Writer) Write(ctx context.Context, r Request) (*Result, error) {
	body := r.Body
	var parts map[string]xapi.Part
	mt := MediaType(r.ContentType)
	if mt == "multipart/mixed" {
		// The parts' data go to the store: a copy, so the Writer keeps no reference to Body.
		js, ps, err := xapi.ParseMultipart(r.ContentType, bytes.Clone(body))
		if err != nil {
			return nil, asBad(err)
		}
		body, parts = js, ps
	}
	// Any other type is read leniently: the body must parse as statements anyway.
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, bad("statement: the request body is empty")
	}
	now := w.now().UTC().Truncate(time.Millisecond)
	var (
		batch []*statements.Statement
		ids   []string
		voids = map[string]string{}
		atts  = newAttachmentSet(parts)
		acts  activityBatch
		// original keeps the statements as sent, for r.Check only.
		original []json.RawMessage
	)
	isArray, err := xapi.EachStatement(body, r.Version, func(st *xapi.Statement, i int, inArray bool) error {
		if r.PutID != "" {
			if inArray {
				return bad("statement: PUT takes exactly one statement object, not an array")
			}
			if got := st.ID(); got != "" && !strings.EqualFold(got, r.PutID) {
				return bad("statement.id: %q differs from the statementId parameter %q", got, r.PutID)
			}
			st.SetID(r.PutID)
		}
		// XAPI-00127: statements with attachments come as application/json (fileUrl only) or
		// multipart/mixed, never as another type the lenient path above lets through.
		if mt != "application/json" && mt != "multipart/mixed" && len(st.Attachments()) > 0 {
			return bad("statements[%d].attachments: a request with attachments must have Content-Type application/json or multipart/mixed, not %q", i, mt)
		}
		if err := atts.add(i, st); err != nil {
			return err
		}
		if r.Define {
			acts.add(st)
		}
		if r.Check != nil {
			original = append(original, json.RawMessage(st.JSON()))
		}
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
		return nil
	})
	if err != nil {
		return nil, asBad(err)
	}
	if r.PutID != "" && isArray {
		return nil, bad("statement: PUT takes exactly one statement object, not an array")
	}
	if len(batch) == 0 {
		return nil, bad("statements: the array is empty")
	}
	stored, err := atts.done()
	if err != nil {
		return nil, err
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
	if err := w.store.Put(ctx, r.Tenant, batch, stored); err != nil {
		return nil, err
	}
	if w.stored != nil {
		w.stored(len(batch))
	}
	if r.Define {
		w.mergeActivities(ctx, r.Tenant, &acts)
	}
	return &Result{IDs: ids, Batch: batch}, nil
}

// attachmentSet checks the multipart parts against the statements as they come: every
// declared attachment without fileUrl needs its part, signatures must verify (add), and
// every part must be declared (done), which returns the parts to store, once per hash.
type attachmentSet struct {
	parts map[string]xapi.Part
	data  map[string][]byte
	used  map[string]bool
	atts  []*statements.Attachment
}

func newAttachmentSet(parts map[string]xapi.Part) *attachmentSet {
	s := &attachmentSet{parts: parts, data: map[string][]byte{}, used: map[string]bool{}}
	for sha, part := range parts {
		s.data[sha] = part.Data
	}
	return s
}

// add checks statement i's attachments and signature (before Complete changes it).
func (s *attachmentSet) add(i int, st *xapi.Statement) error {
	for _, a := range st.Attachments() {
		part, ok := s.parts[a.SHA2]
		if !ok {
			if a.FileURL == "" || a.Signature {
				return bad("statement[%d].attachments: no multipart part carries the attachment with sha2 %s", i, a.SHA2)
			}
			continue
		}
		if !s.used[a.SHA2] {
			ctype := part.ContentType
			if ctype == "" {
				ctype = a.ContentType
			}
			s.atts = append(s.atts, &statements.Attachment{SHA2: a.SHA2, ContentType: ctype, Data: part.Data})
		}
		s.used[a.SHA2] = true
	}
	if err := st.VerifySignature(s.data); err != nil {
		return asBad(err)
	}
	return nil
}

func (s *attachmentSet) done() ([]*statements.Attachment, error) {
	for sha := range s.parts {
		if !s.used[sha] {
			return nil, bad("attachments: the multipart part with hash %s is not declared by any statement", sha)
		}
	}
	return s.atts, nil
}

// activityBatch is the batch's activity definitions, merged in memory in statement order,
// so each activity is read and written once per batch.
type activityBatch struct {
	defs  map[string]json.RawMessage
	order []string
}

func (b *activityBatch) add(st *xapi.Statement) {
	if b.defs == nil {
		b.defs = map[string]json.RawMessage{}
	}
	for id, act := range st.Activities() {
		if old, ok := b.defs[id]; ok {
			// Definitions come serialised canonically, so equal bytes merge to themselves:
			// most statements of a batch repeat their activities' definitions.
			if !bytes.Equal(old, act) {
				b.defs[id] = xapi.MergeActivity(old, act)
			}
			continue
		}
		b.defs[id] = act
		b.order = append(b.order, id)
	}
}

// mergeActivities keeps the canonical definition of every activity the statements define
// (the batch's definitions merged by activityBatch), not writing one the merge leaves as it
// was. Failures are logged: the statements are stored already.
func (w *Writer) mergeActivities(ctx context.Context, tid string, acts *activityBatch) {
	batch, order := acts.defs, acts.order
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
