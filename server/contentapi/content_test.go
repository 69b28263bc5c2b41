package contentapi_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/storage/record"
)

const fireManifest = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="com.example.fire" version="1.0"
  xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="org1">
    <organization identifier="org1"><title>Fire Extinguisher Training</title>
      <item identifier="i1" identifierref="r1"><title>Using an Extinguisher</title></item>
      <item identifier="i2" identifierref="r2"><title>Evacuation</title></item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="one/index.html"><file href="one/index.html"/></resource>
    <resource identifier="r2" type="webcontent" adlcp:scormtype="sco" href="two/index.html"><file href="two/index.html"/></resource>
  </resources>
</manifest>`

func firePackage(t *testing.T) []byte {
	return servertest.ZipOf(t, map[string]string{"imsmanifest.xml": fireManifest,
		"one/index.html": "<html><body><h1>Using an extinguisher</h1><p>Pull the pin, aim at the base of the flames, squeeze the handle and sweep from side to side.</p></body></html>",
		"two/index.html": "<html><body><h1>Evacuation</h1><p>Leave the building by the nearest exit and gather at the assembly point.</p></body></html>"})
}

// ids lists "content_id:version" of entries, in order.
func hitIDs(hits []map[string]any) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%v:%v", h["content_id"], h["version"]))
	}
	return out
}

func sortedIDs(hits []map[string]any) string {
	s := hitIDs(hits)
	sort.Strings(s)
	return strings.Join(s, ",")
}

func entryKeys(m map[string]any) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestContentImportAndSearch(t *testing.T) {
	modelDir, haveModel := servertest.TestModelDir(t)
	servertest.ForEachModeWithModel(t, modelDir, func(t *testing.T, e *servertest.Env) {
		const ten = "content"
		e.CreateTenant(ten, true)

		// Imports: HTML, Markdown, WebVTT, a SCORM package; each job completes.
		for _, c := range []struct {
			id, tag, file string
			body          []byte
		}{
			{"kitchen", "kitchen", "kitchen.html", []byte(servertest.KitchenHTML)},
			{"garden", "garden", "garden.md", []byte(servertest.GardenMarkdown)},
			{"volcano", "science", "volcano.vtt", []byte(servertest.VolcanoVTT)},
			{"fire", "safety", "fire.zip", firePackage(t)},
		} {
			id, v := e.ImportContent(ten, "content_id="+c.id+"&tag_id="+c.tag, c.body, c.file)
			if id != c.id || v != 1 {
				t.Fatalf("%s imported as %s v%d", c.file, id, v)
			}
		}
		// An import without content_id gets an id; a second import of the same id a new version,
		// here from a URL.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/markdown")
			io.WriteString(w, servertest.GardenMarkdown)
		}))
		defer srv.Close()
		j := e.WaitContentJob(ten, e.Do("POST", "/api/v1/content?content_id=garden&tag_id=garden", servertest.Root,
			map[string]any{"url": srv.URL + "/garden.md"}, "tenant_id", ten))
		if j.Status != "COMPLETED" || j.Results["content_id"] != "garden" || j.Results["version"] != float64(2) {
			t.Fatalf("URL import as a new version: %+v", j)
		}
		e.Expect(e.Do("POST", "/api/v1/content", servertest.Root, map[string]any{"url": "ftp://example.com/x"}, "tenant_id", ten), 400, "ftp url")
		e.Expect(e.Do("POST", "/api/v1/content", servertest.Root, map[string]any{"url": srv.URL, "extra": 1}, "tenant_id", ten), 400, "unknown property")

		// Item detail.
		r := e.Do("GET", "/api/v1/content/kitchen/versions/1", servertest.Root, nil, "tenant_id", ten)
		e.Expect(r, 200, "content version")
		var cv struct {
			ContentID      string   `json:"content_id"`
			Version        int      `json:"version"`
			Title          string   `json:"title"`
			Tags           []string `json:"tags"`
			Active         bool     `json:"active"`
			ContentDetails struct {
				ContentType      string         `json:"content_type"`
				ExistingMetadata map[string]any `json:"existing_metadata"`
				Interactions     []any          `json:"interactions"`
			} `json:"content_details"`
			Created string `json:"create_dt"`
			Updated string `json:"update_dt"`
		}
		r.JSON(t, &cv)
		if cv.ContentID != "kitchen" || cv.Version != 1 || cv.Title != "Kitchen Safety Basics" || !cv.Active ||
			strings.Join(cv.Tags, ",") != "kitchen" || cv.ContentDetails.ContentType != "html" ||
			cv.ContentDetails.Interactions == nil || cv.ContentDetails.ExistingMetadata == nil || cv.Created == "" {
			t.Fatalf("content version: %s", r.Body)
		}
		r = e.Do("GET", "/api/v1/content/fire/versions/1", servertest.Root, nil, "tenant_id", ten)
		e.Expect(r, 200, "package version")
		r.JSON(t, &cv)
		if cv.Title != "Fire Extinguisher Training" || cv.ContentDetails.ContentType == "" {
			t.Fatalf("package version: %s", r.Body)
		}
		e.Expect(e.Do("GET", "/api/v1/content/kitchen/versions/9", servertest.Root, nil, "tenant_id", ten), 404, "unknown version")
		e.Expect(e.Do("GET", "/api/v1/content/kitchen/versions/x", servertest.Root, nil, "tenant_id", ten), 400, "bad version")

		// PATCH: tags and active.
		r = e.Do("PATCH", "/api/v1/content/kitchen/versions/1", servertest.Root, map[string]any{"tags": []string{"kitchen", "food"}}, "tenant_id", ten)
		e.Expect(r, 200, "patch tags")
		r.JSON(t, &cv)
		if strings.Join(cv.Tags, ",") != "food,kitchen" || !cv.Active {
			t.Fatalf("patched: %s", r.Body)
		}
		e.Expect(e.Do("PATCH", "/api/v1/content/garden/versions/1", servertest.Root, map[string]any{"active": false}, "tenant_id", ten), 200, "deactivate")
		e.Expect(e.Do("PATCH", "/api/v1/content/garden/versions/1", servertest.Root, map[string]any{}, "tenant_id", ten), 400, "empty patch")
		e.Expect(e.Do("PATCH", "/api/v1/content/garden/versions/1", servertest.Root, map[string]any{"active": "no"}, "tenant_id", ten), 400, "wrong type")
		e.Expect(e.Do("PATCH", "/api/v1/content/nope/versions/1", servertest.Root, map[string]any{"active": true}, "tenant_id", ten), 404, "patch unknown")

		// List with paging, in update order: the two PATCHed versions come last.
		r = e.Do("GET", "/api/v1/content", servertest.Root, nil, "tenant_id", ten)
		e.Expect(r, 200, "list")
		var list struct {
			Content []struct {
				ContentID string `json:"content_id"`
				Version   int    `json:"version"`
				Active    bool   `json:"active"`
			} `json:"content"`
		}
		r.JSON(t, &list)
		var got []string
		for _, c := range list.Content {
			got = append(got, fmt.Sprintf("%s:%d", c.ContentID, c.Version))
		}
		if strings.Join(got, ",") != "volcano:1,fire:1,garden:2,kitchen:1,garden:1" {
			t.Fatalf("list: %v", got)
		}
		r = e.Do("GET", "/api/v1/content?skip=1&limit=2", servertest.Root, nil, "tenant_id", ten)
		e.Expect(r, 200, "list page")
		r.JSON(t, &list)
		if len(list.Content) != 2 || list.Content[0].ContentID != "fire" || list.Content[1].ContentID != "garden" || list.Content[1].Version != 2 {
			t.Fatalf("list page: %s", r.Body)
		}

		lex := func(term string, kv ...string) []map[string]any {
			return e.SearchContent(ten, servertest.SQ(append([]string{"search_type", "LEXICAL", "term", term}, kv...)...))
		}
		// Keyword search: every lexeme, any order, across sections; tenant-wide entries carry
		// only tenant_id, content_id and version.
		hits := lex("cake carrot")
		if sortedIDs(hits) != "kitchen:1" || entryKeys(hits[0]) != "content_id,tenant_id,version" {
			t.Fatalf("keyword 'cake carrot': %v", hits)
		}
		if sortedIDs(lex("knives icing")) != "kitchen:1" {
			t.Fatal("keyword lexemes from two sections must match the item")
		}
		if len(lex("carrot volcano")) != 0 {
			t.Fatal("keyword search must need every lexeme")
		}
		// Stop words are ignored in keyword searches.
		if a, b := sortedIDs(lex("carrot cake")), sortedIDs(lex("carrot in cake")); a != b || a != "kitchen:1" {
			t.Fatalf("'carrot cake' %s != 'carrot in cake' %s", a, b)
		}
		// Stemming: word roots.
		if sortedIDs(lex("gardeners watering")) != "garden:2" {
			t.Fatalf("stemming: %v", hitIDs(lex("gardeners watering")))
		}
		if sortedIDs(lex("carrots")) != "garden:2,kitchen:1" {
			t.Fatalf("carrots: %v", hitIDs(lex("carrots")))
		}
		// Inactive content only with include_inactive.
		if sortedIDs(lex("carrots", "include_inactive", "true")) != "garden:1,garden:2,kitchen:1" {
			t.Fatalf("include_inactive: %v", hitIDs(lex("carrots", "include_inactive", "true")))
		}
		// Phrase search: in order; a stop word matches any stop word.
		if sortedIDs(lex(`"carrot cake"`)) != "kitchen:1" || len(lex(`"cake carrot"`)) != 0 {
			t.Fatal("phrase search must keep the order")
		}
		if sortedIDs(lex(`"let a cake cool"`)) != "kitchen:1" {
			t.Fatal("a stop word in a phrase must match any stop word")
		}
		if len(lex(`"let cake cool"`)) != 0 {
			t.Fatal("a phrase without the stop word must not match across it")
		}
		// return_match: matched terms for keywords, a regex for phrases; only when asked.
		hits = lex("carrot cake", "return_match", "true")
		if len(hits) != 1 {
			t.Fatalf("return_match: %v", hits)
		}
		m, ok := hits[0]["match"].([]any)
		if !ok || len(m) == 0 {
			t.Fatalf("keyword match: %v", hits[0])
		}
		hits = lex(`"carrot cake"`, "return_match", "true")
		if s, ok := hits[0]["match"].(string); !ok || s == "" {
			t.Fatalf("phrase match: %v", hits[0])
		}
		// Within one item: one entry per matching chunk, with location.
		hits = lex("lava", "content_id", "volcano", "version", "1")
		if len(hits) != 1 || !strings.HasPrefix(fmt.Sprint(hits[0]["location"]), "00:00:") {
			t.Fatalf("location in a transcript: %v", hits)
		}
		hits = lex("extinguisher", "content_id", "fire", "version", "1")
		if len(hits) == 0 || hits[0]["location"] == nil || hits[0]["location"] == "" {
			t.Fatalf("location in a package: %v", hits)
		}
		// Tags.
		if sortedIDs(lex("carrot", "tag_id", "food")) != "kitchen:1" || len(lex("carrot", "tag_id", "science")) != 0 {
			t.Fatal("tag filter")
		}
		if sortedIDs(lex("carrot", "tag_id", "science", "tag_id", "garden")) != "garden:2" {
			t.Fatal("repeated tag_id keeps content carrying any listed tag")
		}
		// skip and limit.
		all := lex("carrots")
		if len(all) != 2 {
			t.Fatalf("carrots: %v", all)
		}
		one := lex("carrots", "limit", "1")
		rest := lex("carrots", "skip", "1")
		if len(one) != 1 || len(rest) != 1 || hitIDs(one)[0] != hitIDs(all)[0] || hitIDs(rest)[0] != hitIDs(all)[1] {
			t.Fatalf("skip/limit: all %v, limit 1 %v, skip 1 %v", hitIDs(all), hitIDs(one), hitIDs(rest))
		}

		// Field search: exact, case-insensitive, over generated fields; no location.
		field := func(term string, kv ...string) []map[string]any {
			return e.SearchContent(ten, servertest.SQ(append([]string{"search_type", "FIELD", "term", term}, kv...)...))
		}
		// (The title is also a keyphrase and a free skill: KEYWORDS and SKILLS are searched in skills_test.go.)
		hits = field("kitchen SAFETY basics", "field", "TITLE,SUMMARY")
		if len(hits) != 1 || hits[0]["content_id"] != "kitchen" || entryKeys(hits[0]) != "content_id,field,tenant_id,version" {
			t.Fatalf("field search: %v", hits)
		}
		f, _ := hits[0]["field"].(map[string]any)
		if f["field_type"] != "TITLE" || f["value"] != "Kitchen Safety Basics" || f["create_dt"] == "" || strings.HasSuffix(fmt.Sprint(f["update_dt"]), "Z") {
			t.Fatalf("field: %v", f)
		}
		if len(field("kitchen safety", "field", "TITLE")) != 0 || len(field("kitchen safety basic", "field", "TITLE")) != 0 {
			t.Fatal("field search must match whole values exactly")
		}
		if len(field("Kitchen Safety Basics", "field", "SUMMARY")) != 0 || len(field("Kitchen Safety Basics", "field", "TITLE")) != 1 {
			t.Fatal("field parameter must restrict the field types")
		}
		hits = field("Kitchen Safety Basics", "content_id", "kitchen", "version", "1", "field", "TITLE")
		if len(hits) != 1 || hits[0]["location"] != nil {
			t.Fatalf("field search within an item: %v", hits)
		}
		if len(field("Always cut away from your body.", "field", "SUMMARY")) != 0 {
			t.Fatal("the summary holds the first sentences, not one")
		}

		// Bad parameters.
		for _, bad := range []string{
			"search_type=LEXICAL&term=cake&content_id=kitchen",
			"search_type=LEXICAL&term=cake&version=1",
			"search_type=LEXICAL",
			"term=cake",
			"search_type=FUZZY&term=cake",
			"search_type=LEXICAL&term=cake&limit=101",
			"search_type=LEXICAL&term=cake&limit=0",
			"search_type=LEXICAL&term=cake&skip=-1",
			"search_type=LEXICAL&term=cake&include_inactive=maybe",
			"search_type=LEXICAL&term=cake&content_id=kitchen&version=one",
			"search_type=LEXICAL&term=cake&field=TITLE",
			"search_type=FIELD&term=cake&return_match=true",
			"search_type=LEXICAL&term=cake&colour=red",
		} {
			e.Expect(e.Do("GET", "/api/v1/content/search?"+bad, servertest.Root, nil, "tenant_id", ten), 400, bad)
		}
		// Missing tenant_id (root has no tenant of its own).
		e.Expect(e.Do("GET", "/api/v1/content/search?search_type=LEXICAL&term=cake", servertest.Root, nil), 400, "no tenant_id")
		e.Expect(e.Do("GET", "/api/v1/content", servertest.Root, nil), 400, "list without tenant_id")
		e.Expect(e.UploadContent(servertest.Root, "", "", []byte(servertest.KitchenHTML), "k.html"), 400, "import without tenant_id")

		// Semantic search with the real model.
		if !haveModel {
			t.Log("no embedding model installed: semantic checks skipped (run `make model`)")
			return
		}
		sem := func(term string, kv ...string) []map[string]any {
			return e.SearchContent(ten, servertest.SQ(append([]string{"search_type", "SEMANTIC", "term", term}, kv...)...))
		}
		hits = sem("hot liquid rock coming out of a mountain")
		if len(hits) == 0 || hits[0]["content_id"] != "volcano" {
			t.Fatalf("semantic: %v", hits)
		}
		for _, h := range hits {
			s, ok := h["match_strength"].(float64)
			if !ok || s < 0 || s > 1 || h["location"] != nil || h["match"] != nil {
				t.Fatalf("semantic entry: %v", h)
			}
		}
		hits = sem("what to do with a fire extinguisher", "content_id", "fire", "version", "1")
		if len(hits) < 2 || hits[0]["location"] == nil || !strings.Contains(fmt.Sprint(hits[0]["location"]), "Extinguisher") {
			t.Fatalf("semantic within an item: %v", hits)
		}
		if hits[0]["match_strength"].(float64) < hits[1]["match_strength"].(float64) {
			t.Fatalf("semantic hits must be ranked: %v", hits)
		}
		e.Expect(e.Do("GET", "/api/v1/content/search?search_type=SEMANTIC&term=x&return_match=true", servertest.Root, nil, "tenant_id", ten), 400, "return_match on semantic")

		// Chunk vectors are cached in the tenant's records, and the tenant purge removes them.
		vectors := func() int {
			all, err := record.All(context.Background(), e.App.Records, record.Query{Tenant: ten, Kind: embed.KindVector})
			if err != nil {
				t.Fatal(err)
			}
			return len(all)
		}
		if vectors() == 0 {
			t.Fatal("indexing cached no vectors in the record store")
		}
		e.Expect(e.Do("DELETE", "/api/v1/app_management/tenants/"+ten, servertest.Root, nil), 202, "delete tenant")
		servertest.Eventually(t, 60*time.Second, "tenant purged", func() bool {
			return e.Do("POST", "/api/v1/app_management/tenants", servertest.Root, map[string]any{"tenant_id": ten}).Status == 201
		})
		if n := vectors(); n != 0 {
			t.Fatalf("%d cached vectors survived the tenant's deletion", n)
		}
	})
}

// contentPage is one page of GET /api/v1/content.
type contentPage struct {
	Content []struct {
		ContentID string `json:"content_id"`
		Version   int    `json:"version"`
		Updated   string `json:"update_dt"`
	} `json:"content"`
	More *string `json:"more"`
}

func readContentPage(e *servertest.Env, tenantID, query string) contentPage {
	e.T.Helper()
	r := e.Do("GET", "/api/v1/content?"+query, servertest.Root, nil, "tenant_id", tenantID)
	e.Expect(r, 200, "content list "+query)
	var p contentPage
	r.JSON(e.T, &p)
	if p.More != nil && *p.More == "" {
		e.T.Fatalf("empty more instead of none: %s", r.Body)
	}
	return p
}

// pageAll follows more from the first page and returns every content id in order.
func pageAll(e *servertest.Env, tenantID, first string) (ids []string, pages int) {
	e.T.Helper()
	p := readContentPage(e, tenantID, first)
	for {
		pages++
		for _, c := range p.Content {
			ids = append(ids, fmt.Sprintf("%s:%d", c.ContentID, c.Version))
		}
		if p.More == nil {
			return ids, pages
		}
		p = readContentPage(e, tenantID, "more="+url.QueryEscape(*p.More))
	}
}

func TestContentListPaging(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		e.CreateTenant("pager", true)
		e.CreateTenant("other", true)
		// Versions are committed through the store the import job uses (the paging is what is
		// tested here, not 250 imports).
		var want []string
		for i := range 250 {
			v, err := e.App.Content.AddVersion(ctx, "pager", &content.Version{ContentID: fmt.Sprintf("item-%03d", i),
				Title: "t", JobID: fmt.Sprintf("job-%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprintf("%s:%d", v.ContentID, v.Version))
		}
		for i := range 3 {
			if _, err := e.App.Content.AddVersion(ctx, "other", &content.Version{ContentID: fmt.Sprintf("mine-%d", i),
				Title: "t", JobID: fmt.Sprintf("job-%d", i)}); err != nil {
				t.Fatal(err)
			}
		}

		// The cursor walks every version exactly once, in order.
		got, pages := pageAll(e, "pager", "limit=40")
		if strings.Join(got, ",") != strings.Join(want, ",") || pages != 7 {
			t.Fatalf("paging with more: %d pages, %d versions %v", pages, len(got), got)
		}
		if got, _ := pageAll(e, "pager", ""); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("paging with the default limit: %v", got)
		}
		// skip applies before the first page; more continues after it.
		if got, _ := pageAll(e, "pager", "skip=10&limit=100"); strings.Join(got, ",") != strings.Join(want[10:], ",") {
			t.Fatalf("skip 10 then more: %v", got)
		}
		if p := readContentPage(e, "pager", "skip=245&limit=10"); len(p.Content) != 5 || p.More != nil || p.Content[0].ContentID != "item-245" {
			t.Fatalf("last page by skip: %+v", p)
		}
		if p := readContentPage(e, "pager", "skip=250"); len(p.Content) != 0 || p.More != nil {
			t.Fatalf("skip past the end: %+v", p)
		}
		if p := readContentPage(e, "pager", "limit=250"); len(p.Content) != 250 || p.More != nil {
			t.Fatalf("a page holding exactly the rest has no more: %d versions, more %v", len(p.Content), p.More)
		}

		// since (inclusive, an update_dt works) is carried by more.
		all := readContentPage(e, "pager", "limit=1000")
		since := all.Content[100].Updated
		var wantSince []string
		for _, c := range all.Content {
			if c.Updated >= since {
				wantSince = append(wantSince, fmt.Sprintf("%s:%d", c.ContentID, c.Version))
			}
		}
		if got, _ := pageAll(e, "pager", "limit=30&since="+since); strings.Join(got, ",") != strings.Join(wantSince, ",") {
			t.Fatalf("since %s with more: %v, want %v", since, got, wantSince)
		}

		// Bad tokens are the client's error, with a message.
		first := readContentPage(e, "pager", "limit=40")
		more := url.QueryEscape(*first.More)
		for _, bad := range []string{"more=not-a-token", "more=" + url.QueryEscape(base64.RawURLEncoding.EncodeToString([]byte(`{"t":"pager","c":"x","l":5}`))),
			"more=" + more + "&limit=5", "more=" + more + "&skip=1", "since=yesterday", "limit=0", "limit=1001", "skip=-1"} {
			e.Expect(e.Do("GET", "/api/v1/content?"+bad, servertest.Root, nil, "tenant_id", "pager"), 400, bad)
		}

		// Another tenant's token shows it nothing of the first tenant, whoever asks.
		key, secret := e.Credential("other")
		for _, a := range []servertest.Auth{servertest.Root, servertest.Bearer(key, secret)} {
			r := e.Do("GET", "/api/v1/content?more="+more, a, nil, "tenant_id", "other")
			e.Expect(r, 400, "another tenant's more")
			if strings.Contains(string(r.Body), "item-") {
				t.Fatalf("another tenant's token leaked its versions: %s", r.Body)
			}
		}
		if got, _ := pageAll(e, "other", "limit=2"); strings.Join(got, ",") != "mine-0:1,mine-1:1,mine-2:1" {
			t.Fatalf("other tenant's own list: %v", got)
		}

		// /openapi.json documents the parameters and the more property.
		r := e.Do("GET", "/openapi.json", servertest.NoAuth, nil)
		e.Expect(r, 200, "openapi")
		var spec struct {
			Paths map[string]map[string]struct {
				Parameters []struct{ Name string } `json:"parameters"`
			} `json:"paths"`
			Components struct {
				Schemas map[string]struct {
					Properties map[string]any `json:"properties"`
				} `json:"schemas"`
			} `json:"components"`
		}
		r.JSON(t, &spec)
		var names []string
		for _, p := range spec.Paths["/api/v1/content"]["get"].Parameters {
			names = append(names, p.Name)
		}
		for _, n := range []string{"skip", "limit", "since", "more"} {
			if !slices.Contains(names, n) {
				t.Fatalf("openapi parameters of GET /api/v1/content: %v, missing %s", names, n)
			}
		}
		if _, ok := spec.Components.Schemas["ContentList"].Properties["more"]; !ok {
			t.Fatal("openapi ContentList has no more property")
		}
	})
}

func TestContentTenants(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("a", true)
		e.CreateTenant("A", true)
		e.CreateTenant("off", false)
		aKey, aSecret := e.Credential("a")
		bigKey, bigSecret := e.Credential("A")

		r := e.UploadContent(servertest.Bearer(aKey, aSecret), "a", "content_id=doc", []byte(servertest.KitchenHTML), "kitchen.html")
		j := e.WaitContentJob("a", r)
		if j.Status != "COMPLETED" {
			t.Fatalf("import: %+v", j)
		}
		term := "search_type=LEXICAL&term=carrot"
		if r := e.Do("GET", "/api/v1/content/search?"+term, servertest.Bearer(aKey, aSecret), nil); r.Status != 200 || !strings.Contains(string(r.Body), `"doc"`) {
			t.Fatalf("tenant a searches its own content (tenant from the credential): %d %s", r.Status, r.Body)
		}
		if hits := e.SearchContent("A", servertest.SQ("search_type", "LEXICAL", "term", "carrot")); len(hits) != 0 {
			t.Fatalf("tenant A sees tenant a's content: %v", hits)
		}
		if hits := e.SearchContent("A", servertest.SQ("search_type", "FIELD", "term", "Kitchen Safety Basics")); len(hits) != 0 {
			t.Fatalf("tenant A sees tenant a's fields: %v", hits)
		}
		e.Expect(e.Do("GET", "/api/v1/content/doc/versions/1", servertest.Root, nil, "tenant_id", "A"), 404, "A reads a's content")
		e.Expect(e.Do("GET", "/api/v1/content/doc/versions/1", servertest.Bearer(bigKey, bigSecret), nil, "tenant_id", "a"), 403, "A's credential on a")
		e.Expect(e.Do("GET", "/api/v1/jobs/"+j.ID, servertest.Bearer(bigKey, bigSecret), nil), 404, "A reads a's job")
		r = e.Do("GET", "/api/v1/content", servertest.Root, nil, "tenant_id", "A")
		e.Expect(r, 200, "A's list")
		if !strings.Contains(string(r.Body), `"content":[]`) {
			t.Fatalf("A's list: %s", r.Body)
		}

		// A disabled tenant refuses imports and PATCH, and still answers reads.
		e.Expect(e.UploadContent(servertest.Root, "off", "", []byte(servertest.KitchenHTML), "k.html"), 409, "import into a disabled tenant")
		e.Expect(e.Do("POST", "/api/v1/content", servertest.Root, map[string]any{"url": "http://127.0.0.1:1/x"}, "tenant_id", "off"), 409, "URL import into a disabled tenant")
		e.Expect(e.Do("PATCH", "/api/v1/content/doc/versions/1", servertest.Root, map[string]any{"active": false}, "tenant_id", "off"), 409, "PATCH in a disabled tenant")
		e.Expect(e.Do("GET", "/api/v1/content/search?"+term, servertest.Root, nil, "tenant_id", "off"), 200, "search in a disabled tenant")

		// A failed import: FAILED with an error record, nothing committed.
		r = e.UploadContent(servertest.Root, "a", "content_id=broken", []byte("%PDF-1.4 not really a pdf"), "broken.pdf")
		j = e.WaitContentJob("a", r)
		if j.Status != "FAILED" || j.Error == nil || j.Error.Code == "" || j.Error.Message == "" {
			t.Fatalf("broken import: %+v", j)
		}
		e.Expect(e.Do("GET", "/api/v1/content/broken/versions/1", servertest.Root, nil, "tenant_id", "a"), 404, "failed import left a version")

		// Without a model, semantic search answers 503 naming `make model`; the rest works.
		r = e.Do("GET", "/api/v1/content/search?search_type=SEMANTIC&term=cake", servertest.Root, nil, "tenant_id", "a")
		if r.Status != 503 || !strings.Contains(r.Message(), "make model") {
			t.Fatalf("semantic without a model: %d %s", r.Status, r.Body)
		}

		// Deleting the tenant purges its index entries.
		e.Expect(e.Do("DELETE", "/api/v1/app_management/tenants/a", servertest.Root, nil), 202, "delete tenant a")
		servertest.Eventually(t, 60*time.Second, "tenant a purged", func() bool {
			return e.Do("POST", "/api/v1/app_management/tenants", servertest.Root, map[string]any{"tenant_id": "a"}).Status == 201
		})
		if hits := e.SearchContent("a", servertest.SQ("search_type", "LEXICAL", "term", "carrot")); len(hits) != 0 {
			t.Fatalf("a re-created tenant sees the old tenant's content: %v", hits)
		}
	})
}
