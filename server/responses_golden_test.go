package server_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// responseGoldenDir holds one file per response type: its status line and the raw body as
// the server wrote it, with volatile values (ids, secrets, timestamps) replaced by named
// placeholders. Raw bytes, not a decoded struct: encoding/json decodes member names
// case-insensitively, so a body with "ID" where the spec says "id" decodes just fine.
var responseGoldenDir = filepath.Join("testdata", "golden", "responses")

// TestResponseGolden calls every operation of the three APIs once with a success answer (and
// the shared error body once), in both modes, and compares each raw response with
// testdata/golden/responses/<type>.txt. Both modes must give the same bytes, except
// readiness, whose backends differ by mode. -update rewrites the files.
func TestResponseGolden(t *testing.T) {
	got := map[string]map[string][]byte{} // mode → type → text
	modelDir, _ := servertest.TestModelDir(t)
	servertest.ForEachModeWithModel(t, modelDir, func(t *testing.T, e *servertest.Env) {
		mode := path.Base(t.Name())
		g := &servertest.GoldenRecorder{E: e, Volatile: map[string]string{}, Got: map[string][]byte{}}
		g.Vary(e.URL, "api-origin")
		g.Vary(e.Content, "content-origin")
		got[mode] = g.Got
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
	if *servertest.Update && len(modes) != 2 {
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
			if *servertest.Update {
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

func goldenScenario(t *testing.T, e *servertest.Env, g *servertest.GoldenRecorder) {
	const ten = "golden-shapes"
	const app = "/api/v1/app_management/tenants"
	engine := "/engine/api/v1/" + ten
	th := []string{"tenant_id", ten}
	ok := func(r servertest.Resp, status int, what string) servertest.Resp {
		t.Helper()
		e.Expect(r, status, what)
		return r
	}

	// Operations.
	g.Record("health", ok(e.Do("GET", "/healthz", servertest.NoAuth, nil), 200, "healthz"))
	g.Record("readiness", ok(e.Do("GET", "/readyz", servertest.NoAuth, nil), 200, "readyz"))

	// Tenants and credentials.
	r := ok(e.Do("POST", app, servertest.Root, map[string]any{"tenant_id": ten}), 201, "create tenant")
	g.Record("tenant", r)
	g.Record("tenant-list", ok(e.Do("GET", app+"?limit=1", servertest.Root, nil), 200, "list tenants"))
	// Empty lists are empty arrays, not null.
	g.Record("tenant-list-empty", ok(e.Do("GET", app+"?skip=1000000", servertest.Root, nil), 200, "list tenants past the end"))
	g.Record("credential-list-empty", ok(e.Do("GET", app+"/"+ten+"/credentials", servertest.Root, nil), 200, "list no credentials"))
	g.Record("tenant-update", ok(e.Do("PUT", app+"/"+ten, servertest.Root, map[string]any{"enabled": true}), 200, "update tenant"))
	r = ok(e.Do("POST", app+"/"+ten+"/credentials", servertest.Root, nil), 201, "create credential")
	g.Vary(servertest.RawID(t, r.Body, "key"), "key")
	g.Vary(servertest.RawID(t, r.Body, "secret"), "secret")
	g.Record("credential", r)
	g.Record("credential-list", ok(e.Do("GET", app+"/"+ten+"/credentials", servertest.Root, nil), 200, "list credentials"))

	// Record-store OAuth clients and the token endpoint.
	g.Record("oauth-client-list-empty", ok(e.Do("GET", app+"/"+ten+"/lrs_oauth_clients", servertest.Root, nil), 200, "list no OAuth clients"))
	r = ok(e.Do("POST", app+"/"+ten+"/lrs_oauth_clients", servertest.Root, map[string]any{"name": "Golden", "scopes": []string{"statements/write", "statements/read/mine"}}), 201, "register OAuth client")
	clientID, clientSecret := servertest.RawID(t, r.Body, "client_id"), servertest.RawID(t, r.Body, "client_secret")
	g.Vary(clientID, "client-id")
	g.Vary(clientSecret, "client-secret")
	g.Record("oauth-client", r)
	g.Record("oauth-client-list", ok(e.Do("GET", app+"/"+ten+"/lrs_oauth_clients", servertest.Root, nil), 200, "list OAuth clients"))
	r = ok(e.TokenRequest(servertest.Basic(clientID, clientSecret), url.Values{"grant_type": {"client_credentials"}}), 200, "OAuth token")
	g.Vary(servertest.RawID(t, r.Body, "access_token"), "access-token")
	g.Record("oauth-token", r)
	r = e.TokenRequest(servertest.Basic(clientID, clientSecret), url.Values{"grant_type": {"client_credentials"}, "scope": {"all"}})
	if r.Status != 400 {
		t.Fatalf("OAuth token beyond the client's scopes: %d %s", r.Status, r.Body)
	}
	g.Record("oauth-error", r)

	// Errors share one body.
	g.Record("message", ok(e.Do("GET", engine+"/courses/nope/title", servertest.Root, nil), 404, "missing course"))

	// Course engine: configuration.
	g.Record("configuration-list", ok(e.Do("GET", engine+"/configuration", servertest.Root, nil), 200, "tenant configuration"))
	ok(e.Do("PUT", engine+"/configuration/xAPIEnabled", servertest.Root, map[string]any{"value": "true"}), 204, "enable xAPI")
	g.Record("setting", ok(e.Do("GET", engine+"/configuration/xAPIEnabled", servertest.Root, nil), 200, "tenant setting"))

	// Course engine: import and courses.
	r = e.Upload(ten, "course=golden-course", servertest.Scorm12Package(t), "course.zip")
	ok(r, 200, "start import")
	g.Vary(servertest.RawID(t, r.Body, "result"), "import-job")
	g.Record("import-job-id", r)
	if res := e.WaitJob(ten, r); res.Status != "COMPLETE" {
		t.Fatalf("import: %+v", res)
	}
	g.Record("import-result", ok(e.Do("GET", engine+"/courses/importJobs/"+servertest.RawID(t, r.Body, "result"), servertest.Root, nil), 200, "import job"))
	g.Record("course-list", ok(e.Do("GET", engine+"/courses", servertest.Root, nil), 200, "courses"))
	g.Record("course-title", ok(e.Do("GET", engine+"/courses/golden-course/title", servertest.Root, nil), 200, "title"))
	g.Record("course-xapi-activity-id", ok(e.Do("GET", engine+"/courses/golden-course/xapiActivityId", servertest.Root, nil), 200, "activity id"))
	r = ok(e.Do("GET", engine+"/courses/golden-course/preview", servertest.Root, nil), 200, "preview")
	link := servertest.RawID(t, r.Body, "launchLink")
	g.Vary(link[strings.LastIndex(link, "/")+1:], "launch-token")
	g.Record("launch-link", r)
	g.Record("course-detail", ok(e.Do("GET", engine+"/courses/golden-course/detail", servertest.Root, nil), 200, "detail"))
	g.Record("course-configuration-list", ok(e.Do("GET", engine+"/courses/golden-course/configuration", servertest.Root, nil), 200, "course configuration"))
	g.Record("course-setting", ok(e.Do("GET", engine+"/courses/golden-course/configuration/xAPIEnabled", servertest.Root, nil), 200, "course setting"))

	// Registrations.
	regs := engine + "/registrations"
	ok(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "golden-course", "registrationId": "golden-reg",
		"xapiRegistrationId": "6f1c6b0a-5f52-4c5b-9e0b-1b2c3d4e5f60", "learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "create registration")
	g.Record("registration-list-empty", ok(e.Do("GET", regs+"?learnerId=nobody", servertest.Root, nil), 200, "no registrations"))
	g.Record("registration-list", ok(e.Do("GET", regs, servertest.Root, nil), 200, "registrations"))
	g.Record("registration-exists", ok(e.Do("GET", regs+"/golden-reg", servertest.Root, nil), 200, "registration exists"))
	g.Record("registration-last-instance", ok(e.Do("GET", regs+"/golden-reg/lastInstance", servertest.Root, nil), 200, "last instance"))
	g.Record("registration-xapi-registration-id", ok(e.Do("GET", regs+"/golden-reg/xapiRegistrationId", servertest.Root, nil), 200, "xAPI registration id"))
	g.Record("registration-progress", ok(e.Do("GET", regs+"/golden-reg/progress", servertest.Root, nil), 200, "progress"))
	g.Record("registration-progress-detail", ok(e.Do("GET", regs+"/golden-reg/progress/detail", servertest.Root, nil), 200, "progress detail"))
	g.Record("registration-configuration-list", ok(e.Do("GET", regs+"/golden-reg/configuration", servertest.Root, nil), 200, "registration configuration"))
	g.Record("registration-setting", ok(e.Do("GET", regs+"/golden-reg/configuration/xAPIEnabled", servertest.Root, nil), 200, "registration setting"))

	// Content service.
	g.Record("content-list-empty", ok(e.Do("GET", "/api/v1/content", servertest.Root, nil, th...), 200, "no content"))
	g.Record("course-list-empty", ok(e.Do("GET", engine+"/courses?since=2999-01-01", servertest.Root, nil), 200, "no courses since"))
	g.Record("search-empty", ok(e.Do("GET", "/api/v1/content/search?"+servertest.SQ("search_type", "LEXICAL", "term", "nothing").Encode(), servertest.Root, nil, th...), 200, "search without hits"))
	// Webhooks: a subscription whose receiver gets the import's JOB_PROCESSED message.
	hooks := servertest.NewHookReceiver(t, 0)
	r = ok(e.Do("POST", "/api/v1/app_management/subscription_auth", servertest.Root, map[string]any{"type": "BASIC_AUTH", "key": "hook-user", "secret": "hook-pass"}, th...), 201, "auth configuration")
	authID := servertest.RawID(t, r.Body, "auth_config_id")
	g.Vary(authID, "auth-config-id")
	g.Record("subscription-auth", r)
	g.Record("subscription-auth-list", ok(e.Do("GET", "/api/v1/app_management/subscription_auth", servertest.Root, nil, th...), 200, "auth configurations"))
	r = ok(e.Do("POST", "/api/v1/app_management/subscriptions", servertest.Root, map[string]any{"topic": "JOB_PROCESSED", "url": hooks.Srv.URL + "/hook", "auth_config_id": authID}, th...), 201, "subscribe")
	subID := servertest.RawID(t, r.Body, "subscription_id")
	g.Vary(subID, "subscription-id")
	g.Vary(servertest.RawID(t, r.Body, "signing_secret"), "signing-secret")
	g.Vary(hooks.Srv.URL, "receiver")
	g.Record("subscription", r)
	g.Record("subscription-list", ok(e.Do("GET", "/api/v1/app_management/subscriptions", servertest.Root, nil, th...), 200, "subscriptions"))
	r = ok(e.UploadContent(servertest.Root, ten, "content_id=garden&tag_id=garden", []byte(servertest.GardenMarkdown), "garden.md"), 202, "content import")
	job := servertest.RawID(t, r.Body, "id")
	g.Vary(job, "content-job")
	g.Record("job-pending", r)
	j := e.WaitContentJob(ten, r)
	if j.Status != "COMPLETED" {
		t.Fatalf("content import: %+v", j)
	}
	g.Record("job", ok(e.Do("GET", "/api/v1/jobs/"+job, servertest.Root, nil, th...), 200, "job"))
	g.Record("job-list", ok(e.Do("GET", "/api/v1/jobs?status=COMPLETED&type=CONTENT_IMPORT", servertest.Root, nil, th...), 200, "job list"))
	servertest.Eventually(t, 30*time.Second, "the JOB_PROCESSED delivery", func() bool { return len(hooks.Delivered()) > 0 })
	var msg struct {
		MessageID string `json:"message_id"`
	}
	_ = json.Unmarshal(hooks.Delivered()[0].Body, &msg)
	g.Vary(msg.MessageID, "message-id")
	servertest.Eventually(t, 30*time.Second, "the delivery log", func() bool {
		return strings.Contains(string(e.Do("GET", "/api/v1/app_management/subscriptions/"+subID+"/deliveries", servertest.Root, nil, th...).Body), msg.MessageID)
	})
	g.Record("subscription-deliveries", ok(e.Do("GET", "/api/v1/app_management/subscriptions/"+subID+"/deliveries", servertest.Root, nil, th...), 200, "delivery log"))
	// A version without tags has an empty tag list.
	j = e.WaitContentJob(ten, ok(e.UploadContent(servertest.Root, ten, "content_id=untagged", []byte(servertest.GardenMarkdown), "garden.md"), 202, "untagged import"))
	if j.Status != "COMPLETED" {
		t.Fatalf("content import: %+v", j)
	}
	g.Record("content-version-untagged", ok(e.Do("GET", "/api/v1/content/untagged/versions/1", servertest.Root, nil, th...), 200, "untagged version"))
	g.Record("content-list", ok(e.Do("GET", "/api/v1/content", servertest.Root, nil, th...), 200, "content list"))
	// Rebuilding the content index answers its job, which shows the progress.
	r = ok(e.Do("POST", "/api/v1/app_management/reindex", servertest.Root, nil), 202, "reindex")
	reindexJob := servertest.RawID(t, r.Body, "id")
	g.Vary(reindexJob, "reindex-job")
	g.Record("job-reindex-pending", r)
	servertest.Eventually(t, 90*time.Second, "reindex job", func() bool {
		return strings.Contains(string(ok(e.Do("GET", "/api/v1/jobs/"+reindexJob, servertest.Root, nil), 200, "reindex job").Body), `"COMPLETED"`)
	})
	g.Record("job-reindex", ok(e.Do("GET", "/api/v1/jobs/"+reindexJob, servertest.Root, nil), 200, "reindex job"))
	g.Record("content-version", ok(e.Do("GET", "/api/v1/content/garden/versions/1", servertest.Root, nil, th...), 200, "content version"))
	g.Record("content-version-update", ok(e.Do("PATCH", "/api/v1/content/garden/versions/1", servertest.Root, map[string]any{"tags": []string{"garden", "soil"}}, th...), 200, "content update"))
	g.Record("search-lexical", ok(e.Do("GET", "/api/v1/content/search?"+servertest.SQ("search_type", "LEXICAL", "term", "carrots", "content_id", "garden", "version", "1", "return_match", "true").Encode(), servertest.Root, nil, th...), 200, "search"))
	g.Record("search-lexical-snippet", ok(e.Do("GET", "/api/v1/content/search?"+servertest.SQ("search_type", "LEXICAL", "term", `"harvest carrots"`, "return_snippet", "true").Encode(), servertest.Root, nil, th...), 200, "search with snippets"))
	servertest.GoldenSkills(t, e, g, ten)

	// Record store.
	lrsBase := servertest.LRS + "/" + ten
	st := servertest.Statement("ann@example.com", "completed", "http://example.com/golden/a1")
	st["result"] = map[string]any{"score": map[string]any{"raw": 7}, "success": true, "completion": true, "duration": "PT1M"}
	r = ok(e.Do("POST", lrsBase+"/statements", servertest.Root, st, servertest.V200...), 200, "post statement")
	id := strings.Trim(string(regexp.MustCompile(`"[0-9a-f-]{36}"`).Find(r.Body)), `"`)
	g.Vary(id, "statement-id")
	g.Record("xapi-statement-ids", r)
	g.Record("xapi-statement", ok(e.Do("GET", lrsBase+"/statements?statementId="+id, servertest.Root, nil, servertest.V200...), 200, "get statement"))
	g.Record("xapi-statement-result-empty", ok(e.Do("GET", lrsBase+"/statements?verb="+url.QueryEscape("http://example.com/none"), servertest.Root, nil, servertest.V200...), 200, "query no statements"))
	g.Record("xapi-statement-result", ok(e.Do("GET", lrsBase+"/statements?limit=1", servertest.Root, nil, servertest.V200...), 200, "query statements"))
	agent := url.QueryEscape(`{"mbox":"mailto:ann@example.com"}`)
	act := url.QueryEscape("http://example.com/golden/a1")
	state := lrsBase + "/activities/state?activityId=" + act + "&agent=" + agent
	ok(e.Do("PUT", state+"&stateId=bookmark", servertest.Root, map[string]any{"page": 3}, servertest.V200...), 204, "put state")
	g.Record("xapi-document", ok(e.Do("GET", state+"&stateId=bookmark", servertest.Root, nil, servertest.V200...), 200, "get state"))
	g.Record("xapi-document-ids", ok(e.Do("GET", state, servertest.Root, nil, servertest.V200...), 200, "list state ids"))
	g.Record("xapi-document-ids-empty", ok(e.Do("GET", lrsBase+"/activities/profile?activityId="+act, servertest.Root, nil, servertest.V200...), 200, "list no profile ids"))
	g.Record("xapi-activity", ok(e.Do("GET", lrsBase+"/activities?activityId="+act, servertest.Root, nil, servertest.V200...), 200, "activity"))
	g.Record("xapi-person", ok(e.Do("GET", lrsBase+"/agents?agent="+agent, servertest.Root, nil, servertest.V200...), 200, "agents"))
	g.Record("xapi-about", ok(e.Do("GET", servertest.LRS+"/about", servertest.NoAuth, nil), 200, "about"))
	g.Record("xapi-report-results", ok(e.Do("GET", lrsBase+"/Report/results?activity="+act, servertest.Root, nil, servertest.V103...), 200, "report results"))
	g.Record("xapi-report-activities", ok(e.Do("GET", lrsBase+"/Report/activities", servertest.Root, nil, servertest.V103...), 200, "report activities"))
	g.Record("xapi-report-actors", ok(e.Do("GET", lrsBase+"/Report/actors", servertest.Root, nil, servertest.V103...), 200, "report actors"))
	g.Record("xapi-report-results-agent", ok(e.Do("GET", lrsBase+"/Report/results?agent="+agent, servertest.Root, nil, servertest.V103...), 200, "report results of an agent"))
	g.Record("xapi-report-activities-agent", ok(e.Do("GET", lrsBase+"/Report/activities?agent="+agent, servertest.Root, nil, servertest.V103...), 200, "report activities of an agent"))
	g.Record("xapi-report-actors-activity", ok(e.Do("GET", lrsBase+"/Report/actors?activity="+act, servertest.Root, nil, servertest.V103...), 200, "report actors of an activity"))
	g.Record("xapi-report-results-not-found", ok(e.Do("GET", lrsBase+"/Report/results?activity="+url.QueryEscape("http://example.com/none"), servertest.Root, nil, servertest.V103...), 404, "report results: nothing matches"))
	g.Record("xapi-report-actors-not-found", ok(e.Do("GET", lrsBase+"/Report/actors?activity="+url.QueryEscape("http://example.com/none"), servertest.Root, nil, servertest.V103...), 404, "report actors: nothing matches"))
	g.Record("xapi-report-bad-more", ok(e.Do("GET", lrsBase+"/Report/actors?more=garbage", servertest.Root, nil, servertest.V103...), 400, "report actors: bad continuation"))

	// Statement forwarding pairs (disabled, so the status stays empty).
	fwd := app + "/" + ten + "/forwarding_pairs"
	g.Record("forward-pair-list-empty", ok(e.Do("GET", fwd, servertest.Root, nil), 200, "list no pairs"))
	g.Record("forward-pair", ok(e.Do("POST", fwd, servertest.Root, map[string]any{"id": "golden-pair", "enabled": false,
		"source_query": "verb=http://adlnet.gov/expapi/verbs/completed", "destination_url": "https://lrs.example.com/xapi",
		"destination_credentials": map[string]any{"username": "fwd", "password": "fwd-secret"}}), 201, "create pair"))
	g.Record("forward-pair-update", ok(e.Do("PUT", fwd+"/golden-pair", servertest.Root, map[string]any{"enabled": false,
		"destination_url": "https://lrs.example.com/xapi2", "destination_credentials": map[string]any{"username": "fwd2"}}), 200, "update pair"))
	g.Record("forward-pair-list", ok(e.Do("GET", fwd, servertest.Root, nil), 200, "list pairs"))

	// Deleting the tenant answers its job.
	r = ok(e.Do("DELETE", app+"/"+ten, servertest.Root, nil), 202, "delete tenant")
	g.Vary(servertest.RawID(t, r.Body, "id"), "deletion-job")
	g.Record("job-deletion", r)
}
