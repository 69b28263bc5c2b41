package contentapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app"
	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

const cookingSkillsCSV = "\xef\xbb\xbfid;Skill Name;note\n1;Knife safety;\"cutting,\nsharpening\"\n2;Baking;\n3;Cake decorating;\n4;Welding;metal\n2;baking;dup\n"

func TestTaxonomyImport(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("tax", true)
		j := servertest.ImportTaxonomy(e, "tax", cookingSkillsCSV, "Skill Name", "cooking")
		if j.Results["taxonomy_id"] != "cooking" || j.Results["skills"] != float64(4) {
			t.Fatalf("results %v, want taxonomy cooking with 4 skills", j.Results)
		}
		// Re-import replaces; another id is another taxonomy.
		j = servertest.ImportTaxonomy(e, "tax", "skill\nWelding\nSoldering\n", "skill", "cooking")
		if j.Results["skills"] != float64(2) {
			t.Fatalf("re-import results %v, want 2 skills", j.Results)
		}
		servertest.ImportTaxonomy(e, "tax", "skill\tarea\nTax law\tlaw\n", "skill", "law")

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
			r := servertest.PostTaxonomy(e, "tax", b.file, b.csv, b.col, b.id)
			e.Expect(r, b.status, b.name)
			if !strings.Contains(r.Message(), b.mention) {
				t.Errorf("%s: message %q does not mention %q", b.name, r.Message(), b.mention)
			}
		}
		r := e.Do("POST", "/api/v1/jobs/taxonomy", servertest.Root, map[string]any{"taxonomy_id": "x"}, "tenant_id", "tax")
		e.Expect(r, 400, "JSON body")
		body, ct := servertest.TaxonomyForm("s.csv", "skill\na\n", "skill", "x")
		e.Expect(e.Do("POST", "/api/v1/jobs/taxonomy", servertest.Root, body, "Content-Type", ct), 400, "without tenant_id")
	})
}

func TestSkillTaxonomySetting(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("cfg", true)
		e.CreateTenant("other", true)
		const id = "GENERATION__SKILL_TAXONOMY"
		r := servertest.ContentSetting(e, "cfg", id)
		e.Expect(r, 200, "default")
		if string(r.Body) != `{"value":""}` {
			t.Fatalf("default %s, want the empty string", r.Body)
		}
		e.Expect(servertest.ContentSetting(e, "cfg", "NO_SUCH_SETTING"), 404, "unknown setting")
		e.Expect(servertest.PutContentSetting(e, "cfg", "NO_SUCH_SETTING", "x"), 404, "put unknown setting")
		r = servertest.PutContentSetting(e, "cfg", id, "cooking")
		e.Expect(r, 400, "never-imported taxonomy")
		if !strings.Contains(r.Message(), "cooking") {
			t.Errorf("message %q does not name the taxonomy", r.Message())
		}
		servertest.ImportTaxonomy(e, "cfg", "skill\nBaking\n", "skill", "cooking")
		e.Expect(servertest.PutContentSetting(e, "cfg", id, "cooking"), 204, "set")
		if r := servertest.ContentSetting(e, "cfg", id); string(r.Body) != `{"value":"cooking"}` {
			t.Fatalf("after PUT: %s", r.Body)
		}
		// Per tenant: the other tenant keeps the default and cannot name cfg's taxonomy.
		if r := servertest.ContentSetting(e, "other", id); string(r.Body) != `{"value":""}` {
			t.Fatalf("other tenant: %s", r.Body)
		}
		e.Expect(servertest.PutContentSetting(e, "other", id, "cooking"), 400, "another tenant's taxonomy")
		e.Expect(servertest.PutContentSetting(e, "cfg", id, ""), 204, "back to no taxonomy")
		if r := servertest.ContentSetting(e, "cfg", id); string(r.Body) != `{"value":""}` {
			t.Fatalf("after reset: %s", r.Body)
		}
		e.Expect(e.Do("PUT", "/api/v1/app_management/configuration/"+id, servertest.Root, map[string]any{}, "tenant_id", "cfg"), 400, "no value")
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

func field(e *servertest.Env, tenantID, id string, v int, typ string) fieldView {
	e.T.Helper()
	r := e.Do("GET", fmt.Sprintf("/api/v1/content/%s/versions/%d/fields/%s", id, v, typ), servertest.Root, nil, "tenant_id", tenantID)
	e.Expect(r, 200, "field "+typ)
	var f fieldView
	r.JSON(e.T, &f)
	if f.FieldType != typ || f.ContentID != id || f.Version != v || f.Created == "" || f.Updated == "" || f.Values == nil {
		e.T.Fatalf("field %s: %s", typ, r.Body)
	}
	return f
}

func fieldHits(e *servertest.Env, tenantID, typ, term string) []map[string]any {
	e.T.Helper()
	return e.SearchContent(tenantID, url.Values{"search_type": {"FIELD"}, "field": {typ}, "term": {term}})
}

const tradesSkillsCSV = "skill\nArc welding\nPlumbing\nCorporate tax law\nRoofing\n"

// TestGeneratedSkills is the acceptance test: through HTTP, importing a taxonomy and
// switching the setting changes the skills produced, and Unknown appears only with a taxonomy.
func TestGeneratedSkills(t *testing.T) {
	modelDir, ok := servertest.TestModelDir(t)
	if !ok {
		t.Skip("no embedding model installed (scripts/install-model.sh)")
	}
	servertest.ForEachModeWithModel(t, modelDir, func(t *testing.T, e *servertest.Env) {
		const ten = "skills"
		e.CreateTenant(ten, true)
		id, v := e.ImportContent(ten, "content_id=kitchen", []byte(servertest.KitchenHTML), "kitchen.html")
		if f := field(e, ten, id, v, "TITLE"); len(f.Values) != 1 || f.Values[0] != "Kitchen Safety Basics" {
			t.Fatalf("TITLE %q", f.Values)
		}
		kw := field(e, ten, id, v, "KEYWORDS")
		free := field(e, ten, id, v, "SKILLS")
		t.Logf("keywords %q; free skills %q", kw.Values, free.Values)
		if len(kw.Values) == 0 || len(free.Values) == 0 || slices.Contains(free.Values, "Unknown") {
			t.Fatalf("keywords %q, skills %q: want both, and no Unknown without a taxonomy", kw.Values, free.Values)
		}
		for _, typ := range []string{"SKILLS", "KEYWORDS"} {
			val := free.Values[0]
			if typ == "KEYWORDS" {
				val = kw.Values[0]
			}
			hits := fieldHits(e, ten, typ, strings.ToUpper(val))
			if len(hits) != 1 || hits[0]["content_id"] != id {
				t.Fatalf("field search %s=%q: %v", typ, val, hits)
			}
		}

		servertest.ImportTaxonomy(e, ten, cookingSkillsCSV, "Skill Name", "cooking")
		servertest.ImportTaxonomy(e, ten, tradesSkillsCSV, "skill", "trades")
		e.Expect(servertest.PutContentSetting(e, ten, "GENERATION__SKILL_TAXONOMY", "cooking"), 204, "use cooking")
		servertest.Regenerate(e, ten, id, v, "SKILLS")
		cooking := field(e, ten, id, v, "SKILLS")
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
		if hits := fieldHits(e, ten, "SKILLS", "knife SAFETY"); slices.Contains(cooking.Values, "Knife safety") && len(hits) != 1 {
			t.Fatalf("field search for a taxonomy skill: %v", hits)
		}
		if hits := fieldHits(e, ten, "SKILLS", free.Values[0]); len(hits) != 0 && !slices.Contains(cooking.Values, free.Values[0]) {
			t.Fatalf("a replaced skill is still found: %v", hits)
		}
		if kw2 := field(e, ten, id, v, "KEYWORDS"); kw2.Updated != kw.Updated {
			t.Errorf("KEYWORDS changed though only SKILLS were regenerated")
		}

		e.Expect(servertest.PutContentSetting(e, ten, "GENERATION__SKILL_TAXONOMY", "trades"), 204, "use trades")
		servertest.Regenerate(e, ten, id, v, "SKILLS")
		if got := field(e, ten, id, v, "SKILLS").Values; !slices.Equal(got, []string{"Unknown"}) {
			t.Fatalf("skills against an irrelevant taxonomy %q, want [Unknown]", got)
		}
		if hits := fieldHits(e, ten, "SKILLS", "unknown"); len(hits) != 1 {
			t.Fatalf("field search for Unknown: %v", hits)
		}

		e.Expect(servertest.PutContentSetting(e, ten, "GENERATION__SKILL_TAXONOMY", ""), 204, "no taxonomy")
		servertest.Regenerate(e, ten, id, v)
		if got := field(e, ten, id, v, "SKILLS").Values; len(got) == 0 || slices.Contains(got, "Unknown") {
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
			r := e.Do("POST", "/api/v1/jobs/field_generation", servertest.Root, b.body, "tenant_id", ten)
			e.Expect(r, b.status, fmt.Sprint(b.body))
			if !strings.Contains(r.Message(), b.mention) {
				t.Errorf("%v: message %q does not mention %q", b.body, r.Message(), b.mention)
			}
		}
		e.Expect(e.Do("GET", "/api/v1/content/"+id+"/versions/1/fields/COLOUR", servertest.Root, nil, "tenant_id", ten), 400, "unknown field type")
		e.Expect(e.Do("GET", "/api/v1/content/nope/versions/1/fields/SKILLS", servertest.Root, nil, "tenant_id", ten), 404, "missing content")
		e.Expect(e.Do("GET", "/api/v1/content/"+id+"/versions/9/fields/SKILLS", servertest.Root, nil, "tenant_id", ten), 404, "missing version")
	})
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
	for name, cfg := range servertest.Modes(t) {
		t.Run(name, func(t *testing.T) {
			c := cfg(t)
			c.Generation = app.GenerationConfig{URL: llm.URL, Model: "loopback"}
			e := servertest.Start(t, c)
			const ten = "chat"
			e.CreateTenant(ten, true)
			skills.Store(`["Knife handling"]`)
			id, v := e.ImportContent(ten, "content_id=kitchen", []byte(servertest.KitchenHTML), "kitchen.html")
			if got := field(e, ten, id, v, "TITLE").Values; !slices.Equal(got, []string{"Safe kitchens"}) {
				t.Fatalf("TITLE %q", got)
			}
			if got := field(e, ten, id, v, "SKILLS").Values; !slices.Equal(got, []string{"Knife handling"}) {
				t.Fatalf("SKILLS %q", got)
			}
			if hits := fieldHits(e, ten, "KEYWORDS", "OVEN SAFETY"); len(hits) != 1 {
				t.Fatalf("field search KEYWORDS: %v", hits)
			}
			servertest.ImportTaxonomy(e, ten, "skill\nKnife safety\nBaking\n", "skill", "cooking")
			e.Expect(servertest.PutContentSetting(e, ten, "GENERATION__SKILL_TAXONOMY", "cooking"), 204, "use cooking")
			skills.Store(`["baking","Juggling"]`)
			servertest.Regenerate(e, ten, id, v, "SKILLS")
			if got := field(e, ten, id, v, "SKILLS").Values; !slices.Equal(got, []string{"Baking"}) {
				t.Fatalf("taxonomy SKILLS %q, want [Baking]", got)
			}
			skills.Store(`[]`)
			servertest.Regenerate(e, ten, id, v, "SKILLS")
			if got := field(e, ten, id, v, "SKILLS").Values; !slices.Equal(got, []string{"Unknown"}) {
				t.Fatalf("no taxonomy skill: %q, want [Unknown]", got)
			}
		})
	}
}
