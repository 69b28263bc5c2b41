package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// responseGoldenDir holds one file per response type: its status line and the raw body as
// the server wrote it, with volatile values (ids, secrets, timestamps) replaced by named
// placeholders. Raw bytes, not a decoded struct: encoding/json decodes member names
// case-insensitively, so a body with "ID" where the spec says "id" decodes just fine.
var responseGoldenDir = filepath.Join("testdata", "golden", "responses")

// timestampRE matches an ISO 8601 date-time in a JSON string: with or without fraction and
// zone (the content service writes UTC without a zone).
var timestampRE = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"`)

// goldenRecorder collects normalised responses of one mode.
type goldenRecorder struct {
	e        *env
	volatile map[string]string // value → placeholder
	got      map[string][]byte // response type → golden text
}

// vary declares value volatile: it appears in golden files as <name>.
func (g *goldenRecorder) vary(value, name string) {
	if value == "" {
		g.e.t.Fatalf("volatile %s is empty", name)
	}
	g.volatile[value] = "<" + name + ">"
}

// record keeps r as the golden text of the response type name.
func (g *goldenRecorder) record(name string, r resp) {
	g.e.t.Helper()
	if _, dup := g.got[name]; dup {
		g.e.t.Fatalf("response type %s recorded twice", name)
	}
	body := r.Body
	// Longest values first, so a value that contains another is replaced whole.
	vals := make([]string, 0, len(g.volatile))
	for v := range g.volatile {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		body = bytes.ReplaceAll(body, []byte(v), []byte(g.volatile[v]))
	}
	body = timestampRE.ReplaceAll(body, []byte(`"<time>"`))
	ct := r.Header.Get("Content-Type")
	g.got[name] = fmt.Appendf(nil, "%d %s\n%s\n", r.Status, ct, body)
}

// rawID extracts the string member name of a raw JSON object body, without decoding it
// into a struct (an exact, case-sensitive match).
func rawID(t *testing.T, body []byte, name string) string {
	t.Helper()
	m := regexp.MustCompile(`"` + regexp.QuoteMeta(name) + `":"([^"]+)"`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no %q in %s", name, body)
	}
	return string(m[1])
}

// TestResponseGolden calls every operation of the three APIs once with a success answer (and
// the shared error body once), in both modes, and compares each raw response with
// testdata/golden/responses/<type>.txt. Both modes must give the same bytes, except
// readiness, whose backends differ by mode. -update rewrites the files.
func TestResponseGolden(t *testing.T) {
	got := map[string]map[string][]byte{} // mode → type → text
	modelDir, _ := testModelDir(t)
	forEachModeWithModel(t, modelDir, func(t *testing.T, e *env) {
		mode := path.Base(t.Name())
		g := &goldenRecorder{e: e, volatile: map[string]string{}, got: map[string][]byte{}}
		g.vary(e.url, "api-origin")
		g.vary(e.content, "content-origin")
		got[mode] = g.got
		goldenScenario(t, e, g)
	})
	if t.Failed() {
		return
	}
	modes := make([]string, 0, len(got))
	for m := range got {
		modes = append(modes, m)
	}
	sort.Strings(modes)
	if *update && len(modes) != 2 {
		t.Fatalf("ran in modes %v; -update needs both embedded and distributed", modes)
	}
	names := map[string]bool{}
	for _, m := range modes {
		for name, text := range got[m] {
			file := name
			if name == "readiness" {
				file = name + "." + m
			}
			names[file] = true
			p := filepath.Join(responseGoldenDir, file+".txt")
			if *update {
				if err := os.MkdirAll(responseGoldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, text, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("%v (run go test ./server -run TestResponseGolden -update with both modes to create it)", err)
				continue
			}
			if !bytes.Equal(text, want) {
				t.Errorf("%s (%s) differs from the response; if the change is intended run go test ./server -run TestResponseGolden -update and review the diff\ngot:\n%s\nwant:\n%s", p, m, text, want)
			}
		}
	}
	if len(modes) == 2 {
		for name, a := range got[modes[0]] {
			if b := got[modes[1]][name]; name != "readiness" && !bytes.Equal(a, b) {
				t.Errorf("%s: %s and %s differ\n%s:\n%s\n%s:\n%s", name, modes[0], modes[1], modes[0], a, modes[1], b)
			}
		}
	}
	// A golden file no response produces would never be checked again.
	files, _ := filepath.Glob(filepath.Join(responseGoldenDir, "*.txt"))
	for _, p := range files {
		name := strings.TrimSuffix(filepath.Base(p), ".txt")
		if !names[name] && !(strings.HasPrefix(name, "readiness.") && len(modes) < 2) {
			t.Errorf("%s is produced by no response; delete it", p)
		}
	}
}

func goldenScenario(t *testing.T, e *env, g *goldenRecorder) {
	const ten = "golden-shapes"
	const app = "/api/v1/app_management/tenants"
	engine := "/engine/api/v1/" + ten
	th := []string{"tenant_id", ten}
	ok := func(r resp, status int, what string) resp { t.Helper(); e.expect(r, status, what); return r }

	// Operations.
	g.record("health", ok(e.do("GET", "/healthz", noAuth, nil), 200, "healthz"))
	g.record("readiness", ok(e.do("GET", "/readyz", noAuth, nil), 200, "readyz"))

	// Tenants and credentials.
	r := ok(e.do("POST", app, root, map[string]any{"tenant_id": ten}), 201, "create tenant")
	g.record("tenant", r)
	g.record("tenant-list", ok(e.do("GET", app+"?limit=1", root, nil), 200, "list tenants"))
	// Empty lists are empty arrays, not null.
	g.record("tenant-list-empty", ok(e.do("GET", app+"?skip=1000000", root, nil), 200, "list tenants past the end"))
	g.record("credential-list-empty", ok(e.do("GET", app+"/"+ten+"/credentials", root, nil), 200, "list no credentials"))
	g.record("tenant-update", ok(e.do("PUT", app+"/"+ten, root, map[string]any{"enabled": true}), 200, "update tenant"))
	r = ok(e.do("POST", app+"/"+ten+"/credentials", root, nil), 201, "create credential")
	g.vary(rawID(t, r.Body, "key"), "key")
	g.vary(rawID(t, r.Body, "secret"), "secret")
	g.record("credential", r)
	g.record("credential-list", ok(e.do("GET", app+"/"+ten+"/credentials", root, nil), 200, "list credentials"))

	// Record-store OAuth clients and the token endpoint.
	g.record("oauth-client-list-empty", ok(e.do("GET", app+"/"+ten+"/lrs_oauth_clients", root, nil), 200, "list no OAuth clients"))
	r = ok(e.do("POST", app+"/"+ten+"/lrs_oauth_clients", root, map[string]any{"name": "Golden", "scopes": []string{"statements/write", "statements/read/mine"}}), 201, "register OAuth client")
	clientID, clientSecret := rawID(t, r.Body, "client_id"), rawID(t, r.Body, "client_secret")
	g.vary(clientID, "client-id")
	g.vary(clientSecret, "client-secret")
	g.record("oauth-client", r)
	g.record("oauth-client-list", ok(e.do("GET", app+"/"+ten+"/lrs_oauth_clients", root, nil), 200, "list OAuth clients"))
	r = ok(e.tokenRequest(basic(clientID, clientSecret), url.Values{"grant_type": {"client_credentials"}}), 200, "OAuth token")
	g.vary(rawID(t, r.Body, "access_token"), "access-token")
	g.record("oauth-token", r)
	r = e.tokenRequest(basic(clientID, clientSecret), url.Values{"grant_type": {"client_credentials"}, "scope": {"all"}})
	if r.Status != 400 {
		t.Fatalf("OAuth token beyond the client's scopes: %d %s", r.Status, r.Body)
	}
	g.record("oauth-error", r)

	// Errors share one body.
	g.record("message", ok(e.do("GET", engine+"/courses/nope/title", root, nil), 404, "missing course"))

	// Course engine: configuration.
	g.record("configuration-list", ok(e.do("GET", engine+"/configuration", root, nil), 200, "tenant configuration"))
	ok(e.do("PUT", engine+"/configuration/xAPIEnabled", root, map[string]any{"value": "true"}), 204, "enable xAPI")
	g.record("setting", ok(e.do("GET", engine+"/configuration/xAPIEnabled", root, nil), 200, "tenant setting"))

	// Course engine: import and courses.
	r = e.upload(ten, "course=golden-course", scorm12Package(t), "course.zip")
	ok(r, 200, "start import")
	g.vary(rawID(t, r.Body, "result"), "import-job")
	g.record("import-job-id", r)
	if res := e.waitJob(ten, r); res.Status != "COMPLETE" {
		t.Fatalf("import: %+v", res)
	}
	g.record("import-result", ok(e.do("GET", engine+"/courses/importJobs/"+rawID(t, r.Body, "result"), root, nil), 200, "import job"))
	g.record("course-list", ok(e.do("GET", engine+"/courses", root, nil), 200, "courses"))
	g.record("course-title", ok(e.do("GET", engine+"/courses/golden-course/title", root, nil), 200, "title"))
	g.record("course-xapi-activity-id", ok(e.do("GET", engine+"/courses/golden-course/xapiActivityId", root, nil), 200, "activity id"))
	r = ok(e.do("GET", engine+"/courses/golden-course/preview", root, nil), 200, "preview")
	link := rawID(t, r.Body, "launchLink")
	g.vary(link[strings.LastIndex(link, "/")+1:], "launch-token")
	g.record("launch-link", r)
	g.record("course-detail", ok(e.do("GET", engine+"/courses/golden-course/detail", root, nil), 200, "detail"))
	g.record("course-configuration-list", ok(e.do("GET", engine+"/courses/golden-course/configuration", root, nil), 200, "course configuration"))
	g.record("course-setting", ok(e.do("GET", engine+"/courses/golden-course/configuration/xAPIEnabled", root, nil), 200, "course setting"))

	// Registrations.
	regs := engine + "/registrations"
	ok(e.do("POST", regs, root, map[string]any{"courseId": "golden-course", "registrationId": "golden-reg",
		"xapiRegistrationId": "6f1c6b0a-5f52-4c5b-9e0b-1b2c3d4e5f60", "learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
	g.record("registration-list-empty", ok(e.do("GET", regs+"?learnerId=nobody", root, nil), 200, "no registrations"))
	g.record("registration-list", ok(e.do("GET", regs, root, nil), 200, "registrations"))
	g.record("registration-exists", ok(e.do("GET", regs+"/golden-reg", root, nil), 200, "registration exists"))
	g.record("registration-last-instance", ok(e.do("GET", regs+"/golden-reg/lastInstance", root, nil), 200, "last instance"))
	g.record("registration-xapi-registration-id", ok(e.do("GET", regs+"/golden-reg/xapiRegistrationId", root, nil), 200, "xAPI registration id"))
	g.record("registration-progress", ok(e.do("GET", regs+"/golden-reg/progress", root, nil), 200, "progress"))
	g.record("registration-progress-detail", ok(e.do("GET", regs+"/golden-reg/progress/detail", root, nil), 200, "progress detail"))
	g.record("registration-configuration-list", ok(e.do("GET", regs+"/golden-reg/configuration", root, nil), 200, "registration configuration"))
	g.record("registration-setting", ok(e.do("GET", regs+"/golden-reg/configuration/xAPIEnabled", root, nil), 200, "registration setting"))

	// Content service.
	g.record("content-list-empty", ok(e.do("GET", "/api/v1/content", root, nil, th...), 200, "no content"))
	g.record("course-list-empty", ok(e.do("GET", engine+"/courses?since=2999-01-01", root, nil), 200, "no courses since"))
	g.record("search-empty", ok(e.do("GET", "/api/v1/content/search?"+sq("search_type", "LEXICAL", "term", "nothing").Encode(), root, nil, th...), 200, "search without hits"))
	// Webhooks: a subscription whose receiver gets the import's JOB_PROCESSED message.
	hooks := newHookReceiver(t, 0)
	r = ok(e.do("POST", "/api/v1/app_management/subscription_auth", root, map[string]any{"type": "BASIC_AUTH", "key": "hook-user", "secret": "hook-pass"}, th...), 201, "auth configuration")
	authID := rawID(t, r.Body, "auth_config_id")
	g.vary(authID, "auth-config-id")
	g.record("subscription-auth", r)
	g.record("subscription-auth-list", ok(e.do("GET", "/api/v1/app_management/subscription_auth", root, nil, th...), 200, "auth configurations"))
	r = ok(e.do("POST", "/api/v1/app_management/subscriptions", root, map[string]any{"topic": "JOB_PROCESSED", "url": hooks.srv.URL + "/hook", "auth_config_id": authID}, th...), 201, "subscribe")
	subID := rawID(t, r.Body, "subscription_id")
	g.vary(subID, "subscription-id")
	g.vary(rawID(t, r.Body, "signing_secret"), "signing-secret")
	g.vary(hooks.srv.URL, "receiver")
	g.record("subscription", r)
	g.record("subscription-list", ok(e.do("GET", "/api/v1/app_management/subscriptions", root, nil, th...), 200, "subscriptions"))
	r = ok(e.uploadContent(root, ten, "content_id=garden&tag_id=garden", []byte(gardenMarkdown), "garden.md"), 202, "content import")
	job := rawID(t, r.Body, "id")
	g.vary(job, "content-job")
	g.record("job-pending", r)
	j := e.waitContentJob(ten, r)
	if j.Status != "COMPLETED" {
		t.Fatalf("content import: %+v", j)
	}
	g.record("job", ok(e.do("GET", "/api/v1/jobs/"+job, root, nil, th...), 200, "job"))
	g.record("job-list", ok(e.do("GET", "/api/v1/jobs?status=COMPLETED&type=CONTENT_IMPORT", root, nil, th...), 200, "job list"))
	eventually(t, 30*time.Second, "the JOB_PROCESSED delivery", func() bool { return len(hooks.delivered()) > 0 })
	var msg struct {
		MessageID string `json:"message_id"`
	}
	_ = json.Unmarshal(hooks.delivered()[0].body, &msg)
	g.vary(msg.MessageID, "message-id")
	eventually(t, 30*time.Second, "the delivery log", func() bool {
		return strings.Contains(string(e.do("GET", "/api/v1/app_management/subscriptions/"+subID+"/deliveries", root, nil, th...).Body), msg.MessageID)
	})
	g.record("subscription-deliveries", ok(e.do("GET", "/api/v1/app_management/subscriptions/"+subID+"/deliveries", root, nil, th...), 200, "delivery log"))
	// A version without tags has an empty tag list.
	j = e.waitContentJob(ten, ok(e.uploadContent(root, ten, "content_id=untagged", []byte(gardenMarkdown), "garden.md"), 202, "untagged import"))
	if j.Status != "COMPLETED" {
		t.Fatalf("content import: %+v", j)
	}
	g.record("content-version-untagged", ok(e.do("GET", "/api/v1/content/untagged/versions/1", root, nil, th...), 200, "untagged version"))
	g.record("content-list", ok(e.do("GET", "/api/v1/content", root, nil, th...), 200, "content list"))
	// Rebuilding the content index answers its job, which shows the progress.
	r = ok(e.do("POST", "/api/v1/app_management/reindex", root, nil), 202, "reindex")
	reindexJob := rawID(t, r.Body, "id")
	g.vary(reindexJob, "reindex-job")
	g.record("job-reindex-pending", r)
	eventually(t, 90*time.Second, "reindex job", func() bool {
		return strings.Contains(string(ok(e.do("GET", "/api/v1/jobs/"+reindexJob, root, nil), 200, "reindex job").Body), `"COMPLETED"`)
	})
	g.record("job-reindex", ok(e.do("GET", "/api/v1/jobs/"+reindexJob, root, nil), 200, "reindex job"))
	g.record("content-version", ok(e.do("GET", "/api/v1/content/garden/versions/1", root, nil, th...), 200, "content version"))
	g.record("content-version-update", ok(e.do("PATCH", "/api/v1/content/garden/versions/1", root, map[string]any{"tags": []string{"garden", "soil"}}, th...), 200, "content update"))
	g.record("search-lexical", ok(e.do("GET", "/api/v1/content/search?"+sq("search_type", "LEXICAL", "term", "carrots", "content_id", "garden", "version", "1", "return_match", "true").Encode(), root, nil, th...), 200, "search"))
	g.record("search-lexical-snippet", ok(e.do("GET", "/api/v1/content/search?"+sq("search_type", "LEXICAL", "term", `"harvest carrots"`, "return_snippet", "true").Encode(), root, nil, th...), 200, "search with snippets"))
	goldenSkills(t, e, g, ten)

	// Record store.
	lrsBase := lrs + "/" + ten
	st := statement("ann@example.com", "completed", "http://example.com/golden/a1")
	st["result"] = map[string]any{"score": map[string]any{"raw": 7}, "success": true, "completion": true, "duration": "PT1M"}
	r = ok(e.do("POST", lrsBase+"/statements", root, st, v200...), 200, "post statement")
	id := strings.Trim(string(regexp.MustCompile(`"[0-9a-f-]{36}"`).Find(r.Body)), `"`)
	g.vary(id, "statement-id")
	g.record("xapi-statement-ids", r)
	g.record("xapi-statement", ok(e.do("GET", lrsBase+"/statements?statementId="+id, root, nil, v200...), 200, "get statement"))
	g.record("xapi-statement-result-empty", ok(e.do("GET", lrsBase+"/statements?verb="+url.QueryEscape("http://example.com/none"), root, nil, v200...), 200, "query no statements"))
	g.record("xapi-statement-result", ok(e.do("GET", lrsBase+"/statements?limit=1", root, nil, v200...), 200, "query statements"))
	agent := url.QueryEscape(`{"mbox":"mailto:ann@example.com"}`)
	act := url.QueryEscape("http://example.com/golden/a1")
	state := lrsBase + "/activities/state?activityId=" + act + "&agent=" + agent
	ok(e.do("PUT", state+"&stateId=bookmark", root, map[string]any{"page": 3}, v200...), 204, "put state")
	g.record("xapi-document", ok(e.do("GET", state+"&stateId=bookmark", root, nil, v200...), 200, "get state"))
	g.record("xapi-document-ids", ok(e.do("GET", state, root, nil, v200...), 200, "list state ids"))
	g.record("xapi-document-ids-empty", ok(e.do("GET", lrsBase+"/activities/profile?activityId="+act, root, nil, v200...), 200, "list no profile ids"))
	g.record("xapi-activity", ok(e.do("GET", lrsBase+"/activities?activityId="+act, root, nil, v200...), 200, "activity"))
	g.record("xapi-person", ok(e.do("GET", lrsBase+"/agents?agent="+agent, root, nil, v200...), 200, "agents"))
	g.record("xapi-about", ok(e.do("GET", lrs+"/about", noAuth, nil), 200, "about"))
	g.record("xapi-report-results", ok(e.do("GET", lrsBase+"/Report/results?activity="+act, root, nil, v103...), 200, "report results"))
	g.record("xapi-report-activities", ok(e.do("GET", lrsBase+"/Report/activities", root, nil, v103...), 200, "report activities"))
	g.record("xapi-report-actors", ok(e.do("GET", lrsBase+"/Report/actors", root, nil, v103...), 200, "report actors"))
	g.record("xapi-report-results-agent", ok(e.do("GET", lrsBase+"/Report/results?agent="+agent, root, nil, v103...), 200, "report results of an agent"))
	g.record("xapi-report-activities-agent", ok(e.do("GET", lrsBase+"/Report/activities?agent="+agent, root, nil, v103...), 200, "report activities of an agent"))
	g.record("xapi-report-actors-activity", ok(e.do("GET", lrsBase+"/Report/actors?activity="+act, root, nil, v103...), 200, "report actors of an activity"))
	g.record("xapi-report-results-not-found", ok(e.do("GET", lrsBase+"/Report/results?activity="+url.QueryEscape("http://example.com/none"), root, nil, v103...), 404, "report results: nothing matches"))
	g.record("xapi-report-actors-not-found", ok(e.do("GET", lrsBase+"/Report/actors?activity="+url.QueryEscape("http://example.com/none"), root, nil, v103...), 404, "report actors: nothing matches"))
	g.record("xapi-report-bad-more", ok(e.do("GET", lrsBase+"/Report/actors?more=garbage", root, nil, v103...), 400, "report actors: bad continuation"))

	// Statement forwarding pairs (disabled, so the status stays empty).
	fwd := app + "/" + ten + "/forwarding_pairs"
	g.record("forward-pair-list-empty", ok(e.do("GET", fwd, root, nil), 200, "list no pairs"))
	g.record("forward-pair", ok(e.do("POST", fwd, root, map[string]any{"id": "golden-pair", "enabled": false,
		"source_query": "verb=http://adlnet.gov/expapi/verbs/completed", "destination_url": "https://lrs.example.com/xapi",
		"destination_credentials": map[string]any{"username": "fwd", "password": "fwd-secret"}}), 201, "create pair"))
	g.record("forward-pair-update", ok(e.do("PUT", fwd+"/golden-pair", root, map[string]any{"enabled": false,
		"destination_url": "https://lrs.example.com/xapi2", "destination_credentials": map[string]any{"username": "fwd2"}}), 200, "update pair"))
	g.record("forward-pair-list", ok(e.do("GET", fwd, root, nil), 200, "list pairs"))

	// Deleting the tenant answers its job.
	r = ok(e.do("DELETE", app+"/"+ten, root, nil), 202, "delete tenant")
	g.vary(rawID(t, r.Body, "id"), "deletion-job")
	g.record("job-deletion", r)
}
