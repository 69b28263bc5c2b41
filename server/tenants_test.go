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

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

func TestTenants(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		const base = "/api/v1/app_management/tenants"
		r := e.Do("POST", base, servertest.Root, map[string]any{"tenant_id": "a"})
		e.Expect(r, 201, "create a")
		var tn struct {
			TenantID string `json:"tenant_id"`
			Enabled  bool   `json:"enabled"`
			Create   string `json:"create_dt"`
			Update   string `json:"update_dt"`
		}
		r.JSON(t, &tn)
		if tn.TenantID != "a" || !tn.Enabled || tn.Create == "" || tn.Update == "" {
			t.Fatalf("created tenant: %s", r.Body)
		}
		// Ids are case-sensitive: A is another tenant.
		e.Expect(e.Do("POST", base, servertest.Root, map[string]any{"tenant_id": "A", "enabled": false}), 201, "create A")
		r = e.Do("POST", base, servertest.Root, map[string]any{"tenant_id": "a"})
		e.Expect(r, 409, "duplicate a")
		if !strings.Contains(r.Message(), "'a'") {
			t.Errorf("duplicate message does not name the tenant: %q", r.Message())
		}
		// for_engine lowercases.
		r = e.Do("POST", base+"?for_engine=true", servertest.Root, map[string]any{"tenant_id": "MixedCase"})
		e.Expect(r, 201, "engine tenant")
		r.JSON(t, &tn)
		if tn.TenantID != "mixedcase" {
			t.Fatalf("for_engine kept case: %s", tn.TenantID)
		}
		e.Expect(e.Do("POST", base, servertest.Root, map[string]any{"enabled": true}), 400, "missing tenant_id")
		e.Expect(e.Do("POST", base, servertest.Root, map[string]any{"tenant_id": "statements"}), 400, "reserved id")
		e.Expect(e.Do("POST", base, servertest.Root, map[string]any{"tenant_id": "a/b"}), 400, "slash in id")
		e.Expect(e.Do("POST", base+"?for_engine=maybe", servertest.Root, map[string]any{"tenant_id": "x"}), 400, "bad for_engine")

		// List with paging, ordered by id.
		for i := 0; i < 5; i++ {
			e.CreateTenant(fmt.Sprintf("p%d", i), true)
		}
		var list struct {
			Tenants []struct {
				TenantID string `json:"tenant_id"`
				Enabled  bool   `json:"enabled"`
			} `json:"tenants"`
		}
		r = e.Do("GET", base+"?skip=2&limit=3", servertest.Root, nil)
		e.Expect(r, 200, "list")
		r.JSON(t, &list)
		var got []string
		for _, x := range list.Tenants {
			got = append(got, x.TenantID)
		}
		// Sorted: A, a, mixedcase, p0..p4 → skip 2 → mixedcase, p0, p1.
		if strings.Join(got, ",") != "mixedcase,p0,p1" {
			t.Fatalf("paged list: %v", got)
		}
		e.Expect(e.Do("GET", base+"?limit=0", servertest.Root, nil), 400, "limit 0")

		// PUT enabled.
		r = e.Do("PUT", base+"/A", servertest.Root, map[string]any{"enabled": true})
		e.Expect(r, 200, "enable A")
		r.JSON(t, &tn)
		if !tn.Enabled || tn.TenantID != "A" {
			t.Fatalf("PUT result: %s", r.Body)
		}
		e.Expect(e.Do("PUT", base+"/nope", servertest.Root, map[string]any{"enabled": true}), 404, "PUT unknown")
		e.Expect(e.Do("PUT", base+"/A", servertest.Root, map[string]any{"enabled": true, "extra": 1}), 400, "PUT extra property")
		e.Expect(e.Do("PUT", base+"/A", servertest.Root, map[string]any{}), 400, "PUT without enabled")
	})
}

func TestCredentials(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		key, secret := e.Credential("acme")
		// Both Basic and Bearer authenticate the tenant's credential.
		e.Expect(e.Do("GET", "/engine/api/v1/acme/configuration", servertest.Basic(key, secret), nil), 200, "basic")
		e.Expect(e.Do("GET", "/engine/api/v1/ACME/configuration", servertest.Bearer(key, secret), nil), 200, "bearer, uppercase tenant segment")
		e.Expect(e.Do("GET", "/engine/api/v1/acme/configuration", servertest.Basic(key, secret+"x"), nil), 401, "wrong secret")
		// App management is root-only.
		e.Expect(e.Do("GET", "/api/v1/app_management/tenants", servertest.Basic(key, secret), nil), 403, "tenant lists tenants")
		// Listing shows keys, never secrets.
		r := e.Do("GET", "/api/v1/app_management/tenants/acme/credentials", servertest.Root, nil)
		e.Expect(r, 200, "list credentials")
		if !strings.Contains(string(r.Body), key) || strings.Contains(string(r.Body), secret) {
			t.Fatalf("credential list: %s", r.Body)
		}
		e.Expect(e.Do("DELETE", "/api/v1/app_management/tenants/acme/credentials/"+key, servertest.Root, nil), 204, "revoke")
		e.Expect(e.Do("GET", "/engine/api/v1/acme/configuration", servertest.Basic(key, secret), nil), 401, "revoked credential")
		e.Expect(e.Do("DELETE", "/api/v1/app_management/tenants/acme/credentials/"+key, servertest.Root, nil), 404, "revoke twice")
		e.Expect(e.Do("POST", "/api/v1/app_management/tenants/nope/credentials", servertest.Root, nil), 404, "credential for unknown tenant")
		// A disabled tenant still authenticates and reads, but refuses writes.
		k2, s2 := e.Credential("acme")
		e.Expect(e.Do("PUT", "/api/v1/app_management/tenants/acme", servertest.Root, map[string]any{"enabled": false}), 200, "disable")
		e.Expect(e.Do("GET", "/engine/api/v1/acme/configuration", servertest.Basic(k2, s2), nil), 200, "read while disabled")
		r = e.Do("PUT", "/engine/api/v1/acme/configuration/ApiResultLimit", servertest.Basic(k2, s2), map[string]any{"value": "5"})
		e.Expect(r, 409, "write while disabled")
		if !strings.Contains(r.Message(), "disabled") {
			t.Errorf("409 message: %q", r.Message())
		}
		e.Expect(e.Do("DELETE", "/api/v1/app_management/tenants/acme", servertest.Root, nil), 409, "delete while disabled")
	})
}

func TestConfiguration(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		const cfg = "/engine/api/v1/acme/configuration"
		var list struct {
			Items []struct{ ID, Value string } `json:"configurationItems"`
		}
		r := e.Do("GET", cfg+"?configuration=anything", servertest.Root, nil)
		e.Expect(r, 200, "list")
		r.JSON(t, &list)
		all := map[string]string{}
		for _, it := range list.Items {
			all[it.ID] = it.Value
		}
		for _, id := range []string{"ApiResultLimit", "xAPIEnabled", "EnableExistingActivityIdParserWarnings", "TinCanRootAccount"} {
			if _, ok := all[id]; !ok {
				t.Errorf("configuration list lacks %s", id)
			}
		}
		if len(all) != e.App.Settings.Catalogue().Len() {
			t.Errorf("list has %d settings, catalogue %d", len(all), e.App.Settings.Catalogue().Len())
		}

		// Booleans accept YES/NO and read back canonical.
		e.Expect(e.Do("PUT", cfg+"/xAPIEnabled", servertest.Root, map[string]any{"value": "NO"}), 204, "put bool")
		r = e.Do("GET", cfg+"/xAPIEnabled", servertest.Root, nil)
		e.Expect(r, 200, "get bool")
		if string(bytes.TrimSpace(r.Body)) != `{"value":"false"}` {
			t.Fatalf("bool read back as %s", r.Body)
		}
		e.Expect(e.Do("PUT", cfg+"/ApiResultLimit", servertest.Root, map[string]any{"value": "25"}), 204, "put int")
		r = e.Do("GET", cfg, servertest.Root, nil)
		r.JSON(t, &list)
		for _, it := range list.Items {
			if it.ID == "ApiResultLimit" && it.Value != "25" {
				t.Fatalf("effective ApiResultLimit %q", it.Value)
			}
		}

		r = e.Do("PUT", cfg+"/ApiResultLimit", servertest.Root, map[string]any{"value": "lots"})
		e.Expect(r, 400, "wrong type")
		if !strings.Contains(r.Message(), "ApiResultLimit") {
			t.Errorf("wrong-type message does not name the setting: %q", r.Message())
		}
		e.Expect(e.Do("PUT", cfg+"/NoSuchSetting", servertest.Root, map[string]any{"value": "1"}), 400, "PUT unknown id")
		e.Expect(e.Do("GET", cfg+"/NoSuchSetting", servertest.Root, nil), 404, "GET unknown id")
		e.Expect(e.Do("PUT", cfg+"/ApiResultLimit", servertest.Root, map[string]any{"value": "5", "other": "x"}), 400, "extra property")
		e.Expect(e.Do("PUT", cfg+"/ApiResultLimit", servertest.Root, map[string]any{}), 400, "no value")

		// Secret settings are write-only.
		e.Expect(e.Do("PUT", cfg+"/TinCanRootAccount", servertest.Root, map[string]any{"value": "lrsroot:hunter2"}), 204, "put secret")
		if r := e.Do("GET", cfg+"/TinCanRootAccount", servertest.Root, nil); strings.Contains(string(r.Body), "hunter2") {
			t.Fatalf("secret readable: %s", r.Body)
		}
		if r := e.Do("GET", cfg, servertest.Root, nil); strings.Contains(string(r.Body), "hunter2") {
			t.Fatalf("secret in list: %s", r.Body)
		}
		layer, err := e.App.Settings.TenantLayer(context.Background(), "acme")
		if err != nil || layer.Values["TinCanRootAccount"] != "lrsroot:hunter2" {
			t.Fatalf("secret not kept for the engine: %v %v", layer.Values, err)
		}

		r = e.Do("GET", "/engine/api/v1/nosuch/configuration", servertest.Root, nil)
		e.Expect(r, 404, "unknown tenant")
		if r.Message() != "tenant 'nosuch' not found" {
			t.Fatalf("unknown tenant message %q", r.Message())
		}
	})
}

func TestTenantDeleteRemovesEverything(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		e.CreateTenant("doomed", true)
		e.CreateTenant("doomed2", true)
		key, secret := e.Credential("doomed")
		e.Expect(e.Do("PUT", "/engine/api/v1/doomed/configuration/ApiResultLimit", servertest.Root, map[string]any{"value": "7"}), 204, "setting")
		e.Expect(e.Do("PUT", "/engine/api/v1/doomed2/configuration/ApiResultLimit", servertest.Root, map[string]any{"value": "9"}), 204, "setting 2")
		for _, k := range []string{"doomed/course/v0/index.html", "doomed2/course/v0/index.html"} {
			if _, err := e.App.Blobs.Put(ctx, k, strings.NewReader("<html>"), 6); err != nil {
				t.Fatal(err)
			}
		}
		r := e.Do("DELETE", "/api/v1/app_management/tenants/doomed", servertest.Root, nil)
		e.Expect(r, 202, "delete")
		var job struct{ ID, Status, Type string }
		r.JSON(t, &job)
		if job.ID == "" || job.Type != "TENANT_DELETE" {
			t.Fatalf("delete answer: %s", r.Body)
		}
		// Gone for the APIs at once.
		e.Expect(e.Do("GET", "/engine/api/v1/doomed/configuration", servertest.Root, nil), 404, "deleted tenant")
		e.Expect(e.Do("DELETE", "/api/v1/app_management/tenants/doomed", servertest.Root, nil), 404, "delete twice")
		servertest.Eventually(t, 30*time.Second, "tenant delete job", func() bool {
			r := e.Do("GET", "/api/v1/jobs/"+job.ID, servertest.Root, nil)
			r.JSON(t, &job)
			return job.Status == "COMPLETED"
		})
		if _, _, err := e.App.Blobs.Get(ctx, "doomed/course/v0/index.html"); err == nil {
			t.Fatal("blob of the deleted tenant survived")
		}
		if _, _, err := e.App.Blobs.Get(ctx, "doomed2/course/v0/index.html"); err != nil {
			t.Fatalf("blob of another tenant deleted: %v", err)
		}
		e.Expect(e.Do("GET", "/engine/api/v1/doomed/configuration", servertest.Basic(key, secret), nil), 401, "credential of deleted tenant")
		// The id can be used again, and the new tenant starts empty.
		e.CreateTenant("doomed", true)
		r = e.Do("GET", "/engine/api/v1/doomed/configuration/ApiResultLimit", servertest.Root, nil)
		e.Expect(r, 200, "fresh setting")
		if strings.Contains(string(r.Body), `"7"`) {
			t.Fatalf("old setting leaked into the re-created tenant: %s", r.Body)
		}
		r = e.Do("GET", "/engine/api/v1/doomed2/configuration/ApiResultLimit", servertest.Root, nil)
		if !strings.Contains(string(r.Body), `"9"`) {
			t.Fatalf("other tenant's setting lost: %s", r.Body)
		}
	})
}

func TestErrorModel(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		r := e.Do("GET", "/no/such/route", servertest.Root, nil)
		e.Expect(r, 404, "unknown route")
		r = e.Do("POST", "/api/v1/app_management/tenants", servertest.Root, bytes.Repeat([]byte(" "), 2<<20))
		e.Expect(r, 413, "JSON body over its limit")
		// Over the limit the server answers after the first bytes of the body (fasthttp reads
		// 8 KiB ahead), without waiting for the 64 MiB announced.
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
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
		r = e.Do("GET", "/healthz", servertest.NoAuth, nil)
		e.Expect(r, 200, "healthz")
		r = e.Do("GET", "/readyz", servertest.NoAuth, nil)
		e.Expect(r, 200, "readyz")
		if r.Header.Get("X-Request-Id") == "" {
			t.Error("no X-Request-Id header")
		}
		r = e.Do("GET", "/api/v1/jobs/nope", servertest.Root, nil)
		e.Expect(r, 404, "unknown job")
	})
}
