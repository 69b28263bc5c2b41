package registration

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/lectern-lms/lectern/storage/record"
)

// RecordAccess notes a launch of an instance at t: the first access once, the last access
// every time. It creates the instance's progress record on the first launch.
func (s *Store) RecordAccess(ctx context.Context, tenant string, reg *Registration, in Instance, t time.Time) error {
	t = t.UTC()
	touch := func(p *Progress) {
		if p.FirstAccess == nil {
			p.FirstAccess = &t
		}
		p.LastAccess = &t
	}
	id := progressID(reg.ID, in)
	for try := 0; try < 3; try++ {
		_, err := record.Modify(ctx, s.records, tenant, KindProgress, id, func(r *record.Record) error {
			var p Progress
			if err := json.Unmarshal(r.Data, &p); err != nil {
				return err
			}
			touch(&p)
			var err error
			r.Data, err = json.Marshal(p)
			return err
		})
		if !errors.Is(err, record.ErrNotFound) {
			return err
		}
		p := Untracked()
		touch(&p)
		data, err := json.Marshal(p)
		if err != nil {
			return err
		}
		err = s.records.Create(ctx, &record.Record{Tenant: tenant, Kind: KindProgress, ID: id,
			Parent: &record.Ref{Kind: KindRegistration, ID: reg.ID}, Data: data})
		if !errors.Is(err, record.ErrConflict) {
			return err
		}
	}
	return errors.New("progress " + id + ": too many concurrent first launches")
}

// KindLaunchNonce records a consumed single-use launch link: id the link's nonce, parent the
// registration (so it goes with it).
const KindLaunchNonce = "registration_launch_nonce"

// ErrLaunchUsed means a single-use launch link was already launched once.
var ErrLaunchUsed = errors.New("this launch link was already used")

// ConsumeLaunch marks a single-use launch link's nonce as used; ErrLaunchUsed when it was.
// The create-if-absent write makes two concurrent launches of one link succeed at most once.
func (s *Store) ConsumeLaunch(ctx context.Context, tenant, regID, nonce string) error {
	err := s.records.Create(ctx, &record.Record{Tenant: tenant, Kind: KindLaunchNonce, ID: nonce,
		Parent: &record.Ref{Kind: KindRegistration, ID: regID}, Data: json.RawMessage(`{}`)})
	if errors.Is(err, record.ErrConflict) {
		return ErrLaunchUsed
	}
	return err
}
