package contentapi

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/workers/jobs"
)

// JobList is the body of GET /api/v1/jobs (a Lectern extension): one page of the tenant's
// jobs and the token of the next page.
type JobList struct {
	Jobs []*jobs.Job `json:"jobs"`
	// More is the next page's token ("" on the last page), sent back as ?more= with the same
	// filters.
	More string `json:"more"`
}

var jobStatuses = map[string]bool{jobs.StatusPending: true, jobs.StatusRunning: true, jobs.StatusCompleted: true, jobs.StatusFailed: true}

func (a *API) registerJobs(r httpx.Registrar) {
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: "/api/v1/jobs/:job_id", Summary: "Status of a job", Tag: "jobs",
		Scope: httpx.ScopeHeader, Success: 200, Response: "Job"}, a.getJob)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: "/api/v1/jobs", Summary: "Lectern extension: the tenant's jobs (content and taxonomy imports, field generation, tenant deletion), oldest update first", Tag: "jobs",
		Scope: httpx.ScopeHeader, Success: 200, Response: "JobList",
		Query: []httpx.Param{{Name: "status", Type: "string", Description: "PENDING, RUNNING, COMPLETED or FAILED"},
			{Name: "type", Type: "string", Description: "a job type, e.g. CONTENT_IMPORT"},
			{Name: "limit", Type: "integer", Description: "page size, 1 to 1000 (default 100)"},
			{Name: "more", Type: "string", Description: "the previous page's more token; send the same status and type with it"}}}, a.listJobs)
}

func (a *API) getJob(c *fiber.Ctx) error {
	j, err := a.d.Jobs.Get(c.UserContext(), c.Params("job_id"))
	if err == nil && !httpx.PrincipalOf(c).Root && j.Tenant != httpx.TenantOf(c) {
		err = jobs.ErrNotFound
	}
	if errors.Is(err, jobs.ErrNotFound) {
		return httpx.NotFound("job '%s' not found", c.Params("job_id"))
	}
	if err != nil {
		return err
	}
	return c.JSON(j)
}

// listJobs pages through the tenant's jobs in (update_dt, id) order: a job that changes
// moves to the end, so a client polling with the last page's token sees it again.
func (a *API) listJobs(c *fiber.Ctx) error {
	status := c.Query("status")
	if status != "" && !jobStatuses[status] {
		return httpx.BadRequest("query parameter status must be PENDING, RUNNING, COMPLETED or FAILED, not %q", status)
	}
	limit, err := httpx.QueryInt(c, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	list, more, err := a.d.Jobs.List(c.UserContext(), jobs.Filter{Tenant: httpx.TenantOf(c), Status: status,
		Type: c.Query("type"), Cursor: c.Query("more"), Limit: limit})
	if errors.Is(err, jobs.ErrBadCursor) {
		return httpx.BadRequest("query parameter more is not a token of this job list")
	}
	if err != nil {
		return err
	}
	return c.JSON(JobList{Jobs: list, More: more})
}
