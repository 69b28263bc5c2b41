package indexer

import (
	"fmt"
	"math"
	"slices"
)

// Status is the tags and active flag of a content version.
type Status struct {
	// Tags are the version's tags, sorted and without duplicates.
	Tags []string
	// Active reports whether the version is active.
	Active bool
}

// PrepareContent checks the arguments of Index.IndexContent against its rules and model,
// and returns copies of chunks and fields with Tenant, ContentID and Version filled in, and
// the version's Status. Backends call it first, so they reject the same input the same way.
// A zero model (no embedding model configured) accepts no vectors.
func PrepareContent(tenant, contentID string, version int, chunks []Chunk, fields []Field, model Model) ([]Chunk, []Field, Status, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidQuery, fmt.Sprintf(format, a...))
	}
	if tenant == "" || contentID == "" {
		return nil, nil, Status{}, bad("tenant and content id are required")
	}
	st := Status{Active: true}
	if len(chunks) > 0 {
		st = Status{Tags: NormalizeTags(chunks[0].Tags), Active: chunks[0].Active}
	}
	outC := make([]Chunk, len(chunks))
	seen := map[string]bool{}
	for i, c := range chunks {
		if c.Active != st.Active || !slices.Equal(NormalizeTags(c.Tags), st.Tags) {
			return nil, nil, Status{}, bad("chunk %d has other tags or another active flag than chunk 0; they belong to the version", i)
		}
		if seen[c.Location] {
			return nil, nil, Status{}, bad("location %q occurs twice", c.Location)
		}
		seen[c.Location] = true
		if c.Vector != nil {
			if model.Dims == 0 {
				return nil, nil, Status{}, fmt.Errorf("%w: chunk %d has a vector but the index has no embedding model", ErrModelMismatch, i)
			}
			if len(c.Vector) != model.Dims {
				return nil, nil, Status{}, fmt.Errorf("%w: chunk %d has a %d-dimensional vector, model %q has %d",
					ErrModelMismatch, i, len(c.Vector), model.Name, model.Dims)
			}
			for _, x := range c.Vector {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return nil, nil, Status{}, bad("chunk %d's vector is not finite", i)
				}
			}
		}
		c.Tenant, c.ContentID, c.Version = tenant, contentID, version
		c.Tags, c.Active = st.Tags, st.Active
		c.Vector = slices.Clone(c.Vector)
		outC[i] = c
	}
	outF := make([]Field, len(fields))
	for i, f := range fields {
		if f.FieldType == "" {
			return nil, nil, Status{}, bad("field %d has no field type", i)
		}
		f.Tenant, f.ContentID, f.Version = tenant, contentID, version
		outF[i] = f
	}
	return outC, outF, st, nil
}

// NormalizeTags returns tags sorted and without duplicates (nil for none), so that a
// version's status compares and stores the same however it was given.
func NormalizeTags(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	out := slices.Clone(tags)
	slices.Sort(out)
	return slices.Compact(out)
}

// CheckQueryModel returns ErrModelMismatch when a semantic query's vector does not fit
// model.
func CheckQueryModel(q Query, model Model) error {
	if q.Type != Semantic && q.Type != Hybrid {
		return nil
	}
	if model.Dims == 0 {
		return fmt.Errorf("%w: the index has no embedding model", ErrModelMismatch)
	}
	if len(q.Vector) != model.Dims {
		return fmt.Errorf("%w: query vector has %d dimensions, model %q has %d", ErrModelMismatch, len(q.Vector), model.Name, model.Dims)
	}
	return nil
}

// Collapse turns chunk hits into the hits a query returns: within one content item
// (q.ContentID set, not a field search) every chunk hit stays, with its Location;
// tenant-wide only the best hit of each content version stays, without Location (its Match
// is kept). The result is sorted (Sort) but not paged.
func Collapse(chunkHits []Hit, q Query) []Hit {
	Sort(chunkHits)
	if q.ContentID != "" {
		return chunkHits
	}
	type key struct {
		id string
		v  int
	}
	seen := map[key]bool{}
	out := chunkHits[:0:0]
	for _, h := range chunkHits {
		k := key{h.ContentID, h.Version}
		if seen[k] {
			continue
		}
		seen[k] = true
		KeepLocation(q, &h)
		h.Location = ""
		out = append(out, h)
	}
	return out
}

// Strength converts a cosine similarity into a MatchStrength: clamped to [0, 1].
func Strength(cos float64) *float64 {
	s := min(max(cos, 0), 1)
	return &s
}

// KeepLocation records, for a query with ReturnText, the location of the chunk a hit stands
// for in Hit.Text before a tenant-wide hit drops its Location; the backend fills in the text
// later (TextKeys).
func KeepLocation(q Query, h *Hit) {
	if q.ReturnText && h.Text == nil {
		h.Text = &ChunkText{Location: h.Location}
	}
}

// TextKeys prepares the hits of a query with ReturnText for their texts: every hit gets
// Text with the location of its chunk (its own Location, or the one KeepLocation kept).
// The backend then sets each Text.Text. It returns false, doing nothing, when the query
// does not ask for texts.
func TextKeys(q Query, hits []Hit) bool {
	if !q.ReturnText || q.Type == FieldSearch {
		return false
	}
	for i := range hits {
		KeepLocation(q, &hits[i])
	}
	return true
}
