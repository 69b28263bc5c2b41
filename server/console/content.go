package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/server/contentapi"
	"github.com/lectern-lms/lectern/server/httpx"
)

// The console's content service pages of a tenant: the content versions (list, import by
// upload or URL with the job followed live, a version's details, tags, active flag and
// generated fields, regeneration) and a search playground for the three search types. Like
// every console page they only call the JSON API, with the tenant in the tenant_id header.

func (co *Console) registerContent(g fiber.Router) {
	need, h := co.sessionRequired, co.handler
	co.addSection(section{Path: "content", Label: "Content", Tenant: true})
	co.addSection(section{Path: "search", Label: "Search", Tenant: true})
	g.Get("/t/:tenant/content", need, h(co.contentList))
	g.Post("/t/:tenant/content", co.uploadRequired, h(co.contentImport))
	// Not under content/: "jobs" is a valid content id.
	g.Get("/t/:tenant/content-jobs/:job_id", need, h(co.contentJob))
	g.Get("/t/:tenant/content/:content_id/:version", need, h(co.contentVersion))
	g.Post("/t/:tenant/content/:content_id/:version", need, h(co.contentUpdate))
	g.Post("/t/:tenant/content/:content_id/:version/fields", need, h(co.generateFields))
	g.Get("/t/:tenant/search", need, h(co.search))
}

// jobView is a JobRead as the console shows it.
type jobView struct {
	ID       string                          `json:"id"`
	Type     string                          `json:"type"`
	Status   string                          `json:"status"`
	Results  map[string]any                  `json:"results"`
	Error    *struct{ Code, Message string } `json:"error"`
	Warnings []string                        `json:"warnings"`
	Created  string                          `json:"create_dt"`
	Updated  string                          `json:"update_dt"`
}

// Done reports whether the job has concluded (the page stops polling).
func (j jobView) Done() bool { return j.Status == "COMPLETED" || j.Status == "FAILED" }

// Version is the content version the job made or regenerated, "" until it has one.
func (j jobView) Version() string {
	id, _ := j.Results["content_id"].(string)
	v, _ := j.Results["version"].(float64)
	if id == "" || v < 1 {
		return ""
	}
	return url.PathEscape(id) + "/" + strconv.Itoa(int(v))
}

type contentListData struct {
	Rows []contentRow
	// More is the link to the next page.
	More string
}

// contentRow is a content version with its console link.
type contentRow struct {
	V    contentapi.ContentVersion
	Link string
}

// versionLink is the console page of a content version.
func versionLink(c *fiber.Ctx, id string, v int) string {
	return tenantPath(c, "/content/"+url.PathEscape(id)+"/"+strconv.Itoa(v))
}

func (co *Console) contentList(c *fiber.Ctx) error {
	path := "/api/v1/content?limit=" + url.QueryEscape(c.Query("limit", "50"))
	if more := c.Query("more"); more != "" {
		path = "/api/v1/content?more=" + url.QueryEscape(more)
	}
	var list contentapi.ContentList
	if err := co.tenantAPI(c, fiber.MethodGet, path, nil, &list); err != nil {
		return err
	}
	var d contentListData
	for _, v := range list.Content {
		d.Rows = append(d.Rows, contentRow{V: v, Link: versionLink(c, v.ContentID, v.Version)})
	}
	if list.More != "" {
		d.More = tenantPath(c, "/content?more="+url.QueryEscape(list.More))
	}
	return co.render(c, fiber.StatusOK, "content", "", &view{Title: "Content", Section: "content", Data: d})
}

// contentImport starts an import from the form: an uploaded file (sent on as the
// API's multipart 'file' part) or a URL (the API's JSON body). htmx gets the job fragment,
// which polls the job; a browser without scripts is sent to the job's page.
func (co *Console) contentImport(c *fiber.Ctx) error {
	q := url.Values{}
	if id := strings.TrimSpace(c.FormValue("content_id")); id != "" {
		q.Set("content_id", id)
	}
	for _, t := range splitTags(c.FormValue("tags")) {
		q.Add("tag_id", t)
	}
	r := apiRequest{Method: fiber.MethodPost, Path: "/api/v1/content?" + q.Encode(),
		Header: map[string]string{"tenant_id": c.Params("tenant")}}
	fh, ferr := c.FormFile("file")
	u := strings.TrimSpace(c.FormValue("url"))
	switch {
	case ferr == nil && fh.Size > 0:
		f, err := fh.Open()
		if err != nil {
			return err
		}
		defer f.Close()
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		part, err := mw.CreateFormFile("file", fh.Filename)
		if err != nil {
			return err
		}
		if _, err := io.Copy(part, f); err != nil {
			return err
		}
		if err := mw.Close(); err != nil {
			return err
		}
		// Upload routes read a multipart body as a stream (the root's body limit).
		r.BodyStream, r.BodySize, r.ContentType = &body, body.Len(), mw.FormDataContentType()
	case u != "":
		b, _ := json.Marshal(contentapi.ContentImportRequest{URL: &u})
		r.Body = b
	default:
		return httpx.BadRequest("choose a file to upload or enter the URL of the content")
	}
	var job jobView
	if _, err := co.api(c, r, &job); err != nil {
		return err
	}
	if c.Get("HX-Request") == "true" {
		return co.render(c, fiber.StatusOK, "content_job", "content-job", &view{Title: "Job", Section: "content", Data: job})
	}
	return c.Redirect(tenantPath(c, "/content-jobs/"+url.PathEscape(job.ID)), fiber.StatusSeeOther)
}

// splitTags reads a tags field: tags separated by commas or new lines.
func splitTags(v string) []string {
	var out []string
	for _, t := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func (co *Console) contentJob(c *fiber.Ctx) error {
	var job jobView
	if err := co.tenantAPI(c, fiber.MethodGet, "/api/v1/jobs/"+url.PathEscape(c.Params("job_id")), nil, &job); err != nil {
		return err
	}
	return co.render(c, fiber.StatusOK, "content_job", "content-job", &view{Title: "Job " + job.ID, Section: "content", Data: job})
}

// fieldView is one generated field on the version page.
type fieldView struct {
	Type   string
	Field  *contentapi.GeneratedFieldView
	Status string // the API's message when the field is absent
}

type contentVersionData struct {
	Version  contentapi.ContentVersion
	Metadata string // existing_metadata as indented JSON
	Fields   []fieldView
	Job      *jobView
	// Regenerate is where the regenerate form posts.
	Regenerate, Self string
	// Tags is the tags field's value.
	Tags string
}

func (co *Console) contentVersionPath(c *fiber.Ctx) (string, error) {
	id, err := httpx.PathValue(c, "content_id")
	if err != nil {
		return "", err
	}
	v, err := strconv.Atoi(c.Params("version"))
	if err != nil || v < 1 {
		return "", httpx.BadRequest("version must be a positive integer, not %q", c.Params("version"))
	}
	return "/api/v1/content/" + url.PathEscape(id) + "/versions/" + strconv.Itoa(v), nil
}

func (co *Console) renderContentVersion(c *fiber.Ctx, v *contentapi.ContentVersion, job *jobView, notice string) error {
	base, err := co.contentVersionPath(c)
	if err != nil {
		return err
	}
	if v == nil {
		v = new(contentapi.ContentVersion)
		if err := co.tenantAPI(c, fiber.MethodGet, base, nil, v); err != nil {
			return err
		}
	}
	d := contentVersionData{Version: *v, Job: job, Tags: strings.Join(v.Tags, ", "),
		Self: versionLink(c, v.ContentID, v.Version)}
	d.Regenerate = d.Self + "/fields"
	if m, err := json.MarshalIndent(v.ContentDetails.ExistingMetadata, "", "  "); err == nil {
		d.Metadata = string(m)
	}
	for _, t := range content.FieldTypes {
		f := fieldView{Type: t}
		var gf contentapi.GeneratedFieldView
		err := co.tenantAPI(c, fiber.MethodGet, base+"/fields/"+t, nil, &gf)
		var ae *apiError
		switch {
		case err == nil:
			f.Field = &gf
		case errors.As(err, &ae) && ae.Status == fiber.StatusNotFound:
			f.Status = "not generated yet"
		default:
			return err
		}
		d.Fields = append(d.Fields, f)
	}
	return co.render(c, fiber.StatusOK, "content_version", "", &view{Title: fmt.Sprintf("%s version %d", v.ContentID, v.Version),
		Section: "content", Notice: notice, Data: d})
}

func (co *Console) contentVersion(c *fiber.Ctx) error {
	return co.renderContentVersion(c, nil, nil, "")
}

// contentUpdate sets the tags and the active flag (PATCH).
func (co *Console) contentUpdate(c *fiber.Ctx) error {
	base, err := co.contentVersionPath(c)
	if err != nil {
		return err
	}
	tags := splitTags(c.FormValue("tags"))
	if tags == nil {
		tags = []string{}
	}
	active := c.FormValue("active") == "true"
	var v contentapi.ContentVersion
	if err := co.tenantAPI(c, fiber.MethodPatch, base, contentapi.ContentUpdate{Tags: &tags, Active: &active}, &v); err != nil {
		return err
	}
	return co.renderContentVersion(c, &v, nil, "The tags and the active flag were saved.")
}

// generateFields starts a field generation job of every field type; the page follows
// it like an import.
func (co *Console) generateFields(c *fiber.Ctx) error {
	id, err := httpx.PathValue(c, "content_id")
	if err != nil {
		return err
	}
	v, err := strconv.Atoi(c.Params("version"))
	if err != nil {
		return httpx.BadRequest("version must be a positive integer, not %q", c.Params("version"))
	}
	var job jobView
	if err := co.tenantAPI(c, fiber.MethodPost, "/api/v1/jobs/field_generation", contentapi.FieldGenerationRequest{ContentID: &id, Version: &v}, &job); err != nil {
		return err
	}
	if c.Get("HX-Request") == "true" {
		return co.render(c, fiber.StatusOK, "content_job", "content-job", &view{Title: "Job", Section: "content", Data: job})
	}
	return c.Redirect(tenantPath(c, "/content-jobs/"+url.PathEscape(job.ID)), fiber.StatusSeeOther)
}

// searchForm is the search playground's form, echoed back.
type searchForm struct {
	Type, Term, ContentID, Version, Tags string
	Fields                               map[string]bool
	IncludeInactive                      bool
	Limit, Skip                          string
}

type searchData struct {
	Form       searchForm
	FieldTypes []string
	Ran        bool
	Results    []searchRow
	// APIPath is the API request the console made.
	APIPath string
	// Elapsed is the in-process API call's duration (see docs/console.md).
	Elapsed string
	// Error is the API's message when the search failed (a 400, a 503 without a model).
	Error  string
	Status int
}

// search runs the form's search, when it has a term, through GET
// /api/v1/content/search with return_match and return_snippet, and times the API call.
func (co *Console) search(c *fiber.Ctx) error {
	f := searchForm{Type: strings.ToUpper(c.Query("search_type", "LEXICAL")), Term: c.Query("term"),
		ContentID: strings.TrimSpace(c.Query("content_id")), Version: strings.TrimSpace(c.Query("version")),
		Tags: c.Query("tags"), IncludeInactive: c.Query("include_inactive") == "true",
		Limit: c.Query("limit", "10"), Skip: c.Query("skip", "0"), Fields: map[string]bool{}}
	for _, v := range c.Context().QueryArgs().PeekMulti("field") {
		f.Fields[strings.ToUpper(string(v))] = true
	}
	d := searchData{Form: f, FieldTypes: content.FieldTypes}
	status := fiber.StatusOK
	if strings.TrimSpace(f.Term) != "" {
		q := url.Values{"search_type": {f.Type}, "term": {f.Term}}
		if f.ContentID != "" {
			q.Set("content_id", f.ContentID)
		}
		if f.Version != "" {
			q.Set("version", f.Version)
		}
		for _, t := range splitTags(f.Tags) {
			q.Add("tag_id", t)
		}
		if f.IncludeInactive {
			q.Set("include_inactive", "true")
		}
		if f.Limit != "" && f.Limit != "10" {
			q.Set("limit", f.Limit)
		}
		if f.Skip != "" && f.Skip != "0" {
			q.Set("skip", f.Skip)
		}
		switch f.Type {
		case "FIELD":
			for _, t := range content.FieldTypes {
				if f.Fields[t] {
					q.Add("field", t)
				}
			}
		case "LEXICAL":
			q.Set("return_match", "true")
			q.Set("return_snippet", "true")
		default:
			q.Set("return_snippet", "true")
		}
		d.APIPath = "/api/v1/content/search?" + q.Encode()
		d.Ran = true
		start := time.Now()
		var results []contentapi.SearchResult
		err := co.tenantAPI(c, fiber.MethodGet, d.APIPath, nil, &results)
		d.Elapsed = formatElapsed(time.Since(start))
		for _, r := range results {
			d.Results = append(d.Results, searchRow{R: r, Link: versionLink(c, r.ContentID, r.Version)})
		}
		var ae *apiError
		switch {
		case errors.As(err, &ae) && ae.Status != fiber.StatusUnauthorized:
			d.Error, d.Status = ae.Message, ae.Status
			if c.Get("HX-Request") != "true" {
				status = ae.Status
			}
		case err != nil:
			return err
		}
	}
	return co.render(c, status, "content_search", "search-results", &view{Title: "Search", Section: "search", Data: d})
}

// searchRow is a search result with the console link of its content version.
type searchRow struct {
	R    contentapi.SearchResult
	Link string
}

// Terms is the match of a keyword search (the matched words), nil for a phrase's regex.
func (r searchRow) Terms() []string {
	l, _ := r.R.Match.([]any)
	var out []string
	for _, t := range l {
		if s, ok := t.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Strength is the match_strength of a semantic result, "" for others.
func (r searchRow) Strength() string {
	if r.R.MatchStrength == nil {
		return ""
	}
	return strconv.FormatFloat(*r.R.MatchStrength, 'f', 3, 64)
}

// Regex is the match of a phrase search.
func (r searchRow) Regex() string {
	s, _ := r.R.Match.(string)
	return s
}

// formatElapsed shows a duration in milliseconds with a precision that suits it.
func formatElapsed(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}
