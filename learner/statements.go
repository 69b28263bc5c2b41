package learner

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/storage/statements"
)

// The verbs that end an xAPI or cmi5 session.
const (
	verbTerminated = "http://adlnet.gov/expapi/verbs/terminated"
	verbExited     = "http://adlnet.gov/expapi/verbs/exited"
)

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

// StatementsStored rolls up, from their statements, the xAPI and cmi5 registration
// instances a stored batch of statements names (context.registration = an instance's xAPI
// registration id). Each distinct id costs one read of its lookup, which also holds what
// its statements said so far: the batch's statements are folded into it
// (course/rollup.FoldStatements), so a batch never re-reads the registration's history, and
// when the fold did not change (a registration of no course, another standard, verbs the
// rollup ignores) nothing more is read or written. The statements are stored whatever
// happens here; a failure is logged and the next statement of the registration that changes
// its fold repairs it.
func (s *Service) StatementsStored(ctx context.Context, tenant string, batch []*statements.Statement) {
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
			if target, err := s.d.Statements.Get(ctx, tenant, st.Voids); err == nil && target.Registration != "" {
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
func (s *Service) foldStatements(ctx context.Context, tenant, xid string, b *statementBatch) error {
	// verbsChanged: what the rollup reads changed (a new answer alone changes only the
	// interactions, which progress/detail reads when asked).
	verbsChanged := false
	x, err := s.d.Registrations.FoldXAPI(ctx, tenant, xid, func(x *registration.XAPIInstance) (bool, error) {
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
	v, err := s.d.Courses.Version(ctx, tenant, x.CourseID, x.CourseVersion)
	if err != nil {
		return err
	}
	if v.Package == nil || v.Package.Root == nil {
		return nil
	}
	res := rollup.Statements(v.Package, rollup.VerbsOfFold(x.Fold))
	if err := s.cmi5Satisfied(ctx, tenant, v.Package, x.Fold, xid, res, b.raws); err != nil {
		return err
	}
	t, err := s.d.Registrations.TrackedTime(ctx, tenant, x.RegistrationID, x.Key)
	if err != nil {
		return err
	}
	res.UseMeasuredTime(v.Package, nil, t)
	var layers []settings.Layer
	scopes := settings.RegistrationScopes(x.CourseID, x.RegistrationID)
	when := b.stored
	if res.Completion == registration.Completed {
		// The completion's date: the statement timestamp or the stored time.
		if layers, err = s.d.Settings.Layers(ctx, tenant, scopes...); err != nil {
			return err
		}
		if use, _ := s.d.Settings.Catalogue().Resolve(settingStatementTimestamp, layers...); use != "false" && !b.timestamp.IsZero() {
			when = b.timestamp
		}
	}
	if when.IsZero() {
		when = time.Now()
	}
	changed := false
	reg, err := s.d.Registrations.UpdateInstanceProgress(ctx, tenant, x.RegistrationID, x.Key, func(_ registration.Instance, p *registration.Progress) error {
		if changed = res.Update(p, when); !changed {
			return errUnchanged
		}
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return err
	}
	if !changed && !b.exit {
		return nil
	}
	if reg == nil {
		if reg, err = s.d.Registrations.Get(ctx, tenant, x.RegistrationID); err != nil {
			return err
		}
	}
	if layers == nil {
		if layers, err = s.d.Settings.Layers(ctx, tenant, scopes...); err != nil {
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

// lmsAuthority is the authority of the statements the engine writes itself: the account lms
// of the record store's home page.
func (s *Service) lmsAuthority() (json.RawMessage, error) {
	return json.Marshal(map[string]any{"objectType": "Agent", "account": map[string]string{"homePage": s.RecordStoreHomePage(), "name": "lms"}})
}

// storeLMSStatement records a statement the LMS itself makes (cmi5 launched, xAPI launched)
// with the LMS as authority. It rolls up like a statement the content sends, so progress and
// progress/detail agree.
func (s *Service) storeLMSStatement(ctx context.Context, tenant string, st map[string]any) error {
	body, err := json.Marshal(st)
	if err != nil {
		return err
	}
	stmts, _, err := xapi.ParseStatements(body, xapi.V103)
	if err != nil {
		return err
	}
	authority, err := s.lmsAuthority()
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	stmts[0].Complete(authority, now, xapi.V103)
	f := stmts[0].Fields()
	f.Tenant, f.Raw, f.Stored = tenant, json.RawMessage(stmts[0].JSON()), now
	if f.ID == "" {
		f.ID = stmts[0].ID()
	}
	batch := []*statements.Statement{&f}
	if err := s.d.Statements.Put(ctx, tenant, batch, nil); err != nil {
		return err
	}
	// Like any statement of the registration: the launched activity counts as attempted.
	s.StatementsStored(ctx, tenant, batch)
	return nil
}

// StatementsWritten is the learner's part of a statement write of the record store
// (lrsapi.Engine): the player session a launch credential keeps alive, then the rollup of the
// xAPI and cmi5 registrations the batch names.
func (s *Service) StatementsWritten(ctx context.Context, tenant string, p *access.Principal, batch []*statements.Statement) {
	if p != nil {
		s.StatementSession(ctx, tenant, p.LaunchSession)
	}
	s.StatementsStored(ctx, tenant, batch)
}
