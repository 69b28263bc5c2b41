package console_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// postStatements stores statements in a tenant's record store and returns their ids.
func postTenantStatements(e *servertest.Env, tenantID string, a servertest.Auth, sts ...map[string]any) []string {
	e.T.Helper()
	r := e.Do("POST", servertest.LRS+"/"+tenantID+"/statements", a, sts, servertest.V103...)
	e.Expect(r, 200, "post statements")
	var ids []string
	r.JSON(e.T, &ids)
	return ids
}

// TestConsoleRecordPages: the statement viewer filters by verb, agent (mbox and account),
// activity and registration, pages with more, shows a statement's JSON indented and escaped
// and its voided state; the jobs list and a job page; webhooks: authentication
// configurations and subscriptions created and deleted through forms (the signing secret
// shown once, no auth secret ever), the API's messages on the page, and a delivery log. A
// tenant credential sees its own tenant only.
func TestConsoleRecordPages(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		const ten = "crec"
		e.CreateTenant(ten, true)
		e.CreateTenant("crec-other", true)
		key, secret := e.Credential(ten)
		a := servertest.Basic(key, secret)
		reg := "a1b2c3d4-0000-4000-8000-000000000001"
		s1 := servertest.Statement("ann@example.com", "completed", "http://example.com/act/1")
		s1["context"] = map[string]any{"registration": reg}
		s2 := servertest.Statement("bob@example.com", "attempted", "http://example.com/act/2")
		s3 := servertest.Statement("ann@example.com", "attempted", "http://example.com/act/3")
		s3["object"].(map[string]any)["definition"] = map[string]any{"name": map[string]any{"en-US": "<b>Three</b>"}}
		s4 := map[string]any{"actor": map[string]any{"account": map[string]any{"homePage": "https://sso.example.com", "name": "carol"}},
			"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/passed", "display": map[string]any{"en-US": "passed"}},
			"object": map[string]any{"id": "http://example.com/act/4"}}
		ids := postTenantStatements(e, ten, a, s1, s2, s3, s4)
		postTenantStatements(e, "crec-other", servertest.Root, servertest.Statement("ann@example.com", "failed", "http://example.com/act/9"))

		cc := &servertest.ConsoleClient{T: t, E: e}
		cc.SignIn(key, secret)
		if p := cc.Send("GET", "/console/t/"+ten+"/", nil); p.Status != 303 || p.Header.Get("Location") != "/console/t/"+ten+"/courses" {
			t.Fatalf("tenant home: %d %s", p.Status, p.Header.Get("Location"))
		}
		base := "/console/t/" + ten + "/statements"
		p := cc.Send("GET", base, nil)
		servertest.WantPage(t, p, 200, `<a href="/console/t/crec/statements" aria-current="page">Statements</a>`,
			`<th scope="col">Actor</th>`, `<tr id="st-`+ids[0]+`">`, `<td>ann@example.com</td>`, `<td title="http://adlnet.gov/expapi/verbs/completed">completed</td>`,
			`<td>carol</td>`, `<td title="http://example.com/act/4">http://example.com/act/4</td>`)
		if strings.Contains(p.Body, "act/9") {
			t.Fatal("another tenant's statement is listed")
		}
		rows := func(p servertest.ConsolePage) int { return strings.Count(p.Body, `<tr id="st-`) }
		for q, want := range map[string][]string{
			"verb=" + url.QueryEscape("http://adlnet.gov/expapi/verbs/attempted"): {ids[1], ids[2]},
			"mbox=ann%40example.com": {ids[0], ids[2]},
			"mbox=mailto%3Aann%40example.com&verb=" + url.QueryEscape("http://adlnet.gov/expapi/verbs/completed"): {ids[0]},
			"account_home=" + url.QueryEscape("https://sso.example.com") + "&account_name=carol":                  {ids[3]},
			"activity=" + url.QueryEscape("http://example.com/act/2"):                                             {ids[1]},
			"registration=" + reg: {ids[0]},
		} {
			p := cc.Send("GET", base+"?"+q, nil)
			servertest.WantPage(t, p, 200)
			for _, id := range want {
				if !strings.Contains(p.Body, `<tr id="st-`+id+`">`) {
					t.Fatalf("%s: statement %s missing", q, id)
				}
			}
			if rows(p) != len(want) {
				t.Fatalf("%s: %d rows, want %d", q, rows(p), len(want))
			}
		}
		// The form keeps the filter; a bad filter is the record store's 400 on the page.
		servertest.WantPage(t, cc.Send("GET", base+"?verb=not+an+iri", nil), 400, `<p role="alert" class="error">`, `value="not an iri"`)
		servertest.WantPage(t, cc.Send("GET", base+"?mbox=x%40example.com&account_name=carol", nil), 400, "either by its e-mail (mbox) or by its account")
		// Paging: two a page, then the rest through the record store's more token.
		p = cc.Send("GET", base+"?limit=2", nil)
		servertest.WantPage(t, p, 200, `id="more" rel="next"`)
		if rows(p) != 2 {
			t.Fatalf("page 1: %d rows", rows(p))
		}
		i := strings.Index(p.Body, `<a href="/console/t/crec/statements?more=`)
		if i < 0 {
			t.Fatalf("no more link: %s", p.Body)
		}
		next := p.Body[i+len(`<a href="`):]
		next = strings.ReplaceAll(next[:strings.Index(next, `"`)], "&amp;", "&")
		p2 := cc.Send("GET", next, nil)
		servertest.WantPage(t, p2, 200)
		if rows(p2) != 2 {
			t.Fatalf("page 2: %d rows", rows(p2))
		}
		for _, id := range ids {
			if strings.Contains(p.Body, `<tr id="st-`+id+`">`) == strings.Contains(p2.Body, `<tr id="st-`+id+`">`) {
				t.Fatalf("statement %s is on both pages or neither", id)
			}
		}
		// One statement: indented JSON, escaped, not voided; then voided.
		p = cc.Send("GET", base+"/"+ids[2], nil)
		servertest.WantPage(t, p, 200, `<pre class="json" id="statement-json"`, "{\n  &#34;", `&lt;b&gt;Three&lt;/b&gt;`, `<span class="ok">not voided</span>`)
		if strings.Contains(p.Body, "<b>Three</b>") {
			t.Fatal("statement JSON is not escaped")
		}
		postTenantStatements(e, ten, a, map[string]any{"actor": map[string]any{"mbox": "mailto:admin@example.com"},
			"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/voided", "display": map[string]any{"en-US": "voided"}},
			"object": map[string]any{"objectType": "StatementRef", "id": ids[2]}})
		servertest.WantPage(t, cc.Send("GET", base+"/"+ids[2], nil), 200, `<span class="off">voided</span>`, ids[2])
		servertest.WantPage(t, cc.Send("GET", base+"/a1b2c3d4-0000-4000-8000-00000000ffff", nil), 404, "statement &#39;a1b2c3d4-0000-4000-8000-00000000ffff&#39; not found")
		servertest.WantPage(t, cc.Send("GET", "/console/t/crec-other/statements", nil), 403, "cannot access tenant")
		// Root reads any tenant's record store with its own credentials.
		rc := &servertest.ConsoleClient{T: t, E: e}
		rc.SignIn(servertest.RootUser, servertest.RootPass)
		p = rc.Send("GET", "/console/t/crec-other/statements", nil)
		servertest.WantPage(t, p, 200, `<td title="http://adlnet.gov/expapi/verbs/failed">failed</td>`)
		if rows(p) != 1 {
			t.Fatalf("root's view of another tenant: %d rows", rows(p))
		}

		// Jobs.
		job := e.WaitContentJob(ten, e.UploadContent(servertest.Root, ten, "content_id=broken", []byte("%PDF-1.4 not really a pdf"), "broken.pdf"))
		p = cc.Send("GET", "/console/t/"+ten+"/jobs", nil)
		servertest.WantPage(t, p, 200, `<tr id="job-`+job.ID+`">`, `<td>CONTENT_IMPORT</td>`, `<td class="status">FAILED</td>`, `<span class="error">`+job.Error.Code+`</span>`)
		servertest.WantPage(t, cc.Send("GET", "/console/t/"+ten+"/jobs?status=COMPLETED", nil), 200, `<td colspan="6">No jobs.</td>`, `<option selected>COMPLETED</option>`)
		servertest.WantPage(t, cc.Send("GET", "/console/t/"+ten+"/jobs?status=FAILED&type=CONTENT_IMPORT", nil), 200, `<tr id="job-`+job.ID+`">`)
		servertest.WantPage(t, cc.Send("GET", "/console/t/"+ten+"/jobs?status=DONE", nil), 400, "status must be")
		servertest.WantPage(t, cc.Send("GET", "/console/t/"+ten+"/jobs/"+job.ID, nil), 200, `<dd id="job-status">FAILED</dd>`, `<dd id="job-error">`, `<div id="job-detail" aria-live="polite">`)
		// A running job's page refreshes its detail with htmx, which gets that part alone.
		if p := cc.Send("GET", "/console/t/"+ten+"/jobs/"+job.ID, nil, "HX-Request", "true"); !strings.HasPrefix(strings.TrimSpace(p.Body), `<div id="job-detail"`) || strings.Contains(p.Body, "<html") {
			t.Fatalf("job detail for htmx: %s", p.Body)
		}
		servertest.WantPage(t, cc.Send("GET", "/console/t/"+ten+"/jobs/nope", nil), 404, "job &#39;nope&#39; not found")

		// Webhooks.
		hooks := "/console/t/" + ten + "/webhooks"
		servertest.WantPage(t, cc.Send("GET", hooks, nil), 200, `<td colspan="6">No subscriptions.</td>`, `<td colspan="7">No authentication configurations.</td>`, `<p id="need-auth">`)
		servertest.WantPage(t, cc.Send("POST", hooks+"/auth", url.Values{"type": {"BASIC_AUTH"}, "key": {"hook-user"}}), 400, `<p role="alert" class="error">`, `value="hook-user"`)
		p = cc.Send("POST", hooks+"/auth", url.Values{"type": {"BASIC_AUTH"}, "key": {"hook-user"}, "secret": {"hook-pass-123"}})
		if p.Status != 303 || p.Header.Get("Location") != hooks+"?done=auth" {
			t.Fatalf("create auth: %d %s %s", p.Status, p.Header.Get("Location"), p.Body)
		}
		p = cc.Send("GET", hooks+"?done=auth", nil)
		servertest.WantPage(t, p, 200, "The authentication configuration was created.", `<td>BASIC_AUTH</td><td>hook-user</td>`)
		if strings.Contains(p.Body, "hook-pass-123") {
			t.Fatal("an auth secret is shown")
		}
		var authID string
		if i := strings.Index(p.Body, `<tr id="auth-`); i >= 0 {
			authID = p.Body[i+len(`<tr id="auth-`):]
			authID = authID[:strings.Index(authID, `"`)]
		}
		rec := servertest.NewHookReceiver(t, 0)
		servertest.WantPage(t, cc.Send("POST", hooks+"/subscriptions", url.Values{"topic": {"JOB_PROCESSED"}, "url": {"gopher://127.0.0.1/"}, "auth_config_id": {authID}}), 400,
			`<p role="alert" class="error">`, `value="gopher://127.0.0.1/"`)
		p = cc.Send("POST", hooks+"/subscriptions", url.Values{"topic": {"JOB_PROCESSED"}, "url": {rec.Srv.URL + "/hook"}, "auth_config_id": {authID}})
		servertest.WantPage(t, p, 201, `<code id="signing-secret">`, "shown once")
		i = strings.Index(p.Body, `<code id="created-id">`)
		subID := p.Body[i+len(`<code id="created-id">`):]
		subID = subID[:strings.Index(subID, "<")]
		p = cc.Send("GET", hooks, nil)
		servertest.WantPage(t, p, 200, `<tr id="sub-`+subID+`">`, `<td>JOB_PROCESSED</td><td><code>`+rec.Srv.URL+`/hook</code></td>`)
		if strings.Contains(p.Body, "signing-secret") {
			t.Fatal("the signing secret is shown again")
		}
		servertest.WantPage(t, cc.Send("GET", hooks+"/subscriptions/"+subID, nil), 200, `<td colspan="5">No deliveries yet.</td>`, `hx-trigger="every 2s"`)
		servertest.WantPage(t, cc.Send("POST", hooks+"/auth/"+authID+"/delete", nil), 409, `<p role="alert" class="error">`)
		e.WaitContentJob(ten, e.UploadContent(servertest.Root, ten, "content_id=broken2", []byte("%PDF-1.4 still not a pdf"), "broken.pdf"))
		var d []servertest.HookRequest
		servertest.Eventually(t, 30*time.Second, "the delivery", func() bool { d = rec.All(); return len(d) > 0 })
		mid := servertest.MessageID(t, d[0].Body)
		servertest.Eventually(t, 30*time.Second, "the logged delivery", func() bool { return len(e.Deliveries(ten, subID)) > 0 })
		// htmx gets the table alone.
		p = cc.Send("GET", hooks+"/subscriptions/"+subID, nil, "HX-Request", "true")
		servertest.WantPage(t, p, 200, `<table id="delivery-table">`, `<code>`+mid+`</code>`, `<td class="status">204`)
		if strings.Contains(p.Body, "<html") {
			t.Error("an htmx refresh got a whole page")
		}
		if p := cc.Send("POST", hooks+"/subscriptions/"+subID+"/delete", nil); p.Status != 303 {
			t.Fatalf("delete subscription: %d %s", p.Status, p.Body)
		}
		servertest.WantPage(t, cc.Send("GET", hooks+"?done=deleted", nil), 200, "The subscription was deleted.", `<td colspan="6">No subscriptions.</td>`)
		if p := cc.Send("POST", hooks+"/auth/"+authID+"/delete", nil); p.Status != 303 {
			t.Fatalf("delete auth: %d %s", p.Status, p.Body)
		}
		servertest.WantPage(t, cc.Send("GET", "/console/t/crec-other/webhooks", nil), 403, "cannot access tenant")
	})
}
