package server

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/storage/statements"
	"github.com/lectern-lms/lectern/workers/postbackjob"
	"github.com/lectern-lms/lectern/workers/queue"
)

// instanceRollup computes the progress of one registration instance from the run-time data
// the player stored for it, under the rollup settings of the registration's cascade.
func (s *Server) instanceRollup(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) (*course.Version, rollup.State, rollup.Result, []settings.Layer, error) {
	v, err := s.deps.Courses.PinnedVersion(ctx, tenant, reg.CourseID, in.CourseVersion, in.Course.Updated)
	if err != nil {
		return nil, nil, rollup.Result{}, nil, err
	}
	return s.versionRollup(ctx, tenant, reg, in, v, nil)
}

// versionRollup is instanceRollup with the instance's course version, and the registration's
// settings cascade when the caller has it (nil: read here), already read.
func (s *Server) versionRollup(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, v *course.Version, layers []settings.Layer) (*course.Version, rollup.State, rollup.Result, []settings.Layer, error) {
	var res rollup.Result
	state, err := s.deps.Runtime.State(ctx, tenant, reg, in)
	if err != nil {
		return nil, nil, res, nil, err
	}
	if layers == nil {
		if layers, err = s.registrationLayersOf(ctx, tenant, reg); err != nil {
			return nil, nil, res, nil, err
		}
	}
	rs, err := rollup.SettingsFrom(func(id string) (string, error) { return s.deps.Settings.Catalogue().Resolve(id, layers...) })
	if err != nil {
		return nil, nil, res, nil, err
	}
	if v.Package == nil || v.Package.Root == nil {
		return v, state, res, layers, nil
	}
	if std := v.Package.Standard; std == course.XAPI || std == course.CMI5 {
		// Their progress comes from the statements of the instance, not from CMI data.
		f, err := s.instanceFold(ctx, tenant, reg, in)
		if err != nil {
			return nil, nil, res, nil, err
		}
		res = rollup.Statements(v.Package, rollup.VerbsOfFold(f))
	} else {
		res = rollup.Compute(rollup.Input{Package: v.Package, State: state, Settings: rs, ForCredit: reg.ForCredit})
	}
	if err := s.useMeasuredTime(ctx, tenant, reg, in, v, state, &res); err != nil {
		return nil, nil, res, nil, err
	}
	return v, state, res, layers, nil
}

// instanceFold is what the statements of an xAPI or cmi5 instance have said: the fold its
// lookup keeps, or, when none was kept yet, the fold of its statements read now.
func (s *Server) instanceFold(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) (*registration.StatementFold, error) {
	f, err := s.deps.Registrations.XAPIFold(ctx, tenant, reg, in)
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
func (s *Server) xapiStatements(ctx context.Context, tenant, xid string) ([]json.RawMessage, error) {
	var raws []json.RawMessage
	q := statements.Query{Tenant: tenant, Registration: xid, Ascending: true, Limit: statements.MaxLimit}
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

// statementInteractions adds to an xAPI or cmi5 instance's activity tree, when
// TinCanInteractionsEnabled says so, the questions its statements answered as run-time
// interactions of the activities they belong to (rollup.FoldInteractions).
func (s *Server) statementInteractions(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance,
	v *course.Version, layers []settings.Layer, tree *registration.ActivityResult) error {
	if std := v.Package.Standard; std != course.XAPI && std != course.CMI5 {
		return nil
	}
	if on, err := s.deps.Settings.Catalogue().Resolve(settingInteractions, layers...); err != nil || on != "true" {
		return err
	}
	f, err := s.instanceFold(ctx, tenant, reg, in)
	if err != nil {
		return err
	}
	rollup.AddInteractions(tree, rollup.FoldInteractions(v.Package, f))
	return nil
}

// settingInteractions turns answered statements into run-time interactions.
const settingInteractions = "TinCanInteractionsEnabled"

// registrationLayersOf is the cascade tenant → course → registration outside a request.
func (s *Server) registrationLayersOf(ctx context.Context, tenant string, reg *registration.Registration) ([]settings.Layer, error) {
	return s.deps.Settings.Layers(ctx, tenant, settings.RegistrationScopes(reg.CourseID, reg.ID)...)
}

// The verbs that end an xAPI or cmi5 session.
const (
	verbTerminated = "http://adlnet.gov/expapi/verbs/terminated"
	verbExited     = "http://adlnet.gov/expapi/verbs/exited"
)

// errUnchanged ends a progress update that would write what is already stored.
var errUnchanged = errors.New("progress unchanged")

// afterRuntimeCommit runs after every stored commit: it rolls the instance's progress up
// and posts the registration's report when ApiRollupRegistrationDuringSession says so (see
// storeRollup); exit marks the content's terminating commit. It must not fail the commit,
// which is already durable: a failure is logged, and the next commit repairs it
// (progress/detail's activity tree computes the same rollup meanwhile). Progress is written
// after the commit's run-time data, so it may lag behind what progress/detail shows.
// layers is the registration's settings cascade when the commit read it (nil: read here).
func (s *Server) afterRuntimeCommit(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, v *course.Version, exit bool, layers []settings.Layer) {
	_, _, res, layers, err := s.versionRollup(ctx, tenant, reg, in, v, layers)
	if err == nil && res.Completion == "" {
		return
	}
	if err == nil {
		err = s.storeRollup(ctx, tenant, reg, in, res, layers, exit)
	}
	if err != nil {
		s.log.Warn("rollup after a commit failed", "tenant", tenant, "registration", reg.ID, "instance", in.Number, "error", err)
	}
}

// storeRollup writes a rollup into the instance's progress when it changes what a post-back
// reports, and then posts the registration's report: on every such change while
// ApiRollupRegistrationDuringSession is true; else only at exit (the content's terminating
// commit), whether or not the exit itself changed anything, since the session's changes
// were held back until then.
func (s *Server) storeRollup(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, res rollup.Result, layers []settings.Layer, exit bool) error {
	changed := false
	_, err := s.deps.Registrations.UpdateProgress(ctx, tenant, reg.ID, in.Number, func(p *registration.Progress) error {
		if changed = res.Changed(*p); !changed {
			return errUnchanged
		}
		res.Apply(p, time.Now())
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return err
	}
	return s.postBackAfter(ctx, tenant, reg, layers, changed, exit)
}

// postBackAfter posts the registration's report after a rollup: on every change of what a
// post-back reports while ApiRollupRegistrationDuringSession is true; else only at exit,
// whether or not the exit itself changed anything, since the session's changes were held
// back until then.
func (s *Server) postBackAfter(ctx context.Context, tenant string, reg *registration.Registration, layers []settings.Layer, changed, exit bool) error {
	if !s.hasPostBack(reg, layers) {
		return nil
	}
	during, err := s.deps.Settings.Catalogue().Resolve(postbackjob.SettingDuringSession, layers...)
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
func (s *Server) postBack(ctx context.Context, tenant string, reg *registration.Registration, layers []settings.Layer) {
	p := postbackjob.Payload{Tenant: tenant, RegistrationID: reg.ID}
	cat := s.deps.Settings.Catalogue()
	sync, err := cat.Resolve(postbackjob.SettingSynchronous, layers...)
	var triesText string
	if err == nil {
		triesText, err = cat.Resolve(postbackjob.SettingMaxTries, layers...)
	}
	tries, cerr := strconv.Atoi(triesText)
	if err == nil {
		err = cerr
	}
	if err != nil {
		s.log.Warn("post-back settings unreadable; post-back not sent", "tenant", tenant, "registration", reg.ID, "error", err)
		return
	}
	if sync == "true" && s.deps.PostBack != nil {
		err := s.deps.PostBack.Deliver(ctx, p)
		if err == nil {
			return
		}
		if errors.Is(err, queue.SkipRetry) || tries <= 1 {
			s.deps.PostBack.GiveUp(p, err)
			return
		}
		s.log.Info("post-back: the inline attempt failed; the retries are queued", "tenant", tenant, "registration", reg.ID, "error", err)
		tries--
	}
	if err := postbackjob.Enqueue(ctx, s.deps.Queue, p, postbackjob.Options(tries)...); err != nil {
		s.log.Warn("post-back not queued", "tenant", tenant, "registration", reg.ID, "error", err)
	}
}

// statementBatch is what one stored batch says to one xAPI registration id.
type statementBatch struct {
	raws []json.RawMessage
	// rebuild: a statement of the registration was voided, so its fold is rebuilt from the
	// statements that still count.
	rebuild bool
	// timestamp and stored are the latest statement timestamp and stored time of the batch's
	// statements (UseStatementTimestampInRegistrationUpdates chooses which dates a
	// completion).
	timestamp, stored time.Time
	// exit: the batch ends a session (terminated or exited), the exit that posts the report
	// when ApiRollupRegistrationDuringSession is false.
	exit bool
}

// statementProgress rolls up, from their statements, the xAPI and cmi5 registration instances
// a stored batch of statements names (context.registration = an instance's xAPI registration
// id). Each distinct id costs one read of its lookup, which also holds what its statements
// said so far: the batch's statements are folded into it (course/rollup.FoldStatements), so
// a batch never re-reads the registration's history, and when the fold did not change (a
// registration of no course, another standard, verbs the rollup ignores) nothing more is read
// or written. The statements are stored whatever happens here; a failure is logged and the
// next statement of the registration that changes its fold repairs it.
func (s *Server) statementProgress(ctx context.Context, tenant string, batch []*statements.Statement) {
	byXID := map[string]*statementBatch{}
	var order []string
	add := func(xid string) *statementBatch {
		xid = strings.ToLower(xid)
		b := byXID[xid]
		if b == nil {
			b = &statementBatch{}
			byXID[xid] = b
			order = append(order, xid)
		}
		return b
	}
	for _, st := range batch {
		if st.Voids != "" {
			// The voided statement no longer counts: its registration's fold is rebuilt.
			if target, err := s.deps.Statements.Get(ctx, tenant, st.Voids); err == nil && target.Registration != "" {
				add(target.Registration).rebuild = true
			}
		}
		if st.Registration == "" {
			continue
		}
		b := add(st.Registration)
		b.raws = append(b.raws, st.Raw)
		if st.VerbID == verbTerminated || st.VerbID == verbExited {
			b.exit = true
		}
		if st.Timestamp.After(b.timestamp) {
			b.timestamp = st.Timestamp
		}
		if st.Stored.After(b.stored) {
			b.stored = st.Stored
		}
	}
	for _, xid := range order {
		err := s.foldStatements(ctx, tenant, xid, byXID[xid])
		if err != nil && !errors.Is(err, registration.ErrNotFound) {
			s.log.Warn("rollup from statements failed", "tenant", tenant, "registration", xid, "error", err)
		}
	}
}

// foldStatements folds one batch's statements into the fold of the instance whose xAPI
// registration id is xid and, when that changed it, rolls the instance up (cmi5 moveOn per
// AU, blocks and course; course/rollup.Statements) and stores the progress.
func (s *Server) foldStatements(ctx context.Context, tenant, xid string, b *statementBatch) error {
	// verbsChanged: what the rollup reads changed (a new answer alone changes only the
	// interactions, which progress/detail reads when asked).
	verbsChanged := false
	x, err := s.deps.Registrations.FoldXAPI(ctx, tenant, xid, func(x *registration.XAPIInstance) (bool, error) {
		verbsChanged = false
		if x.Standard != string(course.XAPI) && x.Standard != string(course.CMI5) {
			return false, nil
		}
		if x.Fold == nil || b.rebuild {
			// Never folded (a lookup of before folds were kept) or a statement voided:
			// the fold of every statement that counts, read after this version of the
			// lookup, so a concurrent fold that wins the write makes this one read again.
			raws, err := s.xapiStatements(ctx, tenant, xid)
			if err != nil {
				return false, err
			}
			x.Fold = &registration.StatementFold{}
			rollup.FoldStatements(x.Fold, raws)
			verbsChanged = true
			return true, nil
		}
		before := rollup.VerbsOfFold(x.Fold)
		if !rollup.FoldStatements(x.Fold, b.raws) {
			return false, nil
		}
		verbsChanged = !maps.EqualFunc(before, rollup.VerbsOfFold(x.Fold), sameVerbs)
		return true, nil
	})
	if err != nil || (!verbsChanged && !b.exit) {
		return err
	}
	v, err := s.deps.Courses.Version(ctx, tenant, x.CourseID, x.CourseVersion)
	if err != nil {
		return err
	}
	if v.Package == nil || v.Package.Root == nil {
		return nil
	}
	res := rollup.Statements(v.Package, rollup.VerbsOfFold(x.Fold))
	t, err := s.deps.Registrations.TrackedTime(ctx, tenant, x.RegistrationID, x.Key)
	if err != nil {
		return err
	}
	res.UseMeasuredTime(v.Package, nil, t)
	var layers []settings.Layer
	scopes := settings.RegistrationScopes(x.CourseID, x.RegistrationID)
	when := b.stored
	if res.Completion == registration.Completed {
		// The completion's date: the statement timestamp or the stored time.
		if layers, err = s.deps.Settings.Layers(ctx, tenant, scopes...); err != nil {
			return err
		}
		if use, _ := s.deps.Settings.Catalogue().Resolve(settingStatementTimestamp, layers...); use != "false" && !b.timestamp.IsZero() {
			when = b.timestamp
		}
	}
	if when.IsZero() {
		when = time.Now()
	}
	changed := false
	reg, err := s.deps.Registrations.UpdateInstanceProgress(ctx, tenant, x.RegistrationID, x.Key, func(_ registration.Instance, p *registration.Progress) error {
		if changed = res.Changed(*p); !changed {
			return errUnchanged
		}
		res.Apply(p, when)
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return err
	}
	if !changed && !b.exit {
		return nil
	}
	if reg == nil {
		if reg, err = s.deps.Registrations.Get(ctx, tenant, x.RegistrationID); err != nil {
			return err
		}
	}
	if layers == nil {
		if layers, err = s.deps.Settings.Layers(ctx, tenant, scopes...); err != nil {
			return err
		}
	}
	return s.postBackAfter(ctx, tenant, reg, layers, changed, b.exit)
}

func sameVerbs(a, b rollup.Verbs) bool {
	return a.Completed == b.Completed && a.Passed == b.Passed && a.Failed == b.Failed && a.Waived == b.Waived &&
		a.Seconds == b.Seconds && (a.Scaled == nil) == (b.Scaled == nil) && (a.Scaled == nil || *a.Scaled == *b.Scaled)
}

// settingStatementTimestamp dates registration updates derived from statements by the
// statement's timestamp (true) or by when the record store stored it (false).
const settingStatementTimestamp = "UseStatementTimestampInRegistrationUpdates"

// hasPostBack reports whether the registration's report goes anywhere: its own postBack URL,
// or the ApiRollupRegistrationPostBackUrl of its cascade.
func (s *Server) hasPostBack(reg *registration.Registration, layers []settings.Layer) bool {
	if reg.PostBack != nil && reg.PostBack.URL != "" {
		return true
	}
	u, err := s.deps.Settings.Catalogue().Resolve(postbackjob.SettingURL, layers...)
	return err == nil && u != ""
}
