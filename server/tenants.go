package server

import (
	"errors"
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

func (s *Server) createTenant(c *fiber.Ctx) error {
	forEngine, err := queryBool(c, "for_engine", false)
	if err != nil {
		return err
	}
	var body TenantCreate
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	if body.TenantID == nil {
		return badRequest("property tenant_id is required")
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
	t, err := s.deps.Tenants.Create(c.UserContext(), id, enabled)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(t)
}

func (s *Server) listTenants(c *fiber.Ctx) error {
	skip, err := queryInt(c, "skip", 0, 0, 1<<30)
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	ts, err := s.deps.Tenants.List(c.UserContext(), skip, limit)
	if err != nil {
		return err
	}
	return c.JSON(TenantList{Tenants: ts})
}

func (s *Server) updateTenant(c *fiber.Ctx) error {
	var body TenantUpdate
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	if body.Enabled == nil {
		return badRequest("property enabled is required")
	}
	t, err := s.deps.Tenants.SetEnabled(c.UserContext(), tenantOf(c), *body.Enabled)
	if err != nil {
		return err
	}
	return c.JSON(t)
}

// deleteTenant hides the tenant at once and removes its data in a job; 202 with the JobRead.
func (s *Server) deleteTenant(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id := tenantOf(c)
	if _, err := s.deps.Tenants.MarkDeleting(ctx, id); err != nil {
		return err
	}
	job, err := s.deps.Jobs.Create(ctx, jobs.NewID(), jobs.JobTypeTenantDelete, id, false)
	if err != nil {
		_ = s.deps.Tenants.CancelDeleting(ctx, id)
		return err
	}
	task, opts := jobs.NewTenantDeleteTask(jobs.TenantDeletePayload{TenantID: id, JobID: job.ID})
	if err := s.enqueueJob(ctx, s.deps.Queue, job, task, opts, jobs.CodeDeleteFailed, "deletion"); err != nil {
		// Not accepted (a queue outage answers 503): the tenant stays as it was, so the
		// client can simply repeat the DELETE, and the job says why it never ran.
		_ = s.deps.Tenants.CancelDeleting(ctx, id)
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(job)
}

func (s *Server) createCredential(c *fiber.Ctx) error {
	if len(c.Body()) > 0 {
		var empty struct{}
		if err := decodeJSON(c, &empty); err != nil {
			return err
		}
	}
	cred, err := s.deps.Tenants.CreateCredential(c.UserContext(), tenantOf(c))
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(cred)
}

// CredentialList is the body of GET .../credentials.
type CredentialList struct {
	Credentials []*tenant.Credential `json:"credentials"`
}

func (s *Server) listCredentials(c *fiber.Ctx) error {
	cs, err := s.deps.Tenants.ListCredentials(c.UserContext(), tenantOf(c))
	if err != nil {
		return err
	}
	return c.JSON(CredentialList{Credentials: cs})
}

func (s *Server) deleteCredential(c *fiber.Ctx) error {
	if err := s.deps.Tenants.DeleteCredential(c.UserContext(), tenantOf(c), c.Params("key")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) getJob(c *fiber.Ctx) error {
	j, err := s.deps.Jobs.Get(c.UserContext(), c.Params("job_id"))
	if err == nil && !httpx.PrincipalOf(c).Root && j.Tenant != tenantOf(c) {
		err = jobs.ErrNotFound
	}
	if errors.Is(err, jobs.ErrNotFound) {
		return notFound("job '%s' not found", c.Params("job_id"))
	}
	if err != nil {
		return err
	}
	return c.JSON(j)
}

// reindex starts a rebuild of the content index from the record and blob stores, as a job
// (202 with the JobRead; GET /api/v1/jobs/{id} shows versions_done of versions_total).
func (s *Server) reindex(c *fiber.Ctx) error {
	ctx := c.UserContext()
	job, err := s.deps.Jobs.Create(ctx, jobs.NewID(), contentjob.JobTypeReindex, "", false)
	if err != nil {
		return err
	}
	task, opts := contentjob.NewReindexTask(contentjob.ReindexPayload{JobID: job.ID})
	if err := s.enqueueJob(ctx, s.deps.Queue, job, task, opts, contentjob.CodeReindex, "rebuild"); err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(job)
}
