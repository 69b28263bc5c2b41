package servertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course/postback"
)

// PostReceived is one request a post-back receiver got.
type PostReceived struct {
	path, ContentType, Auth, Signature string
	Body                               []byte
	Arrived, Cancelled                 time.Time
}

// PostReceiver is an LMS's post-back endpoint on loopback. Paths listed in fail answer 500;
// paths listed in hold wait, without answering, until release (or until the sender gives up).
type PostReceiver struct {
	mu   sync.Mutex
	got  []PostReceived
	fail map[string]bool
	hold map[string]chan struct{}
	srv  *httptest.Server
}

// NewPostReceiver starts a PostReceiver; the test's end stops it.
func NewPostReceiver(t *testing.T) *PostReceiver {
	rc := &PostReceiver{fail: map[string]bool{}, hold: map[string]chan struct{}{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		i := len(rc.got)
		rc.got = append(rc.got, PostReceived{path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Auth: r.Header.Get("Authorization"),
			Signature: r.Header.Get(postback.SignatureHeader), Body: body, Arrived: time.Now()})
		fail, hold := rc.fail[r.URL.Path], rc.hold[r.URL.Path]
		rc.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				rc.mu.Lock()
				rc.got[i].Cancelled = time.Now()
				rc.mu.Unlock()
				return
			}
		}
		if fail {
			w.WriteHeader(500)
		}
	}))
	// Registered before any hold, so it runs after every release: held requests end first.
	t.Cleanup(rc.srv.Close)
	return rc
}

// URL is the receiver's address for path.
func (rc *PostReceiver) URL(path string) string { return rc.srv.URL + path }

// Failing makes path answer 500.
func (rc *PostReceiver) Failing(path string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.fail[path] = true
}

// Holding makes path wait until the returned release is called (at the latest, at the end
// of the test).
func (rc *PostReceiver) Holding(t *testing.T, path string) (release func()) {
	ch := make(chan struct{})
	rc.mu.Lock()
	rc.hold[path] = ch
	rc.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	return release
}

// At returns the requests to path, oldest first.
func (rc *PostReceiver) At(path string) []PostReceived {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []PostReceived
	for _, g := range rc.got {
		if g.path == path {
			out = append(out, g)
		}
	}
	return out
}

// TakeCourse launches a registration of the two-SCO SCORM 1.2 course and commits both SCOs
// through the runtime endpoint: SCO 1 passed with 85, then SCO 2 passed with 70 in a
// terminating commit (the one the player's Terminate / LMSFinish sends). The learner spends
// 20 s in each SCO by the test's frozen clock, so the time the server measures is exact.
func (e *Env) TakeCourse(tn, regID string) {
	e.T.Helper()
	e.Clock.Freeze()
	session := e.Launch(e.LaunchPath("/engine/api/v1/" + tn + "/registrations/" + regID + "/launchLink"))
	e.Activity(session, "i1")
	e.Clock.Advance(20 * time.Second)
	e.RuntimeCommit(session, "i1", false, `{"commitSequence":1,"cmi.core.lesson_status":"incomplete","cmi.core.score.raw":"85","cmi.core.score.min":"0",
		"cmi.core.score.max":"100","cmi.core.total_time":"0000:01:30","cmi.core.exit":""}`)
	e.Activity(session, "i2")
	e.Clock.Advance(20 * time.Second)
	e.RuntimeCommit(session, "i2", true, `{"commitSequence":1,"cmi.core.lesson_status":"passed","cmi.core.score.raw":"70","cmi.core.total_time":"0000:02:00"}`)
}

// RuntimeCommit commits body for activity in session, as the player does (terminate: the
// Content's terminating commit).
func (e *Env) RuntimeCommit(session, activity string, terminate bool, body string) {
	e.T.Helper()
	st := e.Activity(session, activity)
	path := fmt.Sprintf("/player/runtime/%s/commit?activity=%s&attempt=%d", session, activity, st.Attempt)
	if terminate {
		path += "&terminate=true"
	}
	r := e.Do("POST", path, NoAuth, body, "Content-Type", "text/plain;charset=UTF-8")
	var a CommitAnswer
	r.JSON(e.T, &a)
	if r.Status != 200 || a.Result != "true" {
		e.T.Fatalf("commit %s: %d %s", activity, r.Status, r.Body)
	}
}

// Register creates a registration of course intro for Ann Lee with the given postBack (nil:
// none).
func (e *Env) Register(tn, regID string, postBack map[string]any) {
	e.T.Helper()
	body := map[string]any{"courseId": "intro", "registrationId": regID,
		"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}
	if postBack != nil {
		body["postBack"] = postBack
	}
	e.Expect(e.Do("POST", "/engine/api/v1/"+tn+"/registrations", Root, body), 204, "create registration "+regID)
}

// SetSetting sets configuration setting id at the level path names (a tenant, course or registration path).
func (e *Env) SetSetting(path, id, value string) {
	e.T.Helper()
	e.Expect(e.Do("PUT", path+"/configuration/"+id, Root, map[string]any{"value": value}), 204, "set "+id+"="+value)
}

// reportKeys are the fields of progress/detail that a FULL post-back report in the JSON data
// model (ApiPostbackDataModelVersion v2) carries too.
var reportKeys = []string{"activityDetails", "globalObjectives", "registrationCompletion", "registrationSuccess", "score",
	"totalSecondsTracked", "registrationCompletionAmount"}

// ReportDiff says where a FULL post-back report (JSON data model) and progress/detail of the
// same registration differ, one line per field; none when they agree. Both come from the
// learner's path's one rollup, so a difference is a second copy of a rule.
func ReportDiff(report, detail []byte) ([]string, error) {
	var r, d map[string]any
	if err := json.Unmarshal(report, &r); err != nil {
		return nil, fmt.Errorf("report: %w: %s", err, report)
	}
	if err := json.Unmarshal(detail, &d); err != nil {
		return nil, fmt.Errorf("progress/detail: %w: %s", err, detail)
	}
	if r["activityDetails"] == nil {
		return nil, fmt.Errorf("the report has no activity tree (not FULL, or not the JSON data model): %s", report)
	}
	var diffs []string
	for _, k := range reportKeys {
		if !reflect.DeepEqual(r[k], d[k]) {
			a, _ := json.Marshal(r[k])
			b, _ := json.Marshal(d[k])
			diffs = append(diffs, fmt.Sprintf("%s differs:\npost-back:       %s\nprogress/detail: %s", k, a, b))
		}
	}
	return diffs, nil
}
