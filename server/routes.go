package server

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"github.com/lectern-lms/lectern/server/console"
	"github.com/lectern-lms/lectern/server/lrsapi"
)

var configurationParam = Param{Name: "configuration", Type: "string",
	Description: "external configuration with custom properties of the integrating LMS; accepted by every engine operation"}

func (s *Server) registerRoutes() {
	s.handle(Route{Method: fiber.MethodGet, Path: "/healthz", Summary: "Process health", Tag: "operations",
		Scope: ScopePublic, Success: 200, Response: "Health"}, s.healthz)
	s.handle(Route{Method: fiber.MethodGet, Path: "/readyz", Summary: "Readiness of every backend", Tag: "operations",
		Scope: ScopePublic, Success: 200, Response: "Readiness", Answers: []Answer{{Status: 503, Schema: "Readiness"}}}, s.readyz)
	if s.deps.Metrics != nil {
		s.handle(Route{Method: fiber.MethodGet, Path: "/metrics", Summary: "Prometheus metrics (text exposition format); root credentials", Tag: "operations",
			Scope: ScopeRoot, Success: 200, Media: []string{"text/plain"}}, adaptor.HTTPHandler(s.deps.Metrics.Handler()))
	}
	s.registerQueueConsole()
	console.New(s.consoleDeps()).Register(s.app)
	s.handle(Route{Method: fiber.MethodGet, Path: "/openapi.json", Summary: "This API description", Tag: "operations",
		Scope: ScopePublic, Success: 200, Response: "OpenAPI"}, s.openapi)

	s.content.Register(registrar{s})

	const engine = "/engine/api/v1/:tenant"
	cfg := []Param{configurationParam}
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/configuration", Summary: "Effective tenant configuration", Tag: "configuration",
		Scope: ScopeEnginePath, Success: 200, Response: "ConfigurationList", Query: cfg}, s.getTenantConfiguration)
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/configuration/:settingId", Summary: "One tenant setting", Tag: "configuration",
		Scope: ScopeEnginePath, Success: 200, Response: "SettingBody", Query: cfg}, s.getTenantSetting)
	s.handle(Route{Method: fiber.MethodPut, Path: engine + "/configuration/:settingId", Summary: "Set a tenant setting", Tag: "configuration",
		Scope: ScopeEnginePath, Body: "SettingBody", Success: 204, Query: cfg}, s.putTenantSetting)

	s.handle(Route{Method: fiber.MethodPost, Path: engine + "/courses/importJobs", Summary: "Import a course package (multipart 'file' or JSON import request); runs as a job", Tag: "courses",
		Scope: ScopeEnginePath, Body: "ImportRequest", Success: 200, Response: "ImportJobID", Upload: true,
		Query: []Param{{Name: "course", Type: "string", Required: true, Description: "id of the course after import"},
			{Name: "mayCreateNewVersion", Type: "boolean", Description: "when the course exists: true adds a version, false fails the import"}, configurationParam}}, s.createImportJob)
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/courses/importJobs/:importJobId", Summary: "Status of an import job", Tag: "courses",
		Scope: ScopeEnginePath, Success: 200, Response: "ImportResult", Query: cfg}, s.getImportJob)
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/courses", Summary: "Course versions, one entry per version", Tag: "courses",
		Scope: ScopeEnginePath, Success: 200, Response: "CourseList",
		Query: []Param{{Name: "since", Type: "string", Description: "ISO 8601, inclusive; UTC without a zone"},
			{Name: "more", Type: "string", Description: "the previous page's more token, sent alone: it carries since (a different since beside it is a 400)"}, configurationParam}}, s.listCourses)
	versionParam := Param{Name: "version", Type: "integer", Description: "course version, -1 (default) for the latest"}
	s.handle(Route{Method: fiber.MethodDelete, Path: engine + "/courses/:courseId", Summary: "Delete a course with its versions, registrations and files", Tag: "courses",
		Scope: ScopeEnginePath, Success: 204, Query: cfg}, s.deleteCourse)
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/title", Summary: "Title of the latest course version", Tag: "courses",
		Scope: ScopeEnginePath, Success: 200, Response: "TitleBody", Query: cfg}, s.courseTitle)
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/xapiActivityId", Summary: "xAPI activity id of a course version", Tag: "courses",
		Scope: ScopeEnginePath, Success: 200, Response: "IDBody", Query: []Param{versionParam, configurationParam}}, s.courseXAPIActivityID)
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/preview", Summary: "Launch link previewing a course", Tag: "courses",
		Scope: ScopeEnginePath, Success: 200, Response: "LaunchLinkBody",
		Query: []Param{versionParam, {Name: "expiry", Type: "integer", Description: "seconds until the link expires; 0 never"},
			{Name: "forceReview", Type: "boolean"}, {Name: "startSco", Type: "string"}, {Name: "redirectOnExitUrl", Type: "string"}, configurationParam}}, s.coursePreview)
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/detail", Summary: "Lectern extension: a course version with its activity tree and parser warnings", Tag: "courses",
		Scope: ScopeEnginePath, Success: 200, Response: "CourseDetail", Query: []Param{versionParam, configurationParam}}, s.courseDetail)
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/configuration", Summary: "Effective course configuration", Tag: "configuration",
		Scope: ScopeEnginePath, Success: 200, Response: "ConfigurationList", Query: []Param{versionParam, configurationParam}}, s.getConfiguration(s.courseConfig))
	s.handle(Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/configuration/:settingId", Summary: "One course setting", Tag: "configuration",
		Scope: ScopeEnginePath, Success: 200, Response: "SettingBody", Query: []Param{versionParam, configurationParam}}, s.getSetting(s.courseConfig))
	s.handle(Route{Method: fiber.MethodPut, Path: engine + "/courses/:courseId/configuration/:settingId", Summary: "Set a course setting", Tag: "configuration",
		Scope: ScopeEnginePath, Body: "SettingBody", Success: 204, Query: cfg}, s.putSetting(s.courseConfig))

	s.registerRegistrations(engine)
	s.registerLaunchLink(engine)
	s.player.Register(registrar{s})
	// The record store's prelude reads form bodies (the alternate request syntax): the body
	// limit under its base comes first.
	s.app.Use(lrsapi.Base, s.limitPrefix(int64(s.deps.RecordBodyLimit)))
	s.lrs.Register(registrar{s})
}
