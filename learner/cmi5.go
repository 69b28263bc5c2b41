package learner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/learner/cmi5rules"
	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/lrs/xapi/lexical"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/statements"
)

// The LMS's cmi5 statements (cmi5 section 9.3); the record store's cmi5 statement rules are
// learner/cmi5rules'.

const (
	cmi5ExtReason  = "https://w3id.org/xapi/cmi5/result/extensions/reason"
	cmi5TypeBlock  = "https://w3id.org/xapi/cmi5/activitytype/block"
	cmi5TypeCourse = "https://w3id.org/xapi/cmi5/activitytype/course"
)

// settingCMI5Rules switches the record store's cmi5 rules for the AU sessions launched under it.
const settingCMI5Rules = "Cmi5EnforceStatementRules"

// CheckCMI5Statements holds the statements an AU writes with the credential of its session
// (p.CMI5) to the cmi5 rules an LMS enforces (cmi5 sections 6.3, 9 and 10.2.2), before they
// are stored; a statement that breaks one refuses the whole batch with 403 (an error wrapping
// access.ErrForbidden). What earlier statements of the session and registration said comes
// from the registration's fold (one read); the batch's own statements count in order.
func (s *Service) CheckCMI5Statements(ctx context.Context, tenant string, p *access.Principal, original []json.RawMessage, batch []*statements.Statement) error {
	c := p.CMI5
	if c == nil || c.Lenient {
		return nil
	}
	fold, tracked, err := s.cmi5Fold(ctx, tenant, c.Registration)
	if err != nil {
		return err
	}
	sess := registration.CMI5SessionFold{}
	au := registration.ActivityFold{}
	if fold != nil {
		if f := fold.CMI5Sessions[c.Session]; f != nil {
			sess = *f
			sess.Verbs = slices.Clone(f.Verbs)
		}
		if a := fold.Activities[c.ActivityID]; a != nil {
			au = *a
		}
	}
	return cmi5rules.Check(c, p.IFI, tracked, &sess, &au, original, batch)
}

// cmi5Satisfied records the LMS's satisfied statements (cmi5 9.3.9) of the blocks and the
// course res says are satisfied and that have none yet in the fold: object the LMS's id of
// the block or course (its type block or course), the publisher's id in grouping, the
// learner, registration and session of the statement that satisfied them (batch, newest
// first). Blocks come before the course.
func (s *Service) cmi5Satisfied(ctx context.Context, tenant string, pkg *course.Package, fold *registration.StatementFold, xreg string,
	res rollup.Result, batch []json.RawMessage) error {
	if pkg.Standard != course.CMI5 || len(res.Satisfied) == 0 || ctx.Value(recordingSatisfied{}) != nil {
		return nil
	}
	var actor json.RawMessage
	session := ""
	for i := len(batch) - 1; i >= 0 && session == ""; i-- {
		var st struct {
			Actor   json.RawMessage `json:"actor"`
			Context *struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"context"`
		}
		if json.Unmarshal(batch[i], &st) != nil || st.Context == nil {
			continue
		}
		if v, ok := st.Context.Extensions[rollup.CMI5SessionExt]; ok && json.Unmarshal(v, &session) == nil {
			actor = st.Actor
		}
	}
	if session == "" {
		return nil
	}
	return s.recordSatisfied(ctx, tenant, pkg, fold, xreg, res, actor, session)
}

// recordingSatisfied marks the context of recordSatisfied's own writes: their rollup must not
// record the satisfied statements the write in progress records.
type recordingSatisfied struct{}

// recordSatisfied writes the satisfied statements of res's satisfied blocks and course not
// yet in fold.
func (s *Service) recordSatisfied(ctx context.Context, tenant string, pkg *course.Package, fold *registration.StatementFold, xreg string,
	res rollup.Result, actor json.RawMessage, session string) error {
	ctx = context.WithValue(ctx, recordingSatisfied{}, true)
	byPublisher := map[string]*course.Activity{}
	pkg.Root.Walk(func(a *course.Activity) {
		switch {
		case a == pkg.Root:
			byPublisher[cmi5CourseID(pkg)] = a
		case a.CMI5 != nil && a.CMI5.Block:
			byPublisher[a.CMI5.ID] = a
		}
	})
	for _, pub := range res.Satisfied {
		a := byPublisher[pub]
		if a == nil {
			continue
		}
		id := pkg.CMI5LMSActivityID(a)
		if fold != nil && fold.Activities[id] != nil && fold.Activities[id].Satisfied {
			continue
		}
		typ := cmi5TypeBlock
		if a == pkg.Root {
			typ = cmi5TypeCourse
		}
		err := s.storeLMSStatement(ctx, tenant, map[string]any{
			"id":     uuid.NewString(),
			"actor":  actor,
			"verb":   map[string]any{"id": rollup.VerbSatisfied, "display": map[string]string{"en-US": "satisfied"}},
			"object": map[string]any{"objectType": "Activity", "id": id, "definition": map[string]any{"type": typ}},
			"context": map[string]any{"registration": xreg, "extensions": map[string]any{rollup.CMI5SessionExt: session},
				"contextActivities": map[string]any{
					"grouping": []any{map[string]any{"objectType": "Activity", "id": pub}},
					"category": []any{map[string]any{"objectType": "Activity", "id": rollup.CMI5Category}}}},
			"timestamp": time.Now().UTC().Format(time.RFC3339Nano),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// registrationActor is the learner of a registration as an xAPI agent.
func (s *Service) registrationActor(ctx context.Context, tenant string, reg *registration.Registration) (json.RawMessage, error) {
	layers, err := s.RegistrationLayers(ctx, tenant, reg)
	if err != nil {
		return nil, err
	}
	actor := map[string]any{"objectType": "Agent", "account": map[string]string{"homePage": s.LearnerHomePage(layers), "name": reg.Learner.ID}}
	if n := strings.TrimSpace(reg.Learner.FirstName + " " + reg.Learner.LastName); n != "" {
		actor["name"] = n
	}
	return json.Marshal(actor)
}

// CMI5Registered evaluates the moveOn criteria of a new cmi5 registration's course (cmi5
// 9.6.1.1-3): blocks and a course that are satisfied before anything was launched (every AU
// NotApplicable) get their satisfied statements now, in a session of their own.
func (s *Service) CMI5Registered(ctx context.Context, tenant string, reg *registration.Registration) error {
	in := reg.Current()
	if course.Standard(in.Course.Standard) != course.CMI5 || s.d.Statements == nil {
		return nil
	}
	v, err := s.d.Courses.Version(ctx, tenant, reg.CourseID, in.CourseVersion)
	if err != nil || v.Package == nil || v.Package.Root == nil {
		return err
	}
	res := rollup.Statements(v.Package, nil)
	if len(res.Satisfied) == 0 {
		return nil
	}
	actor, err := s.registrationActor(ctx, tenant, reg)
	if err != nil {
		return err
	}
	return s.recordSatisfied(ctx, tenant, v.Package, nil, reg.XAPIRegistrationOf(in), res, actor, uuid.NewString())
}

// cmi5Instance is the current instance of a cmi5 registration with its course version.
func (s *Service) cmi5Instance(ctx context.Context, tenant, regID string) (*registration.Registration, registration.Instance, *course.Version, error) {
	reg, err := s.d.Registrations.Get(ctx, tenant, regID)
	if err != nil {
		return nil, registration.Instance{}, nil, err
	}
	in := reg.Current()
	if course.Standard(in.Course.Standard) != course.CMI5 {
		return nil, in, nil, refuse(registration.ErrInvalid, "registration '%s' is not of a cmi5 course", regID)
	}
	if s.d.Statements == nil {
		return nil, in, nil, refuse(ErrUnavailable, "this server has no record store for cmi5 content")
	}
	v, err := s.d.Courses.Version(ctx, tenant, reg.CourseID, in.CourseVersion)
	if err != nil {
		return nil, in, nil, err
	}
	if v.Package == nil || v.Package.Root == nil {
		return nil, in, nil, refuse(registration.ErrInvalid, "the course of registration '%s' has no structure", regID)
	}
	return reg, in, v, nil
}

// WaiveCMI5 waives AU activityID (its id in the course tree or its publisher id) of a cmi5
// registration's current instance for reason (cmi5 9.3.7): the LMS's waived statement (the
// learner, the LMS's id of the AU, result success and completion true with the reason
// extension, a session of its own, the moveOn category), then the satisfied statements it
// makes due. An AU that already met its moveOn criteria cannot be waived (ErrConflict).
func (s *Service) WaiveCMI5(ctx context.Context, tenant, regID, activityID, reason string) error {
	reg, in, v, err := s.cmi5Instance(ctx, tenant, regID)
	if err != nil {
		return err
	}
	var au *course.Activity
	v.Package.Root.Walk(func(a *course.Activity) {
		if au == nil && a.CMI5 != nil && !a.CMI5.Block && a.LaunchURL != "" && (a.ID == activityID || a.CMI5.ID == activityID) {
			au = a
		}
	})
	if au == nil {
		return refuse(registration.ErrInvalid, "'%s' is not an AU of course '%s'", activityID, reg.CourseID)
	}
	if strings.TrimSpace(reason) == "" {
		return refuse(registration.ErrInvalid, "reason: a waiver needs a reason (Tested Out, Equivalent AU, Equivalent Outside Activity or Administrative)")
	}
	xreg := reg.XAPIRegistrationOf(in)
	fold, err := s.d.Registrations.XAPIFold(ctx, tenant, reg, in)
	if err != nil && !errors.Is(err, registration.ErrNotFound) {
		return err
	}
	if fold != nil {
		seen := rollup.VerbsOfFold(fold)
		for _, k := range []string{v.Package.CMI5LMSActivityID(au), au.CMI5.ID, au.ID} {
			if vb, ok := seen[k]; ok && rollup.MoveOnMet(orDefault(au.CMI5.MoveOn, "NotApplicable"), vb) {
				return refuse(record.ErrConflict, "AU '%s' already met its moveOn criteria in this registration", au.ID)
			}
		}
	}
	actor, err := s.registrationActor(ctx, tenant, reg)
	if err != nil {
		return err
	}
	yes := true
	return s.storeLMSStatement(ctx, tenant, map[string]any{
		"id":     uuid.NewString(),
		"actor":  actor,
		"verb":   map[string]any{"id": rollup.VerbWaived, "display": map[string]string{"en-US": "waived"}},
		"object": map[string]any{"objectType": "Activity", "id": v.Package.CMI5LMSActivityID(au)},
		"result": map[string]any{"success": yes, "completion": yes, "extensions": map[string]any{cmi5ExtReason: reason}},
		"context": map[string]any{"registration": xreg, "extensions": map[string]any{rollup.CMI5SessionExt: uuid.NewString()},
			"contextActivities": map[string]any{
				"grouping": []any{map[string]any{"objectType": "Activity", "id": au.CMI5.ID}},
				"category": []any{map[string]any{"objectType": "Activity", "id": rollup.CMI5Category},
					map[string]any{"objectType": "Activity", "id": cmi5rules.CategoryMoveOn}}}},
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano),
	})
}

// AbandonCMI5 abandons cmi5 session sessionID of a registration's current instance (cmi5
// 9.3.6): the LMS's abandoned statement (the learner, the session's AU, result.duration the
// time from its launch to its last statement), after which the record store accepts nothing
// more for the session. A session that ended (terminated or abandoned) cannot be abandoned
// (ErrConflict); an unknown one is ErrNotFound.
func (s *Service) AbandonCMI5(ctx context.Context, tenant, regID, sessionID string) error {
	reg, in, v, err := s.cmi5Instance(ctx, tenant, regID)
	if err != nil {
		return err
	}
	fold, err := s.d.Registrations.XAPIFold(ctx, tenant, reg, in)
	if err != nil && !errors.Is(err, registration.ErrNotFound) {
		return err
	}
	var sess *registration.CMI5SessionFold
	if fold != nil {
		sess = fold.CMI5Sessions[sessionID]
	}
	if sess == nil || sess.ActivityID == "" {
		return refuse(registration.ErrNotFound, "no launched cmi5 session '%s' in registration '%s'", sessionID, regID)
	}
	if sess.Ended {
		return refuse(record.ErrConflict, "cmi5 session '%s' has already ended", sessionID)
	}
	return s.abandon(ctx, tenant, reg, in, v, sessionID, sess)
}

// abandon records the abandoned statement of a session.
func (s *Service) abandon(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, v *course.Version,
	sessionID string, sess *registration.CMI5SessionFold) error {
	actor, err := s.registrationActor(ctx, tenant, reg)
	if err != nil {
		return err
	}
	publisher := ""
	v.Package.Root.Walk(func(a *course.Activity) {
		if publisher == "" && a.CMI5 != nil && v.Package.CMI5LMSActivityID(a) == sess.ActivityID {
			publisher = a.CMI5.ID
		}
	})
	ctxActs := map[string]any{"category": []any{map[string]any{"objectType": "Activity", "id": rollup.CMI5Category}}}
	if publisher != "" {
		ctxActs["grouping"] = []any{map[string]any{"objectType": "Activity", "id": publisher}}
	}
	secs := math.Max(0, sess.Last.Sub(sess.Launched).Seconds())
	return s.storeLMSStatement(ctx, tenant, map[string]any{
		"id":     uuid.NewString(),
		"actor":  actor,
		"verb":   map[string]any{"id": rollup.VerbAbandoned, "display": map[string]string{"en-US": "abandoned"}},
		"object": map[string]any{"objectType": "Activity", "id": sess.ActivityID},
		"result": map[string]any{"duration": fmt.Sprintf("PT%.2fS", secs)},
		"context": map[string]any{"registration": reg.XAPIRegistrationOf(in), "extensions": map[string]any{rollup.CMI5SessionExt: sessionID},
			"contextActivities": ctxActs},
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano),
	})
}

// abandonOpenSessions abandons, before a new launch of AU activityID in xreg, the sessions
// of that AU that ended neither terminated nor abandoned (cmi5 9.3.6: the LMS records
// abandoned for a session that ends without terminated).
func (s *Service) abandonOpenSessions(ctx context.Context, tenant, regID, activityID string) error {
	reg, in, v, err := s.cmi5Instance(ctx, tenant, regID)
	if err != nil {
		return err
	}
	fold, err := s.d.Registrations.XAPIFold(ctx, tenant, reg, in)
	if err != nil || fold == nil {
		if errors.Is(err, registration.ErrNotFound) {
			err = nil
		}
		return err
	}
	for id, sess := range fold.CMI5Sessions {
		if sess.ActivityID == activityID && !sess.Ended && !sess.Launched.IsZero() {
			if err := s.abandon(ctx, tenant, reg, in, v, id, sess); err != nil {
				return err
			}
		}
	}
	return nil
}

// cmi5LearnerPreferences is the Agent Profile document of the learner's preferences (cmi5 11).
const cmi5LearnerPreferences = "cmi5LearnerPreferences"

// CheckCMI5Document holds the document requests of a cmi5 AU session's credential to the
// cmi5 rules (an error wrapping access.ErrForbidden is a 403): LMS.LaunchData is the LMS's
// (10.2.1.0-5: no PUT, POST or DELETE); the learner preferences are the launch actor's
// (11.0.0.0-1), a JSON object with languagePreference (a comma-separated list of language
// tags, 11.1.0.0-1) and audioPreference (on or off) (11.0.0.0-5); reading them counts for the
// session (11.0.0.0-3: the AU reads them before it initializes).
func (s *Service) CheckCMI5Document(ctx context.Context, tenant string, p *access.Principal, method string, k statements.DocKey, contentType string, body []byte) error {
	c := p.CMI5
	if c == nil || c.Lenient {
		return nil
	}
	write := method != "GET" && method != "HEAD"
	if fold, _, err := s.cmi5Fold(ctx, tenant, c.Registration); err != nil {
		return err
	} else if fold != nil && fold.CMI5Sessions[c.Session] != nil && fold.CMI5Sessions[c.Session].Ended {
		return fmt.Errorf("%w: cmi5 8.1.2.0-2: the session's credential ended with the session", access.ErrForbidden)
	}
	switch {
	case k.Kind == statements.State && write && (k.ID == "LMS.LaunchData" || (k.ID == "" && k.ActivityID == c.ActivityID)):
		return fmt.Errorf("%w: cmi5 10.2.1.0-5: LMS.LaunchData is the LMS's; an AU may not change or delete it", access.ErrForbidden)
	case k.Kind != statements.AgentProfile || k.ID != cmi5LearnerPreferences:
		return nil
	case k.Agent != p.IFI:
		return fmt.Errorf("%w: cmi5 11.0.0.0-1: the learner preferences are the launch actor's", access.ErrForbidden)
	case !write:
		_, err := s.d.Registrations.FoldXAPI(ctx, tenant, c.Registration, func(x *registration.XAPIInstance) (bool, error) {
			if x.Fold == nil {
				x.Fold = &registration.StatementFold{}
			}
			if x.Fold.CMI5Sessions == nil {
				x.Fold.CMI5Sessions = map[string]*registration.CMI5SessionFold{}
			}
			ss := x.Fold.CMI5Sessions[c.Session]
			if ss == nil {
				ss = &registration.CMI5SessionFold{}
				x.Fold.CMI5Sessions[c.Session] = ss
			}
			if ss.PrefsRead {
				return false, nil
			}
			ss.PrefsRead = true
			return true, nil
		})
		if errors.Is(err, registration.ErrNotFound) {
			err = nil
		}
		return err
	case method == "DELETE":
		return nil
	}
	var prefs map[string]json.RawMessage
	mt, _, _ := strings.Cut(contentType, ";")
	if strings.TrimSpace(strings.ToLower(mt)) != "application/json" || json.Unmarshal(body, &prefs) != nil || prefs == nil {
		return fmt.Errorf("%w: cmi5 11.0.0.0-5: the learner preferences are a JSON object sent as application/json", access.ErrForbidden)
	}
	var lang, audio string
	if json.Unmarshal(prefs["languagePreference"], &lang) != nil || json.Unmarshal(prefs["audioPreference"], &audio) != nil {
		return fmt.Errorf("%w: cmi5 11.0.0.0-5: the learner preferences need languagePreference and audioPreference (strings)", access.ErrForbidden)
	}
	for _, tag := range strings.Split(lang, ",") {
		if !lexical.ValidLanguageTag(tag) {
			return fmt.Errorf("%w: cmi5 11.1.0.0-1: languagePreference is a comma-separated list of language tags, not %q", access.ErrForbidden, lang)
		}
	}
	if audio != "on" && audio != "off" {
		return fmt.Errorf("%w: cmi5 11.2.0.0-1: audioPreference is on or off, not %q", access.ErrForbidden, audio)
	}
	return nil
}

// cmi5Fold reads the fold of xAPI registration xreg (nil when it has none yet); tracked is
// false when xreg is no registration instance's (a preview's), whose sessions keep no record.
func (s *Service) cmi5Fold(ctx context.Context, tenant, xreg string) (fold *registration.StatementFold, tracked bool, err error) {
	if xreg == "" {
		return nil, false, nil
	}
	x, err := s.d.Registrations.FoldXAPI(ctx, tenant, xreg, func(*registration.XAPIInstance) (bool, error) { return false, nil })
	if errors.Is(err, registration.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return x.Fold, true, nil
}
