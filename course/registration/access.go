package registration

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/lectern-lms/lectern/storage/record"
)

// RecordAccess notes a launch of an instance at t: the first access once, the last access
// every time.
func (s *Store) RecordAccess(ctx context.Context, tenant string, reg *Registration, in Instance, t time.Time) error {
	t = t.UTC()
	_, err := s.UpdateProgress(ctx, tenant, reg.ID, in.Number, func(p *Progress) error {
		if p.FirstAccess == nil {
			p.FirstAccess = &t
		}
		p.LastAccess = &t
		return nil
	})
	return err
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
