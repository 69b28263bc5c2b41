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
