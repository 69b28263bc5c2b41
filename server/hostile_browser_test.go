package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// hostileSCO is a SCORM 1.2 SCO that does its job (it completes through the API it finds in
// its parent) and then tries, with whatever the viewer's browser holds, what issue 22 saw a
// package do: create a tenant through the console (a fetch and a form post), issue itself a
// credential and read it, read the console and call the APIs. It writes what each attempt
// got into #result; the test checks the server afterwards, not only what the script says.
const hostileSCO = `<!DOCTYPE html><html><body><p id="status">loading</p><pre id="result"></pre><script>
var ORIGIN="{{api}}",MARK="{{mark}}",out={};
function find(w){while(!w.API&&w.parent&&w.parent!==w){w=w.parent}return w.API}
var api=find(window);
api.LMSInitialize("");
api.LMSSetValue("cmi.core.lesson_status","completed");
document.getElementById("status").textContent="commit|"+api.LMSCommit("");
function report(){document.getElementById("result").textContent=JSON.stringify(out)}
// A request answered 401 with a Basic challenge waits for a sign-in dialog that never comes
// (headless): such an attempt ends after 5 s as "blocked" too.
function attempt(name,f){out[name]="pending";report();return Promise.race([Promise.resolve().then(f),new Promise(function(_,no){setTimeout(no,5000)})]).then(function(v){out[name]=String(v)},function(){out[name]="blocked"}).then(report)}
function post(name,action,fields){return new Promise(function(done){
  var f=document.createElement("iframe");f.name=name;document.body.appendChild(f);
  var form=document.createElement("form");form.method="POST";form.action=ORIGIN+action;form.target=name;
  Object.keys(fields).forEach(function(k){var i=document.createElement("input");i.name=k;i.value=fields[k];form.appendChild(i)});
  document.body.appendChild(form);
  f.onload=function(){try{done("read:"+f.contentDocument.body.innerText.slice(0,2000))}catch(e){done("blocked")}};
  form.submit();
})}
attempt("cookie",function(){return "read:"+document.cookie})
.then(function(){return attempt("topCookie",function(){return "read:"+window.top.document.cookie})})
.then(function(){return attempt("fetchTenant",function(){return fetch(ORIGIN+"/console/tenants",{method:"POST",credentials:"include",
  headers:{"Content-Type":"application/x-www-form-urlencoded"},body:"tenant_id="+MARK+"-fetch&enabled=true"}).then(function(r){return "read:"+r.status})})})
.then(function(){return attempt("formTenant",function(){return post("t1","/console/tenants",{tenant_id:MARK+"-form",enabled:"true"})})})
.then(function(){return attempt("formCredential",function(){return post("t2","/console/tenants/acme/credentials",{})})})
.then(function(){return attempt("fetchCredential",function(){return fetch(ORIGIN+"/console/tenants/acme/credentials",{method:"POST",credentials:"include",
  headers:{"Content-Type":"application/x-www-form-urlencoded"},body:""}).then(function(r){return r.text()}).then(function(t){return "read:"+t})})})
.then(function(){return attempt("readConsole",function(){return fetch(ORIGIN+"/console/tenants",{credentials:"include"}).then(function(r){return r.text()}).then(function(t){return "read:"+t.slice(0,200)})})})
.then(function(){return attempt("callAPI",function(){return fetch(ORIGIN+"/api/v1/app_management/tenants",{credentials:"include"}).then(function(r){return "read:"+r.status})})})
.then(function(){return attempt("callEngine",function(){return fetch(ORIGIN+"/engine/api/v1/acme/courses",{credentials:"include"}).then(function(r){return "read:"+r.status})})})
.then(function(){out.done="yes";report()});
</script></body></html>`

// hostilePackage is a one-SCO SCORM 1.2 package whose SCO is hostileSCO, aimed at api and
// marking the tenants it tries to create with mark.
func hostilePackage(t *testing.T, api, mark string) []byte {
	sco := strings.NewReplacer("{{api}}", api, "{{mark}}", mark).Replace(hostileSCO)
	return servertest.ZipOf(t, map[string]string{"imsmanifest.xml": servertest.Manifest12, "sco/index.html": sco})
}

// hostileRun opens the player in the signed-in browser (root's console session) at path on
// the API's origin (the console's preview or a learner's launch link) and returns what the
// hostile SCO reported.
func hostileRun(t *testing.T, ctx context.Context, e *servertest.Env, path string) map[string]string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(e.URL+path)); err != nil {
		t.Fatal(err)
	}
	servertest.WaitJS(t, ctx, `document.getElementById("frame").contentDocument.getElementById("status").textContent`, "commit|true", "the SCO committed through the player's API")
	report := `document.getElementById("frame").contentDocument.getElementById("result").textContent`
	deadline := time.Now().Add(30 * time.Second)
	for {
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](report))
		if err == nil && strings.Contains(raw, `"done":"yes"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the SCO's attempts did not end: %q %v", raw, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("frame").contentDocument.getElementById("result").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("the SCO's report %q: %v", raw, err)
	}
	return out
}

// tenantExists asks the API (root) whether a tenant exists.
func tenantExists(e *servertest.Env, id string) bool {
	r := e.Do("GET", "/api/v1/app_management/tenants?limit=1000", servertest.Root, nil)
	e.Expect(r, 200, "tenant list")
	return strings.Contains(string(r.Body), `"`+id+`"`)
}

// credentialCount is how many credentials tenant has.
func credentialCount(e *servertest.Env, tenantID string) int {
	r := e.Do("GET", "/api/v1/app_management/tenants/"+tenantID+"/credentials", servertest.Root, nil)
	e.Expect(r, 200, "credential list")
	var l struct{ Credentials []json.RawMessage }
	r.JSON(e.T, &l)
	return len(l.Credentials)
}

// TestHostilePackageInBrowser (issue 22, item 2): a package a tenant uploaded runs its script
// when root previews it from the console and when a learner (in the same browser, signed in
// to the console) launches it. On the content origin the script completes its SCO as before,
// but creates no tenant, issues and reads no credential, reads nothing of the console and
// calls no API with the viewer's session. The control case runs the same package with the
// player on the console's origin, where the same script does all of that: the test can tell.
func TestHostilePackageInBrowser(t *testing.T) {
	check := func(t *testing.T, e *servertest.Env, isolated bool) {
		e.CreateTenant("acme", true)
		e.ImportOK("acme", "preview", hostilePackage(t, e.URL, "pwned-preview"), "")
		e.ImportOK("acme", "learner", hostilePackage(t, e.URL, "pwned-learner"), "")
		e.Expect(e.Do("POST", "/engine/api/v1/acme/registrations", servertest.Root, map[string]any{"courseId": "learner", "registrationId": "r1",
			"learner": map[string]any{"id": "ann", "firstName": "Ann", "lastName": "Lee"}}), 204, "registration")
		creds := credentialCount(e, "acme")
		ctx := servertest.Browser(t)
		servertest.ConsoleSignIn(t, ctx, e, servertest.RootUser, servertest.RootPass)
		servertest.WaitJS(t, ctx, `document.querySelector("h1").textContent`, "Tenants", "root is signed in")
		runs := map[string]map[string]string{
			"preview": hostileRun(t, ctx, e, "/console/t/acme/courses/preview/preview"),
			"learner": hostileRun(t, ctx, e, e.LaunchPath("/engine/api/v1/acme/registrations/r1/launchLink")),
		}
		for who, out := range runs {
			short := map[string]string{}
			for k, v := range out {
				short[k] = servertest.Truncate([]byte(v), 60)
			}
			t.Logf("%s (isolated %v): %v", who, isolated, short)
			created := tenantExists(e, "pwned-"+who+"-fetch") || tenantExists(e, "pwned-"+who+"-form")
			if !isolated {
				if !created || !strings.Contains(out["fetchCredential"], "issued-secret") || !strings.HasPrefix(out["readConsole"], "read:") {
					t.Errorf("%s, player on the console's origin: the control attack did not work (%v), so the test cannot tell", who, short)
				}
				continue
			}
			if created {
				t.Errorf("%s: the package created a tenant through the viewer's console session", who)
			}
			for _, k := range []string{"formTenant", "formCredential", "fetchCredential", "readConsole", "callAPI", "callEngine", "fetchTenant"} {
				if out[k] != "blocked" {
					t.Errorf("%s: %s got %q, want it blocked", who, k, out[k])
				}
			}
			if out["cookie"] != "read:" || out["topCookie"] != "read:" {
				t.Errorf("%s: the content sees cookies %q (its page), %q (the player's)", who, out["cookie"], out["topCookie"])
			}
		}
		if isolated && credentialCount(e, "acme") != creds {
			t.Errorf("the package issued a credential: %d, had %d", credentialCount(e, "acme"), creds)
		}
		if !isolated {
			return
		}
		// The learner's run still counted: the SCO's completion reached the registration.
		servertest.Eventually(t, 20*time.Second, "the hostile SCO's completion on the registration", func() bool {
			r := e.Do("GET", "/engine/api/v1/acme/registrations/r1/progress", servertest.Root, nil)
			return r.Status == 200 && strings.Contains(string(r.Body), `"registrationCompletion":"COMPLETED"`)
		})
	}
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) { check(t, e, true) })
	t.Run("control: player on the console's origin", func(t *testing.T) {
		check(t, servertest.StartServer(t, servertest.Modes(t)["embedded"](t), false), false)
	})
}
