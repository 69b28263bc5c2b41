package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/storage/statements"
	"github.com/lectern-lms/lectern/workers/postbackjob"
)

// instanceRollup computes the progress of one registration instance from the run-time data
// the player stored for it, under the rollup settings of the registration's cascade.
func (s *Server) instanceRollup(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) (*course.Version, rollup.State, rollup.Result, []settings.Layer, error) {
	v, err := s.deps.Courses.PinnedVersion(ctx, tenant, reg.CourseID, in.CourseVersion, in.Course.Updated)
	if err != nil {
		return nil, nil, rollup.Result{}, nil, err
	}
	return s.versionRollup(ctx, tenant, reg, in, v)
}

// versionRollup is instanceRollup with the instance's course version already read.
func (s *Server) versionRollup(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, v *course.Version) (*course.Version, rollup.State, rollup.Result, []settings.Layer, error) {
	var res rollup.Result
	state, err := s.deps.Runtime.State(ctx, tenant, reg, in)
	if err != nil {
		return nil, nil, res, nil, err
	}
	layers, err := s.registrationLayersOf(ctx, tenant, reg)
	if err != nil {
		return nil, nil, res, nil, err
	}
	rs, err := rollup.SettingsFrom(func(id string) (string, error) { return s.deps.Settings.Catalogue().Resolve(id, layers...) })
	if err != nil {
		return nil, nil, res, nil, err
	}
	if v.Package == nil || v.Package.Root == nil {
		return v, state, res, layers, nil
	}
	if std := v.Package.Standard; std == course.XAPI || std == course.CMI5 {
		// Their progress comes from the statements of the registration, not from CMI data.
		raws, err := s.registrationStatements(ctx, tenant, reg)
		if err != nil {
			return nil, nil, res, nil, err
		}
		return v, state, rollup.Statements(v.Package, rollup.VerbsOf(raws)), layers, nil
	}
	res = rollup.Compute(rollup.Input{Package: v.Package, State: state, Settings: rs, ForCredit: reg.ForCredit})
	return v, state, res, layers, nil
}

// registrationStatements returns every statement of the registration's xAPI registration,
// oldest first.
func (s *Server) registrationStatements(ctx context.Context, tenant string, reg *registration.Registration) ([]json.RawMessage, error) {
	var raws []json.RawMessage
	q := statements.Query{Tenant: tenant, Registration: reg.XAPIRegistrationID, Ascending: true, Limit: statements.MaxLimit}
	for {
		page, err := s.deps.Statements.Query(ctx, q)
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

// registrationLayersOf is the cascade tenant → course → registration outside a request.
func (s *Server) registrationLayersOf(ctx context.Context, tenant string, reg *registration.Registration) ([]settings.Layer, error) {
	return s.deps.Settings.Layers(ctx, tenant, settings.RegistrationScopes(reg.CourseID, reg.ID)...)
}

// errUnchanged ends a progress update that would write what is already stored.
var errUnchanged = errors.New("progress unchanged")

// afterRuntimeCommit runs after every stored commit: it rolls the instance's progress up
// and, when what a post-back reports changed, queues the registration's post-back. It must
// not fail the commit, which is already durable: a failure is logged, and the next commit
// (or progress/detail, which computes the same rollup) repairs it.
func (s *Server) afterRuntimeCommit(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, v *course.Version) {
	_, _, res, layers, err := s.versionRollup(ctx, tenant, reg, in, v)
	if err == nil && res.Completion == "" {
		return
	}
	if err == nil {
		err = s.storeRollup(ctx, tenant, reg, in, res, layers)
	}
	if err != nil {
		s.log.Warn("rollup after a commit failed", "tenant", tenant, "registration", reg.ID, "instance", in.Number, "error", err)
	}
}

// storeRollup writes a rollup into the instance's progress when it changes what a post-back
// reports, and then queues the registration's post-back.
func (s *Server) storeRollup(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, res rollup.Result, layers []settings.Layer) error {
	changed := false
	_, err := s.deps.Registrations.UpdateProgress(ctx, tenant, reg.ID, in.Number, func(p *registration.Progress) error {
		if changed = res.Changed(*p); !changed {
			return errUnchanged
		}
		res.Apply(p, time.Now())
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	if err != nil || !s.hasPostBack(reg, layers) {
		return err
	}
	if err := postbackjob.Enqueue(ctx, s.deps.Queue, postbackjob.Payload{Tenant: tenant, RegistrationID: reg.ID}); err != nil {
		s.log.Warn("post-back not queued", "tenant", tenant, "registration", reg.ID, "error", err)
	}
	return nil
}

// statementProgress rolls up, from their statements, the xAPI and cmi5 registrations a stored
// batch of statements names (context.registration = a registration's xAPI registration id).
// The statements are stored whatever happens here; a failure is logged and the next statement
// of the registration repairs it.
func (s *Server) statementProgress(ctx context.Context, tenant string, batch []*statements.Statement) {
	done := map[string]bool{}
	for _, st := range batch {
		if st.Registration == "" || done[st.Registration] {
			continue
		}
		done[st.Registration] = true
		reg, err := s.deps.Registrations.ByXAPIRegistration(ctx, tenant, st.Registration)
		if errors.Is(err, registration.ErrNotFound) {
			continue
		}
		if err == nil {
			err = s.rollupFromStatements(ctx, tenant, reg)
		}
		if err != nil {
			s.log.Warn("rollup from statements failed", "tenant", tenant, "registration", st.Registration, "error", err)
		}
	}
}

// rollupFromStatements evaluates an xAPI or cmi5 registration's current instance from every
// statement of its xAPI registration: cmi5 moveOn per AU, blocks and course (course/rollup).
func (s *Server) rollupFromStatements(ctx context.Context, tenant string, reg *registration.Registration) error {
	in := reg.Current()
	if in.Course.Standard != string(course.XAPI) && in.Course.Standard != string(course.CMI5) {
		return nil
	}
	_, _, res, layers, err := s.instanceRollup(ctx, tenant, reg, in)
	if err != nil || res.Completion == "" {
		return err
	}
	return s.storeRollup(ctx, tenant, reg, in, res, layers)
}

// hasPostBack reports whether the registration's report goes anywhere: its own postBack URL,
// or the ApiRollupRegistrationPostBackUrl of its cascade.
func (s *Server) hasPostBack(reg *registration.Registration, layers []settings.Layer) bool {
	if reg.PostBack != nil && reg.PostBack.URL != "" {
		return true
	}
	u, err := s.deps.Settings.Catalogue().Resolve(postbackjob.SettingURL, layers...)
	return err == nil && u != ""
}
