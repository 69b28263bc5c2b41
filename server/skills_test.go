package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
)

// taxonomyForm builds a taxonomy upload; an empty value leaves its part out.
func taxonomyForm(fileName, csv, col, id string) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if col != "" {
		mw.WriteField("csv_col_name", col)
	}
	if fileName != "" {
		part, _ := mw.CreateFormFile("taxonomy_csv", fileName)
		part.Write([]byte(csv))
	}
	if id != "" {
		mw.WriteField("taxonomy_id", id)
	}
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

func (e *env) postTaxonomy(tenantID, fileName, csv, col, id string) resp {
	e.t.Helper()
	body, ct := taxonomyForm(fileName, csv, col, id)
	return e.do("POST", "/api/v1/jobs/taxonomy", root, body, "Content-Type", ct, "tenant_id", tenantID)
}

// importTaxonomy imports a taxonomy and waits for its job to complete.
func (e *env) importTaxonomy(tenantID, csv, col, id string) jobRead {
	e.t.Helper()
	j := e.waitServiceJob(tenantID, e.postTaxonomy(tenantID, "skills.csv", csv, col, id), "TAXONOMY_IMPORT")
	if j.Status != "COMPLETED" {
		e.t.Fatalf("taxonomy job ended %s: %+v", j.Status, j.Error)
	}
	return j
}

func (e *env) contentSetting(tenantID, id string) resp {
	e.t.Helper()
	return e.do("GET", "/api/v1/app_management/configuration/"+id, root, nil, "tenant_id", tenantID)
}

func (e *env) putContentSetting(tenantID, id, value string) resp {
	e.t.Helper()
	return e.do("PUT", "/api/v1/app_management/configuration/"+id, root, map[string]any{"value": value}, "tenant_id", tenantID)
}

const cookingSkillsCSV = "\xef\xbb\xbfid;Skill Name;note\n1;Knife safety;\"cutting,\nsharpening\"\n2;Baking;\n3;Cake decorating;\n4;Welding;metal\n2;baking;dup\n"

func TestTaxonomyImport(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("tax", true)
		j := e.importTaxonomy("tax", cookingSkillsCSV, "Skill Name", "cooking")
		if j.Results["taxonomy_id"] != "cooking" || j.Results["skills"] != float64(4) {
			t.Fatalf("results %v, want taxonomy cooking with 4 skills", j.Results)
		}
		// Re-import replaces; another id is another taxonomy.
		j = e.importTaxonomy("tax", "skill\nWelding\nSoldering\n", "skill", "cooking")
		if j.Results["skills"] != float64(2) {
			t.Fatalf("re-import results %v, want 2 skills", j.Results)
		}
		e.importTaxonomy("tax", "skill\tarea\nTax law\tlaw\n", "skill", "law")

		bad := []struct {
			name, file, csv, col, id, mention string
			status                            int
		}{
			{"missing column", "s.csv", "id,skill\n1,a\n", "skills", "x", `"skills"`, 400},
			{"missing part", "s.csv", "skill\na\n", "", "x", "csv_col_name", 400},
			{"missing file", "", "", "skill", "x", "taxonomy_csv", 400},
			{"missing id", "s.csv", "skill\na\n", "skill", "", "taxonomy_id", 400},
			{"excel", "s.xlsx", "PK\x03\x04....", "skill", "x", "CSV", 400},
			{"zip without extension", "s", "PK\x03\x04....", "skill", "x", "zip", 400},
			{"binary", "s.csv", "skill\n\x00\x01\x02", "skill", "x", "NUL", 400},
			{"broken quote", "s.csv", "skill\n\"a\"b\n", "skill", "x", "line 2", 400},
			{"no skills", "s.csv", "skill\n\n", "skill", "x", "no values", 400},
		}
		for _, b := range bad {
			r := e.postTaxonomy("tax", b.file, b.csv, b.col, b.id)
			e.expect(r, b.status, b.name)
			if !strings.Contains(r.message(), b.mention) {
				t.Errorf("%s: message %q does not mention %q", b.name, r.message(), b.mention)
			}
		}
		r := e.do("POST", "/api/v1/jobs/taxonomy", root, map[string]any{"taxonomy_id": "x"}, "tenant_id", "tax")
		e.expect(r, 400, "JSON body")
		body, ct := taxonomyForm("s.csv", "skill\na\n", "skill", "x")
		e.expect(e.do("POST", "/api/v1/jobs/taxonomy", root, body, "Content-Type", ct), 400, "without tenant_id")
	})
}

func TestSkillTaxonomySetting(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("cfg", true)
		e.createTenant("other", true)
		const id = "GENERATION__SKILL_TAXONOMY"
		r := e.contentSetting("cfg", id)
		e.expect(r, 200, "default")
		if string(r.Body) != `{"value":""}` {
			t.Fatalf("default %s, want the empty string", r.Body)
		}
		e.expect(e.contentSetting("cfg", "NO_SUCH_SETTING"), 404, "unknown setting")
		e.expect(e.putContentSetting("cfg", "NO_SUCH_SETTING", "x"), 404, "put unknown setting")
		r = e.putContentSetting("cfg", id, "cooking")
		e.expect(r, 400, "never-imported taxonomy")
		if !strings.Contains(r.message(), "cooking") {
			t.Errorf("message %q does not name the taxonomy", r.message())
		}
		e.importTaxonomy("cfg", "skill\nBaking\n", "skill", "cooking")
		e.expect(e.putContentSetting("cfg", id, "cooking"), 204, "set")
		if r := e.contentSetting("cfg", id); string(r.Body) != `{"value":"cooking"}` {
			t.Fatalf("after PUT: %s", r.Body)
		}
		// Per tenant: the other tenant keeps the default and cannot name cfg's taxonomy.
		if r := e.contentSetting("other", id); string(r.Body) != `{"value":""}` {
			t.Fatalf("other tenant: %s", r.Body)
		}
		e.expect(e.putContentSetting("other", id, "cooking"), 400, "another tenant's taxonomy")
		e.expect(e.putContentSetting("cfg", id, ""), 204, "back to no taxonomy")
		if r := e.contentSetting("cfg", id); string(r.Body) != `{"value":""}` {
			t.Fatalf("after reset: %s", r.Body)
		}
		e.expect(e.do("PUT", "/api/v1/app_management/configuration/"+id, root, map[string]any{}, "tenant_id", "cfg"), 400, "no value")
	})
}

type fieldView struct {
	ContentID string   `json:"content_id"`
	Version   int      `json:"version"`
	FieldType string   `json:"field_type"`
	Values    []string `json:"values"`
	Created   string   `json:"create_dt"`
	Updated   string   `json:"update_dt"`
}

func (e *env) field(tenantID, id string, v int, typ string) fieldView {
	e.t.Helper()
	r := e.do("GET", fmt.Sprintf("/api/v1/content/%s/versions/%d/fields/%s", id, v, typ), root, nil, "tenant_id", tenantID)
	e.expect(r, 200, "field "+typ)
	var f fieldView
	r.json(e.t, &f)
	if f.FieldType != typ || f.ContentID != id || f.Version != v || f.Created == "" || f.Updated == "" || f.Values == nil {
		e.t.Fatalf("field %s: %s", typ, r.Body)
	}
	return f
}

// regenerate runs a FIELD_GENERATION job and waits for it.
func (e *env) regenerate(tenantID, id string, v int, fields ...string) {
	e.t.Helper()
	r := e.do("POST", "/api/v1/jobs/field_generation", root, map[string]any{"content_id": id, "version": v, "fields": fields}, "tenant_id", tenantID)
	e.expect(r, 202, "field generation")
	var j jobRead
	r.json(e.t, &j)
	if j.Type != "FIELD_GENERATION" || j.Status != "PENDING" {
		e.t.Fatalf("field generation answer: %s", r.Body)
	}
	eventually(e.t, 90*time.Second, "field job "+j.ID, func() bool {
		rr := e.do("GET", "/api/v1/jobs/"+j.ID, root, nil, "tenant_id", tenantID)
		e.expect(rr, 200, "job status")
		j = jobRead{}
		rr.json(e.t, &j)
		return j.Status == "COMPLETED" || j.Status == "FAILED"
	})
	if j.Status != "COMPLETED" || j.Results["content_id"] != id {
		e.t.Fatalf("field generation ended %+v", j)
	}
}

func (e *env) fieldHits(tenantID, typ, term string) []map[string]any {
	e.t.Helper()
	return e.searchContent(tenantID, url.Values{"search_type": {"FIELD"}, "field": {typ}, "term": {term}})
}

const tradesSkillsCSV = "skill\nArc welding\nPlumbing\nCorporate tax law\nRoofing\n"

// TestGeneratedSkills is the acceptance test: through HTTP, importing a taxonomy and
// switching the setting changes the skills produced, and Unknown appears only with a taxonomy.
func TestGeneratedSkills(t *testing.T) {
	modelDir, ok := testModelDir(t)
	if !ok {
		t.Skip("no embedding model installed (scripts/install-model.sh)")
	}
	forEachModeWithModel(t, modelDir, func(t *testing.T, e *env) {
		const ten = "skills"
		e.createTenant(ten, true)
		id, v := e.importContent(ten, "content_id=kitchen", []byte(kitchenHTML), "kitchen.html")
		if f := e.field(ten, id, v, "TITLE"); len(f.Values) != 1 || f.Values[0] != "Kitchen Safety Basics" {
			t.Fatalf("TITLE %q", f.Values)
		}
		kw := e.field(ten, id, v, "KEYWORDS")
		free := e.field(ten, id, v, "SKILLS")
		t.Logf("keywords %q; free skills %q", kw.Values, free.Values)
		if len(kw.Values) == 0 || len(free.Values) == 0 || slices.Contains(free.Values, "Unknown") {
			t.Fatalf("keywords %q, skills %q: want both, and no Unknown without a taxonomy", kw.Values, free.Values)
		}
		for _, typ := range []string{"SKILLS", "KEYWORDS"} {
			val := free.Values[0]
			if typ == "KEYWORDS" {
				val = kw.Values[0]
			}
			hits := e.fieldHits(ten, typ, strings.ToUpper(val))
			if len(hits) != 1 || hits[0]["content_id"] != id {
				t.Fatalf("field search %s=%q: %v", typ, val, hits)
			}
		}

		e.importTaxonomy(ten, cookingSkillsCSV, "Skill Name", "cooking")
		e.importTaxonomy(ten, tradesSkillsCSV, "skill", "trades")
		e.expect(e.putContentSetting(ten, "GENERATION__SKILL_TAXONOMY", "cooking"), 204, "use cooking")
		e.regenerate(ten, id, v, "SKILLS")
		cooking := e.field(ten, id, v, "SKILLS")
		t.Logf("cooking skills %q", cooking.Values)
		if !slices.Contains(cooking.Values, "Knife safety") && !slices.Contains(cooking.Values, "Baking") {
			t.Fatalf("skills against the cooking taxonomy %q: want Knife safety or Baking", cooking.Values)
		}
		for _, s := range cooking.Values {
			if !slices.Contains([]string{"Knife safety", "Baking", "Cake decorating"}, s) {
				t.Fatalf("skills against the cooking taxonomy %q: %q is not a relevant cooking skill", cooking.Values, s)
			}
		}
		if cooking.Created != free.Created || cooking.Updated == free.Updated {
			t.Errorf("regenerated SKILLS: create_dt %s → %s, update_dt %s → %s; want create_dt kept, update_dt moved", free.Created, cooking.Created, free.Updated, cooking.Updated)
		}
		if hits := e.fieldHits(ten, "SKILLS", "knife SAFETY"); slices.Contains(cooking.Values, "Knife safety") && len(hits) != 1 {
			t.Fatalf("field search for a taxonomy skill: %v", hits)
		}
		if hits := e.fieldHits(ten, "SKILLS", free.Values[0]); len(hits) != 0 && !slices.Contains(cooking.Values, free.Values[0]) {
			t.Fatalf("a replaced skill is still found: %v", hits)
		}
		if kw2 := e.field(ten, id, v, "KEYWORDS"); kw2.Updated != kw.Updated {
			t.Errorf("KEYWORDS changed though only SKILLS were regenerated")
		}

		e.expect(e.putContentSetting(ten, "GENERATION__SKILL_TAXONOMY", "trades"), 204, "use trades")
		e.regenerate(ten, id, v, "SKILLS")
		if got := e.field(ten, id, v, "SKILLS").Values; !slices.Equal(got, []string{"Unknown"}) {
			t.Fatalf("skills against an irrelevant taxonomy %q, want [Unknown]", got)
		}
		if hits := e.fieldHits(ten, "SKILLS", "unknown"); len(hits) != 1 {
			t.Fatalf("field search for Unknown: %v", hits)
		}

		e.expect(e.putContentSetting(ten, "GENERATION__SKILL_TAXONOMY", ""), 204, "no taxonomy")
		e.regenerate(ten, id, v)
		if got := e.field(ten, id, v, "SKILLS").Values; len(got) == 0 || slices.Contains(got, "Unknown") {
			t.Fatalf("skills without a taxonomy again %q", got)
		}

		// Bad requests.
		bad := []struct {
			body    any
			status  int
			mention string
		}{
			{map[string]any{"content_id": id}, 400, "version"},
			{map[string]any{"content_id": id, "version": v, "fields": []string{"COLOUR"}}, 400, "COLOUR"},
			{map[string]any{"content_id": "nope", "version": 1}, 404, "nope"},
			{map[string]any{"content_id": id, "version": 0}, 400, "version"},
		}
		for _, b := range bad {
			r := e.do("POST", "/api/v1/jobs/field_generation", root, b.body, "tenant_id", ten)
			e.expect(r, b.status, fmt.Sprint(b.body))
			if !strings.Contains(r.message(), b.mention) {
				t.Errorf("%v: message %q does not mention %q", b.body, r.message(), b.mention)
			}
		}
		e.expect(e.do("GET", "/api/v1/content/"+id+"/versions/1/fields/COLOUR", root, nil, "tenant_id", ten), 400, "unknown field type")
		e.expect(e.do("GET", "/api/v1/content/nope/versions/1/fields/SKILLS", root, nil, "tenant_id", ten), 404, "missing content")
		e.expect(e.do("GET", "/api/v1/content/"+id+"/versions/9/fields/SKILLS", root, nil, "tenant_id", ten), 404, "missing version")
	})
}

// goldenSkills records the responses of the skills endpoints (TestResponseGolden); the
// content "garden" version 1 is imported.
func goldenSkills(t *testing.T, e *env, g *goldenRecorder, ten string) {
	th := []string{"tenant_id", ten}
	r := e.postTaxonomy(ten, "skills.csv", "skill\nGardening\nWelding\n", "skill", "golden")
	e.expect(r, 202, "taxonomy import")
	g.vary(rawID(t, r.Body, "id"), "taxonomy-job")
	g.record("job-taxonomy-pending", r)
	e.importTaxonomy(ten, "skill\nGardening\nWelding\n", "skill", "golden")
	e.expect(e.putContentSetting(ten, "GENERATION__SKILL_TAXONOMY", "golden"), 204, "set taxonomy")
	g.record("content-setting", e.contentSetting(ten, "GENERATION__SKILL_TAXONOMY"))
	r = e.do("POST", "/api/v1/jobs/field_generation", root, map[string]any{"content_id": "garden", "version": 1, "fields": []string{"SKILLS"}}, th...)
	e.expect(r, 202, "field generation")
	g.vary(rawID(t, r.Body, "id"), "field-job")
	g.record("job-field-generation-pending", r)
	e.regenerate(ten, "garden", 1, "SKILLS")
	g.record("generated-field", e.do("GET", "/api/v1/content/garden/versions/1/fields/SKILLS", root, nil, th...))
}

// TestChatGenerator configures the chat-completions generator (LECTERN_GENERATION_URL) with
// a loopback model: its fields reach the API and field search; against a taxonomy only
// taxonomy skills survive, and an answer without any is Unknown.
func TestChatGenerator(t *testing.T) {
	var skills atomic.Value
	skills.Store(`["Knife handling"]`)
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		reply := `{"title":"Safe kitchens","summary":"How to handle knives and bake safely.","keywords":["knife handling","oven safety"],"skills":` + skills.Load().(string) + `}`
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": reply}}}})
	}))
	defer llm.Close()
	for name, cfg := range modes(t) {
		t.Run(name, func(t *testing.T) {
			c := cfg(t)
			c.Generation = app.GenerationConfig{URL: llm.URL, Model: "loopback"}
			e := start(t, c)
			const ten = "chat"
			e.createTenant(ten, true)
			skills.Store(`["Knife handling"]`)
			id, v := e.importContent(ten, "content_id=kitchen", []byte(kitchenHTML), "kitchen.html")
			if got := e.field(ten, id, v, "TITLE").Values; !slices.Equal(got, []string{"Safe kitchens"}) {
				t.Fatalf("TITLE %q", got)
			}
			if got := e.field(ten, id, v, "SKILLS").Values; !slices.Equal(got, []string{"Knife handling"}) {
				t.Fatalf("SKILLS %q", got)
			}
			if hits := e.fieldHits(ten, "KEYWORDS", "OVEN SAFETY"); len(hits) != 1 {
				t.Fatalf("field search KEYWORDS: %v", hits)
			}
			e.importTaxonomy(ten, "skill\nKnife safety\nBaking\n", "skill", "cooking")
			e.expect(e.putContentSetting(ten, "GENERATION__SKILL_TAXONOMY", "cooking"), 204, "use cooking")
			skills.Store(`["baking","Juggling"]`)
			e.regenerate(ten, id, v, "SKILLS")
			if got := e.field(ten, id, v, "SKILLS").Values; !slices.Equal(got, []string{"Baking"}) {
				t.Fatalf("taxonomy SKILLS %q, want [Baking]", got)
			}
			skills.Store(`[]`)
			e.regenerate(ten, id, v, "SKILLS")
			if got := e.field(ten, id, v, "SKILLS").Values; !slices.Equal(got, []string{"Unknown"}) {
				t.Fatalf("no taxonomy skill: %q, want [Unknown]", got)
			}
		})
	}
}
