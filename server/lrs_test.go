package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const lrs = "/lrs/TCAPI"

var (
	v103 = []string{"X-Experience-API-Version", "1.0.3"}
	v200 = []string{"X-Experience-API-Version", "2.0.0"}
)

func hdr(version []string, more ...string) []string {
	return append(append([]string{}, version...), more...)
}

func newUUID(i int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", time.Now().UnixNano()&0xffffffff, i)
}

func statement(actor, verb, object string) map[string]any {
	return map[string]any{"actor": map[string]any{"mbox": "mailto:" + actor},
		"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/" + verb, "display": map[string]any{"en-US": verb}},
		"object": map[string]any{"id": object, "definition": map[string]any{"name": map[string]any{"en-US": "Activity", "de-DE": "Aktivität"}}}}
}

type statementResult struct {
	Statements []map[string]any `json:"statements"`
	More       string           `json:"more"`
}

func (e *env) query(path string, a auth, version []string) statementResult {
	e.t.Helper()
	r := e.do("GET", path, a, nil, version...)
	e.expect(r, 200, "GET "+path)
	var res statementResult
	r.json(e.t, &res)
	return res
}

func TestLRSStatements(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		base := lrs + "/acme/statements"

		// Attachments travel as application/json (fileUrl) or multipart/mixed only (XAPI-00127).
		withFile := statement("ann@example.com", "attempted", "http://example.com/a0")
		withFile["attachments"] = []any{map[string]any{"usageType": "http://example.com/usage", "display": map[string]any{"en-US": "file"},
			"contentType": "text/plain", "length": 4, "sha2": strings.Repeat("a", 64), "fileUrl": "http://example.com/file.txt"}}
		for ct, want := range map[string]int{"multipart/form-data; boundary=x": 400, "text/plain": 400, "application/json": 200} {
			e.expect(e.do("POST", base, root, withFile, hdr(v200, "Content-Type", ct)...), want, "attachment statement as "+ct)
		}

		// POST one statement: 200 with its id; the LRS headers are there.
		r := e.do("POST", base, root, statement("ann@example.com", "attempted", "http://example.com/a1"), v200...)
		e.expect(r, 200, "post statement")
		var ids []string
		r.json(t, &ids)
		if len(ids) != 1 || len(ids[0]) != 36 {
			t.Fatalf("ids: %s", r.Body)
		}
		for _, h := range []string{"X-Experience-API-Version", "X-Experience-API-Consistent-Through"} {
			if r.Header.Get(h) == "" {
				t.Errorf("POST response without %s", h)
			}
		}
		if r.Header.Get("X-Experience-API-Version") != "2.0.0" {
			t.Errorf("version header %q", r.Header.Get("X-Experience-API-Version"))
		}

		// GET by id: the stored statement with LRS-owned properties, Last-Modified = stored.
		r = e.do("GET", base+"?statementId="+ids[0], root, nil, v200...)
		e.expect(r, 200, "get by id")
		var st map[string]any
		r.json(t, &st)
		if st["id"] != ids[0] || st["stored"] == nil || st["authority"] == nil || st["version"] != "2.0.0" {
			t.Fatalf("stored statement: %s", r.Body)
		}
		if _, err := http.ParseTime(r.Header.Get("Last-Modified")); err != nil {
			t.Errorf("Last-Modified %q: %v", r.Header.Get("Last-Modified"), err)
		}
		if h := e.do("HEAD", base+"?statementId="+ids[0], root, nil, v200...); h.Status != 200 || len(h.Body) != 0 || h.Header.Get("Last-Modified") == "" {
			t.Errorf("HEAD statement: %d %q %v", h.Status, h.Body, h.Header)
		}

		// PUT with an id: 204; the same again is a no-op; different content is 409.
		id := newUUID(1)
		s1 := statement("bob@example.com", "completed", "http://example.com/a2")
		e.expect(e.do("PUT", base+"?statementId="+id, root, s1, v103...), 204, "put")
		e.expect(e.do("PUT", base+"?statementId="+id, root, s1, v103...), 204, "put same again")
		e.expect(e.do("PUT", base+"?statementId="+id, root, statement("bob@example.com", "failed", "http://example.com/a2"), v103...), 409, "put different")
		e.expect(e.do("PUT", base, root, s1, v103...), 400, "put without statementId")
		r = e.do("PUT", base+"?statementId="+newUUID(2), root, map[string]any{"id": newUUID(3), "actor": s1["actor"], "verb": s1["verb"], "object": s1["object"]}, v103...)
		e.expect(r, 400, "put with another id in the body")

		// Validation names the offending property.
		bad := statement("carl@example.com", "attempted", "http://example.com/a3")
		bad["actor"] = map[string]any{"mbox": "carl@example.com"}
		r = e.do("POST", base, root, bad, v200...)
		e.expect(r, 400, "bad mbox")
		if !strings.Contains(r.message(), "actor.mbox") {
			t.Errorf("message does not name actor.mbox: %q", r.message())
		}
		// A batch is atomic: one bad statement stores nothing.
		good := statement("dora@example.com", "attempted", "http://example.com/batch")
		good["id"] = newUUID(4)
		e.expect(e.do("POST", base, root, []any{good, bad}, v200...), 400, "bad batch")
		e.expect(e.do("GET", base+"?statementId="+good["id"].(string), root, nil, v200...), 404, "batch statement not stored")

		// Version header and parameters.
		e.expect(e.do("GET", base, root, nil), 400, "no version header")
		e.expect(e.do("GET", base, root, nil, "X-Experience-API-Version", "0.9"), 400, "old version")
		e.expect(e.do("GET", base+"?Limit=1", root, nil, v200...), 400, "wrong-case parameter")
		e.expect(e.do("GET", base+"?foo=1", root, nil, v200...), 400, "unknown parameter")
		e.expect(e.do("GET", base+"?statementId="+id+"&verb=http://x.y/z", root, nil, v200...), 400, "statementId with a filter")
		e.expect(e.do("GET", base+"?format=full", root, nil, v200...), 400, "bad format")
		e.expect(e.do("GET", base+"?since=yesterday", root, nil, v200...), 400, "bad since")
		e.expect(e.do("GET", base+"?statementId=nope", root, nil, v200...), 400, "bad id")

		// Paging with more: a relative URL with the tenant segment that carries the filters.
		for i := 0; i < 5; i++ {
			e.expect(e.do("POST", base, root, statement("pat@example.com", "experienced", fmt.Sprintf("http://example.com/page/%d", i)), v200...), 200, "post page statement")
		}
		agent := url.QueryEscape(`{"mbox":"mailto:pat@example.com"}`)
		res := e.query(base+"?agent="+agent+"&limit=2", root, v200)
		seen := map[string]bool{}
		pages := 0
		for {
			pages++
			for _, s := range res.Statements {
				seen[s["id"].(string)] = true
			}
			if res.More == "" {
				break
			}
			if !strings.HasPrefix(res.More, lrs+"/acme/statements?more=") {
				t.Fatalf("more %q is not relative to the tenant's statements resource", res.More)
			}
			res = e.query(res.More, root, v200)
		}
		if len(seen) != 5 || pages < 3 {
			t.Fatalf("paging saw %d statements in %d pages", len(seen), pages)
		}
		res = e.query(base+"?agent="+agent+"&limit=0", root, v200)
		if len(res.Statements) != 5 || res.More != "" {
			t.Errorf("limit=0 (server max): %d statements, more %q", len(res.Statements), res.More)
		}
		res = e.query(base+"?verb="+url.QueryEscape("http://adlnet.gov/expapi/verbs/experienced")+"&ascending=true&format=ids", root, v200)
		if len(res.Statements) != 5 {
			t.Fatalf("verb filter: %d", len(res.Statements))
		}
		if _, hasDef := res.Statements[0]["object"].(map[string]any)["definition"]; hasDef {
			t.Errorf("format=ids kept the activity definition: %v", res.Statements[0])
		}

		// Voiding: the voided statement moves to voidedStatementId.
		void := map[string]any{"actor": map[string]any{"mbox": "mailto:admin@example.com"},
			"verb": map[string]any{"id": "http://adlnet.gov/expapi/verbs/voided"}, "object": map[string]any{"objectType": "StatementRef", "id": id}}
		e.expect(e.do("POST", base, root, void, v200...), 200, "void")
		e.expect(e.do("GET", base+"?statementId="+id, root, nil, v200...), 404, "voided by statementId")
		e.expect(e.do("GET", base+"?voidedStatementId="+id, root, nil, v200...), 200, "voided by voidedStatementId")
		e.expect(e.do("GET", base+"?voidedStatementId="+ids[0], root, nil, v200...), 404, "not voided by voidedStatementId")

		// Attachments: multipart/mixed in, multipart/mixed out with attachments=true.
		content := []byte("hello attachment")
		sum := sha256.Sum256(content)
		sha := hex.EncodeToString(sum[:])
		withAtt := statement("eve@example.com", "attempted", "http://example.com/att")
		withAtt["id"] = newUUID(5)
		withAtt["attachments"] = []any{map[string]any{"usageType": "http://example.com/usage", "display": map[string]any{"en-US": "note"},
			"contentType": "text/plain", "length": len(content), "sha2": sha}}
		js, _ := json.Marshal(withAtt)
		body := "--xyz\r\nContent-Type: application/json\r\n\r\n" + string(js) + "\r\n--xyz\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: binary\r\nX-Experience-API-Hash: " + sha + "\r\n\r\n" + string(content) + "\r\n--xyz--\r\n"
		e.expect(e.do("POST", base, root, body, hdr(v200, "Content-Type", "multipart/mixed; boundary=xyz")...), 200, "post with attachment")
		r = e.do("GET", base+"?statementId="+withAtt["id"].(string)+"&attachments=true", root, nil, v200...)
		e.expect(r, 200, "get with attachments")
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/mixed") || !strings.Contains(string(r.Body), "hello attachment") {
			t.Errorf("attachments=true: %s %q", r.Header.Get("Content-Type"), r.Body)
		}
		// The attachment without its part is refused.
		e.expect(e.do("POST", base, root, withAtt, v200...), 400, "attachment without part")
	})
}

func TestLRSDocuments(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("docs", true)
		agent := url.QueryEscape(`{"objectType":"Agent","mbox":"mailto:ann@example.com"}`)
		act := url.QueryEscape("http://example.com/activity/1")
		state := lrs + "/docs/activities/state?activityId=" + act + "&agent=" + agent
		one := state + "&stateId=s1"

		e.expect(e.do("GET", one, root, nil, v200...), 404, "absent state")
		e.expect(e.do("PUT", one, root, map[string]any{"a": 1, "b": 2}, v200...), 204, "put state")
		r := e.do("GET", one, root, nil, v200...)
		e.expect(r, 200, "get state")
		etag := r.Header.Get("ETag")
		if !strings.HasPrefix(etag, `"`) || r.Header.Get("Last-Modified") == "" {
			t.Fatalf("ETag %q, Last-Modified %q", etag, r.Header.Get("Last-Modified"))
		}
		if h := e.do("HEAD", one, root, nil, v200...); h.Status != 200 || h.Header.Get("ETag") != etag {
			t.Errorf("HEAD state: %d %v", h.Status, h.Header)
		}
		// 2.0: a PUT over an existing document without a precondition is a conflict.
		e.expect(e.do("PUT", one, root, map[string]any{"x": 1}, v200...), 409, "put without precondition")
		e.expect(e.do("PUT", one, root, map[string]any{"x": 1}, hdr(v200, "If-Match", `"wrong"`)...), 412, "wrong If-Match")
		e.expect(e.do("PUT", one, root, map[string]any{"x": 1}, hdr(v200, "If-None-Match", "*")...), 412, "If-None-Match on existing")
		// POST merges JSON objects at the top level.
		e.expect(e.do("POST", one, root, map[string]any{"b": 3, "c": 4}, hdr(v200, "If-Match", etag)...), 204, "merge")
		r = e.do("GET", one, root, nil, v200...)
		var merged map[string]float64
		r.json(t, &merged)
		if merged["a"] != 1 || merged["b"] != 3 || merged["c"] != 4 {
			t.Fatalf("merged: %s", r.Body)
		}
		e.expect(e.do("POST", one, root, "[1,2]", v200...), 400, "merge non-object")
		// Listing ids and deleting.
		e.expect(e.do("PUT", state+"&stateId=s2", root, "plain text", hdr(v103, "Content-Type", "text/plain")...), 204, "put text state (1.0.3)")
		r = e.do("GET", state, root, nil, v200...)
		var list []string
		r.json(t, &list)
		if len(list) != 2 {
			t.Fatalf("state ids: %s", r.Body)
		}
		r = e.do("GET", state+"&stateId=s2", root, nil, v200...)
		if string(r.Body) != "plain text" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("text state: %q %s", r.Body, r.Header.Get("Content-Type"))
		}
		e.expect(e.do("DELETE", state, root, nil, v200...), 204, "delete all states")
		e.expect(e.do("GET", one, root, nil, v200...), 404, "state deleted")
		e.expect(e.do("GET", lrs+"/docs/activities/state?activityId="+act, root, nil, v200...), 400, "state without agent")
		e.expect(e.do("GET", state+"&registration=nope", root, nil, v200...), 400, "bad registration")

		// Activity profile: 1.0.3 requires a precondition on PUT.
		prof := lrs + "/docs/activities/profile?activityId=" + act + "&profileId=p1"
		e.expect(e.do("PUT", prof, root, map[string]any{"p": 1}, v103...), 400, "1.0.3 profile PUT without precondition")
		e.expect(e.do("PUT", prof, root, map[string]any{"p": 1}, hdr(v103, "If-None-Match", "*")...), 204, "profile PUT If-None-Match")
		e.expect(e.do("PUT", prof, root, map[string]any{"p": 2}, v103...), 409, "profile PUT over existing")
		e.expect(e.do("DELETE", prof, root, nil, hdr(v200, "If-Match", `"nope"`)...), 412, "delete with wrong etag")
		e.expect(e.do("DELETE", prof, root, nil, v200...), 204, "delete profile")

		// Agent profile.
		ap := lrs + "/docs/agents/profile?agent=" + agent + "&profileId=p"
		e.expect(e.do("POST", ap, root, map[string]any{"k": "v"}, v200...), 204, "post agent profile")
		r = e.do("GET", lrs+"/docs/agents/profile?agent="+agent, root, nil, v200...)
		e.expect(r, 200, "list agent profiles")
		if !strings.Contains(string(r.Body), `"p"`) {
			t.Errorf("agent profile ids: %s", r.Body)
		}
		e.expect(e.do("GET", lrs+"/docs/agents/profile?agent="+url.QueryEscape(`{"mbox":"ann@example.com"}`), root, nil, v200...), 400, "bad agent")
	})
}

func TestLRSActivitiesAgentsAbout(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("misc", true)
		// About is public, needs no version header and lists both versions.
		r := e.do("GET", lrs+"/misc/about", noAuth, nil)
		e.expect(r, 200, "about")
		var about struct{ Version []string }
		r.json(t, &about)
		if strings.Join(about.Version, ",") != "1.0.3,2.0.0" || r.Header.Get("X-Experience-API-Version") == "" {
			t.Fatalf("about: %s %v", r.Body, r.Header)
		}
		e.expect(e.do("GET", lrs+"/about", noAuth, nil), 200, "about without tenant")
		e.expect(e.do("GET", lrs+"/about?x=1", noAuth, nil), 400, "about with unknown parameter")

		e.expect(e.do("POST", lrs+"/misc/statements", root, statement("ann@example.com", "attempted", "http://example.com/act"), v200...), 200, "post")
		r = e.do("GET", lrs+"/misc/activities?activityId="+url.QueryEscape("http://example.com/act"), root, nil, v200...)
		e.expect(r, 200, "activity")
		if !strings.Contains(string(r.Body), "Aktivität") {
			t.Errorf("activity definition not kept: %s", r.Body)
		}
		r = e.do("GET", lrs+"/misc/activities?activityId="+url.QueryEscape("http://example.com/unknown"), root, nil, v200...)
		e.expect(r, 200, "unknown activity")
		e.expect(e.do("GET", lrs+"/misc/activities", root, nil, v200...), 400, "activities without activityId")

		r = e.do("GET", lrs+"/misc/agents?agent="+url.QueryEscape(`{"mbox":"mailto:ann@example.com","name":"Ann"}`), root, nil, v200...)
		e.expect(r, 200, "agents")
		var person map[string]any
		r.json(t, &person)
		if person["objectType"] != "Person" {
			t.Errorf("person: %s", r.Body)
		}
		if h := e.do("HEAD", lrs+"/misc/agents?agent="+url.QueryEscape(`{"mbox":"mailto:ann@example.com"}`), root, nil, v200...); h.Status != 200 || len(h.Body) != 0 {
			t.Errorf("HEAD agents: %d", h.Status)
		}
	})
}

func TestLRSVersionsAndAlternateSyntax(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("alt", true)
		base := lrs + "/alt/statements"
		id := newUUID(9)
		js, _ := json.Marshal(statement("ann@example.com", "attempted", "http://example.com/alt"))
		form := url.Values{"statementId": {id}, "content": {string(js)}, "X-Experience-API-Version": {"1.0.3"},
			"Authorization": {root.header}, "Content-Type": {"application/json"}}
		// 1.0.3: POST ?method=PUT with the headers in the form.
		r := e.do("POST", base+"?method=PUT", noAuth, form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
		e.expect(r, 204, "alternate PUT")
		if r.Header.Get("X-Experience-API-Version") != "1.0.3" {
			t.Errorf("alternate syntax answered version %q", r.Header.Get("X-Experience-API-Version"))
		}
		r = e.do("POST", base+"?method=GET", root, url.Values{"statementId": {id}}.Encode(), hdr(v103, "Content-Type", "application/x-www-form-urlencoded")...)
		e.expect(r, 200, "alternate GET")
		var st map[string]any
		r.json(t, &st)
		if st["version"] != "1.0.0" {
			t.Errorf("1.0.3 statement version %v", st["version"])
		}
		e.expect(e.do("POST", base+"?method=PUT&statementId="+id, root, form.Encode(), hdr(v103, "Content-Type", "application/x-www-form-urlencoded")...), 400, "extra query parameter")
		e.expect(e.do("POST", base+"?method=PUT", root, string(js), hdr(v103, "Content-Type", "application/json")...), 400, "alternate without a form")
		// 2.0.0 rejects the alternate syntax.
		form.Set("X-Experience-API-Version", "2.0.0")
		form.Set("statementId", newUUID(10))
		e.expect(e.do("POST", base+"?method=PUT", noAuth, form.Encode(), "Content-Type", "application/x-www-form-urlencoded"), 400, "alternate under 2.0")
		// The same body is validated by the rules of the request's version.
		e.expect(e.do("GET", base+"?statementId="+id, root, nil, "X-Experience-API-Version", "1.0"), 200, "1.0 header")
		e.expect(e.do("GET", base+"?statementId="+id, root, nil, "X-Experience-API-Version", "2.0"), 200, "2.0 header")
	})
}

func TestLRSPermissionsAndTenants(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("one", true)
		e.createTenant("two", true)
		key, secret := e.credential("one")
		setting := func(tn, id, v string) {
			e.expect(e.do("PUT", "/engine/api/v1/"+tn+"/configuration/"+id, root, map[string]any{"value": v}), 204, "set "+id)
		}
		setting("one", "TinCanBasicAccounts", "viewer:view-pass:readonly,\nlearner:learn:pass:person")
		setting("one", "TinCanRootAccount", "lrsroot:lrsroot-pass")
		viewer, learner, lrsRoot := basic("viewer", "view-pass"), basic("learner", "learn:pass"), basic("lrsroot", "lrsroot-pass")

		// 401 without or with wrong credentials; accounts are per tenant.
		e.expect(e.do("GET", lrs+"/one/statements", noAuth, nil, v200...), 401, "no credentials")
		e.expect(e.do("GET", lrs+"/one/statements", basic("viewer", "wrong"), nil, v200...), 401, "wrong password")
		e.expect(e.do("GET", lrs+"/two/statements", viewer, nil, v200...), 401, "account of another tenant")
		// OAuth 1.0a is not supported: the 401 says so and names what is, rather than "invalid credentials".
		oa := e.do("GET", lrs+"/one/statements", auth{`OAuth oauth_consumer_key="k", oauth_signature="s"`}, nil, v200...)
		e.expect(oa, 401, "OAuth")
		if msg := string(oa.Body); !strings.Contains(msg, "OAuth 1.0a is not supported") || !strings.Contains(msg, "HTTP Basic") ||
			oa.Header.Get("WWW-Authenticate") != `Basic realm="lectern-lrs"` {
			t.Errorf("OAuth 401 does not name the supported schemes: %s %v", msg, oa.Header)
		}

		// Tenant credentials are read-write accounts of their tenant.
		cred := basic(key, secret)
		e.expect(e.do("POST", lrs+"/one/statements", cred, statement("zed@example.com", "attempted", "http://example.com/z"), v200...), 200, "tenant credential writes")
		e.expect(e.do("GET", lrs+"/two/statements", cred, nil, v200...), 403, "tenant credential on another tenant")
		// Without a tenant segment the credential's tenant is used.
		if res := e.query(lrs+"/statements", cred, v200); len(res.Statements) != 1 {
			t.Fatalf("tenant-less path with tenant credential: %d statements", len(res.Statements))
		}
		// The TinCanRootAccount is an LRS root of its tenant.
		e.expect(e.do("POST", lrs+"/one/statements", lrsRoot, statement("yan@example.com", "attempted", "http://example.com/y"), v200...), 200, "lrs root writes")

		// Read-only account: reads everything, writes nothing.
		e.expect(e.do("POST", lrs+"/one/statements", viewer, statement("ann@example.com", "attempted", "http://example.com/a"), v200...), 403, "read-only cannot write")
		e.expect(e.do("PUT", lrs+"/one/activities/state?activityId=http://x.y/a&agent="+url.QueryEscape(`{"mbox":"mailto:a@b.c"}`)+"&stateId=s", viewer, "{}", v200...), 403, "read-only cannot write documents")
		if res := e.query(lrs+"/one/statements", viewer, v200); len(res.Statements) != 2 {
			t.Fatalf("read-only account sees %d statements, want 2", len(res.Statements))
		}

		// Person account: writes any statement (it becomes the authority), reads only those it appears in.
		r := e.do("POST", lrs+"/one/statements", learner, statement("kim@example.com", "attempted", "http://example.com/k"), v200...)
		e.expect(r, 200, "person writes")
		var ids []string
		r.json(t, &ids)
		res := e.query(lrs+"/one/statements", learner, v200)
		if len(res.Statements) != 1 || res.Statements[0]["id"] != ids[0] {
			t.Fatalf("default read rule: %v", res.Statements)
		}
		auth, _ := json.Marshal(res.Statements[0]["authority"])
		if !strings.Contains(string(auth), `"learner"`) {
			t.Errorf("authority is not the asserter: %s", auth)
		}
		res = e.query(lrs+"/one/statements?agent="+url.QueryEscape(`{"mbox":"mailto:zed@example.com"}`), learner, v200)
		if len(res.Statements) != 0 {
			t.Errorf("person reads a statement it does not appear in")
		}
		first := e.query(lrs+"/one/statements", root, v200).Statements
		for _, s := range first {
			if s["id"] != ids[0] {
				e.expect(e.do("GET", lrs+"/one/statements?statementId="+s["id"].(string), learner, nil, v200...), 404, "person reads another's statement by id")
				break
			}
		}

		// Tenant isolation, the lowercased tenant segment and the root's default tenant.
		if res := e.query(lrs+"/TWO/statements", root, v200); len(res.Statements) != 0 {
			t.Fatalf("tenant two sees %d statements of tenant one", len(res.Statements))
		}
		e.expect(e.do("POST", lrs+"/statements", root, statement("root@example.com", "attempted", "http://example.com/r"), v200...), 200, "root without tenant")
		if res := e.query(lrs+"/default/statements", root, v200); len(res.Statements) != 1 {
			t.Fatalf("default tenant: %d statements", len(res.Statements))
		}
		e.expect(e.do("GET", lrs+"/nosuch/statements", root, nil, v200...), 404, "unknown tenant")

		// A disabled tenant refuses writes (409) but still answers reads.
		e.expect(e.do("PUT", "/api/v1/app_management/tenants/two", root, map[string]any{"enabled": false}), 200, "disable two")
		e.expect(e.do("POST", lrs+"/two/statements", root, statement("a@example.com", "attempted", "http://example.com/a"), v200...), 409, "write to disabled tenant")
		e.expect(e.do("GET", lrs+"/two/statements", root, nil, v200...), 200, "read disabled tenant")
	})
}

func TestLRSCORS(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r := e.do("OPTIONS", lrs+"/statements", noAuth, nil, "Origin", "https://content.example.com",
			"Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", "authorization,x-experience-api-version,content-type")
		if r.Status != 204 && r.Status != 200 {
			t.Fatalf("preflight: %d %s", r.Status, r.Body)
		}
		if r.Header.Get("Access-Control-Allow-Origin") != "https://content.example.com" {
			t.Errorf("Allow-Origin %q", r.Header.Get("Access-Control-Allow-Origin"))
		}
		allow := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers"))
		for _, h := range []string{"authorization", "x-experience-api-version", "content-type", "if-match", "if-none-match"} {
			if !strings.Contains(allow, h) {
				t.Errorf("Allow-Headers lacks %s: %q", h, allow)
			}
		}
		if !strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "PUT") {
			t.Errorf("Allow-Methods %q", r.Header.Get("Access-Control-Allow-Methods"))
		}
		r = e.do("GET", lrs+"/statements", root, nil, hdr(v200, "Origin", "https://content.example.com")...)
		e.expect(r, 200, "GET with origin")
		expose := strings.ToLower(r.Header.Get("Access-Control-Expose-Headers"))
		for _, h := range []string{"etag", "last-modified", "x-experience-api-consistent-through", "x-experience-api-version"} {
			if !strings.Contains(expose, h) {
				t.Errorf("Expose-Headers lacks %s: %q", h, expose)
			}
		}
		// Errors carry the CORS and version headers too, so the browser can read them.
		r = e.do("GET", lrs+"/statements", noAuth, nil, "Origin", "https://content.example.com")
		if r.Status != 401 || r.Header.Get("Access-Control-Allow-Origin") == "" || r.Header.Get("X-Experience-API-Version") == "" {
			t.Errorf("401 without CORS or version header: %d %v", r.Status, r.Header)
		}
	})
}

func TestLRSTenantDeletePurgesStatements(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("gone", true)
		e.createTenant("kept", true)
		for _, tn := range []string{"gone", "kept"} {
			e.expect(e.do("POST", lrs+"/"+tn+"/statements", root, statement("ann@example.com", "attempted", "http://example.com/"+tn), v200...), 200, "post "+tn)
			e.expect(e.do("PUT", lrs+"/"+tn+"/activities/state?activityId=http://example.com/a&agent="+url.QueryEscape(`{"mbox":"mailto:a@b.c"}`)+"&stateId=s", root, "{}", v200...), 204, "state "+tn)
		}
		r := e.do("DELETE", "/api/v1/app_management/tenants/gone", root, nil)
		e.expect(r, 202, "delete tenant")
		var job struct{ ID, Status string }
		r.json(t, &job)
		e.expect(e.do("GET", lrs+"/gone/statements", root, nil, v200...), 404, "deleted tenant")
		eventually(t, 30*time.Second, "tenant delete job", func() bool {
			r := e.do("GET", "/api/v1/jobs/"+job.ID, root, nil)
			r.json(t, &job)
			return job.Status == "COMPLETED"
		})
		e.createTenant("gone", true)
		if res := e.query(lrs+"/gone/statements", root, v200); len(res.Statements) != 0 {
			t.Fatalf("statements survived the tenant: %v", res.Statements)
		}
		e.expect(e.do("GET", lrs+"/gone/activities/state?activityId=http://example.com/a&agent="+url.QueryEscape(`{"mbox":"mailto:a@b.c"}`)+"&stateId=s", root, nil, v200...), 404, "state survived")
		if res := e.query(lrs+"/kept/statements", root, v200); len(res.Statements) != 1 {
			t.Fatalf("other tenant lost statements: %d", len(res.Statements))
		}
	})
}
