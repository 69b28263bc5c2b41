package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lectern-lms/lectern/storage/record"
)

// KindSequencing is the record kind of a registration instance's SCORM 2004 sequencing state
// (course/sequencing's State as JSON): id "<registration id>/<instance key>", parent the
// registration (deleting it removes the state), key the instance key. It is a record of its
// own beside the activities' run-time records, so a commit of one SCO and a navigation
// request do not rewrite each other's data, and a reset (a new instance key) starts afresh.
const KindSequencing = "registration_sequencing"

// errKeep ends an update whose function asked to write nothing.
var errKeep = errors.New("sequencing state unchanged")

// Sequencing returns the stored sequencing state of a registration instance, or nil when
// none was stored yet.
func (s *Store) Sequencing(ctx context.Context, tenant, regID, instanceKey string) (json.RawMessage, error) {
	r, err := s.records.Get(ctx, tenant, KindSequencing, regID+"/"+instanceKey)
	if errors.Is(err, record.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r.Data, nil
}

// UpdateSequencing applies fn to the stored sequencing state of a registration instance
// (nil when there is none) and stores what it returns, with compare-and-set: fn runs again
// on the newer state when another request changed it meanwhile, so it must only compute.
// fn returning nil data stores nothing. A nil error means the new state is durable;
// record.ErrNotFound when the registration is gone.
func (s *Store) UpdateSequencing(ctx context.Context, tenant, regID, instanceKey string, fn func(old json.RawMessage) (json.RawMessage, error)) error {
	id := regID + "/" + instanceKey
	for try := 0; try < 3; try++ {
		_, err := record.Modify(ctx, s.records, tenant, KindSequencing, id, func(r *record.Record) error {
			data, err := fn(r.Data)
			if err != nil {
				return err
			}
			if data == nil {
				return errKeep
			}
			r.Data = data
			return nil
		})
		if errors.Is(err, errKeep) {
			return nil
		}
		if !errors.Is(err, record.ErrNotFound) {
			return err
		}
		data, err := fn(nil)
		if err != nil || data == nil {
			return err
		}
		err = s.records.Create(ctx, &record.Record{Tenant: tenant, Kind: KindSequencing, ID: id, Key: instanceKey,
			Parent: &record.Ref{Kind: kindRegistration, ID: regID}, Data: data})
		if !errors.Is(err, record.ErrConflict) {
			return err
		}
		// A concurrent first update created it: apply on top of that one.
	}
	return fmt.Errorf("sequencing %q: too many concurrent first updates", id)
}

// deleteSequencing removes the sequencing state of one registration instance.
func (s *Store) deleteSequencing(ctx context.Context, tenant, regID, instanceKey string) error {
	err := s.records.Delete(ctx, tenant, KindSequencing, regID+"/"+instanceKey)
	if errors.Is(err, record.ErrNotFound) {
		return nil
	}
	return err
}
