package elastic

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/statements"
)

// docDoc is a document resource's document in the documents index. The key fields are never
// omitted: an empty registration is a value of its own that ListDocs filters on.
type docDoc struct {
	Tenant       string `json:"tenant_id"`
	Kind         string `json:"kind"`
	ActivityID   string `json:"activity_id"`
	Agent        string `json:"agent"`
	Registration string `json:"registration"`
	DocID        string `json:"doc_id"`
	ContentType  string `json:"content_type"`
	ETag         string `json:"etag"`
	Updated      string `json:"updated"`
	// Body is sent as base64, as the binary field expects.
	Body []byte `json:"body"`
}

func (d *docDoc) document() (*statements.Document, error) {
	updated, err := time.Parse(time.RFC3339Nano, d.Updated)
	if err != nil {
		return nil, fmt.Errorf("statements/elastic: document %s: updated: %w", d.DocID, err)
	}
	return &statements.Document{
		Key: statements.DocKey{Tenant: d.Tenant, Kind: statements.DocKind(d.Kind), ActivityID: d.ActivityID,
			Agent: d.Agent, Registration: d.Registration, ID: d.DocID},
		ContentType: d.ContentType, Body: d.Body, ETag: d.ETag, Updated: updated,
	}, nil
}

// docKeyID is the _id of key's document: a hash, since activity ids and agents are
// unbounded and _id is limited to 512 bytes. The tenant stays readable in front.
func docKeyID(k statements.DocKey) string {
	b, _ := json.Marshal([]string{string(k.Kind), k.ActivityID, k.Agent, k.Registration, k.ID})
	sum := sha256.Sum256(b)
	return k.Tenant + "/" + hex.EncodeToString(sum[:])
}

// etag is the quoted SHA-1 of body.
func etag(body []byte) string {
	sum := sha1.Sum(body)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// versioned is a document as read, with what a conditional write needs.
type versioned struct {
	doc         *statements.Document
	seqNo, term int
}

// readDoc reads key's document in realtime; nil when absent.
func (s *Store) readDoc(ctx context.Context, key statements.DocKey) (*versioned, error) {
	var res struct {
		SeqNo       int    `json:"_seq_no"`
		PrimaryTerm int    `json:"_primary_term"`
		Source      docDoc `json:"_source"`
	}
	err := s.c.Do(ctx, "get document", esapi.GetRequest{Index: s.docs, DocumentID: pathID(docKeyID(key))}, &res)
	if errors.Is(err, elastic.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("statements/elastic: %w", err)
	}
	d, err := res.Source.document()
	if err != nil {
		return nil, err
	}
	return &versioned{doc: d, seqNo: res.SeqNo, term: res.PrimaryTerm}, nil
}

// checkKey rejects a key without tenant or kind.
func checkKey(k statements.DocKey) error {
	if err := validTenant(k.Tenant); err != nil {
		return err
	}
	switch k.Kind {
	case statements.State, statements.ActivityProfile, statements.AgentProfile:
		return nil
	}
	return fmt.Errorf("statements/elastic: document kind %q: %w", k.Kind, statements.ErrInvalid)
}

// GetDoc returns key's document or ErrNotFound.
func (s *Store) GetDoc(ctx context.Context, key statements.DocKey) (*statements.Document, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	v, err := s.readDoc(ctx, key)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("statements/elastic: document %s: %w", key.ID, statements.ErrNotFound)
	}
	return v.doc, nil
}

// holds reports whether cond holds for the current document cur (nil: absent).
func holds(cond statements.Precondition, cur *statements.Document) bool {
	if cond.IfMatch != "" && (cur == nil || (cond.IfMatch != "*" && cond.IfMatch != cur.ETag)) {
		return false
	}
	if cond.IfNoneMatch != "" && cur != nil && (cond.IfNoneMatch == "*" || cond.IfNoneMatch == cur.ETag) {
		return false
	}
	return true
}

// maxAttempts bounds the read-modify-write retries of one document write under contention.
const maxAttempts = 20

// PutDoc stores doc when cond holds. It reads the current document in realtime, checks cond
// against it, and writes conditioned on what it read: if_seq_no/if_primary_term when the
// document existed, op_type=create when it did not. A concurrent write in between makes the
// write fail with 409, and PutDoc starts over from the read, so cond (and a merge) always
// apply to the version actually replaced.
func (s *Store) PutDoc(ctx context.Context, doc *statements.Document, cond statements.Precondition, merge bool) (*statements.Document, error) {
	if err := checkKey(doc.Key); err != nil {
		return nil, err
	}
	id := docKeyID(doc.Key)
	for range maxAttempts {
		cur, err := s.readDoc(ctx, doc.Key)
		if err != nil {
			return nil, err
		}
		var curDoc *statements.Document
		if cur != nil {
			curDoc = cur.doc
		}
		if !holds(cond, curDoc) {
			return nil, fmt.Errorf("statements/elastic: document %s: %w", doc.Key.ID, statements.ErrPrecondition)
		}
		body := doc.Body
		if merge && cur != nil {
			if body, err = mergeObjects(cur.doc.Body, doc.Body); err != nil {
				return nil, err
			}
		}
		// The store's clock, in whole microseconds like the SQLite backend, decides Updated.
		updated := time.Now().UTC().Truncate(time.Microsecond)
		out := &statements.Document{Key: doc.Key, ContentType: doc.ContentType, Body: body, ETag: etag(body), Updated: updated}
		b, err := json.Marshal(docDoc{
			Tenant: doc.Key.Tenant, Kind: string(doc.Key.Kind), ActivityID: doc.Key.ActivityID,
			Agent: doc.Key.Agent, Registration: doc.Key.Registration, DocID: doc.Key.ID,
			ContentType: out.ContentType, ETag: out.ETag, Updated: out.Updated.Format(time.RFC3339Nano), Body: body,
		})
		if err != nil {
			return nil, fmt.Errorf("statements/elastic: document %s: %w", doc.Key.ID, err)
		}
		req := esapi.IndexRequest{Index: s.docs, DocumentID: pathID(id), Body: bytes.NewReader(b),
			RequireAlias: esapi.BoolPtr(true)}
		if cur == nil {
			req.OpType = "create"
		} else {
			req.IfSeqNo, req.IfPrimaryTerm = &cur.seqNo, &cur.term
		}
		err = s.c.Do(ctx, "put document", req, nil)
		s.endWrite(0, false)
		if isStatus(err, http.StatusConflict) {
			continue // changed since we read it: decide again on the new version
		}
		if err != nil {
			return nil, fmt.Errorf("statements/elastic: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("statements/elastic: document %s: %d concurrent changes: %w", doc.Key.ID, maxAttempts, statements.ErrPrecondition)
}

// mergeObjects merges the top-level members of the JSON object patch into the JSON object
// base (POST semantics of the document resources).
func mergeObjects(base, patch []byte) ([]byte, error) {
	var a, b map[string]json.RawMessage
	if err := json.Unmarshal(base, &a); err != nil {
		return nil, fmt.Errorf("statements/elastic: merge: stored document is not a JSON object: %w", statements.ErrInvalid)
	}
	if err := json.Unmarshal(patch, &b); err != nil {
		return nil, fmt.Errorf("statements/elastic: merge: document is not a JSON object: %w", statements.ErrInvalid)
	}
	if a == nil {
		a = map[string]json.RawMessage{}
	}
	for k, v := range b {
		a[k] = v
	}
	return json.Marshal(a)
}

// DeleteDoc removes key's document when cond holds, conditioned on the version it checked.
func (s *Store) DeleteDoc(ctx context.Context, key statements.DocKey, cond statements.Precondition) error {
	if err := checkKey(key); err != nil {
		return err
	}
	for range maxAttempts {
		cur, err := s.readDoc(ctx, key)
		if err != nil {
			return err
		}
		if cur == nil {
			return fmt.Errorf("statements/elastic: document %s: %w", key.ID, statements.ErrNotFound)
		}
		if !holds(cond, cur.doc) {
			return fmt.Errorf("statements/elastic: document %s: %w", key.ID, statements.ErrPrecondition)
		}
		err = s.c.Do(ctx, "delete document", esapi.DeleteRequest{Index: s.docs, DocumentID: pathID(docKeyID(key)),
			IfSeqNo: &cur.seqNo, IfPrimaryTerm: &cur.term}, nil)
		s.endWrite(0, false)
		switch {
		case isStatus(err, http.StatusConflict):
			continue
		case errors.Is(err, elastic.ErrNotFound):
			return fmt.Errorf("statements/elastic: document %s: %w", key.ID, statements.ErrNotFound)
		case err != nil:
			return fmt.Errorf("statements/elastic: %w", err)
		}
		return nil
	}
	return fmt.Errorf("statements/elastic: document %s: %d concurrent changes: %w", key.ID, maxAttempts, statements.ErrPrecondition)
}

// siblings is the query of the documents sharing key except its ID.
func siblings(key statements.DocKey) []any {
	return []any{
		term("tenant_id", key.Tenant), term("kind", string(key.Kind)),
		term("activity_id", key.ActivityID), term("agent", key.Agent),
		term("registration", key.Registration),
	}
}

// ListDocs returns the ids, sorted, of the documents sharing key except ID that were updated
// after since (zero: all), paging with search_after on the id.
func (s *Store) ListDocs(ctx context.Context, key statements.DocKey, since time.Time) ([]string, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := s.visible(ctx, false); err != nil {
		return nil, err
	}
	filter := siblings(key)
	if !since.IsZero() && !since.Before(minStored) {
		filter = append(filter, map[string]any{"range": map[string]any{"updated": map[string]any{"gt": since.UTC().Format(time.RFC3339Nano)}}})
	}
	ids := []string{}
	var after []any
	for {
		body := map[string]any{
			"query":            map[string]any{"bool": map[string]any{"filter": filter}},
			"sort":             []any{map[string]any{"doc_id": "asc"}},
			"size":             pageSize,
			"_source":          []string{"doc_id"},
			"track_total_hits": false,
		}
		if after != nil {
			body["search_after"] = after
		}
		hits, err := s.search(ctx, "list documents", s.docs, body)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			var d struct {
				DocID string `json:"doc_id"`
			}
			if err := json.Unmarshal(h.Source, &d); err != nil {
				return nil, fmt.Errorf("statements/elastic: list documents: %w", err)
			}
			ids = append(ids, d.DocID)
		}
		if len(hits) < pageSize {
			return ids, nil
		}
		after = []any{ids[len(ids)-1]}
	}
}

// DeleteDocs removes every document sharing key except ID.
func (s *Store) DeleteDocs(ctx context.Context, key statements.DocKey) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return s.deleteMatching(ctx, "delete documents", s.docs, map[string]any{"bool": map[string]any{"filter": siblings(key)}})
}
