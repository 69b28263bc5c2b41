package contentapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/tenant"
	"github.com/lectern-lms/lectern/workers/contentjob"
	"github.com/lectern-lms/lectern/workers/jobs"
)

// TenantCreate is the body of POST /api/v1/app_management/tenants.
type TenantCreate struct {
	TenantID *string `json:"tenant_id"`
	Enabled  *bool   `json:"enabled"`
}

// TenantUpdate is the body of PUT /api/v1/app_management/tenants/{tenant_id}.
type TenantUpdate struct {
	Enabled *bool `json:"enabled"`
}

// TenantList is the body of GET /api/v1/app_management/tenants.
type TenantList struct {
	Tenants []*tenant.Tenant `json:"tenants"`
}

func (a *API) registerTenants(r httpx.Registrar) {
	const tenants = "/api/v1/app_management/tenants"
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: tenants, Summary: "Create a tenant", Tag: "tenants",
		Scope: httpx.ScopeRoot, Body: "TenantCreate", Success: 201, Response: "Tenant",
		Query: []httpx.Param{{Name: "for_engine", Type: "boolean", Description: "lowercase the id for engine integration"}}}, a.createTenant)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: tenants, Summary: "List tenants", Tag: "tenants",
		Scope: httpx.ScopeRoot, Success: 200, Response: "TenantList",
		Query: []httpx.Param{{Name: "skip", Type: "integer"}, {Name: "limit", Type: "integer"}}}, a.listTenants)
	r.Handle(httpx.Route{Method: fiber.MethodPut, Path: tenants + "/:tenant_id", Summary: "Enable or disable a tenant", Tag: "tenants",
		Scope: httpx.ScopeRootTenant, Body: "TenantUpdate", Success: 200, Response: "Tenant", AllowDisabled: true}, a.updateTenant)
	r.Handle(httpx.Route{Method: fiber.MethodDelete, Path: tenants + "/:tenant_id", Summary: "Delete a tenant and all its data (as a job)", Tag: "tenants",
		Scope: httpx.ScopeRootTenant, Success: 202, Response: "Job"}, a.deleteTenant)
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: tenants + "/:tenant_id/credentials", Summary: "Issue an API credential for a tenant", Tag: "tenants",
		Scope: httpx.ScopeRootTenant, Success: 201, Response: "Credential"}, a.createCredential)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: tenants + "/:tenant_id/credentials", Summary: "List a tenant's credential keys", Tag: "tenants",
		Scope: httpx.ScopeRootTenant, Success: 200, Response: "CredentialList"}, a.listCredentials)
	r.Handle(httpx.Route{Method: fiber.MethodDelete, Path: tenants + "/:tenant_id/credentials/:key", Summary: "Revoke a credential", Tag: "tenants",
		Scope: httpx.ScopeRootTenant, Success: 204}, a.deleteCredential)
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: "/api/v1/app_management/reindex", Summary: "Rebuild the content search index from the stored content versions (as a job)", Tag: "tenants",
		Scope: httpx.ScopeRoot, Success: 202, Response: "Job"}, a.reindex)
}

func (a *API) createTenant(c *fiber.Ctx) error {
	forEngine, err := httpx.QueryBool(c, "for_engine", false)
	if err != nil {
		return err
	}
	var body TenantCreate
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	if body.TenantID == nil {
		return httpx.BadRequest("property tenant_id is required")
	}
	id := *body.TenantID
	if forEngine {
		// Engine paths are case-insensitive in the tenant segment, so engine tenants are lowercase.
		id = strings.ToLower(id)
	}
	enabled := true
	if body.Enabled != nil {
		enabled = *body.Enabled
	}
	t, err := a.d.Tenants.Create(c.UserContext(), id, enabled)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(t)
}

func (a *API) listTenants(c *fiber.Ctx) error {
	skip, err := httpx.QueryInt(c, "skip", 0, 0, 1<<30)
	if err != nil {
		return err
	}
	limit, err := httpx.QueryInt(c, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	ts, err := a.d.Tenants.List(c.UserContext(), skip, limit)
	if err != nil {
		return err
	}
	return c.JSON(TenantList{Tenants: ts})
}

func (a *API) updateTenant(c *fiber.Ctx) error {
	var body TenantUpdate
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	if body.Enabled == nil {
		return httpx.BadRequest("property enabled is required")
	}
	t, err := a.d.Tenants.SetEnabled(c.UserContext(), httpx.TenantOf(c), *body.Enabled)
	if err != nil {
		return err
	}
	return c.JSON(t)
}

// deleteTenant hides the tenant at once and removes its data in a job; 202 with the JobRead.
func (a *API) deleteTenant(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id := httpx.TenantOf(c)
	if _, err := a.d.Tenants.MarkDeleting(ctx, id); err != nil {
		return err
	}
	job, err := a.d.Jobs.Create(ctx, jobs.NewID(), jobs.JobTypeTenantDelete, id, false)
	if err != nil {
		_ = a.d.Tenants.CancelDeleting(ctx, id)
		return err
	}
	task, opts := jobs.NewTenantDeleteTask(jobs.TenantDeletePayload{TenantID: id, JobID: job.ID})
	if err := a.enqueueJob(ctx, a.d.Queue, job, task, opts, jobs.CodeDeleteFailed, "deletion"); err != nil {
		// Not accepted (a queue outage answers 503): the tenant stays as it was, so the
		// client can simply repeat the DELETE, and the job says why it never ran.
		_ = a.d.Tenants.CancelDeleting(ctx, id)
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(job)
}

func (a *API) createCredential(c *fiber.Ctx) error {
	if len(c.Body()) > 0 {
		var empty struct{}
		if err := httpx.DecodeJSON(c, &empty); err != nil {
			return err
		}
	}
	cred, err := a.d.Tenants.CreateCredential(c.UserContext(), httpx.TenantOf(c))
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(cred)
}

// CredentialList is the body of GET .../credentials.
type CredentialList struct {
	Credentials []*tenant.Credential `json:"credentials"`
}

func (a *API) listCredentials(c *fiber.Ctx) error {
	cs, err := a.d.Tenants.ListCredentials(c.UserContext(), httpx.TenantOf(c))
	if err != nil {
		return err
	}
	return c.JSON(CredentialList{Credentials: cs})
}

func (a *API) deleteCredential(c *fiber.Ctx) error {
	if err := a.d.Tenants.DeleteCredential(c.UserContext(), httpx.TenantOf(c), c.Params("key")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// reindex starts a rebuild of the content index from the record and blob stores, as a job
// (202 with the JobRead; GET /api/v1/jobs/{id} shows versions_done of versions_total).
func (a *API) reindex(c *fiber.Ctx) error {
	ctx := c.UserContext()
	job, err := a.d.Jobs.Create(ctx, jobs.NewID(), contentjob.JobTypeReindex, "", false)
	if err != nil {
		return err
	}
	task, opts := contentjob.NewReindexTask(contentjob.ReindexPayload{JobID: job.ID})
	if err := a.enqueueJob(ctx, a.d.Queue, job, task, opts, contentjob.CodeReindex, "rebuild"); err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(job)
}
