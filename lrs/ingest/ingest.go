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
	PutChunks(ctx context.Context, tenant string, chunks statements.Chunks, attachments []*statements.Attachment) error
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
	// Keep, when set, chooses the statements Result.Batch holds (nil: all of them): a large
	// batch is not kept whole otherwise (see Write).
	Keep func(st *statements.Statement) bool
}

// Result is what a successful write stored.
type Result struct {
	// IDs are the statement ids in request order (POST answers them).
	IDs []string
	// Batch is what was stored, for the hooks that follow a write: the statements
	// Request.Keep chose, in request order.
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

// ChunkSize is the most statements a write hands the store at a time: a batch of more is
// stored with Store.PutChunks, one chunk of completed statements in memory at a time.
const ChunkSize = 500

// activityChunk is the most activities whose definitions are merged in memory at a time
// after a batch of more than ChunkSize statements.
const activityChunk = 1000

// Write validates the request body, completes the statements and stores them as one batch.
// Bad input fails with an *xapi.Error; store failures come back wrapped as the store gave
// them (statements.ErrConflict for a changed statement under a stored id).
//
// Statements are taken one at a time (xapi.EachStatement): each is validated and checked
// against the multipart parts before the next is parsed. A batch of at most ChunkSize
// statements is kept completed and serialised for storage as it is validated and stored with
// Store.Put. A larger one is not kept: once every statement is valid (pass 1, which keeps only
// what the voiding rule and the attachments need), the store re-reads the body through
// Store.PutChunks in chunks of ChunkSize (pass 2), and after it is stored the activity
// definitions are merged from a third reading, activityChunk activities at a time. Its cost
// is the body and one chunk, not every parsed statement (issue 22; BenchmarkWritePeak, the
// server's BenchmarkRequestMemory).
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
		// batch is the completed batch while it fits in one chunk (always with r.Check).
		batch     []*statements.Statement
		streaming bool
		n         int
		// voiders holds the ids the batch's voiding statements were sent with, targets what
		// they void (both lowercase): the voiding rule needs nothing else of the batch.
		voiders = map[string]bool{}
		targets = map[string]bool{}
		atts    = newAttachmentSet(parts)
		acts    activityBatch
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
		if t := st.VoidTarget(); t != "" {
			targets[strings.ToLower(t)] = true
			if id := st.ID(); id != "" {
				voiders[strings.ToLower(id)] = true
			}
		}
		n++
		if streaming {
			return nil
		}
		if r.Define {
			acts.add(st)
		}
		if r.Check != nil {
			original = append(original, json.RawMessage(st.JSON()))
		}
		batch = append(batch, complete(st, &r, now))
		if r.Check == nil && len(batch) > ChunkSize {
			streaming, batch, acts = true, nil, activityBatch{}
		}
		return nil
	})
	if err != nil {
		return nil, asBad(err)
	}
	if r.PutID != "" && isArray {
		return nil, bad("statement: PUT takes exactly one statement object, not an array")
	}
	if n == 0 {
		return nil, bad("statements: the array is empty")
	}
	stored, err := atts.done()
	if err != nil {
		return nil, err
	}
	// A voiding statement that targets another voiding statement is stored but voids nothing.
	voidsNothing := map[string]bool{}
	for t := range targets {
		if voiders[t] {
			voidsNothing[t] = true
			continue
		}
		target, err := w.store.Get(ctx, r.Tenant, t)
		switch {
		case err == nil && target.Voids != "":
			voidsNothing[t] = true
		case err != nil && !errors.Is(err, statements.ErrNotFound):
			return nil, fmt.Errorf("voiding target %s: %w", t, err)
		}
	}
	keep := func(st *statements.Statement) bool { return r.Keep == nil || r.Keep(st) }
	res := &Result{}
	if !streaming {
		for _, f := range batch {
			if voidsNothing[f.Voids] {
				f.Voids = ""
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
		for _, f := range batch {
			res.IDs = append(res.IDs, f.ID)
			if keep(f) {
				res.Batch = append(res.Batch, f)
			}
		}
	} else {
		res.IDs = make([]string, 0, n)
		chunks := func(put func([]*statements.Statement) error) error {
			chunk := make([]*statements.Statement, 0, ChunkSize)
			flush := func() error {
				if err := put(chunk); err != nil {
					return err
				}
				for _, f := range chunk {
					if keep(f) {
						res.Batch = append(res.Batch, f)
					}
				}
				chunk = chunk[:0]
				return nil
			}
			_, err := xapi.EachStatement(body, r.Version, func(st *xapi.Statement, _ int, _ bool) error {
				f := complete(st, &r, now)
				if voidsNothing[f.Voids] {
					f.Voids = ""
				}
				res.IDs = append(res.IDs, f.ID)
				if chunk = append(chunk, f); len(chunk) == ChunkSize {
					return flush()
				}
				return nil
			})
			if err != nil {
				// Pass 1 found the body valid: this is not the client's error.
				var xe *xapi.Error
				if errors.As(err, &xe) {
					return fmt.Errorf("statements: second reading of a valid body: %v", xe)
				}
				return err
			}
			if len(chunk) > 0 {
				return flush()
			}
			return nil
		}
		if err := w.store.PutChunks(ctx, r.Tenant, chunks, stored); err != nil {
			return nil, err
		}
	}
	if w.stored != nil {
		w.stored(n)
	}
	if r.Define {
		if streaming {
			w.mergeBodyActivities(ctx, r, body)
		} else {
			w.mergeActivities(ctx, r.Tenant, &acts)
		}
	}
	return res, nil
}

// complete completes st (Request.Authority, the stored instant) and returns it as the store
// takes it: serialised once, with its index fields.
func complete(st *xapi.Statement, r *Request, now time.Time) *statements.Statement {
	st.Complete(r.Authority, now, r.Version)
	f := st.Fields() // serialises the completed statement once: f.Raw
	f.Tenant, f.Stored = r.Tenant, now
	if f.ID == "" {
		f.ID = st.ID()
	}
	if t := st.VoidTarget(); t != "" {
		f.Voids = strings.ToLower(t)
	}
	return &f
}

// mergeBodyActivities merges the activity definitions of a stored batch too large to have
// kept them, reading body once more, activityChunk activities at a time in statement order.
func (w *Writer) mergeBodyActivities(ctx context.Context, r Request, body []byte) {
	var acts activityBatch
	_, err := xapi.EachStatement(body, r.Version, func(st *xapi.Statement, _ int, _ bool) error {
		acts.add(st)
		if len(acts.order) >= activityChunk {
			w.mergeActivities(ctx, r.Tenant, &acts)
			acts = activityBatch{}
		}
		return nil
	})
	if err != nil {
		w.log.Warn("lrs: read activities of a stored batch", "tenant", r.Tenant, "error", err)
		return
	}
	w.mergeActivities(ctx, r.Tenant, &acts)
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
// was: the stored ones are read in one request and the changed ones written in one, so a
// batch of 1,000 new activities costs two round trips, not 2,000. Failures are logged: the
// statements are stored already.
func (w *Writer) mergeActivities(ctx context.Context, tid string, acts *activityBatch) {
	batch, order := acts.defs, acts.order
	if len(order) == 0 {
		return
	}
	stored, err := w.store.GetActivities(ctx, tid, order)
	if err != nil {
		w.log.Warn("lrs: read activities", "tenant", tid, "activities", len(order), "error", err)
		return
	}
	changed := make(map[string]json.RawMessage)
	for _, id := range order {
		act, old := batch[id], stored[id]
		if bytes.Equal(old, act) {
			continue
		}
		merged := act
		if old != nil {
			merged = xapi.MergeActivity(old, act)
			if bytes.Equal(merged, old) {
				continue
			}
		}
		changed[id] = merged
	}
	if err := w.store.PutActivities(ctx, tid, changed); err != nil {
		w.log.Warn("lrs: store activities", "tenant", tid, "activities", len(changed), "error", err)
	}
}
