package learner

import (
	"context"
	"fmt"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/sequencing"
)

// sharedScope is where the shared data stores (SCORM 2004 adl.data) of a registration
// instance of v live: the learner's, shared with every course that maps the same targets,
// when the package's sharedDataGlobalToSystem is true (the default) and the registration
// names its learner; else the current attempt on the course, the root activity's attempt
// count in the stored sequencing state, so a new attempt starts with none (ADL DDM, package
// DDMb).
func (s *Service) sharedScope(ctx context.Context, tenant string, reg *registration.Registration, in *registration.Instance, v *course.Version) (scormrt.SharedScope, error) {
	if scormrt.SharedDataGlobal(v.Package) && reg.Learner.ID != "" {
		return scormrt.SharedScope{Learner: reg.Learner.ID}, nil
	}
	sc := scormrt.SharedScope{Registration: reg.ID, Instance: in.Key}
	data, err := s.d.Runtime.Sequencing(ctx, tenant, reg.ID, in.Key)
	if err != nil || data == nil {
		return sc, err
	}
	st, err := sequencing.Load(v.Package, data, nil)
	if err != nil {
		return sc, fmt.Errorf("registration %q: reading its sequencing state for shared data: %w", reg.ID, err)
	}
	if r, ok := st.Tracking(v.Package.Root.ID); ok {
		sc.Attempt = r.Attempts
	}
	return sc, nil
}

// SharedData returns what the load of act gets of the shared data stores: its maps (the
// CAM's defaults applied; adl.data.n is the n-th) and the stores of those it may read, as
// its scope holds them (nil when it maps none). A session that tracks nothing (preview,
// review) starts with every store uninitialized and keeps nothing.
func (s *Service) SharedData(ctx context.Context, sess *course.SessionClaims, v *course.Version, act *course.Activity) ([]scormrt.SharedMap, scormrt.SharedStores, error) {
	maps := scormrt.SharedMaps(act)
	if len(maps) == 0 {
		return nil, nil, nil
	}
	if !tracked(sess) {
		return maps, scormrt.SharedStores{}, nil
	}
	reg, err := s.d.Registrations.Get(ctx, sess.Tenant, sess.RegistrationID)
	if err != nil {
		return nil, nil, err
	}
	in := instanceOf(reg, sess.InstanceKey)
	if in == nil {
		return nil, nil, refuse(ErrGone, "registration '%s' was reset since this launch; launch it again", reg.ID)
	}
	sc, err := s.sharedScope(ctx, sess.Tenant, reg, in, v)
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	for _, m := range maps {
		if m.Read {
			ids = append(ids, m.TargetID)
		}
	}
	stores, err := s.d.Runtime.ReadShared(ctx, sess.Tenant, sc, ids)
	if err != nil {
		return nil, nil, err
	}
	return maps, stores, nil
}

// storeShared stores the shared data a commit wrote (checked against the activity's maps
// by scormrt.CheckSharedWrites), in the scope the package says.
func (s *Service) storeShared(ctx context.Context, tenant string, reg *registration.Registration, in *registration.Instance, v *course.Version, writes []scormrt.SharedWrite) error {
	if len(writes) == 0 {
		return nil
	}
	sc, err := s.sharedScope(ctx, tenant, reg, in, v)
	if err != nil {
		return err
	}
	return s.d.Runtime.WriteShared(ctx, tenant, sc, writes)
}
