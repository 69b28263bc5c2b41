package server

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/contentapi"
	"github.com/lectern-lms/lectern/tenant"
)

// The console's tenant pages: root lists, creates, enables and disables tenants and issues
// and revokes their credentials; every signed-in user has a tenant overview.

func (s *Server) registerConsoleTenants(g fiber.Router) {
	need, h := s.consoleSessionRequired, s.consoleHandler
	g.Get("/tenants", need, h(s.consoleTenants))
	g.Post("/tenants", need, h(s.consoleCreateTenant))
	g.Post("/tenants/:id/enabled", need, h(s.consoleSetTenantEnabled))
	g.Get("/tenants/:id/credentials", need, h(s.consoleCredentials))
	g.Post("/tenants/:id/credentials", need, h(s.consoleIssueCredential))
	g.Post("/tenants/:id/credentials/:key/revoke", need, h(s.consoleRevokeCredential))
	g.Get("/t/:tenant", need, h(s.consoleTenantHome))
	g.Get("/t/:tenant/", need, h(s.consoleTenantHome))
}

func tenantsPath(id string) string {
	return "/api/v1/app_management/tenants/" + url.PathEscape(id)
}

func (s *Server) consoleTenants(c *fiber.Ctx) error {
	return s.renderTenants(c, fiber.StatusOK, "", c.Query("created"))
}

// renderTenants shows the tenant list (the table alone for htmx).
func (s *Server) renderTenants(c *fiber.Ctx, status int, fragment, created string) error {
	var list contentapi.TenantList
	if err := s.apiJSON(c, fiber.MethodGet, "/api/v1/app_management/tenants?limit=1000", nil, &list); err != nil {
		return err
	}
	v := &consoleView{Title: "Tenants", Section: "tenants", Data: list}
	if created != "" {
		v.Notice = "Tenant " + created + " was created."
	}
	return s.render(c, status, "tenants", fragment, v)
}

func (s *Server) consoleCreateTenant(c *fiber.Ctx) error {
	id := c.FormValue("tenant_id")
	enabled := c.FormValue("enabled") == "true"
	var t tenant.Tenant
	if err := s.apiJSON(c, fiber.MethodPost, "/api/v1/app_management/tenants", contentapi.TenantCreate{TenantID: &id, Enabled: &enabled}, &t); err != nil {
		return err
	}
	return c.Redirect(ConsolePath+"/tenants?created="+url.QueryEscape(t.ID), fiber.StatusSeeOther)
}

func (s *Server) consoleSetTenantEnabled(c *fiber.Ctx) error {
	on, err := strconv.ParseBool(c.FormValue("enabled"))
	if err != nil {
		return badRequest("enabled must be true or false")
	}
	if err := s.apiJSON(c, fiber.MethodPut, tenantsPath(c.Params("id")), contentapi.TenantUpdate{Enabled: &on}, nil); err != nil {
		return err
	}
	if c.Get("HX-Request") == "true" {
		return s.renderTenants(c, fiber.StatusOK, "tenant-table", "")
	}
	return c.Redirect(ConsolePath+"/tenants", fiber.StatusSeeOther)
}

type credentialsData struct {
	Tenant      string
	Credentials []*tenant.Credential
	Issued      *tenant.Credential
}

func (s *Server) renderCredentials(c *fiber.Ctx, issued *tenant.Credential) error {
	id := c.Params("id")
	var list contentapi.CredentialList
	if err := s.apiJSON(c, fiber.MethodGet, tenantsPath(id)+"/credentials", nil, &list); err != nil {
		return err
	}
	return s.render(c, fiber.StatusOK, "credentials", "", &consoleView{Title: "Credentials", Section: "tenants",
		Data: credentialsData{Tenant: id, Credentials: list.Credentials, Issued: issued}})
}

func (s *Server) consoleCredentials(c *fiber.Ctx) error { return s.renderCredentials(c, nil) }

func (s *Server) consoleIssueCredential(c *fiber.Ctx) error {
	var cred tenant.Credential
	if err := s.apiJSON(c, fiber.MethodPost, tenantsPath(c.Params("id"))+"/credentials", nil, &cred); err != nil {
		return err
	}
	// The secret is shown on this response only, never on a page a redirect could reload.
	return s.renderCredentials(c, &cred)
}

func (s *Server) consoleRevokeCredential(c *fiber.Ctx) error {
	if err := s.apiJSON(c, fiber.MethodDelete, tenantsPath(c.Params("id"))+"/credentials/"+url.PathEscape(c.Params("key")), nil, nil); err != nil {
		return err
	}
	return c.Redirect(ConsolePath+"/tenants/"+url.PathEscape(c.Params("id"))+"/credentials", fiber.StatusSeeOther)
}

// consoleTenantHome opens a tenant's first section.
func (s *Server) consoleTenantHome(c *fiber.Ctx) error {
	for _, sec := range s.console.sections {
		if sec.Tenant {
			return c.Redirect(ConsolePath+"/t/"+url.PathEscape(c.Params("tenant"))+"/"+sec.Path, fiber.StatusSeeOther)
		}
	}
	return s.render(c, fiber.StatusOK, "error", "", &consoleView{Title: "Tenant " + c.Params("tenant"),
		Notice: "This tenant has no console pages yet."})
}
