package registration

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/lectern-lms/lectern/storage/record"
)

// DefaultRestartRule is WhenToRestartRegistration's default.
const DefaultRestartRule = "WHEN_EXISTING_REG_IS_COMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS"

// ShouldRestart says whether a launch starts a new instance under a WhenToRestartRegistration
// rule, given the current instance's progress and whether the course has a newer version than
// the one the instance is pinned to. "Incomplete" means not completed (unknown included).
func ShouldRestart(rule string, p Progress, newer bool) bool {
	completed, passed, failed := p.Completion == Completed, p.Success == Passed, p.Success == Failed
	switch rule {
	case "NEVER":
		return false
	case "WHEN_NEWER_PACKAGE_VERSION_EXISTS":
		return newer
	case "WHEN_EXISTING_REG_IS_COMPLETE":
		return completed
	case "WHEN_EXISTING_REG_IS_SATISFIED":
		return passed
	case "WHEN_EXISTING_REG_IS_SATISFIED_AND_NEWER_PACKAGE_VERSION_EXISTS":
		return passed && newer
	case "WHEN_EXISTING_REG_IS_INCOMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS":
		return !completed && newer
	case "WHEN_EXISTING_REG_IS_FAILED":
		return failed
	case "WHEN_EXISTING_REG_IS_FAILED_AND_NEWER_PACKAGE_VERSION_EXISTS":
		return failed && newer
	}
	return completed && newer // the default rule
}

// ErrInstanceChanged means NewInstance found another instance current than the one given: a
// concurrent launch started it.
var ErrInstanceChanged = errors.New("the registration's current instance changed")

// NewInstance starts instance n+1 pinned to courseVersion when from is still the current
// instance (so two concurrent launches start one instance between them) and returns the
// registration with it; when another launch got there first, the registration as it is now.
func (s *Store) NewInstance(ctx context.Context, tenant, id string, from Instance, courseVersion int) (*Registration, error) {
	r, err := record.Modify(ctx, s.records, tenant, KindRegistration, id, func(r *record.Record) error {
		reg, err := decode(r)
		if err != nil {
			return err
		}
		if reg.Current().Key != from.Key {
			return ErrInstanceChanged
		}
		reg.Instances = append(reg.Instances, s.newInstance(from.Number+1, courseVersion))
		r.Data, err = json.Marshal(reg)
		return err
	})
	if errors.Is(err, ErrInstanceChanged) {
		return s.Get(ctx, tenant, id)
	}
	if errors.Is(err, record.ErrNotFound) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, err
	}
	return decode(r)
}
