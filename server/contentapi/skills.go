package contentapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"path"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/taxonomy"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/workers/contentjob"
	"github.com/lectern-lms/lectern/workers/fieldgen"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/taxonomyjob"
)

// Limits of a taxonomy upload: the CSV is parsed in memory (a 100,000-skill file is a few
// MB), the other parts are short strings.
const (
	maxTaxonomyCSV   = 32 << 20
	maxTaxonomyField = 4096
)

func (a *API) registerSkills(r httpx.Registrar) {
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: "/api/v1/jobs/taxonomy", Summary: "Import a skills taxonomy (multipart taxonomy_csv, csv_col_name, taxonomy_id); runs as a TAXONOMY_IMPORT job; re-importing an id replaces it", Tag: "skills",
		Scope: httpx.ScopeHeader, UploadSchema: "TaxonomyImport", Success: 202, Response: "Job", Upload: true}, a.importTaxonomy)
	const cfg = "/api/v1/app_management/configuration/:setting_id"
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: cfg, Summary: "A content service setting of the tenant (GENERATION__SKILL_TAXONOMY)", Tag: "skills",
		Scope: httpx.ScopeHeader, Success: 200, Response: "SettingBody"}, a.getContentSetting)
	r.Handle(httpx.Route{Method: fiber.MethodPut, Path: cfg, Summary: "Set a content service setting of the tenant; GENERATION__SKILL_TAXONOMY takes an imported taxonomy_id or the empty string", Tag: "skills",
		Scope: httpx.ScopeHeader, Body: "SettingBody", Success: 204}, a.putContentSetting)
	a.registerFields(r)
}

func skillsSchemas() map[string]any {
	out := fieldSchemas()
	for k, v := range map[string]any{
		"TaxonomyImport": map[string]any{"type": "object", "required": []string{"taxonomy_csv", "csv_col_name", "taxonomy_id"},
			"properties": map[string]any{
				"taxonomy_csv": map[string]any{"type": "string", "format": "binary", "description": "UTF-8 CSV with a header row; comma, semicolon or tab delimited"},
				"csv_col_name": map[string]any{"type": "string", "description": "label of the column holding the skill names"},
				"taxonomy_id":  map[string]any{"type": "string", "description": "id of the taxonomy; an existing id is replaced"},
			}},
	} {
		out[k] = v
	}
	return out
}

// taxonomyForm reads the three parts of a taxonomy upload, in any order.
func taxonomyForm(c *fiber.Ctx) (csv []byte, fileName string, fields map[string]string, err error) {
	body, ok := httpx.StreamedBody(c)
	ct := c.Get(fiber.HeaderContentType)
	mt, params, perr := mime.ParseMediaType(ct)
	if !ok || perr != nil || mt != fiber.MIMEMultipartForm || params["boundary"] == "" {
		return nil, "", nil, httpx.BadRequest("send multipart/form-data with the parts taxonomy_csv (the CSV file), csv_col_name and taxonomy_id")
	}
	malformed := func(err error) error {
		if ce := body.ClientError(); ce != nil {
			return ce
		}
		return httpx.BadRequest("the multipart body is malformed: %v", err)
	}
	fields = map[string]string{}
	mr := multipart.NewReader(body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", nil, malformed(err)
		}
		name := p.FormName()
		limit := int64(maxTaxonomyField)
		if name == "taxonomy_csv" {
			limit = maxTaxonomyCSV
		}
		b, err := io.ReadAll(io.LimitReader(p, limit+1))
		if err != nil {
			return nil, "", nil, malformed(err)
		}
		switch {
		case name == "taxonomy_csv" && int64(len(b)) > limit:
			return nil, "", nil, httpx.Errorf(fiber.StatusRequestEntityTooLarge, "taxonomy_csv is larger than %d bytes", limit)
		case name == "taxonomy_csv":
			csv, fileName = b, p.FileName()
		case name == "csv_col_name" || name == "taxonomy_id":
			if int64(len(b)) > limit {
				return nil, "", nil, httpx.BadRequest("%s is longer than %d bytes", name, limit)
			}
			fields[name] = string(b)
		default:
			return nil, "", nil, httpx.BadRequest("unknown multipart part %q; the parts are taxonomy_csv, csv_col_name and taxonomy_id", name)
		}
	}
	return csv, fileName, fields, nil
}

// notCSV names why a file is not a CSV taxonomy, or returns "".
func notCSV(name string, b []byte) string {
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".xlsx", ".xls", ".ods", ".json", ".xml", ".zip", ".pdf":
		return "taxonomy_csv must be a CSV file, not " + ext
	}
	switch {
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return "taxonomy_csv is a zip archive (an Excel workbook?), not CSV; export the sheet as CSV"
	case bytes.HasPrefix(b, []byte("\xd0\xcf\x11\xe0")):
		return "taxonomy_csv is a legacy Office file, not CSV; export the sheet as CSV"
	case bytes.HasPrefix(b, []byte("%PDF")):
		return "taxonomy_csv is a PDF, not CSV"
	}
	return ""
}

func (a *API) importTaxonomy(c *fiber.Ctx) error {
	ctx := c.UserContext()
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	csv, fileName, fields, err := taxonomyForm(c)
	if err != nil {
		return err
	}
	var missing []string
	if csv == nil {
		missing = append(missing, "taxonomy_csv")
	}
	for _, f := range []string{"csv_col_name", "taxonomy_id"} {
		if strings.TrimSpace(fields[f]) == "" {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return httpx.BadRequest("required multipart part(s) missing or empty: %s", strings.Join(missing, ", "))
	}
	id := fields["taxonomy_id"]
	if err := taxonomy.ValidateID(id); err != nil {
		return httpx.BadRequest("%v", err)
	}
	if msg := notCSV(fileName, csv); msg != "" {
		return httpx.BadRequest("%s", msg)
	}
	skills, err := taxonomy.Parse(csv, fields["csv_col_name"])
	if err != nil {
		return httpx.BadRequest("taxonomy_csv: %v", err)
	}
	p := taxonomyjob.Payload{Tenant: tenantID, JobID: jobs.NewID(), TaxonomyID: id}
	p.SkillsKey = taxonomyjob.SkillsKey(tenantID, p.JobID)
	b, _ := json.Marshal(skills)
	if _, err := a.d.Blobs.Put(ctx, p.SkillsKey, bytes.NewReader(b), int64(len(b))); err != nil {
		return err
	}
	task, opts := taxonomyjob.NewTask(p)
	return a.startUploadJob(c, p.JobID, taxonomyjob.JobType, tenantID, p.SkillsKey, task, opts, taxonomyjob.CodeInternal)
}

func (a *API) getContentSetting(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	v, err := a.d.Config.Get(c.UserContext(), tenantID, c.Params("setting_id"))
	if errors.Is(err, content.ErrUnknownSetting) {
		return httpx.NotFound("configuration setting '%s' not found; the content service's settings: %s", c.Params("setting_id"), strings.Join(content.SettingIDs(), ", "))
	}
	if err != nil {
		return err
	}
	return c.JSON(httpx.SettingBody{Value: &v})
}

func (a *API) putContentSetting(c *fiber.Ctx) error {
	ctx := c.UserContext()
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	id := c.Params("setting_id")
	if _, err := a.d.Config.Get(ctx, tenantID, id); errors.Is(err, content.ErrUnknownSetting) {
		return httpx.NotFound("configuration setting '%s' not found; the content service's settings: %s", id, strings.Join(content.SettingIDs(), ", "))
	}
	var body httpx.SettingBody
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	if body.Value == nil {
		return httpx.BadRequest("property value is required")
	}
	if id == content.SettingSkillTaxonomy && *body.Value != "" {
		ok, err := a.d.Taxonomies.Exists(ctx, tenantID, *body.Value)
		if err != nil {
			return err
		}
		if !ok {
			return httpx.BadRequest("%s: no taxonomy '%s' has been imported in this tenant (POST /api/v1/jobs/taxonomy first, and wait for the job)", id, *body.Value)
		}
	}
	if err := a.d.Config.Set(ctx, tenantID, id, *body.Value); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// FieldGenerationRequest is the body of POST /api/v1/jobs/field_generation.
type FieldGenerationRequest struct {
	ContentID *string  `json:"content_id"`
	Version   *int     `json:"version"`
	Fields    []string `json:"fields"`
}

// GeneratedFieldView is the body of GET /api/v1/content/{content_id}/versions/{version}/fields/{field_type}.
type GeneratedFieldView struct {
	ContentID string   `json:"content_id"`
	Version   int      `json:"version"`
	FieldType string   `json:"field_type"`
	Values    []string `json:"values"`
	Created   string   `json:"create_dt"`
	Updated   string   `json:"update_dt"`
}

func (a *API) registerFields(r httpx.Registrar) {
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: "/api/v1/jobs/field_generation", Summary: "Regenerate generated fields of a content version (TITLE, SUMMARY, KEYWORDS, SKILLS); runs as a FIELD_GENERATION job", Tag: "skills",
		Scope: httpx.ScopeHeader, Body: "FieldGenerationRequest", Success: 202, Response: "Job"}, a.generateFields)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: "/api/v1/content/:content_id/versions/:version/fields/:field_type", Summary: "A generated field of a content version; 404 while it has not been generated", Tag: "skills",
		Scope: httpx.ScopeHeader, Success: 200, Response: "GeneratedField"}, a.getGeneratedField)
}

func fieldSchemas() map[string]any {
	types := map[string]any{"type": "string", "enum": content.FieldTypes}
	return map[string]any{
		"FieldGenerationRequest": httpx.Obj(map[string]any{"content_id": httpx.Str(), "version": map[string]any{"type": "integer", "minimum": 1},
			"fields": map[string]any{"type": "array", "items": types, "description": "field types to generate; empty or absent: all"}}, "content_id", "version"),
		"GeneratedField": httpx.Obj(map[string]any{"content_id": httpx.Str(), "version": map[string]any{"type": "integer"}, "field_type": types,
			"values":    map[string]any{"type": "array", "items": httpx.Str(), "description": "one value for TITLE and SUMMARY, a list for KEYWORDS and SKILLS ([\"Unknown\"]: generated against a taxonomy, no skill relevant)"},
			"create_dt": httpx.Str(), "update_dt": httpx.Str()}, "content_id", "version", "field_type", "values", "create_dt", "update_dt"),
	}
}

// fieldType reads a field type (case-insensitive) or answers 400 naming the known ones.
func fieldType(t string) (string, error) {
	u := strings.ToUpper(strings.TrimSpace(t))
	if !slices.Contains(content.FieldTypes, u) {
		return "", httpx.BadRequest("unknown field type %q; the generated fields are %s", t, strings.Join(content.FieldTypes, ", "))
	}
	return u, nil
}

func (a *API) generateFields(c *fiber.Ctx) error {
	ctx := c.UserContext()
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	var body FieldGenerationRequest
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	if body.ContentID == nil || body.Version == nil {
		return httpx.BadRequest("properties content_id and version are required")
	}
	if err := content.ValidateID(*body.ContentID); err != nil {
		return httpx.BadRequest("property content_id: %v", err)
	}
	if *body.Version < 1 {
		return httpx.BadRequest("property version must be a positive integer")
	}
	var types []string
	for _, f := range body.Fields {
		t, err := fieldType(f)
		if err != nil {
			return err
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if _, err := a.d.Content.Get(ctx, tenantID, *body.ContentID, *body.Version); err != nil {
		return contentError(err)
	}
	job, err := a.d.Jobs.Create(ctx, jobs.NewID(), fieldgen.JobType, tenantID, true)
	if err != nil {
		return err
	}
	task, opts := contentjob.NewIndexTask(contentjob.IndexPayload{Tenant: tenantID, JobID: job.ID, ContentID: *body.ContentID,
		Version: *body.Version, Fields: types})
	if err := a.enqueueJob(ctx, a.d.IndexQueue, job, task, opts, contentjob.CodeInternal, "field generation"); err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(job)
}

func (a *API) getGeneratedField(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	id, ver, err := contentPath(c)
	if err != nil {
		return err
	}
	typ, err := fieldType(c.Params("field_type"))
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	if _, err := a.d.Content.Get(ctx, tenantID, id, ver); err != nil {
		return contentError(err)
	}
	f, err := a.d.Fields.Get(ctx, tenantID, id, ver, typ)
	if errors.Is(err, content.ErrFieldNotGenerated) {
		return httpx.NotFound("%s of content '%s' version %d has not been generated (yet)", typ, id, ver)
	}
	if err != nil {
		return err
	}
	return c.JSON(GeneratedFieldView{ContentID: id, Version: ver, FieldType: typ, Values: f.Values,
		Created: localTime(f.Created), Updated: localTime(f.Updated)})
}
