package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/lrs/launch"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/storage/statements"
)

// The cmi5 launch method (cmi5 section 8): the player's frame opens /player/cmi5/{session}/launch,
// which writes the AU's LMS.LaunchData state document and redirects to the AU with endpoint,
// fetch, registration, activityId and actor; the AU's one call to the fetch URL returns the
// record-store credential.

// cmi5 context extension of the session id.
const cmi5SessionExt = "https://w3id.org/xapi/cmi5/context/extensions/sessionid"

// Cmi5FetchAnswer is the fetch URL's answer: the credential, or a cmi5 error.
type Cmi5FetchAnswer struct {
	AuthToken string `json:"auth-token,omitempty"`
	ErrorCode string `json:"error-code,omitempty"`
	ErrorText string `json:"error-text,omitempty"`
}

func (s *Server) registerCMI5() {
	s.browser(fiber.MethodGet, "/player/cmi5/:session/launch", s.cmi5Launch)
	s.browser(fiber.MethodPost, "/player/cmi5/fetch/:token", s.cmi5Fetch)
}

func (s *Server) cmi5Launch(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess, err := s.deps.Launch.VerifySession(c.Params("session"), time.Now())
	if err != nil {
		return htmlError(c, fiber.StatusForbidden, "This player session has ended", "Launch the course again from the system that sent you here.")
	}
	v, err := s.sessionVersion(ctx, sess)
	if err != nil {
		return err
	}
	var au *course.Activity
	if v.Package != nil && v.Standard == course.CMI5 {
		v.Package.Root.Walk(func(a *course.Activity) {
			if au == nil && a.ID == c.Query("au") && launchable(a) && a.CMI5 != nil {
				au = a
			}
		})
	}
	if au == nil {
		return htmlError(c, fiber.StatusNotFound, "This unit cannot be launched", "It is not an assignable unit of this course.")
	}
	if s.deps.LaunchTokens == nil || s.deps.Statements == nil {
		return htmlError(c, fiber.StatusServiceUnavailable, "This course cannot be launched here", "This server has no record store for cmi5 content.")
	}
	base := s.deps.PublicURL
	if base == "" {
		base = c.BaseURL()
	}
	who, err := s.sessionLearner(ctx, sess)
	if errors.Is(err, registration.ErrNotFound) {
		return htmlError(c, fiber.StatusNotFound, "This registration no longer exists", "The enrolment this link was made for has been deleted.")
	}
	if err != nil {
		return err
	}
	regID, xreg := who.regID, who.xreg
	if xreg == "" {
		// A preview has no registration; cmi5 still needs one for the session.
		xreg = uuid.NewString()
	}
	actorJSON, ifi, err := who.actor(base)
	if err != nil {
		return err
	}
	mode := "Normal"
	switch {
	case sess.Preview:
		mode = "Browse"
	case sess.ForceReview:
		mode = "Review"
	}
	launchData := map[string]any{
		"contextTemplate": map[string]any{"extensions": map[string]any{cmi5SessionExt: uuid.NewString()},
			"contextActivities": map[string]any{"grouping": []any{map[string]any{"objectType": "Activity", "id": cmi5CourseID(v.Package)}}}},
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
	body, err := json.Marshal(launchData)
	if err != nil {
		return err
	}
	key := statements.DocKey{Tenant: sess.Tenant, Kind: statements.State, ActivityID: au.CMI5.ID, Agent: ifi, Registration: xreg, ID: "LMS.LaunchData"}
	if _, err := s.deps.Statements.PutDoc(ctx, &statements.Document{Key: key, ContentType: "application/json", Body: body}, statements.Precondition{}, false); err != nil {
		return err
	}
	if !sess.Preview {
		if err := s.cmi5Launched(ctx, sess.Tenant, base, actorJSON, au, xreg, launchData, contentURL(c.Params("session"), au.LaunchURL)); err != nil {
			return err
		}
	}
	life, err := s.launchTokenLife(ctx, sess)
	if err != nil {
		return err
	}
	tok := s.deps.Launch.SignFetch(course.FetchClaims{Tenant: sess.Tenant, RegistrationID: regID, Actor: actorJSON, ActorIFI: ifi,
		Launch: sess.Launch, Nonce: uuid.NewString(), Expires: sess.Expires, TokenLife: int64(life / time.Second)})
	q := url.Values{"endpoint": {base + LRSBase + "/" + sess.Tenant + "/"}, "fetch": {base + "/player/cmi5/fetch/" + tok},
		"registration": {xreg}, "activityId": {au.CMI5.ID}, "actor": {string(actorJSON)}}
	target := contentURL(c.Params("session"), au.LaunchURL)
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(withQuery(target+sep+q.Encode(), sess.Supplemental), fiber.StatusFound)
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

func (s *Server) cmi5Fetch(c *fiber.Ctx) error {
	ctx := c.UserContext()
	c.Set(fiber.HeaderCacheControl, "no-store")
	fc, err := s.deps.Launch.VerifyFetch(c.Params("token"), time.Now())
	if err != nil {
		// cmi5 error code 2: the fetch URL is not valid (or no longer).
		return c.JSON(Cmi5FetchAnswer{ErrorCode: "2", ErrorText: "this fetch URL is not valid or has expired"})
	}
	err = s.deps.Registrations.ConsumeLaunch(ctx, fc.Tenant, fc.RegistrationID, "cmi5-fetch-"+fc.Nonce)
	if errors.Is(err, registration.ErrLaunchUsed) {
		// cmi5 error code 1: the fetch URL was already used.
		return c.JSON(Cmi5FetchAnswer{ErrorCode: "1", ErrorText: "this fetch URL was already used"})
	}
	if err != nil {
		return err
	}
	life := time.Duration(fc.TokenLife) * time.Second
	if life <= 0 {
		// A fetch URL of before the setting: as long as its session.
		life = time.Until(time.Unix(fc.Expires, 0))
	}
	token, _ := s.deps.LaunchTokens.Issue(launch.Claims{Tenant: fc.Tenant, Registration: fc.RegistrationID, Actor: fc.Actor, ActorIFI: fc.ActorIFI,
		Session: fc.Launch}, life, time.Now())
	return c.JSON(Cmi5FetchAnswer{AuthToken: base64.StdEncoding.EncodeToString([]byte(launch.User + ":" + token))})
}

// cmi5Launched records the LMS's "launched" statement of an AU (cmi5 9.3.2): the learner, the
// AU, the registration, the session's context template with the launch mode, URL and moveOn
// extensions, in the cmi5 category; its authority is the LMS.
func (s *Server) cmi5Launched(ctx context.Context, tenant, base string, actor json.RawMessage, au *course.Activity, xreg string,
	launchData map[string]any, launchURL string) error {
	tmpl := launchData["contextTemplate"].(map[string]any)
	ext := map[string]any{}
	for k, v := range tmpl["extensions"].(map[string]any) {
		ext[k] = v
	}
	ext["https://w3id.org/xapi/cmi5/context/extensions/launchmode"] = launchData["launchMode"]
	ext["https://w3id.org/xapi/cmi5/context/extensions/launchurl"] = base + launchURL
	ext["https://w3id.org/xapi/cmi5/context/extensions/moveon"] = launchData["moveOn"]
	if p, ok := launchData["launchParameters"]; ok {
		ext["https://w3id.org/xapi/cmi5/context/extensions/launchparameters"] = p
	}
	activities := tmpl["contextActivities"].(map[string]any)
	st := map[string]any{
		"id":     uuid.NewString(),
		"actor":  actor,
		"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/launched", "display": map[string]string{"en-US": "Launched"}},
		"object": map[string]any{"objectType": "Activity", "id": au.CMI5.ID},
		"context": map[string]any{"registration": xreg, "extensions": ext, "contextActivities": map[string]any{
			"grouping": activities["grouping"],
			"category": []any{map[string]any{"objectType": "Activity", "id": "https://w3id.org/xapi/cmi5/context/categories/cmi5"}}}},
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano),
	}
	return s.storeLMSStatement(ctx, tenant, st)
}

// storeLMSStatement records a statement the LMS itself makes (cmi5 launched, xAPI launched):
// its authority is the account lms of the record store's home page. It rolls up like a
// statement the content sends, so progress and progress/detail agree.
func (s *Server) storeLMSStatement(ctx context.Context, tenant string, st map[string]any) error {
	body, err := json.Marshal(st)
	if err != nil {
		return err
	}
	stmts, _, err := xapi.ParseStatements(body, xapi.V103)
	if err != nil {
		return err
	}
	authority, err := json.Marshal(map[string]any{"objectType": "Agent", "account": map[string]string{"homePage": s.lrsHomePage(), "name": "lms"}})
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
	if err := s.deps.Statements.Put(ctx, tenant, batch, nil); err != nil {
		return err
	}
	// Like any statement of the registration: the launched activity counts as attempted.
	s.statementProgress(ctx, tenant, batch)
	return nil
}
