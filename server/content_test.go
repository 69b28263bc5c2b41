package server_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/embed/onnx"
	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/storage/record"
)

const kitchenHTML = `<!DOCTYPE html>
<html><head><title>Kitchen Safety Basics</title></head><body>
<h1>Kitchen Safety</h1>
<h2>Knives</h2><p>Always cut away from your body. Keep knives sharp, because a dull knife slips.</p>
<h2>Baking</h2><p>Bake the carrot cake at 180 degrees. Let the cake cool before icing it.</p>
</body></html>`

const gardenMarkdown = `# Gardening Guide

## Planting

Plant carrots in loose soil in early spring. The gardener waters the seedlings daily.

## Harvest

Harvest carrots when the roots are as thick as a finger.
`

const volcanoVTT = `WEBVTT

00:00:01.000 --> 00:00:05.000
Welcome to this lecture about volcanoes.

00:00:40.000 --> 00:00:46.000
Molten lava flows down the mountain after an eruption and cools into basalt.
`

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
	return zipOf(t, map[string]string{"imsmanifest.xml": fireManifest,
		"one/index.html": "<html><body><h1>Using an extinguisher</h1><p>Pull the pin, aim at the base of the flames, squeeze the handle and sweep from side to side.</p></body></html>",
		"two/index.html": "<html><body><h1>Evacuation</h1><p>Leave the building by the nearest exit and gather at the assembly point.</p></body></html>"})
}

// testModelDir returns the embedding model for semantic tests: LECTERN_TEST_MODEL_DIR (which
// scripts/test.sh exports), else the default install when present. In CI a missing model
// fails the test; locally the semantic checks are skipped.
func testModelDir(t *testing.T) (string, bool) {
	if d := os.Getenv("LECTERN_TEST_MODEL_DIR"); d != "" {
		return d, true
	}
	if os.Getenv("CI") != "" {
		t.Fatal("LECTERN_TEST_MODEL_DIR is not set: CI needs the embedding model (scripts/install-model.sh)")
	}
	d := onnx.DefaultModelDir(testenv.CacheDir())
	if _, err := os.Stat(filepath.Join(d, onnx.ManifestFile)); err == nil {
		return d, true
	}
	return "", false
}

// forEachModeWithModel is forEachMode with the embedding model configured.
func forEachModeWithModel(t *testing.T, modelDir string, f func(t *testing.T, e *env)) {
	for name, cfg := range modes(t) {
		t.Run(name, func(t *testing.T) {
			c := cfg(t)
			c.ModelDir = modelDir
			f(t, start(t, c))
		})
	}
}

// uploadContent posts a file to POST /api/v1/content.
func (e *env) uploadContent(a auth, tenantID, query string, body []byte, filename string) resp {
	e.t.Helper()
	form, ct := multipartFile(filename, body)
	headers := []string{"Content-Type", ct}
	if tenantID != "" {
		headers = append(headers, "tenant_id", tenantID)
	}
	return e.do("POST", "/api/v1/content?"+query, a, form, headers...)
}

type jobRead struct {
	ID      string         `json:"id"`
	Type    string         `json:"type"`
	Status  string         `json:"status"`
	Results map[string]any `json:"results"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Warnings []string `json:"warnings"`
	Created  string   `json:"create_dt"`
	Updated  string   `json:"update_dt"`
}

// waitContentJob checks the 202 JobRead and polls the job until it ends.
func (e *env) waitContentJob(tenantID string, r resp) jobRead {
	e.t.Helper()
	return e.waitServiceJob(tenantID, r, "CONTENT_IMPORT")
}

// waitServiceJob checks that r is the 202 JobRead of a new content-service job of the type
// and polls it until it ends (COMPLETED or FAILED).
func (e *env) waitServiceJob(tenantID string, r resp, jobType string) jobRead {
	e.t.Helper()
	e.expect(r, 202, "start "+jobType)
	var j jobRead
	r.json(e.t, &j)
	if j.ID == "" || j.Type != jobType || j.Status != "PENDING" {
		e.t.Fatalf("%s answer: %s", jobType, r.Body)
	}
	eventually(e.t, 90*time.Second, jobType+" job "+j.ID, func() bool {
		rr := e.do("GET", "/api/v1/jobs/"+j.ID, root, nil, "tenant_id", tenantID)
		e.expect(rr, 200, "job status")
		j = jobRead{}
		rr.json(e.t, &j)
		return j.Status == "COMPLETED" || j.Status == "FAILED"
	})
	return j
}

func (e *env) importContent(tenantID, query string, body []byte, filename string) (string, int) {
	e.t.Helper()
	j := e.waitContentJob(tenantID, e.uploadContent(root, tenantID, query, body, filename))
	if j.Status != "COMPLETED" || j.Error != nil {
		e.t.Fatalf("import of %s: %+v", filename, j)
	}
	id, _ := j.Results["content_id"].(string)
	v, _ := j.Results["version"].(float64)
	if id == "" || v < 1 || j.Warnings == nil || j.Created == "" || j.Updated == "" {
		e.t.Fatalf("import of %s: incomplete JobRead %+v", filename, j)
	}
	return id, int(v)
}

// search runs a search and returns the raw entries.
func (e *env) searchContent(tenantID string, params url.Values) []map[string]any {
	e.t.Helper()
	r := e.do("GET", "/api/v1/content/search?"+params.Encode(), root, nil, "tenant_id", tenantID)
	e.expect(r, 200, "search "+params.Encode())
	var out []map[string]any
	r.json(e.t, &out)
	if out == nil {
		e.t.Fatalf("search %s: not an array: %s", params.Encode(), r.Body)
	}
	for _, h := range out {
		if h["tenant_id"] != tenantID {
			e.t.Fatalf("search %s: entry of another tenant: %v", params.Encode(), h)
		}
	}
	return out
}

func sq(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
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
	modelDir, haveModel := testModelDir(t)
	forEachModeWithModel(t, modelDir, func(t *testing.T, e *env) {
		const ten = "content"
		e.createTenant(ten, true)

		// Imports: HTML, Markdown, WebVTT, a SCORM package; each job completes.
		for _, c := range []struct {
			id, tag, file string
			body          []byte
		}{
			{"kitchen", "kitchen", "kitchen.html", []byte(kitchenHTML)},
			{"garden", "garden", "garden.md", []byte(gardenMarkdown)},
			{"volcano", "science", "volcano.vtt", []byte(volcanoVTT)},
			{"fire", "safety", "fire.zip", firePackage(t)},
		} {
			id, v := e.importContent(ten, "content_id="+c.id+"&tag_id="+c.tag, c.body, c.file)
			if id != c.id || v != 1 {
				t.Fatalf("%s imported as %s v%d", c.file, id, v)
			}
		}
		// An import without content_id gets an id; a second import of the same id a new version,
		// here from a URL.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/markdown")
			io.WriteString(w, gardenMarkdown)
		}))
		defer srv.Close()
		j := e.waitContentJob(ten, e.do("POST", "/api/v1/content?content_id=garden&tag_id=garden", root,
			map[string]any{"url": srv.URL + "/garden.md"}, "tenant_id", ten))
		if j.Status != "COMPLETED" || j.Results["content_id"] != "garden" || j.Results["version"] != float64(2) {
			t.Fatalf("URL import as a new version: %+v", j)
		}
		e.expect(e.do("POST", "/api/v1/content", root, map[string]any{"url": "ftp://example.com/x"}, "tenant_id", ten), 400, "ftp url")
		e.expect(e.do("POST", "/api/v1/content", root, map[string]any{"url": srv.URL, "extra": 1}, "tenant_id", ten), 400, "unknown property")

		// Item detail.
		r := e.do("GET", "/api/v1/content/kitchen/versions/1", root, nil, "tenant_id", ten)
		e.expect(r, 200, "content version")
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
		r.json(t, &cv)
		if cv.ContentID != "kitchen" || cv.Version != 1 || cv.Title != "Kitchen Safety Basics" || !cv.Active ||
			strings.Join(cv.Tags, ",") != "kitchen" || cv.ContentDetails.ContentType != "html" ||
			cv.ContentDetails.Interactions == nil || cv.ContentDetails.ExistingMetadata == nil || cv.Created == "" {
			t.Fatalf("content version: %s", r.Body)
		}
		r = e.do("GET", "/api/v1/content/fire/versions/1", root, nil, "tenant_id", ten)
		e.expect(r, 200, "package version")
		r.json(t, &cv)
		if cv.Title != "Fire Extinguisher Training" || cv.ContentDetails.ContentType == "" {
			t.Fatalf("package version: %s", r.Body)
		}
		e.expect(e.do("GET", "/api/v1/content/kitchen/versions/9", root, nil, "tenant_id", ten), 404, "unknown version")
		e.expect(e.do("GET", "/api/v1/content/kitchen/versions/x", root, nil, "tenant_id", ten), 400, "bad version")

		// PATCH: tags and active.
		r = e.do("PATCH", "/api/v1/content/kitchen/versions/1", root, map[string]any{"tags": []string{"kitchen", "food"}}, "tenant_id", ten)
		e.expect(r, 200, "patch tags")
		r.json(t, &cv)
		if strings.Join(cv.Tags, ",") != "food,kitchen" || !cv.Active {
			t.Fatalf("patched: %s", r.Body)
		}
		e.expect(e.do("PATCH", "/api/v1/content/garden/versions/1", root, map[string]any{"active": false}, "tenant_id", ten), 200, "deactivate")
		e.expect(e.do("PATCH", "/api/v1/content/garden/versions/1", root, map[string]any{}, "tenant_id", ten), 400, "empty patch")
		e.expect(e.do("PATCH", "/api/v1/content/garden/versions/1", root, map[string]any{"active": "no"}, "tenant_id", ten), 400, "wrong type")
		e.expect(e.do("PATCH", "/api/v1/content/nope/versions/1", root, map[string]any{"active": true}, "tenant_id", ten), 404, "patch unknown")

		// List with paging, in update order: the two PATCHed versions come last.
		r = e.do("GET", "/api/v1/content", root, nil, "tenant_id", ten)
		e.expect(r, 200, "list")
		var list struct {
			Content []struct {
				ContentID string `json:"content_id"`
				Version   int    `json:"version"`
				Active    bool   `json:"active"`
			} `json:"content"`
		}
		r.json(t, &list)
		var got []string
		for _, c := range list.Content {
			got = append(got, fmt.Sprintf("%s:%d", c.ContentID, c.Version))
		}
		if strings.Join(got, ",") != "volcano:1,fire:1,garden:2,kitchen:1,garden:1" {
			t.Fatalf("list: %v", got)
		}
		r = e.do("GET", "/api/v1/content?skip=1&limit=2", root, nil, "tenant_id", ten)
		e.expect(r, 200, "list page")
		r.json(t, &list)
		if len(list.Content) != 2 || list.Content[0].ContentID != "fire" || list.Content[1].ContentID != "garden" || list.Content[1].Version != 2 {
			t.Fatalf("list page: %s", r.Body)
		}

		lex := func(term string, kv ...string) []map[string]any {
			return e.searchContent(ten, sq(append([]string{"search_type", "LEXICAL", "term", term}, kv...)...))
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
			return e.searchContent(ten, sq(append([]string{"search_type", "FIELD", "term", term}, kv...)...))
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
			e.expect(e.do("GET", "/api/v1/content/search?"+bad, root, nil, "tenant_id", ten), 400, bad)
		}
		// Missing tenant_id (root has no tenant of its own).
		e.expect(e.do("GET", "/api/v1/content/search?search_type=LEXICAL&term=cake", root, nil), 400, "no tenant_id")
		e.expect(e.do("GET", "/api/v1/content", root, nil), 400, "list without tenant_id")
		e.expect(e.uploadContent(root, "", "", []byte(kitchenHTML), "k.html"), 400, "import without tenant_id")

		// Semantic search with the real model.
		if !haveModel {
			t.Log("no embedding model installed: semantic checks skipped (run `make model`)")
			return
		}
		sem := func(term string, kv ...string) []map[string]any {
			return e.searchContent(ten, sq(append([]string{"search_type", "SEMANTIC", "term", term}, kv...)...))
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
		e.expect(e.do("GET", "/api/v1/content/search?search_type=SEMANTIC&term=x&return_match=true", root, nil, "tenant_id", ten), 400, "return_match on semantic")

		// Chunk vectors are cached in the tenant's records, and the tenant purge removes them.
		vectors := func() int {
			all, err := record.All(context.Background(), e.app.Records, record.Query{Tenant: ten, Kind: embed.KindVector})
			if err != nil {
				t.Fatal(err)
			}
			return len(all)
		}
		if vectors() == 0 {
			t.Fatal("indexing cached no vectors in the record store")
		}
		e.expect(e.do("DELETE", "/api/v1/app_management/tenants/"+ten, root, nil), 202, "delete tenant")
		eventually(t, 60*time.Second, "tenant purged", func() bool {
			return e.do("POST", "/api/v1/app_management/tenants", root, map[string]any{"tenant_id": ten}).Status == 201
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

func (e *env) contentPage(tenantID, query string) contentPage {
	e.t.Helper()
	r := e.do("GET", "/api/v1/content?"+query, root, nil, "tenant_id", tenantID)
	e.expect(r, 200, "content list "+query)
	var p contentPage
	r.json(e.t, &p)
	if p.More != nil && *p.More == "" {
		e.t.Fatalf("empty more instead of none: %s", r.Body)
	}
	return p
}

// pageAll follows more from the first page and returns every content id in order.
func (e *env) pageAll(tenantID, first string) (ids []string, pages int) {
	e.t.Helper()
	p := e.contentPage(tenantID, first)
	for {
		pages++
		for _, c := range p.Content {
			ids = append(ids, fmt.Sprintf("%s:%d", c.ContentID, c.Version))
		}
		if p.More == nil {
			return ids, pages
		}
		p = e.contentPage(tenantID, "more="+url.QueryEscape(*p.More))
	}
}

func TestContentListPaging(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.createTenant("pager", true)
		e.createTenant("other", true)
		// Versions are committed through the store the import job uses (the paging is what is
		// tested here, not 250 imports).
		var want []string
		for i := range 250 {
			v, err := e.app.Content.AddVersion(ctx, "pager", &content.Version{ContentID: fmt.Sprintf("item-%03d", i),
				Title: "t", JobID: fmt.Sprintf("job-%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprintf("%s:%d", v.ContentID, v.Version))
		}
		for i := range 3 {
			if _, err := e.app.Content.AddVersion(ctx, "other", &content.Version{ContentID: fmt.Sprintf("mine-%d", i),
				Title: "t", JobID: fmt.Sprintf("job-%d", i)}); err != nil {
				t.Fatal(err)
			}
		}

		// The cursor walks every version exactly once, in order.
		got, pages := e.pageAll("pager", "limit=40")
		if strings.Join(got, ",") != strings.Join(want, ",") || pages != 7 {
			t.Fatalf("paging with more: %d pages, %d versions %v", pages, len(got), got)
		}
		if got, _ := e.pageAll("pager", ""); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("paging with the default limit: %v", got)
		}
		// skip applies before the first page; more continues after it.
		if got, _ := e.pageAll("pager", "skip=10&limit=100"); strings.Join(got, ",") != strings.Join(want[10:], ",") {
			t.Fatalf("skip 10 then more: %v", got)
		}
		if p := e.contentPage("pager", "skip=245&limit=10"); len(p.Content) != 5 || p.More != nil || p.Content[0].ContentID != "item-245" {
			t.Fatalf("last page by skip: %+v", p)
		}
		if p := e.contentPage("pager", "skip=250"); len(p.Content) != 0 || p.More != nil {
			t.Fatalf("skip past the end: %+v", p)
		}
		if p := e.contentPage("pager", "limit=250"); len(p.Content) != 250 || p.More != nil {
			t.Fatalf("a page holding exactly the rest has no more: %d versions, more %v", len(p.Content), p.More)
		}

		// since (inclusive, an update_dt works) is carried by more.
		all := e.contentPage("pager", "limit=1000")
		since := all.Content[100].Updated
		var wantSince []string
		for _, c := range all.Content {
			if c.Updated >= since {
				wantSince = append(wantSince, fmt.Sprintf("%s:%d", c.ContentID, c.Version))
			}
		}
		if got, _ := e.pageAll("pager", "limit=30&since="+since); strings.Join(got, ",") != strings.Join(wantSince, ",") {
			t.Fatalf("since %s with more: %v, want %v", since, got, wantSince)
		}

		// Bad tokens are the client's error, with a message.
		first := e.contentPage("pager", "limit=40")
		more := url.QueryEscape(*first.More)
		for _, bad := range []string{"more=not-a-token", "more=" + url.QueryEscape(base64.RawURLEncoding.EncodeToString([]byte(`{"t":"pager","c":"x","l":5}`))),
			"more=" + more + "&limit=5", "more=" + more + "&skip=1", "since=yesterday", "limit=0", "limit=1001", "skip=-1"} {
			e.expect(e.do("GET", "/api/v1/content?"+bad, root, nil, "tenant_id", "pager"), 400, bad)
		}

		// Another tenant's token shows it nothing of the first tenant, whoever asks.
		key, secret := e.credential("other")
		for _, a := range []auth{root, bearer(key, secret)} {
			r := e.do("GET", "/api/v1/content?more="+more, a, nil, "tenant_id", "other")
			e.expect(r, 400, "another tenant's more")
			if strings.Contains(string(r.Body), "item-") {
				t.Fatalf("another tenant's token leaked its versions: %s", r.Body)
			}
		}
		if got, _ := e.pageAll("other", "limit=2"); strings.Join(got, ",") != "mine-0:1,mine-1:1,mine-2:1" {
			t.Fatalf("other tenant's own list: %v", got)
		}

		// /openapi.json documents the parameters and the more property.
		r := e.do("GET", "/openapi.json", noAuth, nil)
		e.expect(r, 200, "openapi")
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
		r.json(t, &spec)
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
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("a", true)
		e.createTenant("A", true)
		e.createTenant("off", false)
		aKey, aSecret := e.credential("a")
		bigKey, bigSecret := e.credential("A")

		r := e.uploadContent(bearer(aKey, aSecret), "a", "content_id=doc", []byte(kitchenHTML), "kitchen.html")
		j := e.waitContentJob("a", r)
		if j.Status != "COMPLETED" {
			t.Fatalf("import: %+v", j)
		}
		term := "search_type=LEXICAL&term=carrot"
		if r := e.do("GET", "/api/v1/content/search?"+term, bearer(aKey, aSecret), nil); r.Status != 200 || !strings.Contains(string(r.Body), `"doc"`) {
			t.Fatalf("tenant a searches its own content (tenant from the credential): %d %s", r.Status, r.Body)
		}
		if hits := e.searchContent("A", sq("search_type", "LEXICAL", "term", "carrot")); len(hits) != 0 {
			t.Fatalf("tenant A sees tenant a's content: %v", hits)
		}
		if hits := e.searchContent("A", sq("search_type", "FIELD", "term", "Kitchen Safety Basics")); len(hits) != 0 {
			t.Fatalf("tenant A sees tenant a's fields: %v", hits)
		}
		e.expect(e.do("GET", "/api/v1/content/doc/versions/1", root, nil, "tenant_id", "A"), 404, "A reads a's content")
		e.expect(e.do("GET", "/api/v1/content/doc/versions/1", bearer(bigKey, bigSecret), nil, "tenant_id", "a"), 403, "A's credential on a")
		e.expect(e.do("GET", "/api/v1/jobs/"+j.ID, bearer(bigKey, bigSecret), nil), 404, "A reads a's job")
		r = e.do("GET", "/api/v1/content", root, nil, "tenant_id", "A")
		e.expect(r, 200, "A's list")
		if !strings.Contains(string(r.Body), `"content":[]`) {
			t.Fatalf("A's list: %s", r.Body)
		}

		// A disabled tenant refuses imports and PATCH, and still answers reads.
		e.expect(e.uploadContent(root, "off", "", []byte(kitchenHTML), "k.html"), 409, "import into a disabled tenant")
		e.expect(e.do("POST", "/api/v1/content", root, map[string]any{"url": "http://127.0.0.1:1/x"}, "tenant_id", "off"), 409, "URL import into a disabled tenant")
		e.expect(e.do("PATCH", "/api/v1/content/doc/versions/1", root, map[string]any{"active": false}, "tenant_id", "off"), 409, "PATCH in a disabled tenant")
		e.expect(e.do("GET", "/api/v1/content/search?"+term, root, nil, "tenant_id", "off"), 200, "search in a disabled tenant")

		// A failed import: FAILED with an error record, nothing committed.
		r = e.uploadContent(root, "a", "content_id=broken", []byte("%PDF-1.4 not really a pdf"), "broken.pdf")
		j = e.waitContentJob("a", r)
		if j.Status != "FAILED" || j.Error == nil || j.Error.Code == "" || j.Error.Message == "" {
			t.Fatalf("broken import: %+v", j)
		}
		e.expect(e.do("GET", "/api/v1/content/broken/versions/1", root, nil, "tenant_id", "a"), 404, "failed import left a version")

		// Without a model, semantic search answers 503 naming `make model`; the rest works.
		r = e.do("GET", "/api/v1/content/search?search_type=SEMANTIC&term=cake", root, nil, "tenant_id", "a")
		if r.Status != 503 || !strings.Contains(r.message(), "make model") {
			t.Fatalf("semantic without a model: %d %s", r.Status, r.Body)
		}

		// Deleting the tenant purges its index entries.
		e.expect(e.do("DELETE", "/api/v1/app_management/tenants/a", root, nil), 202, "delete tenant a")
		eventually(t, 60*time.Second, "tenant a purged", func() bool {
			return e.do("POST", "/api/v1/app_management/tenants", root, map[string]any{"tenant_id": "a"}).Status == 201
		})
		if hits := e.searchContent("a", sq("search_type", "LEXICAL", "term", "carrot")); len(hits) != 0 {
			t.Fatalf("a re-created tenant sees the old tenant's content: %v", hits)
		}
	})
}
