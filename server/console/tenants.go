package console

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/contentapi"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/tenant"
)

// The console's tenant pages: root lists, creates, enables and disables tenants and issues
// and revokes their credentials; every signed-in user has a tenant overview.

func (co *Console) registerTenants(g fiber.Router) {
	need, h := co.sessionRequired, co.handler
	g.Get("/tenants", need, h(co.tenants))
	g.Post("/tenants", need, h(co.createTenant))
	g.Post("/tenants/:id/enabled", need, h(co.setTenantEnabled))
	g.Get("/tenants/:id/credentials", need, h(co.credentials))
	g.Post("/tenants/:id/credentials", need, h(co.issueCredential))
	g.Post("/tenants/:id/credentials/:key/revoke", need, h(co.revokeCredential))
	g.Get("/t/:tenant", need, h(co.tenantHome))
	g.Get("/t/:tenant/", need, h(co.tenantHome))
}

func tenantsPath(id string) string {
	return "/api/v1/app_management/tenants/" + url.PathEscape(id)
}

func (co *Console) tenants(c *fiber.Ctx) error {
	return co.renderTenants(c, fiber.StatusOK, "", c.Query("created"))
}

// renderTenants shows the tenant list (the table alone for htmx).
func (co *Console) renderTenants(c *fiber.Ctx, status int, fragment, created string) error {
	var list contentapi.TenantList
	if err := co.apiJSON(c, fiber.MethodGet, "/api/v1/app_management/tenants?limit=1000", nil, &list); err != nil {
		return err
	}
	v := &view{Title: "Tenants", Section: "tenants", Data: list}
	if created != "" {
		v.Notice = "Tenant " + created + " was created."
	}
	return co.render(c, status, "tenants", fragment, v)
}

func (co *Console) createTenant(c *fiber.Ctx) error {
	id := c.FormValue("tenant_id")
	enabled := c.FormValue("enabled") == "true"
	var t tenant.Tenant
	if err := co.apiJSON(c, fiber.MethodPost, "/api/v1/app_management/tenants", contentapi.TenantCreate{TenantID: &id, Enabled: &enabled}, &t); err != nil {
		return err
	}
	return c.Redirect(Path+"/tenants?created="+url.QueryEscape(t.ID), fiber.StatusSeeOther)
}

func (co *Console) setTenantEnabled(c *fiber.Ctx) error {
	on, err := strconv.ParseBool(c.FormValue("enabled"))
	if err != nil {
		return httpx.BadRequest("enabled must be true or false")
	}
	if err := co.apiJSON(c, fiber.MethodPut, tenantsPath(c.Params("id")), contentapi.TenantUpdate{Enabled: &on}, nil); err != nil {
		return err
	}
	if c.Get("HX-Request") == "true" {
		return co.renderTenants(c, fiber.StatusOK, "tenant-table", "")
	}
	return c.Redirect(Path+"/tenants", fiber.StatusSeeOther)
}

type credentialsData struct {
	Tenant      string
	Credentials []*tenant.Credential
	Issued      *tenant.Credential
}

func (co *Console) renderCredentials(c *fiber.Ctx, issued *tenant.Credential) error {
	id := c.Params("id")
	var list contentapi.CredentialList
	if err := co.apiJSON(c, fiber.MethodGet, tenantsPath(id)+"/credentials", nil, &list); err != nil {
		return err
	}
	return co.render(c, fiber.StatusOK, "credentials", "", &view{Title: "Credentials", Section: "tenants",
		Data: credentialsData{Tenant: id, Credentials: list.Credentials, Issued: issued}})
}

func (co *Console) credentials(c *fiber.Ctx) error { return co.renderCredentials(c, nil) }

func (co *Console) issueCredential(c *fiber.Ctx) error {
	var cred tenant.Credential
	if err := co.apiJSON(c, fiber.MethodPost, tenantsPath(c.Params("id"))+"/credentials", nil, &cred); err != nil {
		return err
	}
	// The secret is shown on this response only, never on a page a redirect could reload.
	return co.renderCredentials(c, &cred)
}

func (co *Console) revokeCredential(c *fiber.Ctx) error {
	if err := co.apiJSON(c, fiber.MethodDelete, tenantsPath(c.Params("id"))+"/credentials/"+url.PathEscape(c.Params("key")), nil, nil); err != nil {
		return err
	}
	return c.Redirect(Path+"/tenants/"+url.PathEscape(c.Params("id"))+"/credentials", fiber.StatusSeeOther)
}

// tenantHome opens a tenant's first section.
func (co *Console) tenantHome(c *fiber.Ctx) error {
	for _, sec := range co.sections {
		if sec.Tenant {
			return c.Redirect(Path+"/t/"+url.PathEscape(c.Params("tenant"))+"/"+sec.Path, fiber.StatusSeeOther)
		}
	}
	return co.render(c, fiber.StatusOK, "error", "", &view{Title: "Tenant " + c.Params("tenant"),
		Notice: "This tenant has no console pages yet."})
}
