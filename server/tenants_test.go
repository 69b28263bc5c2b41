package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestTenants(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		const base = "/api/v1/app_management/tenants"
		r := e.do("POST", base, root, map[string]any{"tenant_id": "a"})
		e.expect(r, 201, "create a")
		var tn struct {
			TenantID string `json:"tenant_id"`
			Enabled  bool   `json:"enabled"`
			Create   string `json:"create_dt"`
			Update   string `json:"update_dt"`
		}
		r.json(t, &tn)
		if tn.TenantID != "a" || !tn.Enabled || tn.Create == "" || tn.Update == "" {
			t.Fatalf("created tenant: %s", r.Body)
		}
		// Ids are case-sensitive: A is another tenant.
		e.expect(e.do("POST", base, root, map[string]any{"tenant_id": "A", "enabled": false}), 201, "create A")
		r = e.do("POST", base, root, map[string]any{"tenant_id": "a"})
		e.expect(r, 409, "duplicate a")
		if !strings.Contains(r.message(), "'a'") {
			t.Errorf("duplicate message does not name the tenant: %q", r.message())
		}
		// for_engine lowercases.
		r = e.do("POST", base+"?for_engine=true", root, map[string]any{"tenant_id": "MixedCase"})
		e.expect(r, 201, "engine tenant")
		r.json(t, &tn)
		if tn.TenantID != "mixedcase" {
			t.Fatalf("for_engine kept case: %s", tn.TenantID)
		}
		e.expect(e.do("POST", base, root, map[string]any{"enabled": true}), 400, "missing tenant_id")
		e.expect(e.do("POST", base, root, map[string]any{"tenant_id": "statements"}), 400, "reserved id")
		e.expect(e.do("POST", base, root, map[string]any{"tenant_id": "a/b"}), 400, "slash in id")
		e.expect(e.do("POST", base+"?for_engine=maybe", root, map[string]any{"tenant_id": "x"}), 400, "bad for_engine")

		// List with paging, ordered by id.
		for i := 0; i < 5; i++ {
			e.createTenant(fmt.Sprintf("p%d", i), true)
		}
		var list struct {
			Tenants []struct {
				TenantID string `json:"tenant_id"`
				Enabled  bool   `json:"enabled"`
			} `json:"tenants"`
		}
		r = e.do("GET", base+"?skip=2&limit=3", root, nil)
		e.expect(r, 200, "list")
		r.json(t, &list)
		var got []string
		for _, x := range list.Tenants {
			got = append(got, x.TenantID)
		}
		// Sorted: A, a, mixedcase, p0..p4 → skip 2 → mixedcase, p0, p1.
		if strings.Join(got, ",") != "mixedcase,p0,p1" {
			t.Fatalf("paged list: %v", got)
		}
		e.expect(e.do("GET", base+"?limit=0", root, nil), 400, "limit 0")

		// PUT enabled.
		r = e.do("PUT", base+"/A", root, map[string]any{"enabled": true})
		e.expect(r, 200, "enable A")
		r.json(t, &tn)
		if !tn.Enabled || tn.TenantID != "A" {
			t.Fatalf("PUT result: %s", r.Body)
		}
		e.expect(e.do("PUT", base+"/nope", root, map[string]any{"enabled": true}), 404, "PUT unknown")
		e.expect(e.do("PUT", base+"/A", root, map[string]any{"enabled": true, "extra": 1}), 400, "PUT extra property")
		e.expect(e.do("PUT", base+"/A", root, map[string]any{}), 400, "PUT without enabled")
	})
}

func TestCredentials(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		key, secret := e.credential("acme")
		// Both Basic and Bearer authenticate the tenant's credential.
		e.expect(e.do("GET", "/engine/api/v1/acme/configuration", basic(key, secret), nil), 200, "basic")
		e.expect(e.do("GET", "/engine/api/v1/ACME/configuration", bearer(key, secret), nil), 200, "bearer, uppercase tenant segment")
		e.expect(e.do("GET", "/engine/api/v1/acme/configuration", basic(key, secret+"x"), nil), 401, "wrong secret")
		// App management is root-only.
		e.expect(e.do("GET", "/api/v1/app_management/tenants", basic(key, secret), nil), 403, "tenant lists tenants")
		// Listing shows keys, never secrets.
		r := e.do("GET", "/api/v1/app_management/tenants/acme/credentials", root, nil)
		e.expect(r, 200, "list credentials")
		if !strings.Contains(string(r.Body), key) || strings.Contains(string(r.Body), secret) {
			t.Fatalf("credential list: %s", r.Body)
		}
		e.expect(e.do("DELETE", "/api/v1/app_management/tenants/acme/credentials/"+key, root, nil), 204, "revoke")
		e.expect(e.do("GET", "/engine/api/v1/acme/configuration", basic(key, secret), nil), 401, "revoked credential")
		e.expect(e.do("DELETE", "/api/v1/app_management/tenants/acme/credentials/"+key, root, nil), 404, "revoke twice")
		e.expect(e.do("POST", "/api/v1/app_management/tenants/nope/credentials", root, nil), 404, "credential for unknown tenant")
		// A disabled tenant still authenticates and reads, but refuses writes.
		k2, s2 := e.credential("acme")
		e.expect(e.do("PUT", "/api/v1/app_management/tenants/acme", root, map[string]any{"enabled": false}), 200, "disable")
		e.expect(e.do("GET", "/engine/api/v1/acme/configuration", basic(k2, s2), nil), 200, "read while disabled")
		r = e.do("PUT", "/engine/api/v1/acme/configuration/ApiResultLimit", basic(k2, s2), map[string]any{"value": "5"})
		e.expect(r, 409, "write while disabled")
		if !strings.Contains(r.message(), "disabled") {
			t.Errorf("409 message: %q", r.message())
		}
		e.expect(e.do("DELETE", "/api/v1/app_management/tenants/acme", root, nil), 409, "delete while disabled")
	})
}

func TestConfiguration(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("acme", true)
		const cfg = "/engine/api/v1/acme/configuration"
		var list struct {
			Items []struct{ ID, Value string } `json:"configurationItems"`
		}
		r := e.do("GET", cfg+"?configuration=anything", root, nil)
		e.expect(r, 200, "list")
		r.json(t, &list)
		all := map[string]string{}
		for _, it := range list.Items {
			all[it.ID] = it.Value
		}
		for _, id := range []string{"ApiResultLimit", "xAPIEnabled", "EnableExistingActivityIdParserWarnings", "TinCanRootAccount"} {
			if _, ok := all[id]; !ok {
				t.Errorf("configuration list lacks %s", id)
			}
		}
		if len(all) != e.app.Settings.Catalogue().Len() {
			t.Errorf("list has %d settings, catalogue %d", len(all), e.app.Settings.Catalogue().Len())
		}

		// Booleans accept YES/NO and read back canonical.
		e.expect(e.do("PUT", cfg+"/xAPIEnabled", root, map[string]any{"value": "NO"}), 204, "put bool")
		r = e.do("GET", cfg+"/xAPIEnabled", root, nil)
		e.expect(r, 200, "get bool")
		if string(bytes.TrimSpace(r.Body)) != `{"value":"false"}` {
			t.Fatalf("bool read back as %s", r.Body)
		}
		e.expect(e.do("PUT", cfg+"/ApiResultLimit", root, map[string]any{"value": "25"}), 204, "put int")
		r = e.do("GET", cfg, root, nil)
		r.json(t, &list)
		for _, it := range list.Items {
			if it.ID == "ApiResultLimit" && it.Value != "25" {
				t.Fatalf("effective ApiResultLimit %q", it.Value)
			}
		}

		r = e.do("PUT", cfg+"/ApiResultLimit", root, map[string]any{"value": "lots"})
		e.expect(r, 400, "wrong type")
		if !strings.Contains(r.message(), "ApiResultLimit") {
			t.Errorf("wrong-type message does not name the setting: %q", r.message())
		}
		e.expect(e.do("PUT", cfg+"/NoSuchSetting", root, map[string]any{"value": "1"}), 400, "PUT unknown id")
		e.expect(e.do("GET", cfg+"/NoSuchSetting", root, nil), 404, "GET unknown id")
		e.expect(e.do("PUT", cfg+"/ApiResultLimit", root, map[string]any{"value": "5", "other": "x"}), 400, "extra property")
		e.expect(e.do("PUT", cfg+"/ApiResultLimit", root, map[string]any{}), 400, "no value")

		// Secret settings are write-only.
		e.expect(e.do("PUT", cfg+"/TinCanRootAccount", root, map[string]any{"value": "lrsroot:hunter2"}), 204, "put secret")
		if r := e.do("GET", cfg+"/TinCanRootAccount", root, nil); strings.Contains(string(r.Body), "hunter2") {
			t.Fatalf("secret readable: %s", r.Body)
		}
		if r := e.do("GET", cfg, root, nil); strings.Contains(string(r.Body), "hunter2") {
			t.Fatalf("secret in list: %s", r.Body)
		}
		layer, err := e.app.Settings.TenantLayer(context.Background(), "acme")
		if err != nil || layer.Values["TinCanRootAccount"] != "lrsroot:hunter2" {
			t.Fatalf("secret not kept for the engine: %v %v", layer.Values, err)
		}

		r = e.do("GET", "/engine/api/v1/nosuch/configuration", root, nil)
		e.expect(r, 404, "unknown tenant")
		if r.message() != "tenant 'nosuch' not found" {
			t.Fatalf("unknown tenant message %q", r.message())
		}
	})
}

func TestTenantDeleteRemovesEverything(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.createTenant("doomed", true)
		e.createTenant("doomed2", true)
		key, secret := e.credential("doomed")
		e.expect(e.do("PUT", "/engine/api/v1/doomed/configuration/ApiResultLimit", root, map[string]any{"value": "7"}), 204, "setting")
		e.expect(e.do("PUT", "/engine/api/v1/doomed2/configuration/ApiResultLimit", root, map[string]any{"value": "9"}), 204, "setting 2")
		for _, k := range []string{"doomed/course/v0/index.html", "doomed2/course/v0/index.html"} {
			if _, err := e.app.Blobs.Put(ctx, k, strings.NewReader("<html>"), 6); err != nil {
				t.Fatal(err)
			}
		}
		r := e.do("DELETE", "/api/v1/app_management/tenants/doomed", root, nil)
		e.expect(r, 202, "delete")
		var job struct{ ID, Status, Type string }
		r.json(t, &job)
		if job.ID == "" || job.Type != "TENANT_DELETE" {
			t.Fatalf("delete answer: %s", r.Body)
		}
		// Gone for the APIs at once.
		e.expect(e.do("GET", "/engine/api/v1/doomed/configuration", root, nil), 404, "deleted tenant")
		e.expect(e.do("DELETE", "/api/v1/app_management/tenants/doomed", root, nil), 404, "delete twice")
		eventually(t, 30*time.Second, "tenant delete job", func() bool {
			r := e.do("GET", "/api/v1/jobs/"+job.ID, root, nil)
			r.json(t, &job)
			return job.Status == "COMPLETED"
		})
		if _, _, err := e.app.Blobs.Get(ctx, "doomed/course/v0/index.html"); err == nil {
			t.Fatal("blob of the deleted tenant survived")
		}
		if _, _, err := e.app.Blobs.Get(ctx, "doomed2/course/v0/index.html"); err != nil {
			t.Fatalf("blob of another tenant deleted: %v", err)
		}
		e.expect(e.do("GET", "/engine/api/v1/doomed/configuration", basic(key, secret), nil), 401, "credential of deleted tenant")
		// The id can be used again, and the new tenant starts empty.
		e.createTenant("doomed", true)
		r = e.do("GET", "/engine/api/v1/doomed/configuration/ApiResultLimit", root, nil)
		e.expect(r, 200, "fresh setting")
		if strings.Contains(string(r.Body), `"7"`) {
			t.Fatalf("old setting leaked into the re-created tenant: %s", r.Body)
		}
		r = e.do("GET", "/engine/api/v1/doomed2/configuration/ApiResultLimit", root, nil)
		if !strings.Contains(string(r.Body), `"9"`) {
			t.Fatalf("other tenant's setting lost: %s", r.Body)
		}
	})
}

func TestErrorModel(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r := e.do("GET", "/no/such/route", root, nil)
		e.expect(r, 404, "unknown route")
		r = e.do("POST", "/api/v1/app_management/tenants", root, bytes.Repeat([]byte(" "), 2<<20))
		e.expect(r, 413, "JSON body over its limit")
		// Over the limit the server answers after the first bytes of the body (fasthttp reads
		// 8 KiB ahead), without waiting for the 64 MiB announced.
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /api/v1/app_management/tenants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", 64<<20, strings.Repeat(" ", 9000))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer to an oversized request: %v", err)
		}
		if res.StatusCode != 413 {
			t.Fatalf("oversized request: %d, want 413", res.StatusCode)
		}
		r = e.do("GET", "/healthz", noAuth, nil)
		e.expect(r, 200, "healthz")
		r = e.do("GET", "/readyz", noAuth, nil)
		e.expect(r, 200, "readyz")
		if r.Header.Get("X-Request-Id") == "" {
			t.Error("no X-Request-Id header")
		}
		r = e.do("GET", "/api/v1/jobs/nope", root, nil)
		e.expect(r, 404, "unknown job")
	})
}
