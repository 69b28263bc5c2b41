package elastic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/statements"
)

// written is a statement Put creates, with the values written back to the caller's
// statement once the whole batch is stored.
type written struct {
	st     *statements.Statement
	stored time.Time
	raw    json.RawMessage
	voided bool
}

// PutChunks implements statements.Store with one Put of every chunk gathered: Put's checks
// and its rollback need the whole batch, so this backend holds it (the memory bound of
// PutChunks is the embedded store's; docs/benchmarks.md).
func (s *Store) PutChunks(ctx context.Context, tenant string, chunks statements.Chunks, attachments []*statements.Attachment) error {
	var batch []*statements.Statement
	if err := chunks(func(chunk []*statements.Statement) error {
		batch = append(batch, chunk...)
		return nil
	}); err != nil {
		return err
	}
	return s.Put(ctx, tenant, batch, attachments)
}

// Put stores batch and its attachments, all or nothing as far as Elasticsearch allows, and
// writes the assigned Stored (also into Raw's "stored"), Tenant and Voided back into the
// statements it created.
//
// Without transactions, Put works in phases:
//
//  1. Check, before writing anything: a realtime mget of every id (it sees writes not yet
//     refreshed) finds the ids already stored; an equal Hash is skipped, a different one fails
//     the batch with ErrConflict. In parallel, a search finds stored voiding statements that
//     target the new ids, so a statement whose voider came first is created voided (the
//     search first waits for a refresh when this store wrote voiding statements since the
//     last one began; other writes do not make it wait).
//  2. Stamp: each new statement gets stored = max(its Stored or now, last + 1µs) from the
//     store's clock, so stored is unique and strictly increasing in Put order within this
//     process (and starts above the index's maximum at New). The batch is registered as in
//     flight, which holds the watermark below its first stored instant until it answers.
//  3. Write: one bulk request creates the statements with op_type=create and indexes the
//     attachments (content-addressed, so idempotent), without a refresh. If any item
//     fails, the creates that succeeded are deleted again, each conditioned on its seq_no, and
//     Put fails: with ErrConflict when a create lost to a concurrent Put of the same id with
//     another Hash. A create that lost to a concurrent Put of the same statement is fine.
//  4. Void: voiding statements mark their targets voided with partial updates (a doc, no
//     script), after a realtime mget that skips missing targets, voiding statements (never
//     voided) and targets already voided. Then a second search for voiders of the statements
//     just created closes the race with a voider stored concurrently by this store: each side
//     writes before it reads the other (the voider's side by a realtime mget, the target's by
//     a search that first waits for a refresh covering every voider acknowledged so far), so
//     at least one of them sees the other.
//
// Remaining windows, honestly:
//   - Between a failed write and its rollback (milliseconds), readers can see statements of a
//     batch that then fails; attachments written by a failed batch stay (they are addressed by
//     content and harmless).
//   - A process dying in phase 3 or 4, or a rollback that fails (reported as an error saying
//     so), leaves part of a batch stored or a target not yet voided. Retrying the same Put
//     completes it: stored ids with an equal Hash are skipped and phase 4 runs for every
//     voider of the batch.
//   - A statement and its voider stored concurrently: the target can be visible as not voided
//     between its creation and the second voider search.
//   - A statement and its voider stored by two processes (two Stores) within about a second
//     (before a refresh makes the voider searchable to the target's process), the voider
//     first: the target stays stored not voided. Each store knows only its own writes.
//   - A bulk request that never answered (transport error, cancelled context) may still be
//     applied by Elasticsearch after the batch left the in-flight set, so its statements can
//     become searchable after the watermark passed their stored instant.
//   - stored is strictly increasing per process only. Several processes writing one index
//     order statements by their clocks (ties broken by id), and a statement whose Put is still
//     running can get a stored below one already visible, so an ascending cursor walk that
//     passed it misses it. A single writer process has neither problem within its own Puts
//     that are acknowledged before the walk's next page.
func (s *Store) Put(ctx context.Context, tenant string, batch []*statements.Statement, attachments []*statements.Attachment) error {
	if err := validTenant(tenant); err != nil {
		return err
	}
	byID := make(map[string]*statements.Statement, len(batch))
	var list []*statements.Statement
	for _, st := range batch {
		switch {
		case st == nil:
			return fmt.Errorf("statements/elastic: nil statement: %w", statements.ErrInvalid)
		case st.ID == "" || len(docID(tenant, st.ID)) > 512:
			return fmt.Errorf("statements/elastic: statement id %q: %w", st.ID, statements.ErrInvalid)
		case st.Tenant != "" && st.Tenant != tenant:
			return fmt.Errorf("statements/elastic: statement %s of tenant %q in a batch of %q: %w", st.ID, st.Tenant, tenant, statements.ErrInvalid)
		case len(st.Raw) == 0:
			return fmt.Errorf("statements/elastic: statement %s without JSON: %w", st.ID, statements.ErrInvalid)
		}
		// The same statement twice in a batch is one; two contents for one id conflict.
		if prev, ok := byID[st.ID]; ok {
			if prev.Hash != st.Hash {
				return fmt.Errorf("statements/elastic: statement %s twice in a batch: %w", st.ID, statements.ErrConflict)
			}
			continue
		}
		byID[st.ID] = st
		list = append(list, st)
	}
	for _, a := range attachments {
		if a == nil || a.SHA2 == "" || len(docID(tenant, a.SHA2)) > 512 {
			return fmt.Errorf("statements/elastic: attachment without a valid sha2: %w", statements.ErrInvalid)
		}
	}
	if len(list) == 0 && len(attachments) == 0 {
		return nil
	}

	// Phase 1: check. The voider search must see the voiders this store wrote.
	if err := s.visible(ctx, true); err != nil {
		return err
	}
	ids := make([]string, len(list))
	plain := make([]string, len(list))
	for i, st := range list {
		ids[i], plain[i] = docID(tenant, st.ID), st.ID
	}
	var (
		preVoided map[string]bool
		searchErr = make(chan error, 1)
	)
	go func() {
		var err error
		preVoided, err = s.voidedBy(ctx, tenant, plain)
		searchErr <- err
	}()
	existing, err := s.mget(ctx, "check statements", s.stmts, ids, []string{"hash"})
	if err := errors.Join(err, <-searchErr); err != nil {
		return err
	}
	var create []*statements.Statement
	for _, st := range list {
		if h, ok := existing[docID(tenant, st.ID)]; ok {
			if err := sameHash(h, st); err != nil {
				return err
			}
			continue
		}
		create = append(create, st)
	}
	// A voider anywhere in the batch voids its target in the batch.
	for _, st := range list {
		if st.Voids != "" {
			preVoided[st.Voids] = true
		}
	}

	// Phase 2: stamp.
	writes := make([]*written, len(create))
	voiders := false
	for _, st := range list {
		voiders = voiders || st.Voids != ""
	}
	s.mu.Lock()
	for i, st := range create {
		base := st.Stored
		if base.IsZero() {
			base = time.Now()
		}
		s.last = max(base.UnixMicro(), s.last+1)
		stored := time.UnixMicro(s.last).UTC()
		writes[i] = &written{st: st, stored: stored, raw: statements.SetStored(st.Raw, stored),
			voided: st.Voids == "" && preVoided[st.ID]}
	}
	var token uint64
	if len(writes) > 0 {
		token = s.beginBatch(writes[0].stored.UnixMicro())
	}
	s.mu.Unlock()

	// Phase 3: write.
	err = s.write(ctx, tenant, writes, attachments)
	s.endWrite(token, voiders)
	if err != nil {
		return err
	}

	// Phase 4: void.
	createdVoided := map[string]bool{}
	for _, w := range writes {
		if w.voided {
			createdVoided[w.st.ID] = true
		}
	}
	var targets []string
	for _, st := range list {
		if st.Voids != "" && !createdVoided[st.Voids] {
			targets = append(targets, st.Voids)
		}
	}
	if _, err := s.markVoided(ctx, tenant, targets); err != nil {
		return err
	}
	var check []string
	for _, w := range writes {
		if w.st.Voids == "" && !w.voided {
			check = append(check, w.st.ID)
		}
	}
	if len(check) > 0 {
		if err := s.visible(ctx, true); err != nil {
			return err
		}
	}
	late, err := s.voidedBy(ctx, tenant, check)
	if err != nil {
		return err
	}
	if len(late) > 0 {
		var lateIDs []string
		for id := range late {
			lateIDs = append(lateIDs, id)
		}
		if _, err := s.markVoided(ctx, tenant, lateIDs); err != nil {
			return err
		}
		for _, w := range writes {
			w.voided = w.voided || late[w.st.ID]
		}
	}

	for _, w := range writes {
		w.st.Tenant, w.st.Stored, w.st.Raw, w.st.Voided = tenant, w.stored, w.raw, w.voided
	}
	return nil
}

// sameHash checks that the stored statement h has st's Hash.
func sameHash(h hit, st *statements.Statement) error {
	var d struct {
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal(h.Source, &d); err != nil {
		return fmt.Errorf("statements/elastic: statement %s: %w", st.ID, err)
	}
	if d.Hash != st.Hash {
		return fmt.Errorf("statements/elastic: statement %s: %w", st.ID, statements.ErrConflict)
	}
	return nil
}

// write is phase 3 of Put: one bulk request creating the statements of writes and indexing
// attachments; on any failure it deletes the statements it created and returns the reason.
func (s *Store) write(ctx context.Context, tenant string, writes []*written, attachments []*statements.Attachment) error {
	var ops []bulkOp
	for _, w := range writes {
		d := toDoc(w.st, w.voided)
		d.Tenant, d.Stored, d.Statement = tenant, w.stored.Format(time.RFC3339Nano), string(w.raw)
		ops = append(ops, bulkOp{action: "create", index: s.stmts, id: docID(tenant, w.st.ID), doc: d})
	}
	seen := map[string]bool{}
	for _, a := range attachments {
		if seen[a.SHA2] {
			continue
		}
		seen[a.SHA2] = true
		ops = append(ops, bulkOp{action: "index", index: s.atts, id: docID(tenant, a.SHA2),
			doc: attDoc{Tenant: tenant, SHA2: a.SHA2, ContentType: a.ContentType, Data: a.Data}})
	}
	items, err := s.bulk(ctx, "store statements", ops)
	if err != nil {
		// We cannot tell what was written. A retry of the same Put completes the batch; the
		// creates cannot have overwritten anything.
		return err
	}
	var (
		rollback []bulkOp
		raced    []*statements.Statement
		failure  error
	)
	for i, it := range items {
		switch {
		case i >= len(writes): // an attachment
			if e := it.err("store attachment"); e != nil && failure == nil {
				failure = fmt.Errorf("statements/elastic: %w", e)
			}
		case it.Status == http.StatusCreated:
			rollback = append(rollback, bulkOp{action: "delete", index: s.stmts, id: it.ID,
				seqNo: &it.SeqNo, primaryTerm: &it.PrimaryTerm})
		case it.Status == http.StatusConflict:
			raced = append(raced, writes[i].st)
		case failure == nil:
			failure = fmt.Errorf("statements/elastic: %w", it.err("create statement"))
		}
	}
	if failure == nil && len(raced) > 0 {
		// A concurrent Put created these ids between our check and our create: the batch
		// stands if that Put stored the same statements.
		ids := make([]string, len(raced))
		for i, st := range raced {
			ids[i] = docID(tenant, st.ID)
		}
		got, err := s.mget(ctx, "recheck statements", s.stmts, ids, []string{"hash"})
		failure = err
		for _, st := range raced {
			if failure != nil {
				break
			}
			if h, ok := got[docID(tenant, st.ID)]; ok {
				failure = sameHash(h, st)
			} else {
				// Created and rolled back again by a failed concurrent batch.
				failure = fmt.Errorf("statements/elastic: statement %s changed concurrently, try again: %w", st.ID, elastic.ErrUnavailable)
			}
		}
	}
	if failure == nil {
		return nil
	}
	if len(rollback) > 0 {
		// A context of its own: the batch must be undone even when ctx has just ended.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		items, err := s.bulk(rctx, "roll back statements", rollback)
		for _, it := range items {
			err = errors.Join(err, it.err("roll back statement"))
		}
		if err != nil {
			return errors.Join(failure, fmt.Errorf("statements/elastic: rollback failed, batch partly stored: %w", err))
		}
	}
	return failure
}

// voidedBy returns which of ids (statement ids of tenant) are targeted by a stored and
// refreshed voiding statement (the caller waits for the refresh it needs: visible).
func (s *Store) voidedBy(ctx context.Context, tenant string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	hits, err := s.search(ctx, "find voiders", s.stmts, map[string]any{
		"query": map[string]any{"bool": map[string]any{"filter": []any{
			term("tenant_id", tenant),
			map[string]any{"terms": map[string]any{"voids": ids}},
		}}},
		// One hit per target, however many voiders it has.
		"collapse":         map[string]any{"field": "voids"},
		"size":             len(ids),
		"_source":          []string{"voids"},
		"track_total_hits": false,
	})
	if err != nil {
		return nil, err
	}
	for _, h := range hits {
		var d struct {
			Voids string `json:"voids"`
		}
		if err := json.Unmarshal(h.Source, &d); err != nil {
			return nil, fmt.Errorf("statements/elastic: find voiders: %w", err)
		}
		out[d.Voids] = true
	}
	return out, nil
}

// markVoided sets voided on the stored statements ids of tenant with partial updates and
// returns the ids it changed. Missing ids are skipped (their own Put looks for voiders), and
// so are voiding statements, which are never voided: a statement's voids never changes, so
// the realtime read cannot go stale before the update.
func (s *Store) markVoided(ctx context.Context, tenant string, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	docIDs := make([]string, len(ids))
	for i, id := range ids {
		docIDs[i] = docID(tenant, id)
	}
	got, err := s.mget(ctx, "read void targets", s.stmts, docIDs, []string{"voids", "voided"})
	if err != nil {
		return nil, err
	}
	var ops []bulkOp
	var changed []string
	for i, id := range docIDs {
		h, ok := got[id]
		if !ok {
			continue
		}
		var d struct {
			Voids  string `json:"voids"`
			Voided bool   `json:"voided"`
		}
		if err := json.Unmarshal(h.Source, &d); err != nil {
			return nil, fmt.Errorf("statements/elastic: read void target %s: %w", id, err)
		}
		// A voiding statement (voids set, not a StatementRef target) is never voided.
		if d.Voids != "" || d.Voided {
			continue
		}
		ops = append(ops, bulkOp{action: "update", index: s.stmts, id: id, retryOnConflict: 5,
			doc: map[string]any{"doc": map[string]any{"voided": true}}})
		changed = append(changed, ids[i])
	}
	if len(ops) == 0 {
		return nil, nil
	}
	items, err := s.bulk(ctx, "void statements", ops)
	s.endWrite(0, false)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if it.Status == http.StatusNotFound {
			continue // purged meanwhile
		}
		if err := it.err("void statement"); err != nil {
			return nil, fmt.Errorf("statements/elastic: %w", err)
		}
	}
	return changed, nil
}
