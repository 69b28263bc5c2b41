package contentapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/workers/contentjob"
	"github.com/lectern-lms/lectern/workers/jobs"
)

// ContentImportRequest is the JSON body of POST /api/v1/content; no other properties.
type ContentImportRequest struct {
	URL *string `json:"url"`
}

// ContentUpdate is the body of PATCH /api/v1/content/{content_id}/versions/{version}.
type ContentUpdate struct {
	Tags   *[]string `json:"tags"`
	Active *bool     `json:"active"`
}

// ContentVersion is one content version as the API shows it.
type ContentVersion struct {
	ContentID      string          `json:"content_id"`
	Version        int             `json:"version"`
	Title          string          `json:"title"`
	Tags           []string        `json:"tags"`
	Active         bool            `json:"active"`
	ContentDetails extract.Details `json:"content_details"`
	Created        string          `json:"create_dt"`
	Updated        string          `json:"update_dt"`
}

// ContentList is a page of the tenant's content versions. More, absent on the last page,
// is the token that fetches the next one (GET /api/v1/content?more=<token>).
type ContentList struct {
	Content []ContentVersion `json:"content"`
	More    string           `json:"more,omitempty"`
}

// SearchField is the field object of a field-search result.
type SearchField struct {
	Created   string `json:"create_dt"`
	Updated   string `json:"update_dt"`
	FieldType string `json:"field_type"`
	Value     string `json:"value"`
}

// SearchResult is one entry of a search response (spec 001, "Search result entry").
type SearchResult struct {
	TenantID      string       `json:"tenant_id"`
	ContentID     string       `json:"content_id"`
	Version       int          `json:"version"`
	Location      *string      `json:"location,omitempty"`
	MatchStrength *float64     `json:"match_strength,omitempty"`
	Match         any          `json:"match,omitempty"`
	Field         *SearchField `json:"field,omitempty"`
	// Snippet is the Lectern extension return_snippet.
	Snippet *Snippet `json:"snippet,omitempty"`
}

// Snippet is an excerpt of the chunk a lexical or semantic result stands for, cut into
// fragments at the words the search matched (return_snippet, a Lectern extension): a client
// highlights the fragments with match set, without offsets to convert between encodings.
type Snippet struct {
	// Location is the chunk's location, also in tenant-wide results (which carry none).
	Location  string            `json:"location"`
	Fragments []SnippetFragment `json:"fragments"`
}

// SnippetFragment is a piece of a snippet's text; Match marks words the search matched.
type SnippetFragment struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// snippetRunes is the length of a snippet's excerpt in characters.
const snippetRunes = 240

// localTime formats a timestamp as the content service does: UTC, ISO 8601, without a zone.
func localTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000") }

// Search limits.
const (
	searchDefaultLimit = 10
	searchMaxLimit     = 100
)

func contentTenant(c *fiber.Ctx) (string, error) {
	id := httpx.TenantOf(c)
	if id == "" {
		return "", httpx.BadRequest("header tenant_id is required")
	}
	return id, nil
}

func queryMulti(c *fiber.Ctx, name string) []string {
	var out []string
	for _, v := range c.Context().QueryArgs().PeekMulti(name) {
		out = append(out, string(v))
	}
	return out
}

func contentView(v *content.Version) ContentVersion {
	return ContentVersion{ContentID: v.ContentID, Version: v.Version, Title: v.Title, Tags: v.Tags, Active: v.Active,
		ContentDetails: v.Details, Created: localTime(v.Created), Updated: localTime(v.Updated)}
}

func contentError(err error) error {
	switch {
	case errors.Is(err, content.ErrNotFound):
		return httpx.NotFound("%v", err)
	case errors.Is(err, content.ErrInvalidID), errors.Is(err, content.ErrInvalidTag):
		return httpx.BadRequest("%v", err)
	}
	return err
}

func (a *API) registerContent(r httpx.Registrar) {
	const base = "/api/v1/content"
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: base, Summary: "Import content (multipart 'file' or JSON {\"url\"}); runs as a CONTENT_IMPORT job", Tag: "content",
		Scope: httpx.ScopeHeader, Body: "ContentImportRequest", Success: 202, Response: "Job", Upload: true,
		Query: []httpx.Param{{Name: "content_id", Type: "string", Description: "id of the content item; a new version when it exists, a generated id when absent"},
			{Name: "tag_id", Type: "string", Description: "tag of the new version; repeatable"}}}, a.importContent)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: base, Summary: "List the tenant's content versions in update order, keyset-paged", Tag: "content",
		Scope: httpx.ScopeHeader, Success: 200, Response: "ContentList",
		Query: []httpx.Param{{Name: "skip", Type: "integer", Description: "versions to leave out before the page, default 0"},
			{Name: "limit", Type: "integer", Description: "page size, default 100, at most 1000"},
			{Name: "since", Type: "string", Description: "only versions updated at or after this UTC ISO 8601 time (an update_dt works)"},
			{Name: "more", Type: "string", Description: "the previous page's more token, sent alone: it carries limit and since"}}}, a.listContent)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: base + "/search", Summary: "Lexical, semantic, field or hybrid search", Tag: "content",
		Scope: httpx.ScopeHeader, Success: 200, Response: "SearchResults",
		Query: []httpx.Param{{Name: "search_type", Type: "string", Required: true, Description: "LEXICAL, SEMANTIC or FIELD; HYBRID is a Lectern extension: one ranking fusing an any-term keyword search (ranked, the rarer terms weighing more) with a semantic search, by a weighted sum of each part's score relative to its best, the keyword part weighing more for short terms (0.7 for one word, 0.5 for two, about 0.3 for a sentence); results carry match_strength (the fused score: 1 = first in both parts) and, with content_id, location (docs/search.md, Hybrid search)"},
			{Name: "term", Type: "string", Required: true, Description: "search term; in double quotes a phrase (lexical)"},
			{Name: "content_id", Type: "string", Description: "limit to one content item; results then carry location"},
			{Name: "version", Type: "integer", Description: "version of content_id; both or neither"},
			{Name: "tag_id", Type: "string", Description: "only content carrying a listed tag; repeatable"},
			{Name: "skip", Type: "integer", Description: "top results to skip"},
			{Name: "limit", Type: "integer", Description: "results to return, default 10, at most 100"},
			{Name: "include_inactive", Type: "boolean"},
			{Name: "return_match", Type: "boolean", Description: "lexical searches only: return the matched terms"},
			{Name: "return_snippet", Type: "boolean", Description: "Lectern extension, lexical, semantic and hybrid searches: each result carries snippet, an excerpt of its chunk (tenant-wide, of the best one) in fragments, the words the search matched marked match (semantic results mark none)"},
			{Name: "field", Type: "string", Description: "field searches only: field types searched (TITLE, SUMMARY, ...); repeatable or comma-separated"}}}, a.searchContent)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: base + "/:content_id/versions/:version", Summary: "A content version with its content_details", Tag: "content",
		Scope: httpx.ScopeHeader, Success: 200, Response: "ContentVersion"}, a.getContentVersion)
	r.Handle(httpx.Route{Method: fiber.MethodPatch, Path: base + "/:content_id/versions/:version", Summary: "Set a content version's tags and active flag", Tag: "content",
		Scope: httpx.ScopeHeader, Body: "ContentUpdate", Success: 200, Response: "ContentVersion"}, a.patchContentVersion)
}

func contentSchemas() map[string]any {
	intT := map[string]any{"type": "integer"}
	strList := map[string]any{"type": "array", "items": httpx.Str()}
	version := httpx.Obj(map[string]any{"content_id": httpx.Str(), "version": intT, "title": httpx.Str(), "tags": strList, "active": httpx.Bool(),
		"content_details": httpx.Obj(map[string]any{"content_type": httpx.Str(), "existing_metadata": map[string]any{"type": "object"},
			"interactions": map[string]any{"type": "array", "items": map[string]any{"type": "object"}}}),
		"create_dt": httpx.Str(), "update_dt": httpx.Str()})
	return map[string]any{
		"ContentImportRequest": httpx.Obj(map[string]any{"url": map[string]any{"type": "string", "description": "absolute http(s) URL of the content"}}, "url"),
		"ContentUpdate":        httpx.Obj(map[string]any{"tags": strList, "active": httpx.Bool()}),
		"ContentVersion":       version,
		"ContentList": httpx.Obj(map[string]any{"content": map[string]any{"type": "array", "items": httpx.Ref("ContentVersion")},
			"more": map[string]any{"type": "string", "description": "token of the next page (query parameter more); absent on the last page"}}, "content"),
		"SearchResults": map[string]any{"type": "array", "items": httpx.Obj(map[string]any{
			"tenant_id": httpx.Str(), "content_id": httpx.Str(), "version": intT,
			"location":       map[string]any{"type": "string", "description": "lexical, semantic or hybrid search within one content item only"},
			"match_strength": map[string]any{"type": "number", "minimum": 0, "maximum": 1, "description": "semantic (and hybrid, a Lectern extension) searches only"},
			"match":          map[string]any{"description": "return_match on a lexical search: the matched terms (keyword) or a match regex (phrase)"},
			"field":          httpx.Obj(map[string]any{"create_dt": httpx.Str(), "update_dt": httpx.Str(), "field_type": httpx.Str(), "value": httpx.Str()}),
			"snippet": httpx.Obj(map[string]any{
				"location": map[string]any{"type": "string", "description": "location of the chunk the excerpt is from (also tenant-wide)"},
				"fragments": map[string]any{"type": "array", "description": "the excerpt in order; white space runs are one space, … marks text left out",
					"items": httpx.Obj(map[string]any{"text": httpx.Str(), "match": map[string]any{"type": "boolean", "description": "words the search matched (absent: false)"}}, "text")},
			}, "location", "fragments"),
		}, "tenant_id", "content_id", "version")},
	}
}

func (a *API) importContent(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	p := contentjob.ImportPayload{Tenant: tenantID, JobID: jobs.NewID(), ContentID: c.Query("content_id")}
	if c.Context().QueryArgs().Has("content_id") {
		if err := content.ValidateID(p.ContentID); err != nil {
			return httpx.BadRequest("query parameter content_id: %v", err)
		}
	} else {
		p.ContentID = jobs.NewID()
	}
	if p.Tags, err = content.ValidateTags(queryMulti(c, "tag_id")); err != nil {
		return httpx.BadRequest("query parameter tag_id: %v", err)
	}
	ct := strings.ToLower(c.Get(fiber.HeaderContentType))
	switch {
	case strings.HasPrefix(ct, fiber.MIMEMultipartForm):
		up, err := httpx.OpenUpload(c, "file", 1)
		if err != nil {
			return err
		}
		if len(up.Head) == 0 {
			return httpx.BadRequest("the uploaded file %q is empty", up.FileName)
		}
		p.UploadKey, p.FileName = contentjob.UploadKey(tenantID, p.JobID), up.FileName
		if err := up.Store(c, a.d.Blobs, p.UploadKey); err != nil {
			return err
		}
	case strings.HasPrefix(ct, fiber.MIMEApplicationJSON) || ct == "":
		var req ContentImportRequest
		if err := httpx.DecodeJSON(c, &req); err != nil {
			return err
		}
		if err := httpx.RequireHTTPURL(req.URL); err != nil {
			return err
		}
		if err := a.d.Outbound.CheckSaved(c.UserContext(), *req.URL); err != nil {
			return httpx.BadRequest("property url is not a source this server may download from: %v", err)
		}
		p.URL = *req.URL
	default:
		return httpx.BadRequest("Content-Type %q is not supported: upload multipart/form-data with a 'file' part, or send application/json {\"url\": ...}", ct)
	}
	task, opts := contentjob.NewImportTask(p)
	return a.startUploadJob(c, p.JobID, contentjob.JobType, tenantID, p.UploadKey, task, opts, contentjob.CodeInternal)
}

// contentMore is the continuation token of the content list: the store cursor with the
// original filters and page size, so a client sends it alone (like the course list's
// `more`), and the tenant, so that a token is refused by any other tenant.
type contentMore struct {
	Tenant string `json:"t"`
	Cursor string `json:"c"`
	Since  string `json:"s,omitempty"`
	Limit  int    `json:"l"`
}

func decodeContentMore(v, tenantID string) (contentMore, error) {
	var m contentMore
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || json.Unmarshal(b, &m) != nil || m.Cursor == "" || m.Limit < 1 || m.Limit > contentListMaxLimit {
		return m, httpx.BadRequest("query parameter more is not a continuation token of the content list")
	}
	if m.Tenant != tenantID {
		return m, httpx.BadRequest("query parameter more is a continuation token of another tenant")
	}
	return m, nil
}

// Content list page sizes.
const (
	contentListDefaultLimit = 100
	contentListMaxLimit     = 1000
)

func (a *API) listContent(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	args := c.Context().QueryArgs()
	var m contentMore
	skip := 0
	if args.Has("more") {
		for _, p := range []string{"skip", "limit", "since"} {
			if args.Has(p) {
				return httpx.BadRequest("query parameter more must be sent alone: it carries the page size and filters (%s given)", p)
			}
		}
		if m, err = decodeContentMore(c.Query("more"), tenantID); err != nil {
			return err
		}
	} else {
		if skip, err = httpx.QueryInt(c, "skip", 0, 0, 1<<30); err != nil {
			return err
		}
		if m.Limit, err = httpx.QueryInt(c, "limit", contentListDefaultLimit, 1, contentListMaxLimit); err != nil {
			return err
		}
		m.Since, m.Tenant = c.Query("since"), tenantID
	}
	q := content.ListQuery{Cursor: m.Cursor, Skip: skip, Limit: m.Limit}
	if m.Since != "" {
		if q.Since, err = httpx.ParseSince(m.Since); err != nil {
			return err
		}
	}
	page, err := a.d.Content.List(c.UserContext(), tenantID, q)
	if errors.Is(err, content.ErrInvalidCursor) {
		return httpx.BadRequest("query parameter more is not a continuation token of the content list")
	}
	if err != nil {
		return err
	}
	out := ContentList{Content: make([]ContentVersion, 0, len(page.Versions))}
	for _, v := range page.Versions {
		out.Content = append(out.Content, contentView(v))
	}
	if page.Next != "" {
		m.Cursor = page.Next
		b, _ := json.Marshal(m)
		out.More = base64.RawURLEncoding.EncodeToString(b)
	}
	return c.JSON(out)
}

// contentPath reads the content_id and version path parameters.
func contentPath(c *fiber.Ctx) (string, int, error) {
	id, err := httpx.PathValue(c, "content_id")
	if err != nil {
		return "", 0, err
	}
	if err := content.ValidateID(id); err != nil {
		return "", 0, httpx.BadRequest("%v", err)
	}
	v, err := strconv.Atoi(c.Params("version"))
	if err != nil || v < 1 {
		return "", 0, httpx.BadRequest("version must be a positive integer, not %q", c.Params("version"))
	}
	return id, v, nil
}

func (a *API) getContentVersion(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	id, ver, err := contentPath(c)
	if err != nil {
		return err
	}
	v, err := a.d.Content.Get(c.UserContext(), tenantID, id, ver)
	if err != nil {
		return contentError(err)
	}
	return c.JSON(contentView(v))
}

func (a *API) patchContentVersion(c *fiber.Ctx) error {
	ctx := c.UserContext()
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	id, ver, err := contentPath(c)
	if err != nil {
		return err
	}
	var body ContentUpdate
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	if body.Tags == nil && body.Active == nil {
		return httpx.BadRequest("give tags, active or both")
	}
	var tags []string
	if body.Tags != nil {
		if tags, err = content.ValidateTags(*body.Tags); err != nil {
			return httpx.BadRequest("property tags: %v", err)
		}
	}
	v, err := a.d.Content.Update(ctx, tenantID, id, ver, func(v *content.Version) {
		if body.Tags != nil {
			v.Tags = tags
		}
		if body.Active != nil {
			v.Active = *body.Active
		}
	})
	if err != nil {
		return contentError(err)
	}
	// Not indexed yet (the index task is still queued): it reads the record, which holds the
	// new status, and re-checks it after writing.
	if err := a.d.Search.Index.SetStatus(ctx, tenantID, id, ver, v.Tags, v.Active); err != nil && !errors.Is(err, indexer.ErrNotFound) {
		return err
	}
	return c.JSON(contentView(v))
}

// searchParams are the query parameters of the search; repeatable ones map to true.
var searchParams = map[string]bool{"search_type": false, "term": false, "content_id": false, "version": false,
	"tag_id": true, "skip": false, "limit": false, "include_inactive": false, "return_match": false, "return_snippet": false, "field": true}

func (a *API) searchContent(c *fiber.Ctx) error {
	ctx := c.UserContext()
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	var bad error
	seen := map[string]bool{}
	c.Context().QueryArgs().VisitAll(func(k, _ []byte) {
		name := string(k)
		repeatable, known := searchParams[name]
		switch {
		case bad != nil:
		case !known:
			bad = httpx.BadRequest("unknown query parameter %q", name)
		case seen[name] && !repeatable:
			bad = httpx.BadRequest("query parameter %s is given more than once", name)
		}
		seen[name] = true
	})
	if bad != nil {
		return bad
	}
	q := indexer.Query{Tenant: tenantID, Term: c.Query("term"), ContentID: c.Query("content_id")}
	switch st := c.Query("search_type"); strings.ToUpper(st) {
	case "LEXICAL":
		q.Type = indexer.Lexical
	case "SEMANTIC":
		q.Type = indexer.Semantic
	case "FIELD":
		q.Type = indexer.FieldSearch
	case "HYBRID":
		q.Type = indexer.Hybrid
	case "":
		return httpx.BadRequest("query parameter search_type is required (LEXICAL, SEMANTIC, FIELD or HYBRID)")
	default:
		return httpx.BadRequest("query parameter search_type must be LEXICAL, SEMANTIC, FIELD or HYBRID, not %q", st)
	}
	if strings.TrimSpace(q.Term) == "" {
		return httpx.BadRequest("query parameter term is required")
	}
	if len(q.Term) > 4096 {
		return httpx.BadRequest("query parameter term is longer than 4096 bytes")
	}
	hasID, hasVersion := seen["content_id"], seen["version"]
	if hasID != hasVersion {
		return httpx.BadRequest("give both content_id and version, or neither")
	}
	if hasID {
		if err := content.ValidateID(q.ContentID); err != nil {
			return httpx.BadRequest("query parameter content_id: %v", err)
		}
		v, err := strconv.Atoi(c.Query("version"))
		if err != nil || v < 1 {
			return httpx.BadRequest("query parameter version must be a positive integer, not %q", c.Query("version"))
		}
		q.Version = &v
	}
	if q.Tags, err = content.ValidateTags(queryMulti(c, "tag_id")); err != nil {
		return httpx.BadRequest("query parameter tag_id: %v", err)
	}
	if q.Skip, err = httpx.QueryInt(c, "skip", 0, 0, indexer.MaxLimit-searchMaxLimit); err != nil {
		return err
	}
	if q.Limit, err = httpx.QueryInt(c, "limit", searchDefaultLimit, 1, searchMaxLimit); err != nil {
		return err
	}
	if q.IncludeInactive, err = httpx.QueryBool(c, "include_inactive", false); err != nil {
		return err
	}
	if q.ReturnMatch, err = httpx.QueryBool(c, "return_match", false); err != nil {
		return err
	}
	if q.ReturnMatch && q.Type != indexer.Lexical {
		return httpx.BadRequest("return_match applies to LEXICAL searches only")
	}
	if q.ReturnText, err = httpx.QueryBool(c, "return_snippet", false); err != nil {
		return err
	}
	if q.ReturnText && q.Type == indexer.FieldSearch {
		return httpx.BadRequest("return_snippet applies to LEXICAL, SEMANTIC and HYBRID searches only (a FIELD result carries its whole value)")
	}
	for _, f := range queryMulti(c, "field") {
		for _, part := range strings.Split(f, ",") {
			if part = strings.ToUpper(strings.TrimSpace(part)); part != "" {
				q.FieldTypes = append(q.FieldTypes, part)
			}
		}
	}
	if len(q.FieldTypes) > 0 && q.Type != indexer.FieldSearch {
		return httpx.BadRequest("field applies to FIELD searches only")
	}
	if q.Type == indexer.Semantic || q.Type == indexer.Hybrid {
		if a.d.Search.Embedder == nil {
			msg := a.d.Search.Unavailable
			if msg == "" {
				msg = "semantic search is unavailable: no embedding model is configured; run `make model` (or set LECTERN_EMBEDDINGS_URL) and restart"
			}
			return httpx.Errorf(fiber.StatusServiceUnavailable, "%s", msg)
		}
		vecs, err := a.d.Search.Embedder.Embed(ctx, []string{q.Term})
		if err != nil {
			a.d.Logger.Error("embed search term", "error", err)
			return httpx.Errorf(fiber.StatusServiceUnavailable, "semantic search is unavailable: the embedding model failed")
		}
		q.Vector = vecs[0]
	}
	hits, err := a.d.Search.Index.Search(ctx, q)
	switch {
	case errors.Is(err, indexer.ErrInvalidQuery):
		return httpx.BadRequest("%v", err)
	case errors.Is(err, indexer.ErrModelMismatch):
		return httpx.Errorf(fiber.StatusServiceUnavailable, "semantic search is unavailable: %v", err)
	case err != nil:
		return err
	}
	out := make([]SearchResult, 0, len(hits))
	for _, h := range hits {
		r := SearchResult{TenantID: tenantID, ContentID: h.ContentID, Version: h.Version}
		switch q.Type {
		case indexer.FieldSearch:
			if h.Field != nil {
				r.Field = &SearchField{Created: localTime(h.Field.Created), Updated: localTime(h.Field.Updated),
					FieldType: h.Field.FieldType, Value: h.Field.Value}
			}
		case indexer.Semantic, indexer.Hybrid:
			r.MatchStrength = h.MatchStrength
			if r.MatchStrength == nil {
				r.MatchStrength = indexer.Strength(h.Score)
			}
		case indexer.Lexical:
			if q.ReturnMatch {
				r.Match = h.Match
				if r.Match == nil {
					r.Match = []string{}
				}
			}
		}
		if q.ContentID != "" && q.Type != indexer.FieldSearch {
			loc := h.Location
			r.Location = &loc
		}
		if h.Text != nil {
			var spans []indexer.Span
			if q.Type == indexer.Lexical || q.Type == indexer.Hybrid {
				spans = indexer.MatchSpans(h.Text.Text, q.Term)
			}
			r.Snippet = &Snippet{Location: h.Text.Location, Fragments: []SnippetFragment{}}
			for _, f := range indexer.Snippet(h.Text.Text, spans, snippetRunes) {
				r.Snippet.Fragments = append(r.Snippet.Fragments, SnippetFragment(f))
			}
		}
		out = append(out, r)
	}
	return c.JSON(out)
}
