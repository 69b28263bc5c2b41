// Package contentapi is the HTTP side of the content service (/api/v1/...): tenants and
// their credentials (the app management every API shares), content import, versions and
// search, skills taxonomies and generated fields, jobs, and webhook subscriptions. It
// translates HTTP to the content packages and ports; its routes go through the root's
// registrar.
package contentapi

import (
	"log/slog"
	"maps"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/subscription"
	"github.com/lectern-lms/lectern/content/taxonomy"
	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/tenant"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/outbound"
	"github.com/lectern-lms/lectern/workers/queue"
)

// Deps is what the content service's HTTP side needs; the root builds it from server.Deps.
type Deps struct {
	Tenants *tenant.Registry
	Jobs    *jobs.Store
	// Queue receives the tasks of imports, tenant deletions and index rebuilds; IndexQueue
	// the index tasks of field generation jobs.
	Queue      queue.Queue
	IndexQueue queue.Queue
	// Blobs receives uploads (content files, parsed taxonomies) for their jobs.
	Blobs blob.Store
	// Content holds content items and versions; Fields their generated fields; Config the
	// content service's settings (GENERATION__SKILL_TAXONOMY).
	Content *content.Store
	Fields  *content.FieldStore
	Config  *content.Config
	// Taxonomies keeps the tenants' skills taxonomies.
	Taxonomies *taxonomy.Store
	Search     Search
	// Subscriptions keeps the webhook subscriptions; Outbound checks their URLs against the
	// outbound policy when they are created.
	Subscriptions *subscription.Store
	Outbound      *outbound.Client
	Logger        *slog.Logger
}

// Search is the content search index with the embedder of semantic search terms.
type Search struct {
	Index indexer.Index
	// Embedder embeds semantic search terms; nil answers semantic searches with 503 and
	// Unavailable (or, when empty, how to install a model) as the message.
	Embedder    embed.Embedder
	Unavailable string
}

// API is the content service's HTTP side.
type API struct {
	d Deps
}

// New returns the content service's API over d.
func New(d Deps) *API {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return &API{d: d}
}

// Register registers the content service's routes: app management (tenants, credentials,
// the index rebuild), jobs, content, skills and generated fields, subscriptions.
func (a *API) Register(r httpx.Registrar) {
	a.registerTenants(r)
	a.registerJobs(r)
	a.registerContent(r)
	a.registerSkills(r)
	a.registerSubscriptions(r)
}

// Schemas are the OpenAPI components of the content service's bodies, for /openapi.json.
func Schemas() map[string]any {
	tenantSchema := httpx.Obj(map[string]any{"tenant_id": httpx.Str(), "enabled": httpx.Bool(), "create_dt": httpx.DateTime(), "update_dt": httpx.DateTime()})
	out := map[string]any{
		"TenantCreate":   httpx.Obj(map[string]any{"tenant_id": httpx.Str(), "enabled": map[string]any{"type": "boolean", "default": true}}, "tenant_id"),
		"TenantUpdate":   httpx.Obj(map[string]any{"enabled": httpx.Bool()}, "enabled"),
		"Tenant":         tenantSchema,
		"TenantList":     httpx.Obj(map[string]any{"tenants": map[string]any{"type": "array", "items": httpx.Ref("Tenant")}}),
		"Credential":     httpx.Obj(map[string]any{"key": httpx.Str(), "secret": map[string]any{"type": "string", "description": "shown only in the creation response"}, "tenant_id": httpx.Str(), "create_dt": httpx.DateTime()}),
		"CredentialList": httpx.Obj(map[string]any{"credentials": map[string]any{"type": "array", "items": httpx.Ref("Credential")}}),
		"Job": httpx.Obj(map[string]any{"id": httpx.Str(), "type": httpx.Str(), "status": map[string]any{"type": "string", "enum": []string{"PENDING", "RUNNING", "COMPLETED", "FAILED"}},
			"tenant_id": httpx.Str(), "results": map[string]any{"type": "object"},
			"error":    map[string]any{"nullable": true, "type": "object", "properties": map[string]any{"code": httpx.Str(), "message": httpx.Str()}},
			"warnings": map[string]any{"type": "array", "items": httpx.Str()}, "create_dt": httpx.DateTime(), "update_dt": httpx.DateTime()}),
		"JobList": httpx.Obj(map[string]any{"jobs": map[string]any{"type": "array", "items": httpx.Ref("Job")},
			"more": map[string]any{"type": "string", "description": "the next page's token; empty on the last page"}}, "jobs", "more"),
	}
	for _, part := range []map[string]any{skillsSchemas(), contentSchemas(), subscriptionSchemas()} {
		maps.Copy(out, part)
	}
	return out
}
