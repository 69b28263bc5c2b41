package record

import (
	"context"
	"errors"
	"fmt"
)

// maxAttempts bounds the retries of Modify and CreateNext under contention.
const maxAttempts = 100

// Modify applies fn to the current record at (tenant, kind, id) and writes it with
// compare-and-set, rereading and reapplying fn when a concurrent writer got there first. fn
// may be called several times and must only change r. ErrNotFound when the record is absent.
func Modify(ctx context.Context, s Store, tenant, kind, id string, fn func(r *Record) error) (*Record, error) {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		r, err := s.Get(ctx, tenant, kind, id)
		if err != nil {
			return nil, err
		}
		if err := fn(r); err != nil {
			return nil, err
		}
		if err = s.Update(ctx, r); !errors.Is(err, ErrStale) {
			return r, err
		}
	}
	return nil, fmt.Errorf("%s %q: too many concurrent updates", kind, id)
}

// CreateNext creates the record build(n) for the first n ≥ first whose address is free: the
// way numbered versions are allocated without a lock, a concurrent writer taking a number
// just moves this one to the next. It returns the record and its number.
func CreateNext(ctx context.Context, s Store, first int, build func(n int) (*Record, error)) (*Record, int, error) {
	for n := first; n < first+maxAttempts; n++ {
		r, err := build(n)
		if err != nil {
			return nil, 0, err
		}
		err = s.Create(ctx, r)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		return r, n, nil
	}
	return nil, 0, fmt.Errorf("too many concurrent creations from number %d", first)
}

// All pages through every record matching q (q.Cursor and q.Limit are managed here) and
// returns them in List order. For the small sets it is meant for: versions of one course, a
// tenant's credentials, the tenant registry.
func All(ctx context.Context, s Store, q Query) ([]*Record, error) {
	q.Cursor, q.Limit = "", MaxPage
	var out []*Record
	for {
		p, err := s.List(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Records...)
		if p.Next == "" {
			return out, nil
		}
		q.Cursor = p.Next
	}
}

// AllAs is All with each record decoded by decode, in List order; the first decode error
// ends it. The list methods of small stores are this call and their decoder.
func AllAs[T any](ctx context.Context, s Store, q Query, decode func(*Record) (T, error)) ([]T, error) {
	rs, err := All(ctx, s, q)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(rs))
	for _, r := range rs {
		v, err := decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// MaxPage is the page size All asks for; backends cap pages at least this large.
const MaxPage = 1000
