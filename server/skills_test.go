package server_test

import (
	"bytes"
	"mime/multipart"
	"strings"
	"testing"
	"time"
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
	r := e.postTaxonomy(tenantID, "skills.csv", csv, col, id)
	e.expect(r, 202, "import taxonomy")
	var j jobRead
	r.json(e.t, &j)
	if j.ID == "" || j.Type != "TAXONOMY_IMPORT" || j.Status != "PENDING" {
		e.t.Fatalf("taxonomy import answer: %s", r.Body)
	}
	eventually(e.t, 90*time.Second, "taxonomy job "+j.ID, func() bool {
		rr := e.do("GET", "/api/v1/jobs/"+j.ID, root, nil, "tenant_id", tenantID)
		e.expect(rr, 200, "job status")
		j = jobRead{}
		rr.json(e.t, &j)
		return j.Status == "COMPLETED" || j.Status == "FAILED"
	})
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
