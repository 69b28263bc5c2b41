package bleve

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/lectern-lms/lectern/indexer"
)

// vectorSet holds one tenant's chunk vectors, normalised, in one contiguous matrix, so that
// semantic search is a flat scan of memory (as fast as a scan can be without assembly).
// Each version's vectors are adjacent rows (a span), appended when the version is indexed;
// removing a version only marks its span dead, and the matrix is compacted once the dead
// rows outnumber the live ones, so a write costs amortised O(its rows). Filters (content id,
// version, tags, active) are evaluated once per span, not per row. Writers change it under
// Index.mu held exclusively, searches read it under the shared lock.
type vectorSet struct {
	dims  int
	data  []float32 // rows of dims floats, back to back
	chunk []int32   // chunk index of each row in its version
	spans []span    // in row order
	live  int       // rows of live spans
}

// span is the rows of one version: rows start to start+n-1. v is nil once the version is
// gone.
type span struct {
	v        *version
	start, n int
}

// add appends the vectors of v's chunks, normalised (those of the set's dimension; a chunk
// may have none), as a new span and records it in v.span.
func (s *vectorSet) add(v *version, chunks []indexer.Chunk) {
	v.span = -1
	start := len(s.chunk)
	for i, c := range chunks {
		if len(c.Vector) != s.dims {
			continue
		}
		n := len(s.data)
		s.data = normalizeTo(append(s.data, c.Vector...), n)
		s.chunk = append(s.chunk, int32(i))
	}
	if n := len(s.chunk) - start; n > 0 {
		v.span = len(s.spans)
		s.spans = append(s.spans, span{v: v, start: start, n: n})
		s.live += n
	}
}

// remove drops v's span, compacting the matrix when most of it is dead.
func (s *vectorSet) remove(v *version) {
	if v.span < 0 {
		return
	}
	sp := &s.spans[v.span]
	sp.v = nil
	s.live -= sp.n
	v.span = -1
	if dead := len(s.chunk) - s.live; dead > s.live && dead >= 1024 || s.live == 0 {
		s.compact()
	}
}

// compact rewrites the matrix without dead spans.
func (s *vectorSet) compact() {
	data := make([]float32, 0, s.live*s.dims)
	chunk := make([]int32, 0, s.live)
	var spans []span
	for _, sp := range s.spans {
		if sp.v == nil {
			continue
		}
		start := len(chunk)
		data = append(data, s.data[sp.start*s.dims:(sp.start+sp.n)*s.dims]...)
		chunk = append(chunk, s.chunk[sp.start:sp.start+sp.n]...)
		sp.v.span = len(spans)
		spans = append(spans, span{v: sp.v, start: start, n: sp.n})
	}
	s.data, s.chunk, s.spans = data, chunk, spans
}

// dot returns the dot product of a and b (len(b) >= len(a)), summed in float32 like the
// vectors themselves (and Elasticsearch's scores): float64 would double the scan's cost for
// digits nobody can rank on. Four independent accumulators let the CPU overlap the
// additions, where one would chain every addition on the previous one.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		x, y := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += x[0]*y[0] + x[4]*y[4]
		s1 += x[1]*y[1] + x[5]*y[5]
		s2 += x[2]*y[2] + x[6]*y[6]
		s3 += x[3]*y[3] + x[7]*y[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// scoredVersion is a version's best chunk in a tenant-wide semantic search.
type scoredVersion struct {
	v   *version
	dot float32
}

// worse reports whether a ranks after b (indexer.Compare on the hits they make: score
// descending, then content id and version; float32 to float64 keeps the order).
func worse(a, b scoredVersion) bool {
	if a.dot != b.dot {
		return a.dot < b.dot
	}
	if c := strings.Compare(a.v.contentID, b.v.contentID); c != 0 {
		return c > 0
	}
	return a.v.version > b.v.version
}

// topVersions keeps the k best of the versions offered: a min-heap on worse, the worst kept
// at the root, so that a version that cannot enter costs one comparison.
type topVersions struct {
	k int
	h []scoredVersion
}

func (t *topVersions) offer(x scoredVersion) {
	h := t.h
	if len(h) < t.k {
		h = append(h, x)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(h[i], h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		t.h = h
		return
	}
	if len(h) == 0 || !worse(h[0], x) {
		return
	}
	h[0] = x
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h) && worse(h[l], h[m]) {
			m = l
		}
		if r := l + 1; r < len(h) && worse(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func semanticHit(v *version, i int, d float32) indexer.Hit {
	s := float64(d)
	return indexer.Hit{ContentID: v.contentID, Version: v.version, Location: v.locations[i],
		Score: s, MatchStrength: indexer.Strength(s)}
}

// semantic scans the tenant's vectors. Tenant-wide only each version's best chunk can be a
// hit, and only the page's can be returned: the scan keeps the best dot product per span and
// the top Skip+Limit versions in a bounded heap, and builds hits (with their MatchStrength)
// for the page alone. The caller holds ix.mu.
func (ix *Index) semantic(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	s := ix.vectors[q.Tenant]
	if s == nil {
		return []indexer.Hit{}, nil
	}
	qv := normalize(q.Vector)
	d := s.dims
	if q.ContentID != "" {
		var hits []indexer.Hit
		for _, v := range ix.byTenant[q.Tenant] {
			if v.contentID != q.ContentID || v.span < 0 || !v.admits(&q) {
				continue
			}
			sp := s.spans[v.span]
			for r := sp.start; r < sp.start+sp.n; r++ {
				hits = append(hits, semanticHit(v, int(s.chunk[r]), dot(s.data[r*d:r*d+d], qv)))
			}
		}
		return indexer.Page(indexer.Collapse(hits, q), q), nil
	}
	k := q.Skip + q.PageSize()
	if k < 0 || k > len(s.spans) { // k < 0: Skip so large that the sum overflowed
		k = len(s.spans)
	}
	top := topVersions{k: k, h: make([]scoredVersion, 0, k)}
	for n, sp := range s.spans {
		if n%256 == 255 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if sp.v == nil || !sp.v.admits(&q) {
			continue
		}
		rows := s.data[sp.start*d : (sp.start+sp.n)*d]
		best := float32(math.Inf(-1))
		for off := 0; off < len(rows); off += d {
			best = max(best, dot(rows[off:off+d], qv))
		}
		top.offer(scoredVersion{sp.v, best})
	}
	slices.SortFunc(top.h, func(a, b scoredVersion) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	if q.Skip >= len(top.h) {
		return []indexer.Hit{}, nil
	}
	page := top.h[q.Skip:]
	out := make([]indexer.Hit, len(page))
	for i, x := range page {
		score := float64(x.dot)
		out[i] = indexer.Hit{ContentID: x.v.contentID, Version: x.v.version, Score: score, MatchStrength: indexer.Strength(score)}
		if q.ReturnText {
			out[i].Text = &indexer.ChunkText{Location: x.v.locations[s.bestChunk(x.v, qv)]}
		}
	}
	return out, nil
}

// bestChunk returns the index of v's chunk nearest to qv (normalised), the chunk a
// tenant-wide hit of v stands for: on equal products the lower location, as indexer.Collapse
// orders hits.
func (s *vectorSet) bestChunk(v *version, qv []float32) int {
	sp := s.spans[v.span]
	d := s.dims
	best, at := float32(math.Inf(-1)), -1
	for r := sp.start; r < sp.start+sp.n; r++ {
		x := dot(s.data[r*d:r*d+d], qv)
		c := int(s.chunk[r])
		if at < 0 || x > best || x == best && v.locations[c] < v.locations[at] {
			best, at = x, c
		}
	}
	return at
}

func normalize(v []float32) []float32 {
	if v == nil {
		return nil
	}
	return normalizeTo(slices.Clone(v), 0)
}

// normalizeTo scales v[from:] to unit length in place (a zero vector stays zero) and
// returns v.
func normalizeTo(v []float32, from int) []float32 {
	var s float64
	for _, x := range v[from:] {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	n := math.Sqrt(s)
	for i, x := range v[from:] {
		v[from+i] = float32(float64(x) / n)
	}
	return v
}
