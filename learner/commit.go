package learner

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/settings"
)

// Commit is one post of run-time data by a tracked player session.
type Commit struct {
	Session  *course.SessionClaims
	Version  *course.Version
	Activity *course.Activity
	Dialect  scormrt.Dialect
	// Attempt is the load the data belongs to (the activity load's number).
	Attempt int64
	Data    *scormrt.Commit
	// Exit marks the content's terminating commit (Terminate, LMSFinish).
	Exit bool
	// Key is the player session token (it names the sequencing State of a session that
	// tracks nothing; a tracked one's is its registration instance's).
	Key string

	stored scormrt.Values // the activity's data once the commit is stored
	// What commit read and wrote, for the rollup and the conversion that follow it.
	reg     *registration.Registration
	in      *registration.Instance
	layers  []settings.Layer
	record  *scormrt.Record
	before  *scormrt.Record
	convert bool
}

// Commit stores a commit of a tracked session, then rolls the instance up, posts the
// registration's report when it is due and converts the data to xAPI when
// ConvertTinCanFromScormRealtime says so. It is refused, storing nothing, with
// registration.ErrNotFound (the registration is gone), ErrGone (reset since the launch),
// scormrt.ErrStale (an older commit than the stored one) or a *SessionError (a later launch
// took the session over, or it expired).
//
// For a SCORM 2004 course the stored outcome is then reported to the sequencer, and at
// Terminate the SCO's pending navigation request is processed (SequencingCommit): the
// answer is the sequencer's, nil for other standards or when the sequencer failed (the
// commit is durable all the same; the failure is logged).
//
// The sequencer runs before the rollup: where a registration instance has sequencing state,
// the progress the rollup stores (and posts) is the sequencer's (rollup.UseSequencing), so it
// must include this commit and the navigation request it ended with.
func (s *Service) Commit(ctx context.Context, c Commit) (*NavState, error) {
	if err := s.commit(ctx, &c); err != nil {
		return nil, err
	}
	var nav *NavState
	if Sequenced(c.Version) && c.Dialect == scormrt.SCORM2004 {
		var err error
		if nav, err = s.SequencingCommit(ctx, c.Session, c.Key, c.Version, c.Activity, c.stored, c.Data.NavRequest, c.Exit); err != nil {
			s.log.Warn("sequencing after a commit failed", "tenant", c.Session.Tenant, "registration", c.Session.RegistrationID,
				"activity", c.Activity.ID, "error", err)
			nav = nil
		}
	}
	s.afterCommit(ctx, c.Session.Tenant, c.reg, *c.in, c.Version, c.Exit, c.layers, c.record)
	if c.convert {
		s.convertCommit(ctx, c.Session.Tenant, c.reg, *c.in, c.Version, c.Activity, c.before, c.record, c.Exit, c.layers)
	}
	return nav, nil
}

func (s *Service) commit(ctx context.Context, c *Commit) error {
	sess, act := c.Session, c.Activity
	reg, err := s.d.Registrations.Get(ctx, sess.Tenant, sess.RegistrationID)
	if err != nil {
		return err
	}
	in := instanceOf(reg, sess.InstanceKey)
	if in == nil {
		return refuse(ErrGone, "registration '%s' was reset since this launch; launch it again", reg.ID)
	}
	if _, err := s.Touch(ctx, sess, act.ID, registration.SignalActive); err != nil {
		return err
	}
	// The registration's settings cascade, read once for the conversion and the rollup. A
	// failure to read it never refuses the commit: conversion is skipped and the rollup reads
	// it again (and logs).
	layers, err := s.RegistrationLayers(ctx, sess.Tenant, reg)
	if err != nil {
		s.log.Warn("registration settings unreadable", "tenant", sess.Tenant, "registration", reg.ID, "error", err)
		layers = nil
	}
	convert := s.convertsRealtime(layers)
	var before *scormrt.Record
	if convert {
		// What the commit replaces tells a resumed load from a new one.
		if before, err = s.d.Runtime.Get(ctx, sess.Tenant, reg.ID, in.Key, act.ID); err != nil {
			return err
		}
	}
	// SCORM 1.2 RTE (cmi.core.lesson_status): a SCO that finishes without having set a status
	// is completed. Only a credit launch changes the status (a no-credit session keeps it).
	c.Data.Finish12 = c.Exit && c.Dialect == scormrt.SCORM12 && c.Version.Standard != course.AICC && !sess.NoCredit
	if c.Exit && c.Dialect == scormrt.SCORM2004 {
		c.Data.Values = suspendedByRequest(c.Data.Values, c.Data.NavRequest)
	}
	rec, err := s.d.Runtime.Commit(ctx, sess.Tenant, reg.ID, in.Key, act.ID, c.Dialect, c.Attempt, c.Data)
	if err != nil {
		return err
	}
	c.stored = rec.Values
	// Shared data (adl.data) is written once the commit that carries it is accepted: a
	// stale commit, refused above, must not put back what a later one replaced. The answer
	// waits for it, so the next SCO launched reads it.
	if err := s.storeShared(ctx, sess.Tenant, reg, in, c.Version, c.Data.SharedData); err != nil {
		return err
	}
	c.reg, c.in, c.layers, c.record, c.before, c.convert = reg, in, layers, rec, before, convert
	return nil
}

// suspendedByRequest is the terminating commit's data of a SCORM 2004 SCO that left the
// navigation request navRequest: a suspendAll suspends the SCO's attempt as cmi.exit
// "suspend" does (SN book, Suspend All; RTE 4.2.7: the next launch's cmi.entry is "resume"
// and the data is the suspended attempt's, ADL DMB), so the data says cmi.exit "suspend"
// and the next load resumes it. Any other request leaves v as it is; v is not changed in
// place (a commit's Values may be replaced, never changed).
func suspendedByRequest(v scormrt.Values, navRequest string) scormrt.Values {
	if navRequest != "suspendAll" || v["cmi.exit"] == "suspend" {
		return v
	}
	out := make(scormrt.Values, len(v)+1)
	for k, x := range v {
		out[k] = x
	}
	out["cmi.exit"] = "suspend"
	return out
}

// HACPPut stores an AICC PutParam: HACP has no commit counter, so requests are ordered by
// arrival, each its own attempt. The session time a PutParam carries is the AU session's
// running time: the store makes the activity's total time the earlier sessions' total plus
// it (runtime.HACPTime). Refused as Commit is.
func (s *Service) HACPPut(ctx context.Context, sess *course.SessionClaims, v *course.Version, act *course.Activity, put *scormrt.Commit) error {
	if t := put.Values["cmi.core.session_time"]; t != "" {
		put.HACP = &scormrt.HACPTime{Session: sess.Launch, Seconds: scormrt.TimespanSeconds(t)}
	}
	_, err := s.Commit(ctx, Commit{Session: sess, Version: v, Activity: act, Dialect: scormrt.SCORM12,
		Attempt: s.d.Runtime.NewAttempt(), Data: put})
	return err
}

// Exit is an exit without data (AICC ExitAU of act): it ends the AU's session for the
// time total, and the rollup runs as after a terminating commit, for the post-back at exit.
func (s *Service) Exit(ctx context.Context, sess *course.SessionClaims, v *course.Version, act *course.Activity) error {
	reg, err := s.d.Registrations.Get(ctx, sess.Tenant, sess.RegistrationID)
	if errors.Is(err, registration.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	in := instanceOf(reg, sess.InstanceKey)
	if in == nil {
		return nil
	}
	if err := s.d.Runtime.EndHACP(ctx, sess.Tenant, reg.ID, in.Key, act.ID); err != nil {
		return err
	}
	s.afterCommit(ctx, sess.Tenant, reg, *in, v, true, nil, nil)
	return nil
}

// errUnchanged ends a progress update that would write what is already stored.
var errUnchanged = errors.New("progress unchanged")

// afterCommit runs after every stored commit: it rolls the instance's progress up and posts
// the registration's report when ApiRollupRegistrationDuringSession says so (see
// storeRollup); exit marks the content's terminating commit. It must not fail the commit,
// which is already durable: a failure is logged, and the next commit repairs it
// (progress/detail's activity tree computes the same rollup meanwhile). Progress is written
// after the commit's run-time data, so it may lag behind what progress/detail shows. stored,
// when set, is the record the commit just wrote (the rollup need not read it back).
// layers is the registration's settings cascade when the commit read it (nil: read here).
func (s *Service) afterCommit(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, v *course.Version, exit bool, layers []settings.Layer, stored *scormrt.Record) {
	p, err := s.versionRollup(ctx, tenant, reg, in, v, layers, false, stored)
	if err == nil && p.Result.Completion == "" {
		return
	}
	if err == nil {
		err = s.storeRollup(ctx, tenant, reg, in, p.Result, p.Layers, exit)
	}
	if err != nil {
		s.log.Warn("rollup after a commit failed", "tenant", tenant, "registration", reg.ID, "instance", in.Number, "error", err)
	}
}

// storeRollup writes a rollup into the instance's progress when it changes what a post-back
// reports, and then posts the registration's report (postBackAfter).
func (s *Service) storeRollup(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, res rollup.Result, layers []settings.Layer, exit bool) error {
	changed, err := s.storeProgress(ctx, tenant, reg, in, res)
	if err != nil {
		return err
	}
	return s.postBackAfter(ctx, tenant, reg, layers, changed, exit)
}

// storeProgress writes a rollup into the instance's progress when it changes what a
// post-back reports, and says whether it did.
func (s *Service) storeProgress(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, res rollup.Result) (bool, error) {
	changed := false
	_, err := s.d.Registrations.UpdateProgress(ctx, tenant, reg.ID, in.Number, func(p *registration.Progress) error {
		if changed = res.Update(p, time.Now()); !changed {
			return errUnchanged
		}
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return false, err
	}
	return changed, nil
}

// The settings of post-backs the learner's path reads (workers/postbackjob reads those of
// the delivery itself).
const (
	// SettingPostBackURL names the report's receiver when the registration's postBack does not.
	SettingPostBackURL = "ApiRollupRegistrationPostBackUrl"
	// SettingDuringSession: true posts whenever the rollup changes; false only when the
	// content exits.
	SettingDuringSession = "ApiRollupRegistrationDuringSession"
	// SettingSynchronous: the first attempt is made inline, before the request that caused
	// it answers; retries are queued.
	SettingSynchronous = "ApiRollupRegistrationSynchronous"
	// SettingMaxTries is how many attempts a post-back gets before it is given up.
	SettingMaxTries = "SimpleQueueMaxTries"
)

// postBackAfter posts the registration's report after a rollup: on every change of what a
// post-back reports while ApiRollupRegistrationDuringSession is true; else only at exit
// (the content's terminating commit), whether or not the exit itself changed anything,
// since the session's changes were held back until then.
func (s *Service) postBackAfter(ctx context.Context, tenant string, reg *registration.Registration, layers []settings.Layer, changed, exit bool) error {
	if !s.hasPostBack(reg, layers) {
		return nil
	}
	during, err := s.d.Settings.Catalogue().Resolve(SettingDuringSession, layers...)
	if err != nil {
		return err
	}
	if (changed && during == "true") || (exit && during != "true") {
		s.postBack(ctx, tenant, reg, layers)
	}
	return nil
}

// postBack sends the registration's report: the first attempt inline when
// ApiRollupRegistrationSynchronous is true (the request that caused it answers after it, so
// the receiver has the report before the player exits), and the remaining attempts of
// SimpleQueueMaxTries through the queue, with its backoff. Failures are logged, never
// returned: the change that caused the post-back is stored already.
func (s *Service) postBack(ctx context.Context, tenant string, reg *registration.Registration, layers []settings.Layer) {
	if s.d.PostBacks == nil {
		return
	}
	cat := s.d.Settings.Catalogue()
	sync, err := cat.Resolve(SettingSynchronous, layers...)
	var triesText string
	if err == nil {
		triesText, err = cat.Resolve(SettingMaxTries, layers...)
	}
	tries, cerr := strconv.Atoi(triesText)
	if err == nil {
		err = cerr
	}
	if err != nil {
		s.log.Warn("post-back settings unreadable; post-back not sent", "tenant", tenant, "registration", reg.ID, "error", err)
		return
	}
	s.d.PostBacks.Send(ctx, tenant, reg.ID, sync == "true", tries)
}

// hasPostBack reports whether the registration's report goes anywhere: its own postBack URL,
// or the ApiRollupRegistrationPostBackUrl of its cascade.
func (s *Service) hasPostBack(reg *registration.Registration, layers []settings.Layer) bool {
	if reg.PostBack != nil && reg.PostBack.URL != "" {
		return true
	}
	u, err := s.d.Settings.Catalogue().Resolve(SettingPostBackURL, layers...)
	return err == nil && u != ""
}
