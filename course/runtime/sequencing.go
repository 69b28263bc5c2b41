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
// on the newer state when another request changed it meanwhile, so it must only compute, or
// write what may be written again (the learner's global objectives, which the learner's path
// writes before the state it derives them from). fn returning nil data stores nothing. A nil error means the new state is durable;
// record.ErrNotFound when the registration is gone.
func (s *Store) UpdateSequencing(ctx context.Context, tenant, regID, instanceKey string, fn func(old json.RawMessage) (json.RawMessage, error)) error {
	return s.upsert(ctx, &record.Record{Tenant: tenant, Kind: KindSequencing, ID: regID + "/" + instanceKey, Key: instanceKey,
		Parent: &record.Ref{Kind: kindRegistration, ID: regID}}, fn)
}

// upsert applies fn to the data of the record at at's address (nil when there is none) and
// stores what it returns, creating the record (with at's key and parent) on first use, with
// compare-and-set: fn runs again on newer data when another request changed it meanwhile.
// fn returning nil data stores nothing.
func (s *Store) upsert(ctx context.Context, at *record.Record, fn func(old json.RawMessage) (json.RawMessage, error)) error {
	for try := 0; try < 3; try++ {
		_, err := record.Modify(ctx, s.records, at.Tenant, at.Kind, at.ID, func(r *record.Record) error {
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
		err = s.records.Create(ctx, &record.Record{Tenant: at.Tenant, Kind: at.Kind, ID: at.ID, Key: at.Key, Parent: at.Parent, Data: data})
		if !errors.Is(err, record.ErrConflict) {
			return err
		}
		// A concurrent first update created it: apply on top of that one.
	}
	return fmt.Errorf("%s %q: too many concurrent first updates", at.Kind, at.ID)
}

// KindLearnerObjectives is the record kind of a learner's global objectives shared across
// courses (SCORM 2004 objectivesGlobalToSystem, true by default): id the learner id, the
// data course/sequencing's MapGlobals as JSON. It belongs to no registration: deleting one
// leaves what the learner achieved in the objectives it shared.
const KindLearnerObjectives = "learner_global_objectives"

// LearnerObjectives returns the stored global objectives of a learner, or nil when none
// were stored yet.
func (s *Store) LearnerObjectives(ctx context.Context, tenant, learnerID string) (json.RawMessage, error) {
	r, err := s.records.Get(ctx, tenant, KindLearnerObjectives, learnerID)
	if errors.Is(err, record.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r.Data, nil
}

// UpdateLearnerObjectives applies fn to the stored global objectives of a learner (nil when
// there are none) and stores what it returns, with compare-and-set as UpdateSequencing does.
func (s *Store) UpdateLearnerObjectives(ctx context.Context, tenant, learnerID string, fn func(old json.RawMessage) (json.RawMessage, error)) error {
	return s.upsert(ctx, &record.Record{Tenant: tenant, Kind: KindLearnerObjectives, ID: learnerID, Key: learnerID}, fn)
}

// deleteSequencing removes the sequencing state of one registration instance.
func (s *Store) deleteSequencing(ctx context.Context, tenant, regID, instanceKey string) error {
	err := s.records.Delete(ctx, tenant, KindSequencing, regID+"/"+instanceKey)
	if errors.Is(err, record.ErrNotFound) {
		return nil
	}
	return err
}
