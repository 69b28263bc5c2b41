package server

import (
	"context"
	"errors"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/workers/postbackjob"
)

// instanceRollup computes the progress of one registration instance from the run-time data
// the player stored for it, under the rollup settings of the registration's cascade.
func (s *Server) instanceRollup(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) (*course.Version, rollup.State, rollup.Result, []settings.Layer, error) {
	var res rollup.Result
	v, err := s.deps.Courses.Version(ctx, tenant, reg.CourseID, in.CourseVersion)
	if err != nil {
		return nil, nil, res, nil, err
	}
	state, err := s.deps.Runtime.State(ctx, tenant, reg, in)
	if err != nil {
		return nil, nil, res, nil, err
	}
	layers := make([]settings.Layer, 0, 3)
	for _, sc := range []settings.Scope{settings.TenantScope, settings.CourseScope(reg.CourseID), settings.RegistrationScope(reg.ID)} {
		l, err := s.deps.Settings.Layer(ctx, tenant, sc)
		if err != nil {
			return nil, nil, res, nil, err
		}
		layers = append(layers, l)
	}
	rs, err := rollup.SettingsFrom(func(id string) (string, error) { return s.deps.Settings.Catalogue().Resolve(id, layers...) })
	if err != nil {
		return nil, nil, res, nil, err
	}
	if v.Package == nil || v.Package.Root == nil {
		return v, state, res, layers, nil
	}
	res = rollup.Compute(rollup.Input{Package: v.Package, State: state, Settings: rs, ForCredit: reg.ForCredit})
	return v, state, res, layers, nil
}

// errUnchanged ends a progress update that would write what is already stored.
var errUnchanged = errors.New("progress unchanged")

// afterRuntimeCommit runs after every stored commit: it rolls the instance's progress up
// and, when what a post-back reports changed, queues the registration's post-back. It must
// not fail the commit, which is already durable: a failure is logged, and the next commit
// (or progress/detail, which computes the same rollup) repairs it.
func (s *Server) afterRuntimeCommit(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) {
	_, _, res, layers, err := s.instanceRollup(ctx, tenant, reg, in)
	if err == nil && res.Completion == "" {
		return
	}
	changed := false
	if err == nil {
		_, err = s.deps.Registrations.UpdateProgress(ctx, tenant, reg.ID, in.Number, func(p *registration.Progress) error {
			if changed = res.Changed(*p); !changed {
				return errUnchanged
			}
			res.Apply(p, time.Now())
			return nil
		})
		if errors.Is(err, errUnchanged) {
			err = nil
		}
	}
	if err != nil {
		s.log.Warn("rollup after a commit failed", "tenant", tenant, "registration", reg.ID, "instance", in.Number, "error", err)
		return
	}
	if !changed || !s.hasPostBack(reg, layers) {
		return
	}
	if err := postbackjob.Enqueue(ctx, s.deps.Queue, postbackjob.Payload{Tenant: tenant, RegistrationID: reg.ID}); err != nil {
		s.log.Warn("post-back not queued", "tenant", tenant, "registration", reg.ID, "error", err)
	}
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
