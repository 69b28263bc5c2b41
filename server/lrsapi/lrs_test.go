package lrsapi_test

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

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

func hdr(version []string, more ...string) []string {
	return append(append([]string{}, version...), more...)
}

func newUUID(i int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", time.Now().UnixNano()&0xffffffff, i)
}

func TestLRSStatements(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		base := servertest.LRS + "/acme/statements"

		// Attachments travel as application/json (fileUrl) or multipart/mixed only (XAPI-00127).
		withFile := servertest.Statement("ann@example.com", "attempted", "http://example.com/a0")
		withFile["attachments"] = []any{map[string]any{"usageType": "http://example.com/usage", "display": map[string]any{"en-US": "file"},
			"contentType": "text/plain", "length": 4, "sha2": strings.Repeat("a", 64), "fileUrl": "http://example.com/file.txt"}}
		for ct, want := range map[string]int{"multipart/form-data; boundary=x": 400, "text/plain": 400, "application/json": 200} {
			e.Expect(e.Do("POST", base, servertest.Root, withFile, hdr(servertest.V200, "Content-Type", ct)...), want, "attachment statement as "+ct)
		}

		// POST one statement: 200 with its id; the LRS headers are there.
		r := e.Do("POST", base, servertest.Root, servertest.Statement("ann@example.com", "attempted", "http://example.com/a1"), servertest.V200...)
		e.Expect(r, 200, "post statement")
		var ids []string
		r.JSON(t, &ids)
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
		r = e.Do("GET", base+"?statementId="+ids[0], servertest.Root, nil, servertest.V200...)
		e.Expect(r, 200, "get by id")
		var st map[string]any
		r.JSON(t, &st)
		if st["id"] != ids[0] || st["stored"] == nil || st["authority"] == nil || st["version"] != "2.0.0" {
			t.Fatalf("stored statement: %s", r.Body)
		}
		if _, err := http.ParseTime(r.Header.Get("Last-Modified")); err != nil {
			t.Errorf("Last-Modified %q: %v", r.Header.Get("Last-Modified"), err)
		}
		if h := e.Do("HEAD", base+"?statementId="+ids[0], servertest.Root, nil, servertest.V200...); h.Status != 200 || len(h.Body) != 0 || h.Header.Get("Last-Modified") == "" {
			t.Errorf("HEAD statement: %d %q %v", h.Status, h.Body, h.Header)
		}

		// PUT with an id: 204; the same again is a no-op; different content is 409.
		id := newUUID(1)
		s1 := servertest.Statement("bob@example.com", "completed", "http://example.com/a2")
		e.Expect(e.Do("PUT", base+"?statementId="+id, servertest.Root, s1, servertest.V103...), 204, "put")
		e.Expect(e.Do("PUT", base+"?statementId="+id, servertest.Root, s1, servertest.V103...), 204, "put same again")
		e.Expect(e.Do("PUT", base+"?statementId="+id, servertest.Root, servertest.Statement("bob@example.com", "failed", "http://example.com/a2"), servertest.V103...), 409, "put different")
		e.Expect(e.Do("PUT", base, servertest.Root, s1, servertest.V103...), 400, "put without statementId")
		r = e.Do("PUT", base+"?statementId="+newUUID(2), servertest.Root, map[string]any{"id": newUUID(3), "actor": s1["actor"], "verb": s1["verb"], "object": s1["object"]}, servertest.V103...)
		e.Expect(r, 400, "put with another id in the body")

		// Validation names the offending property.
		bad := servertest.Statement("carl@example.com", "attempted", "http://example.com/a3")
		bad["actor"] = map[string]any{"mbox": "carl@example.com"}
		r = e.Do("POST", base, servertest.Root, bad, servertest.V200...)
		e.Expect(r, 400, "bad mbox")
		if !strings.Contains(r.Message(), "actor.mbox") {
			t.Errorf("message does not name actor.mbox: %q", r.Message())
		}
		// A batch is atomic: one bad statement stores nothing.
		good := servertest.Statement("dora@example.com", "attempted", "http://example.com/batch")
		good["id"] = newUUID(4)
		e.Expect(e.Do("POST", base, servertest.Root, []any{good, bad}, servertest.V200...), 400, "bad batch")
		e.Expect(e.Do("GET", base+"?statementId="+good["id"].(string), servertest.Root, nil, servertest.V200...), 404, "batch statement not stored")

		// Version header and parameters.
		e.Expect(e.Do("GET", base, servertest.Root, nil), 400, "no version header")
		e.Expect(e.Do("GET", base, servertest.Root, nil, "X-Experience-API-Version", "0.9"), 400, "old version")
		e.Expect(e.Do("GET", base+"?Limit=1", servertest.Root, nil, servertest.V200...), 400, "wrong-case parameter")
		e.Expect(e.Do("GET", base+"?foo=1", servertest.Root, nil, servertest.V200...), 400, "unknown parameter")
		e.Expect(e.Do("GET", base+"?statementId="+id+"&verb=http://x.y/z", servertest.Root, nil, servertest.V200...), 400, "statementId with a filter")
		e.Expect(e.Do("GET", base+"?format=full", servertest.Root, nil, servertest.V200...), 400, "bad format")
		e.Expect(e.Do("GET", base+"?since=yesterday", servertest.Root, nil, servertest.V200...), 400, "bad since")
		e.Expect(e.Do("GET", base+"?statementId=nope", servertest.Root, nil, servertest.V200...), 400, "bad id")

		// Paging with more: a relative URL with the tenant segment that carries the filters.
		for i := 0; i < 5; i++ {
			e.Expect(e.Do("POST", base, servertest.Root, servertest.Statement("pat@example.com", "experienced", fmt.Sprintf("http://example.com/page/%d", i)), servertest.V200...), 200, "post page statement")
		}
		agent := url.QueryEscape(`{"mbox":"mailto:pat@example.com"}`)
		res := e.Query(base+"?agent="+agent+"&limit=2", servertest.Root, servertest.V200)
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
			if !strings.HasPrefix(res.More, servertest.LRS+"/acme/statements?more=") {
				t.Fatalf("more %q is not relative to the tenant's statements resource", res.More)
			}
			res = e.Query(res.More, servertest.Root, servertest.V200)
		}
		if len(seen) != 5 || pages < 3 {
			t.Fatalf("paging saw %d statements in %d pages", len(seen), pages)
		}
		res = e.Query(base+"?agent="+agent+"&limit=0", servertest.Root, servertest.V200)
		if len(res.Statements) != 5 || res.More != "" {
			t.Errorf("limit=0 (server max): %d statements, more %q", len(res.Statements), res.More)
		}
		res = e.Query(base+"?verb="+url.QueryEscape("http://adlnet.gov/expapi/verbs/experienced")+"&ascending=true&format=ids", servertest.Root, servertest.V200)
		if len(res.Statements) != 5 {
			t.Fatalf("verb filter: %d", len(res.Statements))
		}
		if _, hasDef := res.Statements[0]["object"].(map[string]any)["definition"]; hasDef {
			t.Errorf("format=ids kept the activity definition: %v", res.Statements[0])
		}

		// Voiding: the voided statement moves to voidedStatementId.
		void := map[string]any{"actor": map[string]any{"mbox": "mailto:admin@example.com"},
			"verb": map[string]any{"id": "http://adlnet.gov/expapi/verbs/voided"}, "object": map[string]any{"objectType": "StatementRef", "id": id}}
		e.Expect(e.Do("POST", base, servertest.Root, void, servertest.V200...), 200, "void")
		e.Expect(e.Do("GET", base+"?statementId="+id, servertest.Root, nil, servertest.V200...), 404, "voided by statementId")
		e.Expect(e.Do("GET", base+"?voidedStatementId="+id, servertest.Root, nil, servertest.V200...), 200, "voided by voidedStatementId")
		e.Expect(e.Do("GET", base+"?voidedStatementId="+ids[0], servertest.Root, nil, servertest.V200...), 404, "not voided by voidedStatementId")

		// Attachments: multipart/mixed in, multipart/mixed out with attachments=true.
		content := []byte("hello attachment")
		sum := sha256.Sum256(content)
		sha := hex.EncodeToString(sum[:])
		withAtt := servertest.Statement("eve@example.com", "attempted", "http://example.com/att")
		withAtt["id"] = newUUID(5)
		withAtt["attachments"] = []any{map[string]any{"usageType": "http://example.com/usage", "display": map[string]any{"en-US": "note"},
			"contentType": "text/plain", "length": len(content), "sha2": sha}}
		js, _ := json.Marshal(withAtt)
		body := "--xyz\r\nContent-Type: application/json\r\n\r\n" + string(js) + "\r\n--xyz\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: binary\r\nX-Experience-API-Hash: " + sha + "\r\n\r\n" + string(content) + "\r\n--xyz--\r\n"
		e.Expect(e.Do("POST", base, servertest.Root, body, hdr(servertest.V200, "Content-Type", "multipart/mixed; boundary=xyz")...), 200, "post with attachment")
		r = e.Do("GET", base+"?statementId="+withAtt["id"].(string)+"&attachments=true", servertest.Root, nil, servertest.V200...)
		e.Expect(r, 200, "get with attachments")
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/mixed") || !strings.Contains(string(r.Body), "hello attachment") {
			t.Errorf("attachments=true: %s %q", r.Header.Get("Content-Type"), r.Body)
		}
		// The attachment without its part is refused.
		e.Expect(e.Do("POST", base, servertest.Root, withAtt, servertest.V200...), 400, "attachment without part")
	})
}

func TestLRSDocuments(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("docs", true)
		agent := url.QueryEscape(`{"objectType":"Agent","mbox":"mailto:ann@example.com"}`)
		act := url.QueryEscape("http://example.com/activity/1")
		state := servertest.LRS + "/docs/activities/state?activityId=" + act + "&agent=" + agent
		one := state + "&stateId=s1"

		e.Expect(e.Do("GET", one, servertest.Root, nil, servertest.V200...), 404, "absent state")
		e.Expect(e.Do("PUT", one, servertest.Root, map[string]any{"a": 1, "b": 2}, servertest.V200...), 204, "put state")
		r := e.Do("GET", one, servertest.Root, nil, servertest.V200...)
		e.Expect(r, 200, "get state")
		etag := r.Header.Get("ETag")
		if !strings.HasPrefix(etag, `"`) || r.Header.Get("Last-Modified") == "" {
			t.Fatalf("ETag %q, Last-Modified %q", etag, r.Header.Get("Last-Modified"))
		}
		if h := e.Do("HEAD", one, servertest.Root, nil, servertest.V200...); h.Status != 200 || h.Header.Get("ETag") != etag {
			t.Errorf("HEAD state: %d %v", h.Status, h.Header)
		}
		// 2.0: a PUT over an existing document without a precondition is a conflict.
		e.Expect(e.Do("PUT", one, servertest.Root, map[string]any{"x": 1}, servertest.V200...), 409, "put without precondition")
		e.Expect(e.Do("PUT", one, servertest.Root, map[string]any{"x": 1}, hdr(servertest.V200, "If-Match", `"wrong"`)...), 412, "wrong If-Match")
		e.Expect(e.Do("PUT", one, servertest.Root, map[string]any{"x": 1}, hdr(servertest.V200, "If-None-Match", "*")...), 412, "If-None-Match on existing")
		// POST merges JSON objects at the top level.
		e.Expect(e.Do("POST", one, servertest.Root, map[string]any{"b": 3, "c": 4}, hdr(servertest.V200, "If-Match", etag)...), 204, "merge")
		r = e.Do("GET", one, servertest.Root, nil, servertest.V200...)
		var merged map[string]float64
		r.JSON(t, &merged)
		if merged["a"] != 1 || merged["b"] != 3 || merged["c"] != 4 {
			t.Fatalf("merged: %s", r.Body)
		}
		e.Expect(e.Do("POST", one, servertest.Root, "[1,2]", servertest.V200...), 400, "merge non-object")
		// Listing ids and deleting.
		e.Expect(e.Do("PUT", state+"&stateId=s2", servertest.Root, "plain text", hdr(servertest.V103, "Content-Type", "text/plain")...), 204, "put text state (1.0.3)")
		r = e.Do("GET", state, servertest.Root, nil, servertest.V200...)
		var list []string
		r.JSON(t, &list)
		if len(list) != 2 {
			t.Fatalf("state ids: %s", r.Body)
		}
		r = e.Do("GET", state+"&stateId=s2", servertest.Root, nil, servertest.V200...)
		if string(r.Body) != "plain text" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("text state: %q %s", r.Body, r.Header.Get("Content-Type"))
		}
		e.Expect(e.Do("DELETE", state, servertest.Root, nil, servertest.V200...), 204, "delete all states")
		e.Expect(e.Do("GET", one, servertest.Root, nil, servertest.V200...), 404, "state deleted")
		e.Expect(e.Do("GET", servertest.LRS+"/docs/activities/state?activityId="+act, servertest.Root, nil, servertest.V200...), 400, "state without agent")
		e.Expect(e.Do("GET", state+"&registration=nope", servertest.Root, nil, servertest.V200...), 400, "bad registration")

		// Activity profile: 1.0.3 requires a precondition on PUT.
		prof := servertest.LRS + "/docs/activities/profile?activityId=" + act + "&profileId=p1"
		e.Expect(e.Do("PUT", prof, servertest.Root, map[string]any{"p": 1}, servertest.V103...), 400, "1.0.3 profile PUT without precondition")
		e.Expect(e.Do("PUT", prof, servertest.Root, map[string]any{"p": 1}, hdr(servertest.V103, "If-None-Match", "*")...), 204, "profile PUT If-None-Match")
		e.Expect(e.Do("PUT", prof, servertest.Root, map[string]any{"p": 2}, servertest.V103...), 409, "profile PUT over existing")
		e.Expect(e.Do("DELETE", prof, servertest.Root, nil, hdr(servertest.V200, "If-Match", `"nope"`)...), 412, "delete with wrong etag")
		e.Expect(e.Do("DELETE", prof, servertest.Root, nil, servertest.V200...), 204, "delete profile")

		// Agent profile.
		ap := servertest.LRS + "/docs/agents/profile?agent=" + agent + "&profileId=p"
		e.Expect(e.Do("POST", ap, servertest.Root, map[string]any{"k": "v"}, servertest.V200...), 204, "post agent profile")
		r = e.Do("GET", servertest.LRS+"/docs/agents/profile?agent="+agent, servertest.Root, nil, servertest.V200...)
		e.Expect(r, 200, "list agent profiles")
		if !strings.Contains(string(r.Body), `"p"`) {
			t.Errorf("agent profile ids: %s", r.Body)
		}
		e.Expect(e.Do("GET", servertest.LRS+"/docs/agents/profile?agent="+url.QueryEscape(`{"mbox":"ann@example.com"}`), servertest.Root, nil, servertest.V200...), 400, "bad agent")
	})
}

func TestLRSActivitiesAgentsAbout(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("misc", true)
		// About is public, needs no version header and lists both versions.
		r := e.Do("GET", servertest.LRS+"/misc/about", servertest.NoAuth, nil)
		e.Expect(r, 200, "about")
		var about struct{ Version []string }
		r.JSON(t, &about)
		if strings.Join(about.Version, ",") != "1.0.3,2.0.0" || r.Header.Get("X-Experience-API-Version") == "" {
			t.Fatalf("about: %s %v", r.Body, r.Header)
		}
		e.Expect(e.Do("GET", servertest.LRS+"/about", servertest.NoAuth, nil), 200, "about without tenant")
		e.Expect(e.Do("GET", servertest.LRS+"/about?x=1", servertest.NoAuth, nil), 400, "about with unknown parameter")

		e.Expect(e.Do("POST", servertest.LRS+"/misc/statements", servertest.Root, servertest.Statement("ann@example.com", "attempted", "http://example.com/act"), servertest.V200...), 200, "post")
		r = e.Do("GET", servertest.LRS+"/misc/activities?activityId="+url.QueryEscape("http://example.com/act"), servertest.Root, nil, servertest.V200...)
		e.Expect(r, 200, "activity")
		if !strings.Contains(string(r.Body), "Aktivität") {
			t.Errorf("activity definition not kept: %s", r.Body)
		}
		r = e.Do("GET", servertest.LRS+"/misc/activities?activityId="+url.QueryEscape("http://example.com/unknown"), servertest.Root, nil, servertest.V200...)
		e.Expect(r, 200, "unknown activity")
		e.Expect(e.Do("GET", servertest.LRS+"/misc/activities", servertest.Root, nil, servertest.V200...), 400, "activities without activityId")

		r = e.Do("GET", servertest.LRS+"/misc/agents?agent="+url.QueryEscape(`{"mbox":"mailto:ann@example.com","name":"Ann"}`), servertest.Root, nil, servertest.V200...)
		e.Expect(r, 200, "agents")
		var person map[string]any
		r.JSON(t, &person)
		if person["objectType"] != "Person" {
			t.Errorf("person: %s", r.Body)
		}
		if h := e.Do("HEAD", servertest.LRS+"/misc/agents?agent="+url.QueryEscape(`{"mbox":"mailto:ann@example.com"}`), servertest.Root, nil, servertest.V200...); h.Status != 200 || len(h.Body) != 0 {
			t.Errorf("HEAD agents: %d", h.Status)
		}
	})
}

func TestLRSVersionsAndAlternateSyntax(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("alt", true)
		base := servertest.LRS + "/alt/statements"
		id := newUUID(9)
		js, _ := json.Marshal(servertest.Statement("ann@example.com", "attempted", "http://example.com/alt"))
		form := url.Values{"statementId": {id}, "content": {string(js)}, "X-Experience-API-Version": {"1.0.3"},
			"Authorization": {servertest.Root.Header}, "Content-Type": {"application/json"}}
		// 1.0.3: POST ?method=PUT with the headers in the form.
		r := e.Do("POST", base+"?method=PUT", servertest.NoAuth, form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
		e.Expect(r, 204, "alternate PUT")
		if r.Header.Get("X-Experience-API-Version") != "1.0.3" {
			t.Errorf("alternate syntax answered version %q", r.Header.Get("X-Experience-API-Version"))
		}
		r = e.Do("POST", base+"?method=GET", servertest.Root, url.Values{"statementId": {id}}.Encode(), hdr(servertest.V103, "Content-Type", "application/x-www-form-urlencoded")...)
		e.Expect(r, 200, "alternate GET")
		var st map[string]any
		r.JSON(t, &st)
		if st["version"] != "1.0.0" {
			t.Errorf("1.0.3 statement version %v", st["version"])
		}
		e.Expect(e.Do("POST", base+"?method=PUT&statementId="+id, servertest.Root, form.Encode(), hdr(servertest.V103, "Content-Type", "application/x-www-form-urlencoded")...), 400, "extra query parameter")
		e.Expect(e.Do("POST", base+"?method=PUT", servertest.Root, string(js), hdr(servertest.V103, "Content-Type", "application/json")...), 400, "alternate without a form")
		// 2.0.0 rejects the alternate syntax.
		form.Set("X-Experience-API-Version", "2.0.0")
		form.Set("statementId", newUUID(10))
		e.Expect(e.Do("POST", base+"?method=PUT", servertest.NoAuth, form.Encode(), "Content-Type", "application/x-www-form-urlencoded"), 400, "alternate under 2.0")
		// The same body is validated by the rules of the request's version.
		e.Expect(e.Do("GET", base+"?statementId="+id, servertest.Root, nil, "X-Experience-API-Version", "1.0"), 200, "1.0 header")
		e.Expect(e.Do("GET", base+"?statementId="+id, servertest.Root, nil, "X-Experience-API-Version", "2.0"), 200, "2.0 header")
	})
}

func TestLRSPermissionsAndTenants(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("one", true)
		e.CreateTenant("two", true)
		key, secret := e.Credential("one")
		setting := func(tn, id, v string) {
			e.Expect(e.Do("PUT", "/engine/api/v1/"+tn+"/configuration/"+id, servertest.Root, map[string]any{"value": v}), 204, "set "+id)
		}
		setting("one", "TinCanBasicAccounts", "viewer:view-pass:readonly,\nlearner:learn:pass:person")
		setting("one", "TinCanRootAccount", "lrsroot:lrsroot-pass")
		viewer, learner, lrsRoot := servertest.Basic("viewer", "view-pass"), servertest.Basic("learner", "learn:pass"), servertest.Basic("lrsroot", "lrsroot-pass")

		// 401 without or with wrong credentials; accounts are per tenant.
		e.Expect(e.Do("GET", servertest.LRS+"/one/statements", servertest.NoAuth, nil, servertest.V200...), 401, "no credentials")
		e.Expect(e.Do("GET", servertest.LRS+"/one/statements", servertest.Basic("viewer", "wrong"), nil, servertest.V200...), 401, "wrong password")
		e.Expect(e.Do("GET", servertest.LRS+"/two/statements", viewer, nil, servertest.V200...), 401, "account of another tenant")
		// OAuth 1.0a is not supported: the 401 says so and names what is, rather than "invalid credentials".
		oa := e.Do("GET", servertest.LRS+"/one/statements", servertest.Auth{Header: `OAuth oauth_consumer_key="k", oauth_signature="s"`}, nil, servertest.V200...)
		e.Expect(oa, 401, "OAuth")
		if msg := string(oa.Body); !strings.Contains(msg, "OAuth 1.0a is not supported") || !strings.Contains(msg, "HTTP Basic") ||
			oa.Header.Get("WWW-Authenticate") != `Basic realm="lectern-lrs"` {
			t.Errorf("OAuth 401 does not name the supported schemes: %s %v", msg, oa.Header)
		}

		// Tenant credentials are read-write accounts of their tenant.
		cred := servertest.Basic(key, secret)
		e.Expect(e.Do("POST", servertest.LRS+"/one/statements", cred, servertest.Statement("zed@example.com", "attempted", "http://example.com/z"), servertest.V200...), 200, "tenant credential writes")
		e.Expect(e.Do("GET", servertest.LRS+"/two/statements", cred, nil, servertest.V200...), 403, "tenant credential on another tenant")
		// Without a tenant segment the credential's tenant is used.
		if res := e.Query(servertest.LRS+"/statements", cred, servertest.V200); len(res.Statements) != 1 {
			t.Fatalf("tenant-less path with tenant credential: %d statements", len(res.Statements))
		}
		// The TinCanRootAccount is an LRS root of its tenant.
		e.Expect(e.Do("POST", servertest.LRS+"/one/statements", lrsRoot, servertest.Statement("yan@example.com", "attempted", "http://example.com/y"), servertest.V200...), 200, "lrs root writes")

		// Read-only account: reads everything, writes nothing.
		e.Expect(e.Do("POST", servertest.LRS+"/one/statements", viewer, servertest.Statement("ann@example.com", "attempted", "http://example.com/a"), servertest.V200...), 403, "read-only cannot write")
		e.Expect(e.Do("PUT", servertest.LRS+"/one/activities/state?activityId=http://x.y/a&agent="+url.QueryEscape(`{"mbox":"mailto:a@b.c"}`)+"&stateId=s", viewer, "{}", servertest.V200...), 403, "read-only cannot write documents")
		if res := e.Query(servertest.LRS+"/one/statements", viewer, servertest.V200); len(res.Statements) != 2 {
			t.Fatalf("read-only account sees %d statements, want 2", len(res.Statements))
		}

		// Person account: writes any statement (it becomes the authority), reads only those it appears in.
		r := e.Do("POST", servertest.LRS+"/one/statements", learner, servertest.Statement("kim@example.com", "attempted", "http://example.com/k"), servertest.V200...)
		e.Expect(r, 200, "person writes")
		var ids []string
		r.JSON(t, &ids)
		res := e.Query(servertest.LRS+"/one/statements", learner, servertest.V200)
		if len(res.Statements) != 1 || res.Statements[0]["id"] != ids[0] {
			t.Fatalf("default read rule: %v", res.Statements)
		}
		auth, _ := json.Marshal(res.Statements[0]["authority"])
		if !strings.Contains(string(auth), `"learner"`) {
			t.Errorf("authority is not the asserter: %s", auth)
		}
		res = e.Query(servertest.LRS+"/one/statements?agent="+url.QueryEscape(`{"mbox":"mailto:zed@example.com"}`), learner, servertest.V200)
		if len(res.Statements) != 0 {
			t.Errorf("person reads a statement it does not appear in")
		}
		first := e.Query(servertest.LRS+"/one/statements", servertest.Root, servertest.V200).Statements
		for _, s := range first {
			if s["id"] != ids[0] {
				e.Expect(e.Do("GET", servertest.LRS+"/one/statements?statementId="+s["id"].(string), learner, nil, servertest.V200...), 404, "person reads another's statement by id")
				break
			}
		}

		// Tenant isolation, the lowercased tenant segment and the root's default tenant.
		if res := e.Query(servertest.LRS+"/TWO/statements", servertest.Root, servertest.V200); len(res.Statements) != 0 {
			t.Fatalf("tenant two sees %d statements of tenant one", len(res.Statements))
		}
		e.Expect(e.Do("POST", servertest.LRS+"/statements", servertest.Root, servertest.Statement("root@example.com", "attempted", "http://example.com/r"), servertest.V200...), 200, "root without tenant")
		if res := e.Query(servertest.LRS+"/default/statements", servertest.Root, servertest.V200); len(res.Statements) != 1 {
			t.Fatalf("default tenant: %d statements", len(res.Statements))
		}
		e.Expect(e.Do("GET", servertest.LRS+"/nosuch/statements", servertest.Root, nil, servertest.V200...), 404, "unknown tenant")

		// A disabled tenant refuses writes (409) but still answers reads.
		e.Expect(e.Do("PUT", "/api/v1/app_management/tenants/two", servertest.Root, map[string]any{"enabled": false}), 200, "disable two")
		e.Expect(e.Do("POST", servertest.LRS+"/two/statements", servertest.Root, servertest.Statement("a@example.com", "attempted", "http://example.com/a"), servertest.V200...), 409, "write to disabled tenant")
		e.Expect(e.Do("GET", servertest.LRS+"/two/statements", servertest.Root, nil, servertest.V200...), 200, "read disabled tenant")
	})
}

func TestLRSCORS(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		r := e.Do("OPTIONS", servertest.LRS+"/statements", servertest.NoAuth, nil, "Origin", "https://content.example.com",
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
		r = e.Do("GET", servertest.LRS+"/statements", servertest.Root, nil, hdr(servertest.V200, "Origin", "https://content.example.com")...)
		e.Expect(r, 200, "GET with origin")
		expose := strings.ToLower(r.Header.Get("Access-Control-Expose-Headers"))
		for _, h := range []string{"etag", "last-modified", "x-experience-api-consistent-through", "x-experience-api-version"} {
			if !strings.Contains(expose, h) {
				t.Errorf("Expose-Headers lacks %s: %q", h, expose)
			}
		}
		// Errors carry the CORS and version headers too, so the browser can read them.
		r = e.Do("GET", servertest.LRS+"/statements", servertest.NoAuth, nil, "Origin", "https://content.example.com")
		if r.Status != 401 || r.Header.Get("Access-Control-Allow-Origin") == "" || r.Header.Get("X-Experience-API-Version") == "" {
			t.Errorf("401 without CORS or version header: %d %v", r.Status, r.Header)
		}
	})
}

func TestLRSTenantDeletePurgesStatements(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("gone", true)
		e.CreateTenant("kept", true)
		for _, tn := range []string{"gone", "kept"} {
			e.Expect(e.Do("POST", servertest.LRS+"/"+tn+"/statements", servertest.Root, servertest.Statement("ann@example.com", "attempted", "http://example.com/"+tn), servertest.V200...), 200, "post "+tn)
			e.Expect(e.Do("PUT", servertest.LRS+"/"+tn+"/activities/state?activityId=http://example.com/a&agent="+url.QueryEscape(`{"mbox":"mailto:a@b.c"}`)+"&stateId=s", servertest.Root, "{}", servertest.V200...), 204, "state "+tn)
		}
		r := e.Do("DELETE", "/api/v1/app_management/tenants/gone", servertest.Root, nil)
		e.Expect(r, 202, "delete tenant")
		var job struct{ ID, Status string }
		r.JSON(t, &job)
		e.Expect(e.Do("GET", servertest.LRS+"/gone/statements", servertest.Root, nil, servertest.V200...), 404, "deleted tenant")
		servertest.Eventually(t, 30*time.Second, "tenant delete job", func() bool {
			r := e.Do("GET", "/api/v1/jobs/"+job.ID, servertest.Root, nil)
			r.JSON(t, &job)
			return job.Status == "COMPLETED"
		})
		e.CreateTenant("gone", true)
		if res := e.Query(servertest.LRS+"/gone/statements", servertest.Root, servertest.V200); len(res.Statements) != 0 {
			t.Fatalf("statements survived the tenant: %v", res.Statements)
		}
		e.Expect(e.Do("GET", servertest.LRS+"/gone/activities/state?activityId=http://example.com/a&agent="+url.QueryEscape(`{"mbox":"mailto:a@b.c"}`)+"&stateId=s", servertest.Root, nil, servertest.V200...), 404, "state survived")
		if res := e.Query(servertest.LRS+"/kept/statements", servertest.Root, servertest.V200); len(res.Statements) != 1 {
			t.Fatalf("other tenant lost statements: %d", len(res.Statements))
		}
	})
}
