package learner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/lrs/launch"
	"github.com/lectern-lms/lectern/storage/statements"
)

// ErrUnavailable refuses a launch this server cannot serve (no record store for launched
// xAPI or cmi5 content); the answer is 503.
var ErrUnavailable = errors.New("not available on this server")

// CourseRef is the snapshot of a course version a registration instance keeps.
func CourseRef(v *course.Version) registration.CourseRef {
	return registration.CourseRef{Title: v.Title, Standard: string(v.Standard), Updated: v.Updated}
}

// CourseActivityID is a course version's activity IRI: the package's own for xAPI and cmi5,
// a stable URN for SCORM and AICC courses (independent of the public URL, which may change).
func CourseActivityID(tenantID string, v *course.Version) string {
	if v.Package != nil && v.Package.XAPIActivityID != "" {
		return v.Package.XAPIActivityID
	}
	return "urn:lectern:course:" + url.PathEscape(tenantID) + ":" + url.PathEscape(v.CourseID)
}

// ActivityID is the activity IRI an xAPI activity is launched with.
func ActivityID(pkg *course.Package, a *course.Activity) string {
	if a.Extra != nil && a.Extra.XAPIActivityID != "" {
		return a.Extra.XAPIActivityID
	}
	if pkg.XAPIActivityID != "" {
		return pkg.XAPIActivityID
	}
	return a.ID
}

// Launchable reports whether the player launches a: it has a launch URL and is a SCO or
// asset (or of a standard without SCORM types).
func Launchable(a *course.Activity) bool {
	return a.LaunchURL != "" && (a.ScormType == "" || a.ScormType == "sco" || a.ScormType == "asset")
}

// HasActivity reports whether pkg has an activity with id.
func HasActivity(pkg *course.Package, id string) bool {
	found := false
	if pkg != nil && pkg.Root != nil {
		pkg.Root.Walk(func(a *course.Activity) { found = found || a.ID == id })
	}
	return found
}

// RestartIfDue starts a new instance of reg, pinned to the course's latest version, when
// WhenToRestartRegistration says the launch should (registration.ShouldRestart; by default:
// the current instance is completed and a newer version exists), and returns the registration
// as launched.
func (s *Service) RestartIfDue(ctx context.Context, tenant string, reg *registration.Registration) (*registration.Registration, error) {
	mode := registration.RestartWhenCompleteAndNewerVersion
	if _, ok := s.d.Settings.Catalogue().Lookup("WhenToRestartRegistration"); ok {
		layers, err := s.RegistrationLayers(ctx, tenant, reg)
		if err != nil {
			return nil, err
		}
		if mode, err = s.d.Settings.Catalogue().Resolve("WhenToRestartRegistration", layers...); err != nil {
			return nil, err
		}
	}
	latest, err := s.d.Courses.Version(ctx, tenant, reg.CourseID, -1)
	if err != nil {
		return nil, err
	}
	in := reg.Current()
	if !registration.ShouldRestart(mode, in, latest.Version) {
		return reg, nil
	}
	return s.d.Registrations.Restart(ctx, tenant, reg.ID, in.Number, latest.Version, CourseRef(latest))
}

// LaunchesNoCredit reports whether a launch of instance in runs in no-credit: a SCORM 1.2,
// 1.1 or AICC course whose progress is COMPLETED, with PlayerLaunchCompletedRegsAsNoCredit.
func (s *Service) LaunchesNoCredit(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance) (bool, error) {
	std := course.Standard(in.Course.Standard)
	if in.Progress.Completion != registration.Completed || (std != course.SCORM11 && std != course.SCORM12 && std != course.AICC) {
		return false, nil
	}
	layers, err := s.RegistrationLayers(ctx, tenant, reg)
	if err != nil {
		return false, err
	}
	v, err := s.d.Settings.Catalogue().Resolve("PlayerLaunchCompletedRegsAsNoCredit", layers...)
	return v == "true", err
}

// InitialValues is the data model an activity starts a session with: the stored data, unless
// the launch starts a new attempt under reset (PlayerResetRunTimeData).
func (s *Service) InitialValues(ctx context.Context, sess *course.SessionClaims, act *course.Activity, d scormrt.Dialect, reset string) (scormrt.Values, error) {
	l := scormrt.Launch{Credit: true, Review: sess.ForceReview, LaunchData: act.DataFromLMS, MaxTimeAllowed: act.MaxTimeAllowed,
		TimeLimitAction: act.TimeLimitAction}
	if act.MasteryScore != nil {
		f := *act.MasteryScore
		if d == scormrt.SCORM12 {
			l.MasteryScore = strconv.FormatFloat(f, 'f', -1, 64)
		} else {
			l.ScaledPassingScore = strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	if act.CompletionThreshold != nil {
		l.CompletionThreshold = strconv.FormatFloat(act.CompletionThreshold.MinProgressMeasure, 'f', -1, 64)
	}
	if d == scormrt.SCORM2004 && l.MaxTimeAllowed == "" && act.Sequencing != nil && act.Sequencing.LimitConditions != nil {
		// SCORM 2004 has no adlcp:maxTimeAllowed: cmi.max_time_allowed is the activity's
		// attemptAbsoluteDurationLimit (RTE 4.2.13; ADL CM-01).
		l.MaxTimeAllowed = act.Sequencing.LimitConditions.AttemptAbsoluteDurationLimit
	}
	var rec *scormrt.Record
	if !sess.Preview {
		reg, err := s.d.Registrations.Get(ctx, sess.Tenant, sess.RegistrationID)
		if err != nil {
			return nil, err
		}
		l.LearnerID, l.Credit = reg.Learner.ID, reg.ForCredit && !sess.NoCredit
		l.LearnerName = strings.TrimSpace(reg.Learner.LastName + ", " + reg.Learner.FirstName)
		l.LearnerName = strings.Trim(l.LearnerName, ", ")
		if rec, err = s.d.Runtime.Get(ctx, sess.Tenant, reg.ID, sess.InstanceKey, act.ID); err != nil {
			return nil, err
		}
		if scormrt.StartsAfresh(reset, d, rec) {
			rec = nil
		}
	} else {
		l.LearnerID, l.LearnerName, l.Credit = "preview", "Preview", false
	}
	values := scormrt.InitialValues(d, l, rec)
	if d == scormrt.SCORM2004 {
		seedObjectives(values, act)
	}
	return values, nil
}

// seedObjectives adds to a SCORM 2004 SCO's data model the objectives its item's sequencing
// names (primary and others, by objectiveID) that the stored data does not hold yet: RTE
// 4.2.17 has the LMS initialise cmi.objectives.n.id from them, so the SCO finds them by id
// (ADL CM-02b, OB-01a and most objectives cases read them before setting any).
func seedObjectives(v scormrt.Values, act *course.Activity) {
	have := map[string]bool{}
	n := 0
	for k, val := range v {
		rest, ok := strings.CutPrefix(k, "cmi.objectives.")
		if !ok {
			continue
		}
		idx, field, ok := strings.Cut(rest, ".")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil {
			continue
		}
		n = max(n, i+1)
		if field == "id" {
			have[val] = true
		}
	}
	objs := act.Objectives
	if len(objs) == 0 && act.Sequencing != nil {
		objs = act.Sequencing.Objectives
	}
	for _, o := range objs {
		if o.ID == "" || have[o.ID] {
			continue
		}
		have[o.ID] = true
		v["cmi.objectives."+strconv.Itoa(n)+".id"] = o.ID
		n++
	}
}

// ResumeActivity is the activity a tracked launch without startSco starts with, so a
// relaunched multi-SCO course goes on where the learner left: the launchable activity most
// recently suspended in the session's instance, else the one most recently used; "" (the
// first launchable one) when nothing was committed, for a preview, and for xAPI and cmi5
// courses, which keep no run-time records.
func (s *Service) ResumeActivity(ctx context.Context, sess *course.SessionClaims, v *course.Version) (string, error) {
	if sess.Preview || v.Package == nil || v.Package.Root == nil {
		return "", nil
	}
	recs, err := s.d.Runtime.List(ctx, sess.Tenant, sess.RegistrationID, sess.InstanceKey)
	if err != nil || len(recs) == 0 {
		return "", err
	}
	var last, suspended *scormrt.Record
	v.Package.Root.Walk(func(a *course.Activity) {
		rec := recs[a.ID]
		if rec == nil || !Launchable(a) {
			return
		}
		if last == nil || rec.Updated.After(last.Updated) {
			last = rec
		}
		if rec.Suspended() && (suspended == nil || rec.Updated.After(suspended.Updated)) {
			suspended = rec
		}
	})
	switch {
	case suspended != nil:
		return suspended.Activity, nil
	case last != nil:
		return last.Activity, nil
	}
	return "", nil
}

// NewAttempt numbers a new load of an activity.
func (s *Service) NewAttempt() int64 { return s.d.Runtime.NewAttempt() }

// launchLearner is who a player session launches xAPI or cmi5 content as: the
// registration's learner, or "preview" with no registration.
type launchLearner struct{ name, learner, regID, xreg string }

// sessionLearner reads the learner of a session (registration.ErrNotFound when its
// registration was deleted since).
func (s *Service) sessionLearner(ctx context.Context, sess *course.SessionClaims) (launchLearner, error) {
	if sess.Preview {
		return launchLearner{name: "Preview", learner: "preview"}, nil
	}
	reg, err := s.d.Registrations.Get(ctx, sess.Tenant, sess.RegistrationID)
	if err != nil {
		return launchLearner{}, err
	}
	// The session's instance, by its key: a reset since the launch removed it, and its
	// statements count for nothing (the old xAPI registration id is retired).
	in := instanceOf(reg, sess.InstanceKey)
	if in == nil {
		return launchLearner{}, fmt.Errorf("registration '%s' instance %d %w (reset since the launch)", reg.ID, sess.Instance, registration.ErrNotFound)
	}
	return launchLearner{name: strings.TrimSpace(reg.Learner.FirstName + " " + reg.Learner.LastName),
		learner: reg.Learner.ID, regID: reg.ID, xreg: reg.XAPIRegistrationOf(*in)}, nil
}

// actor is the learner of a session as an xAPI agent (an account on LearnerHomePage), its
// IFI and the account's homePage.
func (s *Service) actor(ctx context.Context, sess *course.SessionClaims, l launchLearner) ([]byte, string, string, error) {
	layers, err := s.SessionLayers(ctx, sess)
	if err != nil {
		return nil, "", "", err
	}
	home := s.LearnerHomePage(layers)
	actor := map[string]any{"objectType": "Agent", "account": map[string]string{"homePage": home, "name": l.learner}}
	if l.name != "" {
		actor["name"] = l.name
	}
	b, err := json.Marshal(actor)
	return b, "account:" + home + "|" + l.learner, home, err
}

// tincan095Actor is the agent of actor (the same account on home) in the pre-1.0 TinCan form
// older content expects (xAPILaunchActorFormat tincan095): the name and the account in
// arrays, the account as accountServiceHomePage and accountName. TinCanJS reads both forms;
// Lectora Inspire's runtime reads only this one for an account agent.
func tincan095Actor(home string, l launchLearner) []byte {
	out := map[string]any{"objectType": "Agent",
		"account": []any{map[string]string{"accountServiceHomePage": home, "accountName": l.learner}}}
	if l.name != "" {
		out["name"] = []string{l.name}
	}
	b, _ := json.Marshal(out) // strings only: it cannot fail
	return b
}

// LaunchTokenLife is how long the record-store credential handed to launched content stays
// valid: the session's xAPILaunchTokenLifeInSeconds.
func (s *Service) LaunchTokenLife(ctx context.Context, sess *course.SessionClaims) (time.Duration, error) {
	v, err := s.SessionSetting(ctx, sess, "xAPILaunchTokenLifeInSeconds")
	if err != nil {
		return 0, err
	}
	secs, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("xAPILaunchTokenLifeInSeconds %q: %w", v, err)
	}
	return time.Duration(secs) * time.Second, nil
}

// endpoint is the record store's endpoint for a tenant's launched xAPI (TinCan) content, on
// base (the origin the learner's browser reaches the server at). It ends in "/": TinCan
// content appends the resource ("statements") to it.
func endpoint(base, tenant string) string { return CMI5Endpoint(base, tenant) + "/" }

// CMI5Endpoint is the record store's endpoint for a tenant's cmi5 AUs, on base: without a
// trailing slash, because the cmi5 client libraries build "<endpoint>/statements" and
// "<endpoint>/activities/state" (the record store also tolerates the double slash an
// endpoint with one would give).
func CMI5Endpoint(base, tenant string) string { return base + access.Base + "/" + tenant }

// XAPILaunch is the launch of an xAPI (TinCan) course in a player session: the launch
// parameters (the record store's endpoint on base for the session's tenant, a launch-scoped
// credential acting as the learner, valid for xAPILaunchTokenLifeInSeconds, the learner as
// an account agent, the instance's xAPI registration id; a preview acts as the account
// "preview" with no registration), and, when GenerateTinCanLaunchStatements says so, the
// LMS's launched statement of the activity the player starts with.
func (s *Service) XAPILaunch(ctx context.Context, sess *course.SessionClaims, v *course.Version, base string) (url.Values, error) {
	if s.d.LaunchTokens == nil {
		return nil, refuse(ErrUnavailable, "this server issues no record-store launch credentials")
	}
	who, err := s.sessionLearner(ctx, sess)
	if err != nil {
		return nil, err
	}
	actorJSON, ifi, home, err := s.actor(ctx, sess, who)
	if err != nil {
		return nil, err
	}
	life, err := s.LaunchTokenLife(ctx, sess)
	if err != nil {
		return nil, err
	}
	form, err := s.SessionSetting(ctx, sess, "xAPILaunchActorFormat")
	if err != nil {
		return nil, err
	}
	param := actorJSON
	if form == "tincan095" {
		param = tincan095Actor(home, who)
	}
	_, authz := s.d.LaunchTokens.Issue(launch.Claims{Tenant: sess.Tenant, Registration: who.regID, Actor: actorJSON,
		ActorIFI: ifi, Session: sess.Launch}, life, time.Now())
	q := url.Values{"endpoint": {endpoint(base, sess.Tenant)}, "auth": {authz}, "actor": {string(param)}}
	if who.xreg != "" {
		q.Set("registration", who.xreg)
	}
	if err := s.xapiLaunched(ctx, sess, v, actorJSON, who.xreg); err != nil {
		return nil, err
	}
	return q, nil
}

// xapiLaunched records, when GenerateTinCanLaunchStatements says so, the LMS's launched
// statement of a tracked xAPI launch: the learner launched the activity the player starts
// with (startSco, else the first launchable one) in the instance's xAPI registration, the
// course activity as grouping.
func (s *Service) xapiLaunched(ctx context.Context, sess *course.SessionClaims, v *course.Version, actor []byte, xreg string) error {
	if sess.Preview {
		return nil
	}
	on, err := s.SessionSetting(ctx, sess, "GenerateTinCanLaunchStatements")
	if err != nil || on != "true" {
		return err
	}
	var start *course.Activity
	v.Package.Root.Walk(func(a *course.Activity) {
		if Launchable(a) && (start == nil || (a.ID == sess.StartSco && start.ID != sess.StartSco)) {
			start = a
		}
	})
	if start == nil {
		return nil
	}
	object := ActivityID(v.Package, start)
	ctxt := map[string]any{"registration": xreg}
	if c := v.Package.XAPIActivityID; c != "" && c != object {
		ctxt["contextActivities"] = map[string]any{"grouping": []any{map[string]any{"objectType": "Activity", "id": c}}}
	}
	return s.storeLMSStatement(ctx, sess.Tenant, map[string]any{
		"id":     uuid.NewString(),
		"actor":  json.RawMessage(actor),
		"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/launched", "display": map[string]string{"en-US": "launched"}},
		"object": map[string]any{"objectType": "Activity", "id": object}, "context": ctxt,
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano),
	})
}

// CMI5Launch is a prepared launch of a cmi5 AU.
type CMI5Launch struct {
	// Actor is the learner as an xAPI agent, ActorIFI its identifier.
	Actor    json.RawMessage
	ActorIFI string
	// RegistrationID is the engine registration (empty for a preview); XAPIRegistration the
	// registration the AU's statements carry.
	RegistrationID, XAPIRegistration string
	// Endpoint is the record store's endpoint for the AU (CMI5Endpoint).
	Endpoint string
	// ActivityID is the AU's activityId: the LMS's own id for it
	// (course.Package.CMI5LMSActivityID), never the publisher's.
	ActivityID string
	// Session is what the record store holds the AU's statements to (the session id,
	// launchMode and masteryScore of LMS.LaunchData).
	Session course.CMI5Session
}

// CMI5Window is how the player opens an AU and where the AU sends the learner back.
type CMI5Window struct {
	// LaunchURL is the AU's URL as launched, for the launched statement: absolute (the
	// player's content origin), or relative to base.
	LaunchURL string
	// ReturnURL, when set, is LMS.LaunchData's returnURL: the absolute URL the AU navigates
	// to when it is done (given for AUs that run in their own window).
	ReturnURL string
}

// LaunchCMI5 prepares the launch of cmi5 AU au in a player session (cmi5 section 10): the
// learner's agent, the LMS.LaunchData state document (with w's returnURL when it has one),
// and (unless a preview) the LMS's launched statement with w.LaunchURL (relative to base,
// the origin the learner reaches the server at) in its context. registration.ErrNotFound
// when the registration was deleted since the session began.
func (s *Service) LaunchCMI5(ctx context.Context, sess *course.SessionClaims, v *course.Version, au *course.Activity, base string, w CMI5Window) (*CMI5Launch, error) {
	if s.d.LaunchTokens == nil || s.d.Statements == nil {
		return nil, refuse(ErrUnavailable, "this server has no record store for cmi5 content")
	}
	who, err := s.sessionLearner(ctx, sess)
	if err != nil {
		return nil, err
	}
	l := &CMI5Launch{RegistrationID: who.regID, XAPIRegistration: who.xreg, Endpoint: CMI5Endpoint(base, sess.Tenant),
		ActivityID: v.Package.CMI5LMSActivityID(au)}
	if l.XAPIRegistration == "" {
		// A preview has no registration; cmi5 still needs one for the session.
		l.XAPIRegistration = uuid.NewString()
	}
	if l.Actor, l.ActorIFI, _, err = s.actor(ctx, sess, who); err != nil {
		return nil, err
	}
	mode := "Normal"
	switch {
	case sess.Preview:
		mode = "Browse"
	case sess.ForceReview:
		mode = "Review"
	}
	l.Session = course.CMI5Session{Registration: l.XAPIRegistration, Session: uuid.NewString(), ActivityID: l.ActivityID, Mode: mode,
		MasteryScore: au.CMI5.MasteryScore}
	enforce, err := s.SessionSetting(ctx, sess, settingCMI5Rules)
	if err != nil {
		return nil, err
	}
	l.Session.Lenient = enforce == "false"
	if !sess.Preview {
		// The AU's earlier sessions that ended without terminated are abandoned now (9.3.6).
		if err := s.abandonOpenSessions(ctx, sess.Tenant, who.regID, l.ActivityID); err != nil {
			return nil, err
		}
	}
	launchData := map[string]any{
		"contextTemplate": map[string]any{"extensions": map[string]any{rollup.CMI5SessionExt: l.Session.Session},
			// The AU's publisher id in grouping (cmi5 9.6.2.3-1).
			"contextActivities": map[string]any{"grouping": []any{map[string]any{"objectType": "Activity", "id": au.CMI5.ID}}}},
		"launchMode": mode, "launchMethod": orDefault(au.CMI5.LaunchMethod, "AnyWindow"), "moveOn": orDefault(au.CMI5.MoveOn, "NotApplicable"),
	}
	if au.CMI5.MasteryScore != nil {
		launchData["masteryScore"] = *au.CMI5.MasteryScore
	}
	if au.CMI5.LaunchParameters != "" {
		launchData["launchParameters"] = au.CMI5.LaunchParameters
	}
	if au.CMI5.EntitlementKey != "" {
		launchData["entitlementKey"] = map[string]string{"courseStructure": au.CMI5.EntitlementKey}
	}
	if w.ReturnURL != "" {
		launchData["returnURL"] = w.ReturnURL
	}
	body, err := json.Marshal(launchData)
	if err != nil {
		return nil, err
	}
	key := statements.DocKey{Tenant: sess.Tenant, Kind: statements.State, ActivityID: l.ActivityID, Agent: l.ActorIFI, Registration: l.XAPIRegistration, ID: "LMS.LaunchData"}
	if _, err := s.d.Statements.PutDoc(ctx, &statements.Document{Key: key, ContentType: "application/json", Body: body}, statements.Precondition{}, false); err != nil {
		return nil, err
	}
	if !sess.Preview {
		if err := s.cmi5Launched(ctx, sess.Tenant, base, l.Actor, l.ActivityID, l.XAPIRegistration, launchData, w.LaunchURL); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// cmi5CourseID is the course's publisher id (the grouping activity of cmi5 statements).
func cmi5CourseID(pkg *course.Package) string {
	if pkg.XAPIActivityID != "" {
		return pkg.XAPIActivityID
	}
	if pkg.Root.CMI5 != nil && pkg.Root.CMI5.ID != "" {
		return pkg.Root.CMI5.ID
	}
	return pkg.Identifier
}

// cmi5Launched records the LMS's "launched" statement of an AU (cmi5 9.3.2): the learner, the
// AU, the registration, the session's context template with the launch mode, URL and moveOn
// extensions, in the cmi5 category; its authority is the LMS.
func (s *Service) cmi5Launched(ctx context.Context, tenant, base string, actor json.RawMessage, activityID, xreg string,
	launchData map[string]any, launchURL string) error {
	tmpl := launchData["contextTemplate"].(map[string]any)
	ext := map[string]any{}
	for k, v := range tmpl["extensions"].(map[string]any) {
		ext[k] = v
	}
	ext["https://w3id.org/xapi/cmi5/context/extensions/launchmode"] = launchData["launchMode"]
	if u, err := url.Parse(launchURL); err != nil || !u.IsAbs() {
		launchURL = base + launchURL
	}
	ext["https://w3id.org/xapi/cmi5/context/extensions/launchurl"] = launchURL
	ext["https://w3id.org/xapi/cmi5/context/extensions/moveon"] = launchData["moveOn"]
	if p, ok := launchData["launchParameters"]; ok {
		ext["https://w3id.org/xapi/cmi5/context/extensions/launchparameters"] = p
	}
	if m, ok := launchData["masteryScore"]; ok {
		ext["https://w3id.org/xapi/cmi5/context/extensions/masteryscore"] = m
	}
	activities := tmpl["contextActivities"].(map[string]any)
	st := map[string]any{
		"id":     uuid.NewString(),
		"actor":  actor,
		"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/launched", "display": map[string]string{"en-US": "Launched"}},
		"object": map[string]any{"objectType": "Activity", "id": activityID},
		"context": map[string]any{"registration": xreg, "extensions": ext, "contextActivities": map[string]any{
			"grouping": activities["grouping"],
			"category": []any{map[string]any{"objectType": "Activity", "id": "https://w3id.org/xapi/cmi5/context/categories/cmi5"}}}},
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano),
	}
	return s.storeLMSStatement(ctx, tenant, st)
}
