package server_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// cmi5Session is a cmi5 AU session as a test drives it: what its launch gave it (cmi5 section 8)
// and its LMS.LaunchData.
type cmi5Session struct {
	e     *env
	q     url.Values
	cred  auth
	actor map[string]any
	// endpoint is the record store's path for the AU (the endpoint parameter's path).
	endpoint   string
	launchData struct {
		ContextTemplate map[string]any `json:"contextTemplate"`
		LaunchMode      string         `json:"launchMode"`
		MasteryScore    *float64       `json:"masteryScore"`
		ReturnURL       string         `json:"returnURL"`
		MoveOn          string         `json:"moveOn"`
	}
}

// cmi5Start follows an AU's launch route (the player's /player/cmi5/{session}/launch URL) as
// the AU does on start-up: the redirect's parameters, the fetch URL's credential,
// LMS.LaunchData and the learner preferences (which the AU must read before it initializes).
func (e *env) cmi5Start(t *testing.T, launchURL string) *cmi5Session {
	t.Helper()
	r := e.get(launchURL)
	if r.Status != 302 {
		t.Fatalf("cmi5 launch: %d %s", r.Status, r.Body)
	}
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	au := &cmi5Session{e: e, q: loc.Query()}
	ep, err := url.Parse(au.q.Get("endpoint"))
	if err != nil || strings.HasSuffix(ep.Path, "/") {
		t.Fatalf("endpoint %q: a cmi5 endpoint has no trailing slash", au.q.Get("endpoint"))
	}
	au.endpoint = ep.Path
	fetchURL, _ := url.Parse(au.q.Get("fetch"))
	var fa struct {
		AuthToken string `json:"auth-token"`
	}
	e.do("POST", fetchURL.Path, noAuth, nil).json(t, &fa)
	if fa.AuthToken == "" {
		t.Fatal("the fetch URL gave no auth-token")
	}
	au.cred = auth{"Basic " + fa.AuthToken}
	if err := json.Unmarshal([]byte(au.q.Get("actor")), &au.actor); err != nil {
		t.Fatal(err)
	}
	r = e.do("GET", au.endpoint+"/activities/state?"+url.Values{"activityId": {au.q.Get("activityId")}, "agent": {au.q.Get("actor")},
		"registration": {au.q.Get("registration")}, "stateId": {"LMS.LaunchData"}}.Encode(), au.cred, nil, v103...)
	e.expect(r, 200, "LMS.LaunchData")
	r.json(t, &au.launchData)
	r = e.do("GET", au.endpoint+"/agents/profile?"+url.Values{"agent": {au.q.Get("actor")}, "profileId": {"cmi5LearnerPreferences"}}.Encode(), au.cred, nil, v103...)
	if r.Status != 200 && r.Status != 404 {
		t.Fatalf("learner preferences: %d %s", r.Status, r.Body)
	}
	return au
}

// sessionID is the session id of the AU's context template.
func (au *cmi5Session) sessionID() string {
	ext, _ := au.launchData.ContextTemplate["extensions"].(map[string]any)
	s, _ := ext["https://w3id.org/xapi/cmi5/context/extensions/sessionid"].(string)
	return s
}

// statement is a statement of the AU's session with verb (an ADL verb name or an IRI) and
// result, as the cmi5 rules want it: an id, a UTC timestamp, the context template with the
// registration, the cmi5 category for the cmi5 defined verbs and the moveOn category when
// result has success or completion, the masteryScore with a scored judgement.
func (au *cmi5Session) statement(verb string, result map[string]any) map[string]any {
	if !strings.Contains(verb, ":") {
		verb = "http://adlnet.gov/expapi/verbs/" + verb
	}
	var ctx map[string]any
	b, _ := json.Marshal(au.launchData.ContextTemplate)
	_ = json.Unmarshal(b, &ctx)
	ctx["registration"] = au.q.Get("registration")
	acts, _ := ctx["contextActivities"].(map[string]any)
	if acts == nil {
		acts = map[string]any{}
		ctx["contextActivities"] = acts
	}
	short := verb[strings.LastIndex(verb, "/")+1:]
	var cats []any
	switch short {
	case "initialized", "completed", "passed", "failed", "terminated":
		cats = append(cats, map[string]any{"id": "https://w3id.org/xapi/cmi5/context/categories/cmi5"})
	}
	if _, ok := result["success"]; ok {
		cats = append(cats, map[string]any{"id": "https://w3id.org/xapi/cmi5/context/categories/moveon"})
	} else if _, ok := result["completion"]; ok {
		cats = append(cats, map[string]any{"id": "https://w3id.org/xapi/cmi5/context/categories/moveon"})
	}
	if len(cats) > 0 {
		acts["category"] = cats
	}
	if _, scored := result["score"]; scored && au.launchData.MasteryScore != nil && (short == "passed" || short == "failed") {
		ctx["extensions"].(map[string]any)["https://w3id.org/xapi/cmi5/context/extensions/masteryscore"] = *au.launchData.MasteryScore
	}
	st := map[string]any{"id": uuid.NewString(), "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "actor": au.actor,
		"verb": map[string]any{"id": verb}, "object": map[string]any{"id": au.q.Get("activityId")}, "context": ctx}
	if result != nil {
		st["result"] = result
	}
	return st
}

// send posts statements with the AU's credential and returns the answer.
func (au *cmi5Session) send(sts ...map[string]any) resp {
	return au.e.do("POST", au.endpoint+"/statements", au.cred, sts, v103...)
}
