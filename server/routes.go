package server

import "github.com/gofiber/fiber/v2"

var configurationParam = Param{Name: "configuration", Type: "string",
	Description: "external configuration with custom properties of the integrating LMS; accepted by every engine operation"}

func (s *Server) registerRoutes() {
	s.handle(Route{Method: fiber.MethodGet, Path: "/healthz", Summary: "Process health", Tag: "operations",
		Scope: ScopePublic, Success: 200, Response: "Health"}, s.healthz)
	s.handle(Route{Method: fiber.MethodGet, Path: "/readyz", Summary: "Readiness of every backend", Tag: "operations",
		Scope: ScopePublic, Success: 200, Response: "Readiness"}, s.readyz)
	s.handle(Route{Method: fiber.MethodGet, Path: "/openapi.json", Summary: "This API description", Tag: "operations",
		Scope: ScopePublic, Success: 200, Response: "OpenAPI"}, s.openapi)

	const tenants = "/api/v1/app_management/tenants"
	s.handle(Route{Method: fiber.MethodPost, Path: tenants, Summary: "Create a tenant", Tag: "tenants",
		Scope: ScopeRoot, Body: "TenantCreate", Success: 201, Response: "Tenant",
		Query: []Param{{Name: "for_engine", Type: "boolean", Description: "lowercase the id for engine integration"}}}, s.createTenant)
	s.handle(Route{Method: fiber.MethodGet, Path: tenants, Summary: "List tenants", Tag: "tenants",
		Scope: ScopeRoot, Success: 200, Response: "TenantList",
		Query: []Param{{Name: "skip", Type: "integer"}, {Name: "limit", Type: "integer"}}}, s.listTenants)
	s.handle(Route{Method: fiber.MethodPut, Path: tenants + "/:tenant_id", Summary: "Enable or disable a tenant", Tag: "tenants",
		Scope: ScopeRootTenant, Body: "TenantUpdate", Success: 200, Response: "Tenant", AllowDisabled: true}, s.updateTenant)
	s.handle(Route{Method: fiber.MethodDelete, Path: tenants + "/:tenant_id", Summary: "Delete a tenant and all its data (as a job)", Tag: "tenants",
		Scope: ScopeRootTenant, Success: 202, Response: "Job"}, s.deleteTenant)
	s.handle(Route{Method: fiber.MethodPost, Path: tenants + "/:tenant_id/credentials", Summary: "Issue an API credential for a tenant", Tag: "tenants",
		Scope: ScopeRootTenant, Success: 201, Response: "Credential"}, s.createCredential)
	s.handle(Route{Method: fiber.MethodGet, Path: tenants + "/:tenant_id/credentials", Summary: "List a tenant's credential keys", Tag: "tenants",
		Scope: ScopeRootTenant, Success: 200, Response: "CredentialList"}, s.listCredentials)
	s.handle(Route{Method: fiber.MethodDelete, Path: tenants + "/:tenant_id/credentials/:key", Summary: "Revoke a credential", Tag: "tenants",
		Scope: ScopeRootTenant, Success: 204}, s.deleteCredential)
	s.handle(Route{Method: fiber.MethodGet, Path: "/api/v1/jobs/:job_id", Summary: "Status of a job", Tag: "jobs",
		Scope: ScopeHeader, Success: 200, Response: "Job"}, s.getJob)

	const engine = "/engine/api/v1/:tenant"
	cfg := []Param{configurationParam}
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/configuration", Summary: "Effective tenant configuration", Tag: "configuration",
		Scope: ScopeEnginePath, Success: 200, Response: "ConfigurationList", Query: cfg}, s.getTenantConfiguration)
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/configuration/:settingId", Summary: "One tenant setting", Tag: "configuration",
		Scope: ScopeEnginePath, Success: 200, Response: "SettingBody", Query: cfg}, s.getTenantSetting)
	s.handle(Route{Method: fiber.MethodPut, Path: engine + "/configuration/:settingId", Summary: "Set a tenant setting", Tag: "configuration",
		Scope: ScopeEnginePath, Body: "SettingBody", Success: 204, Query: cfg}, s.putTenantSetting)
}
