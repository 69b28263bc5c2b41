package learner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/sequencing"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/storage/statements"
)

// Progress is one registration instance rolled up: the course version it plays, the stored
// run-time state, the rollup and the settings cascade it was computed under.
type Progress struct {
	Version *course.Version
	State   rollup.State
	Result  rollup.Result
	Layers  []settings.Layer
	// fold is what the statements of an xAPI or cmi5 instance said (nil for the others).
	fold *registration.StatementFold
	// seq is the sequencing state of a SCORM 2004 instance, nil before its first launch
	// (and for the other standards).
	seq *sequencing.State
}

// Rollup computes the progress of one registration instance from what it stored: the CMI
// run-time data of SCORM and AICC content, the statements of xAPI and cmi5 content, and the
// time the server measured of its player sessions. It is the one rollup of the course
// engine: progress, progress/detail, the player's completed activities, the post-back
// report and the commit path all call it. A SCORM 2004 instance with sequencing state
// reports what its sequencer holds (rollup.UseSequencing).
func (s *Service) Rollup(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) (*Progress, error) {
	return s.rollup(ctx, tenant, reg, in, false)
}

// rollup is Rollup; detail adds the interactions and comments of each activity to its
// State (Detail shows them; no rollup rule reads them).
func (s *Service) rollup(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, detail bool) (*Progress, error) {
	v, err := s.d.Courses.PinnedVersion(ctx, tenant, reg.CourseID, in.CourseVersion, in.Course.Updated)
	if err != nil {
		return nil, err
	}
	return s.versionRollup(ctx, tenant, reg, in, v, nil, detail, nil)
}

// versionRollup is rollup with the instance's course version, and the registration's
// settings cascade when the caller has it (nil: read here), already read; known is a
// run-time record the caller holds as stored (nil: none).
func (s *Service) versionRollup(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, v *course.Version, layers []settings.Layer, detail bool, known *scormrt.Record) (*Progress, error) {
	state, err := s.d.Runtime.State(ctx, tenant, reg, in, detail, known)
	if err != nil {
		return nil, err
	}
	if layers == nil {
		if layers, err = s.RegistrationLayers(ctx, tenant, reg); err != nil {
			return nil, err
		}
	}
	p := &Progress{Version: v, State: state, Layers: layers}
	rs, err := rollup.SettingsFrom(func(id string) (string, error) { return s.d.Settings.Catalogue().Resolve(id, layers...) })
	if err != nil {
		return nil, err
	}
	if v.Package == nil || v.Package.Root == nil {
		return p, nil
	}
	if std := v.Package.Standard; std == course.XAPI || std == course.CMI5 {
		// Their progress comes from the statements of the instance, not from CMI data.
		if p.fold, err = s.instanceFold(ctx, tenant, reg, in); err != nil {
			return nil, err
		}
		p.Result = rollup.Statements(v.Package, rollup.VerbsOfFold(p.fold))
	} else {
		p.Result = rollup.Compute(rollup.Input{Package: v.Package, State: state, Settings: rs, ForCredit: reg.ForCredit})
		if Sequenced(v) {
			// The sequencer is the one SN rollup: where the instance has sequencing state,
			// each activity's statuses, score and completion amount are the sequencer's;
			// the CMI rollup stays for an instance without one (never launched, or tracked
			// before sequencing was wired).
			if p.seq, err = s.storedSequencing(ctx, tenant, reg, in, v); err != nil {
				return nil, err
			}
			p.Result.UseSequencing(v.Package, p.seq, state, rs)
		}
	}
	// Time tracked is what the server measured of the player sessions.
	t, err := s.d.Registrations.TrackedTime(ctx, tenant, reg.ID, in.Key)
	if err != nil {
		return nil, err
	}
	p.Result.UseMeasuredTime(v.Package, state, t)
	return p, nil
}

// Detail is the activity tree of one registration instance, as progress/detail and the
// ACTIVITY and FULL post-back reports give it: the rollup of every activity with its
// run-time data, and for xAPI and cmi5 content the questions its statements answered as
// interactions when TinCanInteractionsEnabled says so. Nil when the course version has no
// activity tree.
func (s *Service) Detail(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) (*registration.ActivityResult, error) {
	p, err := s.rollup(ctx, tenant, reg, in, true)
	if err != nil {
		return nil, err
	}
	pkg := p.Version.Package
	if pkg == nil || pkg.Root == nil {
		return nil, nil
	}
	// Details maps the stored CMI data to each activity's runtime (the one mapping).
	tree := p.Result.Details(pkg, p.State, reg.ForCredit)
	// The attempts, suspension and objectives the sequencer holds (SCORM 2004).
	rollup.ApplySequencing(tree, p.seq)
	if p.fold != nil {
		on, err := s.d.Settings.Catalogue().Resolve(settingInteractions, p.Layers...)
		if err != nil {
			return nil, err
		}
		if on == "true" {
			rollup.AddInteractions(tree, rollup.FoldInteractions(pkg, p.fold))
		}
	}
	return tree, nil
}

// settingInteractions turns answered statements into run-time interactions.
const settingInteractions = "TinCanInteractionsEnabled"

// instanceFold is what the statements of an xAPI or cmi5 instance have said: the fold its
// lookup keeps, or, when none was kept yet, the fold of its statements read now.
func (s *Service) instanceFold(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) (*registration.StatementFold, error) {
	f, err := s.d.Registrations.XAPIFold(ctx, tenant, reg, in)
	if err != nil || f != nil {
		return f, err
	}
	raws, err := s.xapiStatements(ctx, tenant, reg.XAPIRegistrationOf(in))
	if err != nil {
		return nil, err
	}
	f = &registration.StatementFold{}
	rollup.FoldStatements(f, raws)
	return f, nil
}

// xapiStatements returns every statement of an xAPI registration, oldest first.
func (s *Service) xapiStatements(ctx context.Context, tenant, xid string) ([]json.RawMessage, error) {
	var raws []json.RawMessage
	q := statements.Query{Tenant: tenant, Registration: xid, Ascending: true, Limit: statements.MaxLimit}
	for {
		page, err := s.d.Statements.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, st := range page.Statements {
			raws = append(raws, st.Raw)
		}
		if page.Next == "" {
			return raws, nil
		}
		q.Cursor = page.Next
	}
}

// CompletedActivities lists the activities of a player session's registration instance
// whose rolled-up completion is COMPLETED (none for a preview).
func (s *Service) CompletedActivities(ctx context.Context, sess *course.SessionClaims) ([]string, error) {
	if sess.Preview || sess.RegistrationID == "" {
		return nil, nil
	}
	p, err := s.sessionProgress(ctx, sess, nil)
	if err != nil || p == nil {
		return nil, err
	}
	var ids []string
	for id, o := range p.Result.Activities {
		if o != nil && o.Completion == registration.Completed {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// sessionProgress rolls up the registration instance a player session tracks; nil when a
// reset removed the instance. v is the session's course version, nil to read it.
func (s *Service) sessionProgress(ctx context.Context, sess *course.SessionClaims, v *course.Version) (*Progress, error) {
	reg, err := s.d.Registrations.Get(ctx, sess.Tenant, sess.RegistrationID)
	if err != nil {
		return nil, err
	}
	in := instanceOf(reg, sess.InstanceKey)
	if in == nil {
		return nil, nil
	}
	if v == nil {
		return s.Rollup(ctx, sess.Tenant, reg, *in)
	}
	return s.versionRollup(ctx, sess.Tenant, reg, *in, v, nil, false, nil)
}

// storedSequencing is the sequencing state a SCORM 2004 registration instance keeps, nil
// before its first launch.
func (s *Service) storedSequencing(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, v *course.Version) (*sequencing.State, error) {
	raw, err := s.d.Runtime.Sequencing(ctx, tenant, reg.ID, in.Key)
	if err != nil || raw == nil {
		return nil, err
	}
	return sequencing.Load(v.Package, raw, nil)
}

// GlobalObjectives lists the global objectives of a registration instance (the objectives
// the activities of a SCORM 2004 course share through objective maps), as the progress
// summary reports them; none for other standards or before the first launch. It reads only
// the sequencing record, not the course version, as a registration list asks it of each.
func (s *Service) GlobalObjectives(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) ([]registration.ObjectiveResult, error) {
	if d, ok := scormrt.DialectOf(course.Standard(in.Course.Standard)); !ok || d != scormrt.SCORM2004 {
		return []registration.ObjectiveResult{}, nil
	}
	raw, err := s.d.Runtime.Sequencing(ctx, tenant, reg.ID, in.Key)
	if err != nil {
		return nil, err
	}
	var st sequencing.State
	if raw != nil {
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("registration %q: reading its sequencing state: %w", reg.ID, err)
		}
	}
	return rollup.GlobalObjectives(st.Globals), nil
}
