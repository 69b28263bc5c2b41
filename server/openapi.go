package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/contentapi"
	"github.com/lectern-lms/lectern/server/engineapi"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/server/lrsapi"
)

var fiberParam = regexp.MustCompile(`:([A-Za-z_][A-Za-z0-9_]*)`)

// OpenAPIPath converts a Fiber path (:param) to OpenAPI syntax ({param}).
func OpenAPIPath(p string) string { return fiberParam.ReplaceAllString(p, "{$1}") }

// schemas are the components every route refers to by name: the root's own and each
// product's.
func schemas() map[string]any {
	out := map[string]any{
		"Message":   httpx.Obj(map[string]any{"message": httpx.Str()}, "message"),
		"Health":    httpx.Obj(map[string]any{"status": httpx.Str(), "version": httpx.Str()}, "status", "version"),
		"Readiness": httpx.Obj(map[string]any{"status": httpx.Str(), "backends": map[string]any{"type": "object", "additionalProperties": httpx.Str()}}),
		"OpenAPI":   map[string]any{"type": "object"},
	}
	for _, part := range []map[string]any{engineapi.Schemas(), contentapi.Schemas(), lrsapi.Schemas()} {
		maps.Copy(out, part)
	}
	return out
}

// OpenAPI builds the OpenAPI 3 document from the route table, so a route cannot exist
// without its description.
func (s *Server) OpenAPI() map[string]any {
	paths := map[string]map[string]any{}
	for _, r := range s.routes {
		p := OpenAPIPath(r.Path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		var params []any
		for _, m := range fiberParam.FindAllStringSubmatch(r.Path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": httpx.Str()})
		}
		for _, q := range r.Query {
			params = append(params, map[string]any{"name": q.Name, "in": "query", "required": q.Required,
				"description": q.Description, "schema": map[string]any{"type": q.Type}})
		}
		if r.Scope == httpx.ScopeLRS {
			params = append(params, map[string]any{"name": "X-Experience-API-Version", "in": "header", "required": true,
				"description": "xAPI version of the request: 1.0.x or 2.0.0 selects the rules", "schema": httpx.Str()})
		}
		if r.Scope == httpx.ScopeHeader {
			params = append(params, map[string]any{"name": "tenant_id", "in": "header", "required": false,
				"description": "tenant of the request; required with root credentials", "schema": httpx.Str()})
		}
		msg := map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": httpx.Ref("Message")}}}
		responses := successResponses(r)
		// Any request can be too large, in its body or in its header fields: the server
		// answers those before routing, with a message.
		responses["413"] = withDesc(msg, "request body larger than the limit")
		responses["431"] = withDesc(msg, "request header fields too large")
		if r.Scope != httpx.ScopePublic || strings.HasPrefix(r.Path, LRSBase) {
			responses["400"] = withDesc(msg, "bad request")
		}
		if r.Scope != httpx.ScopePublic {
			responses["401"] = withDesc(msg, "no or invalid credentials")
			responses["403"] = withDesc(msg, "credentials of another tenant, or not root")
			responses["429"] = withRetryAfter(withDesc(msg, "too many failed attempts for these credentials or from this address (Retry-After)"))
			responses["404"] = withDesc(msg, "not found")
			// Every authenticated operation reaches a backend; an outage is 503 (errors.go).
			responses["503"] = map[string]any{"$ref": "#/components/responses/Unavailable"}
			if httpx.IsWrite(r.Method) {
				responses["409"] = withDesc(msg, "conflict, or the tenant is disabled")
			}
			if r.Scope == httpx.ScopeLRS && httpx.IsWrite(r.Method) {
				responses["412"] = withDesc(msg, "If-Match / If-None-Match precondition failed")
			}
		}
		if r.ErrorSchema != "" {
			oe := map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": httpx.Ref(r.ErrorSchema)}}}
			responses["400"] = withDesc(oe, "malformed request, unsupported grant type or scope")
			responses["401"] = withDesc(oe, "client authentication failed")
			responses["429"] = withRetryAfter(withDesc(oe, "too many failed client authentications for this client or from this address (Retry-After)"))
			responses["503"] = map[string]any{"$ref": "#/components/responses/Unavailable"}
		}
		responses["413"] = withDesc(msg, s.limitText(r))
		if r.Body != "" || r.FormBody != "" || r.Upload {
			responses["415"] = withDesc(msg, "a Content-Encoding other than gzip or deflate (an upload: any)")
		}
		op := map[string]any{"summary": r.Summary, "tags": []string{r.Tag}, "responses": responses,
			"operationId": strings.ToLower(r.Method) + strings.NewReplacer("/", "_", ":", "", "{", "", "}", "").Replace(r.Path)}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if r.Body != "" {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": httpx.Ref(r.Body)}}}
		}
		if r.FormBody != "" {
			if op["requestBody"] == nil {
				op["requestBody"] = map[string]any{"required": true, "content": map[string]any{}}
			}
			content := op["requestBody"].(map[string]any)["content"].(map[string]any)
			content["application/x-www-form-urlencoded"] = map[string]any{"schema": httpx.Ref(r.FormBody)}
		}
		if r.Upload {
			if op["requestBody"] == nil {
				op["requestBody"] = map[string]any{"required": true, "content": map[string]any{}}
			}
			content := op["requestBody"].(map[string]any)["content"].(map[string]any)
			content["multipart/form-data"] = map[string]any{"schema": httpx.Obj(map[string]any{
				"file": map[string]any{"type": "string", "format": "binary", "description": "the file, streamed to storage"}}, "file")}
			if r.UploadSchema != "" {
				content["multipart/form-data"] = map[string]any{"schema": httpx.Ref(r.UploadSchema)}
			}
		}
		if r.Scope == httpx.ScopePublic {
			op["security"] = []any{}
		}
		if r.Scope == httpx.ScopeLRS {
			// The record store also takes the OAuth 2.0 access tokens of its token endpoint.
			op["security"] = []any{map[string]any{"basic": []any{}}, map[string]any{"bearer": []any{}}, map[string]any{"oauth2": []any{}}}
		}
		paths[p][strings.ToLower(r.Method)] = op
		if r.Head {
			head := map[string]any{}
			for k, v := range op {
				head[k] = v
			}
			head["summary"] = "HEAD: " + r.Summary + " (headers only)"
			head["operationId"] = "head" + strings.TrimPrefix(op["operationId"].(string), strings.ToLower(r.Method))
			paths[p]["head"] = head
		}
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "Lectern", "version": s.deps.Version},
		"paths":   paths,
		"components": map[string]any{
			"schemas": schemas(),
			"responses": map[string]any{"Unavailable": map[string]any{
				"description": "a backend (postgresql, redis, elasticsearch, minio) or the embedding model is unavailable; the message names it and nothing was accepted, so repeat the request (after Retry-After seconds when given)",
				"headers":     map[string]any{"Retry-After": map[string]any{"description": "seconds to wait before retrying", "schema": map[string]any{"type": "integer"}}},
				"content":     map[string]any{"application/json": map[string]any{"schema": httpx.Ref("Message")}},
			}},
			"securitySchemes": map[string]any{
				"basic":  map[string]any{"type": "http", "scheme": "basic"},
				"bearer": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "<key>.<secret>"},
				"oauth2": map[string]any{"type": "oauth2", "description": "record store only: client credentials of a client registered under /api/v1/app_management/tenants/{tenant_id}/lrs_oauth_clients",
					"flows": map[string]any{"clientCredentials": map[string]any{"tokenUrl": OAuthTokenPath, "scopes": lrsapi.OAuthScopes()}}},
			},
		},
		"security": []any{map[string]any{"basic": []any{}}, map[string]any{"bearer": []any{}}},
	}
}

// successResponses documents a route's success answers: Success with Response and Media,
// and its further Answers; several schemas for one status are alternatives (anyOf).
func successResponses(r httpx.Route) map[string]any {
	type answer struct {
		schemas []string
		media   []string
	}
	byStatus := map[int]*answer{}
	for _, a := range append([]httpx.Answer{{Status: r.Success, Schema: r.Response, Media: r.Media}}, r.Answers...) {
		b := byStatus[a.Status]
		if b == nil {
			b = &answer{}
			byStatus[a.Status] = b
		}
		if a.Schema != "" && !slices.Contains(b.schemas, a.Schema) {
			b.schemas = append(b.schemas, a.Schema)
		}
		for _, m := range a.Media {
			if !slices.Contains(b.media, m) {
				b.media = append(b.media, m)
			}
		}
	}
	out := map[string]any{}
	for status, a := range byStatus {
		resp := map[string]any{"description": "success"}
		content := map[string]any{}
		switch len(a.schemas) {
		case 0:
		case 1:
			content["application/json"] = map[string]any{"schema": httpx.Ref(a.schemas[0])}
		default:
			var alts []any
			for _, n := range a.schemas {
				alts = append(alts, httpx.Ref(n))
			}
			content["application/json"] = map[string]any{"schema": map[string]any{"anyOf": alts}}
		}
		for _, m := range a.media {
			content[m] = map[string]any{}
		}
		if len(content) > 0 {
			resp["content"] = content
		}
		out[itoa(status)] = resp
	}
	return out
}

// limitText describes a route's 413 answer: every route has a body limit (body.go), refused
// before the body is read when the declared length is over it.
func (s *Server) limitText(r httpx.Route) string {
	limit, _ := s.routeLimit(r, "")
	switch {
	case r.BodyLimit > 0:
		return fmt.Sprintf("request body over %d bytes (read before the client is authenticated)", limit)
	case r.Upload:
		return fmt.Sprintf("request body too large: a multipart upload over %d bytes (LECTERN_MAX_BODY_BYTES), a JSON body over %d bytes",
			s.deps.BodyLimit, httpx.MaxJSONBody)
	case r.Scope == httpx.ScopeLRS && r.Body != "" && r.Method == fiber.MethodPost:
		return fmt.Sprintf("request body over %d bytes (LECTERN_MAX_XAPI_BODY_BYTES); the form of the alternate request syntax over %d bytes",
			s.deps.RecordBodyLimit, httpx.MaxAlternateBody)
	case r.Scope == httpx.ScopeLRS && r.Body != "":
		return fmt.Sprintf("request body over %d bytes (LECTERN_MAX_XAPI_BODY_BYTES)", s.deps.RecordBodyLimit)
	case r.Body != "":
		return fmt.Sprintf("JSON body over %d bytes", limit)
	case r.FormBody != "":
		return fmt.Sprintf("form body over %d bytes", limit)
	}
	return fmt.Sprintf("request body over %d bytes (the operation takes none)", limit)
}

func withDesc(m map[string]any, d string) map[string]any {
	out := map[string]any{"description": d}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func (s *Server) openapi(c *fiber.Ctx) error { return c.JSON(s.OpenAPI()) }

// withRetryAfter adds the Retry-After header to a response description.
func withRetryAfter(m map[string]any) map[string]any {
	m["headers"] = map[string]any{"Retry-After": map[string]any{"description": "seconds to wait before the next attempt", "schema": map[string]any{"type": "integer"}}}
	return m
}
