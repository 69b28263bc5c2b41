package lrsapi_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

type reportResults struct {
	Results []struct {
		Date   string `json:"date"`
		Result struct {
			Score *struct {
				Raw *float64 `json:"raw"`
			} `json:"score"`
			Success    *bool  `json:"success"`
			Completion *bool  `json:"completion"`
			Duration   string `json:"duration"`
		} `json:"result"`
		Actor    map[string]any `json:"actor"`
		Activity struct {
			ObjectType string `json:"objectType"`
			ID         string `json:"id"`
			Definition struct {
				Name map[string]string `json:"name"`
			} `json:"definition"`
		} `json:"activity"`
	} `json:"results"`
	More *string `json:"more"`
}

type reportList struct {
	Results []map[string]any `json:"results"`
}

func accountActor(name string) map[string]any {
	return map[string]any{"objectType": "Agent", "name": strings.ToUpper(name[:1]) + name[1:],
		"account": map[string]any{"homePage": "https://lms.example.com", "name": name}}
}

func scored(actor map[string]any, object string, result map[string]any) map[string]any {
	s := servertest.Statement("x@example.com", "completed", object)
	s["actor"] = actor
	s["timestamp"] = "2024-05-01T10:00:00Z"
	if result != nil {
		s["result"] = result
	}
	return s
}

func ids(list []map[string]any, key string) []string {
	var out []string
	for _, m := range list {
		switch v := m[key].(type) {
		case string:
			out = append(out, v)
		case map[string]any: // account
			out = append(out, fmt.Sprint(v["name"]))
		}
	}
	return out
}

func TestLRSReports(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		e.CreateTenant("beta", true)
		base := servertest.LRS + "/acme"
		ann, bob := accountActor("ann"), map[string]any{"mbox": "mailto:bob@example.com", "name": "Bob"}
		carl := map[string]any{"mbox": "mailto:carl@example.com"}
		a1, a2, a3 := "http://example.com/quiz/1", "http://example.com/quiz/2", "http://example.com/page/3"
		batch := []any{
			scored(ann, a1, map[string]any{"score": map[string]any{"raw": 8, "min": 0, "max": 10}, "success": true, "completion": true, "duration": "PT2M30S"}),
			scored(ann, a2, map[string]any{"success": false}),
			scored(bob, a1, map[string]any{"score": map[string]any{"raw": 4.5}, "completion": false}),
			scored(carl, a3, nil), // no result: counts for activities and actors, not results
		}
		e.Expect(e.Do("POST", base+"/statements", servertest.Root, batch, servertest.V200...), 200, "post statements")
		annQ := url.QueryEscape(`{"account":{"homePage":"https://lms.example.com","name":"ann"}}`)

		get := func(path string, a servertest.Auth, status int, v any) servertest.Resp {
			t.Helper()
			r := e.Do("GET", path, a, nil, servertest.V103...)
			e.Expect(r, status, "GET "+path)
			if v != nil {
				r.JSON(t, v)
			}
			return r
		}

		// results by agent: every field of the entry.
		var res reportResults
		r := get(base+"/Report/results?agent="+annQ, servertest.Root, 200, &res)
		if r.Header.Get("X-Experience-API-Version") == "" {
			t.Error("report response without X-Experience-API-Version")
		}
		if len(res.Results) != 2 || res.More == nil || *res.More != "" {
			t.Fatalf("results for ann: %s", r.Body)
		}
		var first = res.Results[1] // newest first: a2 was stored after a1
		if res.Results[0].Activity.ID != a2 || first.Activity.ID != a1 {
			t.Fatalf("order: %s", r.Body)
		}
		if first.Date != "2024-05-01T10:00:00Z" || first.Result.Score == nil || *first.Result.Score.Raw != 8 ||
			!*first.Result.Success || !*first.Result.Completion || first.Result.Duration != "PT2M30S" ||
			first.Actor["objectType"] != "Agent" || first.Actor["name"] != "Ann" ||
			first.Actor["account"].(map[string]any)["homePage"] != "https://lms.example.com" ||
			first.Activity.ObjectType != "Activity" || first.Activity.Definition.Name["en-US"] != "Activity" {
			t.Errorf("entry: %+v", first)
		}
		if res.Results[0].Result.Score != nil || res.Results[0].Result.Completion != nil || *res.Results[0].Result.Success {
			t.Errorf("absent result properties must be absent: %s", r.Body)
		}
		// by activity, and by both.
		get(base+"/Report/results?activity="+url.QueryEscape(a1), servertest.Root, 200, &res)
		if len(res.Results) != 2 {
			t.Errorf("results for a1: %d", len(res.Results))
		}
		get(base+"/Report/results?activity="+url.QueryEscape(a1)+"&agent="+annQ, servertest.Root, 200, &res)
		if len(res.Results) != 1 || res.Results[0].Actor["name"] != "Ann" {
			t.Errorf("results for ann on a1: %+v", res.Results)
		}
		// Not found: no statement, or only statements without a result.
		get(base+"/Report/results?activity="+url.QueryEscape("http://example.com/none"), servertest.Root, 404, nil)
		get(base+"/Report/results?agent="+url.QueryEscape(`{"mbox":"mailto:carl@example.com"}`), servertest.Root, 404, nil)
		// Neither parameter, bad or unknown parameters: 400.
		get(base+"/Report/results", servertest.Root, 400, nil)
		get(base+"/Report/results?agent=nope", servertest.Root, 400, nil)
		get(base+"/Report/results?activity=not%20an%20iri", servertest.Root, 400, nil)
		get(base+"/Report/results?verb=x&activity="+url.QueryEscape(a1), servertest.Root, 400, nil)
		get(base+"/Report/results?more=garbage", servertest.Root, 400, nil)
		get(base+"/Report/activities?activity=x", servertest.Root, 400, nil)
		get(base+"/Report/actors?agent="+annQ, servertest.Root, 400, nil)
		e.Expect(e.Do("GET", base+"/Report/results?agent="+annQ, servertest.Root, nil), 400, "no version header")
		e.Expect(e.Do("GET", base+"/Report/results?agent="+annQ, servertest.NoAuth, nil, servertest.V103...), 401, "no credentials")

		// Paging: 150 results of one learner come in two pages linked by more.
		pat := map[string]any{"mbox": "mailto:pat@example.com"}
		var many []any
		for i := 0; i < 150; i++ {
			many = append(many, scored(pat, fmt.Sprintf("http://example.com/item/%d", i%3), map[string]any{"score": map[string]any{"raw": i}}))
		}
		e.Expect(e.Do("POST", base+"/statements", servertest.Root, many, servertest.V200...), 200, "post 150")
		get(base+"/Report/results?agent="+url.QueryEscape(`{"mbox":"mailto:pat@example.com"}`), servertest.Root, 200, &res)
		seen := len(res.Results)
		if res.More == nil || !strings.HasPrefix(*res.More, servertest.LRS+"/acme/Report/results?more=") {
			t.Fatalf("first page: %d results, more %v", seen, res.More)
		}
		get(*res.More+"&activity=x", servertest.Root, 400, nil) // the continuation is sent alone
		get(*res.More, servertest.Root, 200, &res)
		if seen += len(res.Results); seen != 150 || *res.More != "" {
			t.Fatalf("paging saw %d results, more %q", seen, *res.More)
		}

		// activities: all, with the canonical definition; or those of one agent.
		var list reportList
		get(base+"/Report/activities", servertest.Root, 200, &list)
		if got := ids(list.Results, "id"); len(got) != 6 || got[0] != "http://example.com/item/0" || got[3] != a3 || got[4] != a1 || got[5] != a2 {
			t.Errorf("all activities: %v", got)
		}
		if d, _ := list.Results[4]["definition"].(map[string]any); d == nil || d["name"].(map[string]any)["de-DE"] != "Aktivität" {
			t.Errorf("activity without definition.name: %v", list.Results[4])
		}
		get(base+"/Report/activities?agent="+annQ, servertest.Root, 200, &list)
		if got := ids(list.Results, "id"); len(got) != 2 || got[0] != a1 || got[1] != a2 {
			t.Errorf("ann's activities: %v", got)
		}
		get(base+"/Report/activities?agent="+url.QueryEscape(`{"mbox":"mailto:nobody@example.com"}`), servertest.Root, 200, &list)
		if list.Results == nil || len(list.Results) != 0 {
			t.Errorf("activities of an unknown agent: %v", list.Results)
		}

		// actors: of one activity, or all; 404 when nothing matches.
		get(base+"/Report/actors?activity="+url.QueryEscape(a1), servertest.Root, 200, &list)
		if got := ids(list.Results, "account"); len(got) != 1 || got[0] != "ann" || len(list.Results) != 2 || list.Results[1]["mbox"] != "mailto:bob@example.com" {
			t.Errorf("actors of a1: %v", list.Results)
		}
		get(base+"/Report/actors", servertest.Root, 200, &list)
		if len(list.Results) != 4 {
			t.Errorf("all actors: %v", list.Results)
		}
		get(base+"/Report/actors?activity="+url.QueryEscape("http://example.com/none"), servertest.Root, 404, nil)

		// An actor is shown as its latest statement names it; an anonymous group stands for its
		// identified members; a voided statement counts nowhere.
		a4 := "http://example.com/quiz/4"
		renamed := accountActor("ann")
		renamed["name"] = "Ann Smith"
		group := map[string]any{"objectType": "Group", "member": []any{map[string]any{"mbox": "mailto:dora@example.com", "name": "Dora"}}}
		voidMe := scored(group, a4, map[string]any{"success": true})
		voidMe["id"] = "5e7a9a40-0000-4000-8000-00000000000a"
		e.Expect(e.Do("POST", base+"/statements", servertest.Root, []any{scored(renamed, a4, map[string]any{"completion": true}), voidMe}, servertest.V200...), 200, "post a4")
		get(base+"/Report/actors?activity="+url.QueryEscape(a4), servertest.Root, 200, &list)
		if len(list.Results) != 2 || list.Results[0]["name"] != "Ann Smith" || list.Results[1]["mbox"] != "mailto:dora@example.com" || list.Results[1]["name"] != "Dora" {
			t.Errorf("actors of a4: %v", list.Results)
		}
		void := map[string]any{"actor": map[string]any{"mbox": "mailto:x@example.com"},
			"verb": map[string]any{"id": "http://adlnet.gov/expapi/verbs/voided"}, "object": map[string]any{"objectType": "StatementRef", "id": voidMe["id"]}}
		e.Expect(e.Do("POST", base+"/statements", servertest.Root, void, servertest.V200...), 200, "void")
		get(base+"/Report/actors?activity="+url.QueryEscape(a4), servertest.Root, 200, &list)
		if len(list.Results) != 1 || list.Results[0]["name"] != "Ann Smith" {
			t.Errorf("actors of a4 after voiding dora's statement: %v", list.Results)
		}
		get(base+"/Report/results?agent="+url.QueryEscape(`{"mbox":"mailto:dora@example.com"}`), servertest.Root, 404, nil)
		get(base+"/Report/results?activity="+url.QueryEscape(a4), servertest.Root, 200, &res)
		if len(res.Results) != 1 || res.Results[0].Actor["name"] != "Ann Smith" {
			t.Errorf("results of a4 after voiding: %+v", res.Results)
		}

		// Tenants: the credential's tenant without a segment, isolation, CORS.
		key, secret := e.Credential("acme")
		get(servertest.LRS+"/Report/actors?activity="+url.QueryEscape(a1), servertest.Bearer(key, secret), 200, &list)
		if len(list.Results) != 2 {
			t.Errorf("tenant-less path with acme's credential: %v", list.Results)
		}
		bk, bs := e.Credential("beta")
		get(base+"/Report/actors", servertest.Bearer(bk, bs), 403, nil)
		get(servertest.LRS+"/Report/actors", servertest.Bearer(bk, bs), 404, nil)
		get(servertest.LRS+"/beta/Report/activities", servertest.Root, 200, &list)
		if len(list.Results) != 0 {
			t.Errorf("tenant beta sees acme's activities: %v", list.Results)
		}
		get(servertest.LRS+"/nosuch/Report/activities", servertest.Root, 404, nil)
		r = e.Do("GET", base+"/Report/activities", servertest.Root, nil, hdr(servertest.V200, "Origin", "https://app.example")...)
		if r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
			t.Errorf("CORS: %v", r.Header)
		}
		if r := e.Do("OPTIONS", base+"/Report/results", servertest.NoAuth, nil, "Origin", "https://app.example"); r.Status != 204 {
			t.Errorf("preflight: %d", r.Status)
		}

		// A person account sees only the statements it appears in (the default read rule).
		e.Expect(e.Do("PUT", "/engine/api/v1/acme/configuration/TinCanBasicAccounts", servertest.Root, map[string]any{"value": "kim:kim-pass:person,viewer:v-pass:readonly"}), 204, "accounts")
		kim, viewer := servertest.Basic("kim", "kim-pass"), servertest.Basic("viewer", "v-pass")
		e.Expect(e.Do("POST", base+"/statements", kim, scored(carl, a1, map[string]any{"success": true}), servertest.V200...), 200, "person posts")
		get(base+"/Report/results?activity="+url.QueryEscape(a1), kim, 200, &res)
		if len(res.Results) != 1 || res.Results[0].Actor["mbox"] != "mailto:carl@example.com" {
			t.Errorf("person's results: %+v", res.Results)
		}
		get(base+"/Report/results?agent="+annQ, kim, 404, nil)
		get(base+"/Report/actors", kim, 200, &list)
		if len(list.Results) != 1 {
			t.Errorf("person's actors: %v", list.Results)
		}
		get(base+"/Report/results?activity="+url.QueryEscape(a1), viewer, 200, &res)
		if len(res.Results) != 3 {
			t.Errorf("read-only account's results on a1: %d", len(res.Results))
		}

		// activities and actors come in pages of 1000 linked by more, under the tenant path.
		var wide []any
		for i := 0; i < 1001; i++ {
			wide = append(wide, map[string]any{"actor": map[string]any{"mbox": fmt.Sprintf("mailto:w%04d@example.com", i)},
				"verb": map[string]any{"id": "http://adlnet.gov/expapi/verbs/experienced"}, "object": map[string]any{"id": fmt.Sprintf("http://example.com/w/%04d", i)}})
		}
		e.Expect(e.Do("POST", servertest.LRS+"/beta/statements", servertest.Root, wide, servertest.V200...), 200, "post 1001")
		for _, name := range []string{"activities", "actors"} {
			var page struct {
				Results []map[string]any `json:"results"`
				More    string           `json:"more"`
			}
			get(servertest.LRS+"/beta/Report/"+name, servertest.Root, 200, &page)
			if len(page.Results) != 1000 || !strings.HasPrefix(page.More, servertest.LRS+"/beta/Report/"+name+"?more=") {
				t.Fatalf("%s first page: %d, more %q", name, len(page.Results), page.More)
			}
			first := fmt.Sprint(page.Results[0])
			get(page.More, servertest.Root, 200, &page)
			if len(page.Results) != 1 || page.More != "" || fmt.Sprint(page.Results[0]) == first {
				t.Errorf("%s second page: %v, more %q", name, page.Results, page.More)
			}
		}
	})
}
