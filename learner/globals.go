package learner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/sequencing"
)

// systemGlobals is what a tracked session shares of its learner's global objectives (SCORM
// 2004 objectivesGlobalToSystem, true by default): the objectives the course's maps name,
// as the learner's record held them when the request began. The sequencing State reads
// them from its own Globals, and what the request changed goes back to the learner's
// record, so one course reads what another wrote (ADL SX-11c after SX-11a).
type systemGlobals struct {
	tenant, learnerID string
	ids               []string
	held              sequencing.MapGlobals
}

// loadSystemGlobals reads the learner's global objectives a tracked session of v shares;
// nil when it shares none (a preview, no objective maps, objectivesGlobalToSystem false).
func (s *Service) loadSystemGlobals(ctx context.Context, sess *course.SessionClaims, v *course.Version) (*systemGlobals, error) {
	if !tracked(sess) {
		return nil, nil
	}
	ids := v.Package.SystemObjectives()
	if len(ids) == 0 {
		return nil, nil
	}
	reg, err := s.d.Registrations.Get(ctx, sess.Tenant, sess.RegistrationID)
	if err != nil {
		return nil, err
	}
	if reg.Learner.ID == "" {
		return nil, nil
	}
	g := &systemGlobals{tenant: sess.Tenant, learnerID: reg.Learner.ID, ids: ids, held: sequencing.MapGlobals{}}
	raw, err := s.d.Runtime.LearnerObjectives(ctx, sess.Tenant, reg.Learner.ID)
	if err != nil {
		return nil, err
	}
	if raw != nil {
		if err := json.Unmarshal(raw, &g.held); err != nil {
			return nil, fmt.Errorf("learner %q: reading their global objectives: %w", reg.Learner.ID, err)
		}
	}
	return g, nil
}

// store writes to the learner's record the shared global objectives st changed, and holds
// them as the learner's from then on (a State computed again, after a concurrent change of
// the registration's, shares what this one wrote). Writing the same values again changes
// nothing, so a retried request may store them twice.
func (g *systemGlobals) store(ctx context.Context, s *Service, st *sequencing.State) error {
	changes := st.SharedChanges(g.held, g.ids)
	if len(changes) == 0 {
		return nil
	}
	err := s.d.Runtime.UpdateLearnerObjectives(ctx, g.tenant, g.learnerID, func(old json.RawMessage) (json.RawMessage, error) {
		all := sequencing.MapGlobals{}
		if old != nil {
			if err := json.Unmarshal(old, &all); err != nil {
				return nil, fmt.Errorf("learner %q: reading their global objectives: %w", g.learnerID, err)
			}
		}
		for id, o := range changes {
			all[id] = o
		}
		return json.Marshal(all)
	})
	if err != nil {
		return err
	}
	for id, o := range changes {
		g.held[id] = o
	}
	return nil
}
