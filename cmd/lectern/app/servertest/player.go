package servertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/lectern-lms/lectern/course/coursetest"
)

// Get fetches a player URL without following redirects, as a browser's first hop.
func (e *Env) Get(path string, headers ...string) Resp {
	e.T.Helper()
	req, err := http.NewRequest("GET", e.Origin(path)+path, nil)
	if err != nil {
		e.T.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		e.T.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return Resp{Status: res.StatusCode, Body: out, Header: res.Header}
}

// LaunchPath asks for a launch link and returns its path (the public URL is not set in tests).
func (e *Env) LaunchPath(endpoint string) string {
	e.T.Helper()
	r := e.Do("GET", endpoint, Root, nil)
	e.Expect(r, 200, "launch link "+endpoint)
	var l struct{ LaunchLink string }
	r.JSON(e.T, &l)
	i := strings.Index(l.LaunchLink, "/player/launch/")
	if i < 0 {
		e.T.Fatalf("launch link %q", l.LaunchLink)
	}
	return l.LaunchLink[i:]
}

// Launch opens a launch link and returns the player session token.
func (e *Env) Launch(path string) string {
	e.T.Helper()
	r := e.Get(path)
	loc := r.Header.Get("Location")
	if r.Status != 303 || !strings.HasPrefix(loc, "/player/session/") {
		e.T.Fatalf("launch %s: %d %q %s", path, r.Status, loc, r.Body)
	}
	return strings.TrimPrefix(loc, "/player/session/")
}

// CommitAnswer is the runtime endpoint's answer to a commit.
type CommitAnswer struct {
	Result    string
	ErrorCode int
	Message   string
}

// Commit sends a SCORM commit of activity's attempt in session.
func (e *Env) Commit(session, activity string, attempt int64, body string, headers ...string) (Resp, CommitAnswer) {
	e.T.Helper()
	h := append([]string{"Content-Type", "text/plain;charset=UTF-8"}, headers...)
	r := e.Do("POST", fmt.Sprintf("/player/runtime/%s/commit?activity=%s&attempt=%d", session, activity, attempt), NoAuth, body, h...)
	var a CommitAnswer
	r.JSON(e.T, &a)
	return r, a
}

// ActivityState is an activity's attempt and run-time data as the player reads them.
type ActivityState struct {
	Attempt int64
	CMI     map[string]string
}

// Activity reads activity id's state in session.
func (e *Env) Activity(session, id string) ActivityState {
	e.T.Helper()
	r := e.Get("/player/runtime/" + session + "/activity?activity=" + id)
	e.Expect(r, 200, "activity state")
	var st ActivityState
	r.JSON(e.T, &st)
	if st.Attempt <= 0 {
		e.T.Fatalf("activity state without attempt: %s", r.Body)
	}
	return st
}

// SessionAnswer is a commit's or heartbeat's answer with the refusal's reason.
type SessionAnswer struct {
	Result  string
	Message string
	Reason  string
}

// Heartbeat posts the player page's sign of life (state "", hidden or exit) for activity.
func (e *Env) Heartbeat(session, activity, state string) (Resp, SessionAnswer) {
	e.T.Helper()
	q := url.Values{"activity": {activity}}
	if state != "" {
		q.Set("state", state)
	}
	r := e.Do("POST", "/player/runtime/"+session+"/heartbeat?"+q.Encode(), NoAuth, nil)
	var a SessionAnswer
	r.JSON(e.T, &a)
	return r, a
}

// Near: the clock moves by whole steps, the requests in between add real milliseconds.
func Near(got, want float64) bool { return got >= want && got < want+2 }

// Cmi5Session is a cmi5 AU session as a test drives it: what its launch gave it (cmi5 section 8)
// and its LMS.LaunchData.
type Cmi5Session struct {
	e     *Env
	Q     url.Values
	Cred  Auth
	Actor map[string]any
	// Endpoint is the record store's path for the AU (the endpoint parameter's path).
	Endpoint   string
	LaunchData struct {
		ContextTemplate map[string]any `json:"contextTemplate"`
		LaunchMode      string         `json:"launchMode"`
		MasteryScore    *float64       `json:"masteryScore"`
		ReturnURL       string         `json:"returnURL"`
		MoveOn          string         `json:"moveOn"`
	}
}

// Cmi5Start follows an AU's launch route (the player's /player/cmi5/{session}/launch URL) as
// the AU does on start-up: the redirect's parameters, the fetch URL's credential,
// LMS.LaunchData and the learner preferences (which the AU must read before it initializes).
func (e *Env) Cmi5Start(t *testing.T, launchURL string) *Cmi5Session {
	t.Helper()
	r := e.Get(launchURL)
	if r.Status != 302 {
		t.Fatalf("cmi5 launch: %d %s", r.Status, r.Body)
	}
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	au := &Cmi5Session{e: e, Q: loc.Query()}
	ep, err := url.Parse(au.Q.Get("endpoint"))
	if err != nil || strings.HasSuffix(ep.Path, "/") {
		t.Fatalf("endpoint %q: a cmi5 endpoint has no trailing slash", au.Q.Get("endpoint"))
	}
	au.Endpoint = ep.Path
	fetchURL, _ := url.Parse(au.Q.Get("fetch"))
	var fa struct {
		AuthToken string `json:"auth-token"`
	}
	e.Do("POST", fetchURL.Path, NoAuth, nil).JSON(t, &fa)
	if fa.AuthToken == "" {
		t.Fatal("the fetch URL gave no auth-token")
	}
	au.Cred = Auth{"Basic " + fa.AuthToken}
	if err := json.Unmarshal([]byte(au.Q.Get("actor")), &au.Actor); err != nil {
		t.Fatal(err)
	}
	r = e.Do("GET", au.Endpoint+"/activities/state?"+url.Values{"activityId": {au.Q.Get("activityId")}, "agent": {au.Q.Get("actor")},
		"registration": {au.Q.Get("registration")}, "stateId": {"LMS.LaunchData"}}.Encode(), au.Cred, nil, V103...)
	e.Expect(r, 200, "LMS.LaunchData")
	r.JSON(t, &au.LaunchData)
	r = e.Do("GET", au.Endpoint+"/agents/profile?"+url.Values{"agent": {au.Q.Get("actor")}, "profileId": {"cmi5LearnerPreferences"}}.Encode(), au.Cred, nil, V103...)
	if r.Status != 200 && r.Status != 404 {
		t.Fatalf("learner preferences: %d %s", r.Status, r.Body)
	}
	return au
}

// SessionID is the session id of the AU's context template.
func (au *Cmi5Session) SessionID() string {
	ext, _ := au.LaunchData.ContextTemplate["extensions"].(map[string]any)
	s, _ := ext["https://w3id.org/xapi/cmi5/context/extensions/sessionid"].(string)
	return s
}

// Statement is a statement of the AU's session with verb (an ADL verb name or an IRI) and
// result, as the cmi5 rules want it: an id, a UTC timestamp, the context template with the
// registration, the cmi5 category for the cmi5 defined verbs and the moveOn category when
// result has success or completion, the masteryScore with a scored judgement.
func (au *Cmi5Session) Statement(verb string, result map[string]any) map[string]any {
	if !strings.Contains(verb, ":") {
		verb = "http://adlnet.gov/expapi/verbs/" + verb
	}
	var ctx map[string]any
	b, _ := json.Marshal(au.LaunchData.ContextTemplate)
	_ = json.Unmarshal(b, &ctx)
	ctx["registration"] = au.Q.Get("registration")
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
	if _, scored := result["score"]; scored && au.LaunchData.MasteryScore != nil && (short == "passed" || short == "failed") {
		ctx["extensions"].(map[string]any)["https://w3id.org/xapi/cmi5/context/extensions/masteryscore"] = *au.LaunchData.MasteryScore
	}
	st := map[string]any{"id": uuid.NewString(), "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "actor": au.Actor,
		"verb": map[string]any{"id": verb}, "object": map[string]any{"id": au.Q.Get("activityId")}, "context": ctx}
	if result != nil {
		st["result"] = result
	}
	return st
}

// Send posts statements with the AU's credential and returns the answer.
func (au *Cmi5Session) Send(sts ...map[string]any) Resp {
	return au.e.Do("POST", au.Endpoint+"/statements", au.Cred, sts, V103...)
}

// Cmi5Course is a cmi5.xml with a block of two AUs (a1 CompletedOrPassed with masteryScore
// 0.8; a2 NotApplicable, OwnWindow) and a third AU (a3, NotApplicable) beside the block.
const Cmi5Course = `<?xml version="1.0" encoding="utf-8"?>
<courseStructure xmlns="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd">
  <course id="https://example.com/c"><title><langstring lang="en">C</langstring></title><description><langstring lang="en">C</langstring></description></course>
  <block id="https://example.com/c/block">
    <title><langstring lang="en">B</langstring></title><description><langstring lang="en">B</langstring></description>
    <au id="https://example.com/c/a1" moveOn="CompletedOrPassed" masteryScore="0.8">
      <title><langstring lang="en">A1</langstring></title><description><langstring lang="en">A1</langstring></description><url>a1.html</url></au>
    <au id="https://example.com/c/a2" moveOn="NotApplicable" launchMethod="OwnWindow">
      <title><langstring lang="en">A2</langstring></title><description><langstring lang="en">A2</langstring></description><url>a2.html</url></au>
  </block>
  <au id="https://example.com/c/a3" moveOn="NotApplicable">
    <title><langstring lang="en">A3</langstring></title><description><langstring lang="en">A3</langstring></description><url>a3.html</url></au>
</courseStructure>`

// XapiStatement is a statement of the learner ann about object in xAPI registration xreg.
func XapiStatement(xreg, verb, object string, result map[string]any) map[string]any {
	st := map[string]any{
		"actor":   map[string]any{"objectType": "Agent", "account": map[string]any{"homePage": "https://lms.example.com", "name": "ann"}},
		"verb":    map[string]any{"id": "http://adlnet.gov/expapi/verbs/" + verb},
		"object":  map[string]any{"objectType": "Activity", "id": object},
		"context": map[string]any{"registration": xreg},
	}
	if result != nil {
		st["result"] = result
	}
	return st
}

// FixtureFiles are the files of course/coursetest's fixture name.
func FixtureFiles(t *testing.T, name string) map[string]string {
	for _, f := range coursetest.Fixtures() {
		if f.Name == name {
			return f.Files
		}
	}
	t.Fatalf("no fixture %s", name)
	return nil
}
