package taxonomy

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/storage/record"
)

// Kind is the record kind of a taxonomy.
const Kind = "skill_taxonomy"

// MaxIDLength is the longest taxonomy id, in characters.
const MaxIDLength = 255

var (
	// ErrNotFound means the tenant has imported no taxonomy of that id.
	ErrNotFound = errors.New("not found")
	// ErrInvalidID means a taxonomy id is empty, too long or holds control characters.
	ErrInvalidID = errors.New("invalid taxonomy id")
)

// ValidateID checks a taxonomy id: 1 to 255 printable characters without surrounding spaces.
func ValidateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: taxonomy_id is empty", ErrInvalidID)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: taxonomy_id is not valid UTF-8", ErrInvalidID)
	case utf8.RuneCountInString(id) > MaxIDLength:
		return fmt.Errorf("%w: taxonomy_id is longer than %d characters", ErrInvalidID, MaxIDLength)
	case strings.TrimSpace(id) != id:
		return fmt.Errorf("%w: taxonomy_id %q has surrounding spaces", ErrInvalidID, id)
	case strings.IndexFunc(id, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0:
		return fmt.Errorf("%w: taxonomy_id %q holds a control character", ErrInvalidID, id)
	}
	return nil
}

// Taxonomy is an imported taxonomy: its skill names and, when an embedding model was
// configured at import, one unit-length vector per skill (Vectors[i] embeds Skills[i]).
type Taxonomy struct {
	ID      string
	Skills  []string
	Vectors [][]float32
	// Model names the embedding model of Vectors ("" without vectors).
	Model string
	// Imported is when the taxonomy was (last) imported.
	Imported time.Time
}

// meta is the record of a taxonomy; the skills and vectors are a blob (a 20,000-skill
// taxonomy's vectors are 30 MB, more than a record should hold).
type meta struct {
	Skills int    `json:"skills"`
	Model  string `json:"model,omitempty"`
	Dims   int    `json:"dims,omitempty"`
	Blob   string `json:"blob"`
	JobID  string `json:"job_id"`
}

// Store keeps taxonomies: a record per taxonomy in the tenant (so they go with the tenant)
// pointing at a blob under the tenant's prefix. Re-importing an id writes a new blob,
// switches the record to it and deletes the old one, so a reader sees the old or the new
// taxonomy, never a mix.
type Store struct {
	records record.Store
	blobs   blob.Store

	mu    sync.Mutex
	cache map[string]*Taxonomy // by blob key: blobs never change, so entries never go stale
	order []string
}

// cacheSize is how many decoded taxonomies a Store keeps in memory (each up to tens of MB).
const cacheSize = 4

// NewStore returns a taxonomy store.
func NewStore(records record.Store, blobs blob.Store) *Store {
	return &Store{records: records, blobs: blobs, cache: map[string]*Taxonomy{}}
}

// BlobKey is where one import of a taxonomy keeps its skills and vectors.
func BlobKey(tenant, id, jobID string) string {
	return tenant + "/taxonomies/" + hex.EncodeToString([]byte(id)) + "/" + jobID
}

// Put stores t (ID, Skills, Vectors, Model) as the tenant's taxonomy t.ID, imported by job
// jobID, replacing an earlier import of the same id.
func (s *Store) Put(ctx context.Context, tenant, jobID string, t *Taxonomy) error {
	if err := ValidateID(t.ID); err != nil {
		return err
	}
	if len(t.Vectors) != 0 && len(t.Vectors) != len(t.Skills) {
		return fmt.Errorf("taxonomy %q: %d vectors for %d skills", t.ID, len(t.Vectors), len(t.Skills))
	}
	m := meta{Skills: len(t.Skills), Model: t.Model, Blob: BlobKey(tenant, t.ID, jobID), JobID: jobID}
	if len(t.Vectors) > 0 {
		m.Dims = len(t.Vectors[0])
	}
	b, err := encode(t, m.Dims)
	if err != nil {
		return err
	}
	if _, err := s.blobs.Put(ctx, m.Blob, bytes.NewReader(b), int64(len(b))); err != nil {
		return err
	}
	data, _ := json.Marshal(m)
	old := ""
	err = s.records.Create(ctx, &record.Record{Tenant: tenant, Kind: Kind, ID: t.ID, Data: data})
	if errors.Is(err, record.ErrConflict) {
		_, err = record.Modify(ctx, s.records, tenant, Kind, t.ID, func(r *record.Record) error {
			var prev meta
			if json.Unmarshal(r.Data, &prev) == nil && prev.Blob != m.Blob {
				old = prev.Blob
			}
			r.Data = data
			return nil
		})
	}
	if err != nil {
		return err
	}
	if old != "" {
		_ = s.blobs.Delete(ctx, old) // only space is lost when this fails
	}
	return nil
}

// Exists reports whether the tenant has imported taxonomy id.
func (s *Store) Exists(ctx context.Context, tenant, id string) (bool, error) {
	_, err := s.records.Get(ctx, tenant, Kind, id)
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return false, nil
	}
	return err == nil, err
}

// Get loads the tenant's taxonomy id with its vectors, or fails wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, tenant, id string) (*Taxonomy, error) {
	r, err := s.records.Get(ctx, tenant, Kind, id)
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrInvalid) {
		return nil, fmt.Errorf("taxonomy '%s' %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var m meta
	if err := json.Unmarshal(r.Data, &m); err != nil {
		return nil, fmt.Errorf("decode taxonomy %q: %w", id, err)
	}
	s.mu.Lock()
	t := s.cache[m.Blob]
	s.mu.Unlock()
	if t != nil {
		return t, nil
	}
	rc, _, err := s.blobs.Get(ctx, m.Blob)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, fmt.Errorf("taxonomy %q: its skills are gone: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	if t, err = decode(b, m); err != nil {
		return nil, fmt.Errorf("taxonomy %q: %w", id, err)
	}
	t.ID, t.Model, t.Imported = id, m.Model, r.Updated
	s.mu.Lock()
	if _, ok := s.cache[m.Blob]; !ok {
		s.cache[m.Blob] = t
		s.order = append(s.order, m.Blob)
		if len(s.order) > cacheSize {
			delete(s.cache, s.order[0])
			s.order = s.order[1:]
		}
	}
	s.mu.Unlock()
	return t, nil
}

// encode writes the blob: the skills as a JSON array on the first line, then the vectors as
// little-endian float32s (compact and quick to read back; JSON numbers would be 3x bigger).
func encode(t *Taxonomy, dims int) ([]byte, error) {
	names, err := json.Marshal(t.Skills)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(names)+1+4*dims*len(t.Vectors))
	out = append(append(out, names...), '\n')
	for _, v := range t.Vectors {
		if len(v) != dims {
			return nil, fmt.Errorf("taxonomy %q: vectors of %d and %d dimensions", t.ID, dims, len(v))
		}
		for _, x := range v {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
		}
	}
	return out, nil
}

func decode(b []byte, m meta) (*Taxonomy, error) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, errors.New("unreadable skills blob")
	}
	t := &Taxonomy{}
	if err := json.Unmarshal(b[:nl], &t.Skills); err != nil {
		return nil, fmt.Errorf("unreadable skills blob: %w", err)
	}
	rest := b[nl+1:]
	if m.Dims == 0 {
		return t, nil
	}
	if len(rest) != 4*m.Dims*len(t.Skills) {
		return nil, fmt.Errorf("skills blob holds %d vector bytes, want %d", len(rest), 4*m.Dims*len(t.Skills))
	}
	flat := make([]float32, m.Dims*len(t.Skills))
	for i := range flat {
		flat[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
	}
	t.Vectors = make([][]float32, len(t.Skills))
	for i := range t.Vectors {
		t.Vectors[i] = flat[i*m.Dims : (i+1)*m.Dims : (i+1)*m.Dims]
	}
	return t, nil
}
